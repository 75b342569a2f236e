# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dataplane check (ingress_dataplane polled through the window): at the end of the window every replica of
each Ingress's controller routes to the ready endpoints, but for those lab_expect.dataplane.failing names (its
findings' text: regex); lab_expect.dataplane.interval is how often the verify role reads the data planes."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso, parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check, Obj, Verdict, failing, per_subject


def rollout_pods(actions: Obj) -> dict[str, tuple[str, list[str]]]:
    """address → (the rollout action, the pod IPs before it) for every rollout the actions did."""
    out = {}
    for action in actions.get("actions") or []:
        if action.get("kind") == "rollout" and action.get("ok"):
            for ip in action.get("before") or []:
                out[str(ip)] = (str(action.get("name")), list(action.get("before") or []))
    return out


def dataplane_outcomes(result: Obj, actions: Obj) -> dict[str, tuple[bool, str]]:
    """Per Ingress: the data-plane findings at the end of the window, in words (pod, addresses,
    whether stale addresses are the pods a rollout replaced), and when the data planes converged."""
    before_rollout = rollout_pods(actions)
    texts: dict[str, list[str]] = {}
    for finding in result.get("findings") or []:
        for ingress in [finding.get("ingress")] if finding.get("ingress") else finding.get("ingresses") or [""]:
            line = "%s in %s: %s" % (finding.get("kind"), finding.get("pod") or "no pod", finding.get("address") or finding.get("reason") or "")
            host = str(finding.get("address") or "").rsplit(":", 1)[0].strip("[]")  # an IPv6 target is [address]:port
            if finding.get("kind") == "stale" and host in before_rollout:
                line += " (a pod replaced by %s)" % before_rollout[host][0]
            if finding.get("since"):
                line += " (last seen ready %s)" % finding["since"]
            texts.setdefault(str(ingress), []).append(line)
    out = {ingress: (False, "; ".join(sorted(lines))) for ingress, lines in texts.items()}
    for pod in (result.get("pods") or {}).values():
        for backend in pod.get("backends") or []:
            ingress = str(backend.get("ingress"))
            if ingress not in out:
                out[ingress] = (True, "every replica routes to the ready endpoints" + _convergence(result, actions, ingress))
    return out


def _convergence(result: Obj, actions: Obj, ingress: str) -> str:
    """` (diverged, then converged N s after ACTION started)` for an Ingress whose replicas all match
    at the end: its last data-plane event is when the last divergence ended (a replica converged,
    or went); N counts from the last action that started before it. '' if it never diverged."""
    events = [e for e in result.get("timeline") or [] if e.get("ingress") == ingress]
    if not any(e.get("finding") in ("stale", "missing") for e in events):
        return ""
    times = [t for e in events for t in [parse_time(e.get("time"))] if t is not None]
    if not times:
        return ""
    when = max(times)
    before = [(t, str(a.get("name"))) for a in actions.get("actions") or []
              for t in [parse_time(a.get("started"))] if t is not None and t <= when]
    if not before:
        return " (diverged, then converged at %s)" % iso(when)
    started, name = max(before)
    return " (diverged, then converged %.1f s after %r started)" % ((when - started).total_seconds(), name)


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if not results.get("dataplane"):
        return []
    return per_subject("dataplane", dataplane_outcomes(results["dataplane"], results.get("actions") or {}), failing(body),
                       say_pass=True)


CHECK = Check("dataplane", _verdicts, keys=frozenset({"failing", "interval"}), fed_by="dataplane")
