# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Timed actions during the verify window (lab_actions): what changes while the status watch and
the probes run - a rollout, a scale, a controller pod restarted, an object applied or deleted - and
test machinery that has no counterpart in a real cluster's life: a controller's syncing stopped
while its proxy keeps serving (freeze_sync / resume_sync).

parse_actions() validates every action, naming the field, before anything runs. run_actions()
performs them in order of `at` (seconds after it starts), on a clock and sleep it is given, and
records each one's start and end: one failing does not stop the others (the story goes on, and the
report says which failed and why).
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label, is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso

Obj = dict[str, Any]

# Each action is one of these keys, whose value names its target.
KINDS = ("rollout", "scale", "restart_controller", "delete_pods", "apply", "delete", "freeze_sync", "resume_sync")
# Test machinery: no real incident does this, the report names it as such.
MACHINERY = ("freeze_sync", "resume_sync")
_COMMON = ("at", "name", "wait", "timeout")
_EXTRA = {"scale": ("replicas",), "delete_pods": ("selector",)}
MAX_AT = 3600
# A frozen controller answers no health probe: below this the kubelet heals it during the window.
MIN_FROZEN_PROBE_SECONDS = 600
RESTARTED_AT = "kindlab.ingress/restartedAt"


class ActionError(OptionError):
    """An action is invalid; the message names the field."""


class ActionFailed(KindlabError):
    """An action could not be carried out (recorded in its result, not raised out of run_actions)."""


@dataclass
class Action:
    index: int
    kind: str
    at: float
    name: str
    namespace: str
    target: str  # the workload, controller workload (may be ""), selector or object name
    wait: bool
    timeout: float
    replicas: int = 0
    manifest: Obj = field(default_factory=dict)

    @property
    def where(self) -> str:
        return "lab_actions[%d].%s" % (self.index, self.kind)

    @property
    def machinery(self) -> bool:
        return self.kind in MACHINERY

    @property
    def subject(self) -> str:
        if self.kind in ("apply", "delete"):
            meta = self.manifest.get("metadata") or {}
            ns = meta.get("namespace")
            return "%s %s%s" % (self.manifest.get("kind"), ns + "/" if ns else "", meta.get("name"))
        if self.kind == "delete_pods":
            return "pods %s in %s" % (self.target, self.namespace)
        return "%s/%s" % (self.namespace, self.target) if self.target else self.namespace


def _fail(where: str, expected: str, got: Any) -> ActionError:
    return ActionError("%s: expected %s, got %r" % (where, expected, got))


def _seconds(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise _fail(where, "a number of seconds from %g to %g" % (low, high), value)
    return float(value)


def _ns_name(value: Any, where: str, name_optional: bool) -> tuple[str, str]:
    """`namespace/name` (or `namespace` alone where the name may be omitted)."""
    text = value if isinstance(value, str) else ""
    ns, _sep, name = text.partition("/")
    expected = "namespace/name" + (" or namespace" if name_optional else "")
    if not is_dns1123_label(ns) or (name and not is_dns1123_subdomain(name)) or (not name and not name_optional):
        raise _fail(where, expected, value)
    return ns, name


def _manifest(value: Any, where: str, whole: bool) -> Obj:
    if not isinstance(value, dict):
        raise _fail(where, "a Kubernetes object (apiVersion, kind, metadata.name)", value)
    meta = value.get("metadata")
    for key, ok in (("apiVersion", isinstance(value.get("apiVersion"), str)), ("kind", isinstance(value.get("kind"), str)),
                    ("metadata.name", isinstance(meta, dict) and is_dns1123_subdomain(meta.get("name")))):
        if not ok:
            raise _fail("%s.%s" % (where, key), "a string" if key != "metadata.name" else "a DNS-1123 name",
                        value.get(key) if "." not in key else (meta if isinstance(meta, dict) else {}).get("name"))
    if isinstance(meta, dict) and meta.get("namespace") is not None and not is_dns1123_label(meta["namespace"]):
        raise _fail(where + ".metadata.namespace", "a namespace name", meta["namespace"])
    if not whole:
        return {"apiVersion": value["apiVersion"], "kind": value["kind"], "metadata": dict(meta or {})}
    return value


def parse_action(raw: Any, index: int) -> Action:
    where = "lab_actions[%d]" % index
    if not isinstance(raw, dict):
        raise _fail(where, "a mapping with `at` and one of " + ", ".join(KINDS), raw)
    raw = {k: v for k, v in raw.items() if v is not None}
    kinds = [k for k in KINDS if k in raw]
    if len(kinds) != 1:
        raise _fail(where, "exactly one of " + ", ".join(KINDS), sorted(kinds) or sorted(raw))
    kind = kinds[0]
    known = set(_COMMON) | {kind} | set(_EXTRA.get(kind, ()))
    unknown = sorted(set(raw) - known)
    if unknown:
        raise _fail(where, "only the keys %s for a %s" % (", ".join(sorted(known)), kind), unknown)
    if "at" not in raw:
        raise _fail(where + ".at", "the seconds after the window opens when it starts", None)
    at = _seconds(raw["at"], where + ".at", 0, MAX_AT)
    wait = raw.get("wait", True)
    if not isinstance(wait, bool):
        raise _fail(where + ".wait", "true or false", wait)
    timeout = _seconds(raw.get("timeout", 120), where + ".timeout", 1, MAX_AT)
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise _fail(where + ".name", "a string", name)
    action = Action(index, kind, at, name, "", "", wait, timeout)
    value = raw[kind]
    if kind in ("rollout", "scale"):
        action.namespace, action.target = _ns_name(value, "%s.%s" % (where, kind), name_optional=False)
    elif kind in ("restart_controller", "freeze_sync", "resume_sync"):
        action.namespace, action.target = _ns_name(value, "%s.%s" % (where, kind), name_optional=True)
    elif kind == "delete_pods":
        if not is_dns1123_label(value):
            raise _fail(where + ".delete_pods", "a namespace", value)
        selector = raw.get("selector")
        if not isinstance(selector, str) or not selector.strip():
            # Every pod of a namespace is almost never what an incident does: ask for the selector.
            raise _fail(where + ".selector", "a label selector (e.g. app.kubernetes.io/name=shop)", selector)
        action.namespace, action.target = value, selector.strip()
    else:
        action.manifest = _manifest(value, "%s.%s" % (where, kind), whole=kind == "apply")
        action.namespace = str((action.manifest.get("metadata") or {}).get("namespace") or "")
    if kind == "scale":
        replicas = raw.get("replicas")
        if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas <= 100:
            raise _fail(where + ".replicas", "a number of pods from 0 to 100", replicas)
        action.replicas = replicas
    elif "replicas" in raw:
        raise _fail(where + ".replicas", "only with scale", raw["replicas"])
    action.name = name or "%s %s" % (kind, action.subject)
    return action


def parse_actions(raw: Any) -> list[Action]:
    """Every action validated, in the order they start (by `at`, then as written)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _fail("lab_actions", "a list of actions", raw)
    actions = [parse_action(item, i) for i, item in enumerate(raw)]
    return sorted(actions, key=lambda a: (a.at, a.index))


def check_references(actions: list[Action], workloads: list[str], controller_namespaces: dict[str, list[str]]) -> None:
    """Targets must be lab objects: rollout/scale a lab workload (namespace/name), the controller
    actions a namespace with lab controllers, and freeze_sync only a type that can be frozen.
    controller_namespaces: namespace → the types of the lab's controllers there."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type

    for action in actions:
        if action.kind in ("rollout", "scale"):
            ref = "%s/%s" % (action.namespace, action.target)
            if ref not in workloads:
                raise _fail(action.where, "a workload of lab_workloads (namespace/name), one of %s" % workloads, ref)
        elif action.kind in ("restart_controller", "freeze_sync", "resume_sync"):
            types = controller_namespaces.get(action.namespace)
            if not types:
                raise _fail(action.where, "a namespace with lab controllers, one of %s" % sorted(controller_namespaces),
                            action.namespace)
            if action.kind == "freeze_sync":
                for name in sorted(set(types)):
                    ctype = controller_type(name)
                    if ctype.sync_freeze is None:
                        raise ActionError("%s: a %s controller cannot be frozen: %s" % (action.where, name, ctype.no_sync_freeze))


# ---------------------------------------------------------------- carrying them out


def _controller_workloads(client: Any, action: Action) -> list[tuple[Obj, Obj, Any]]:
    """(workload, its controller container, the type) of each controller workload the action names."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import detect

    found = []
    for kind in ("Deployment", "DaemonSet"):
        for workload in client.list("apps/v1", kind, namespace=action.namespace):
            if action.target and workload["metadata"]["name"] != action.target:
                continue
            template = (workload.get("spec") or {}).get("template") or {}
            for container in (template.get("spec") or {}).get("containers") or []:
                ctype = detect(container)
                if ctype is not None:
                    found.append((workload, container, ctype))
                    break
    if not found:
        raise ActionFailed("no ingress controller workload %sin namespace %s"
                           % ("named %s " % action.target if action.target else "", action.namespace))
    return found


def _pods_of(client: Any, workload: Obj) -> list[Obj]:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import selector_string

    selector = selector_string((workload.get("spec") or {}).get("selector"))
    pods = client.list("v1", "Pod", namespace=workload["metadata"]["namespace"], label_selector=selector)
    return [p for p in pods if (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def _probe_allowance(probe: Obj | None) -> float | None:
    """Seconds of failing answers the kubelet tolerates before it acts; None without a probe."""
    if not probe:
        return None
    return float(probe.get("failureThreshold", 3)) * float(probe.get("periodSeconds", 10))


def _check_probes(workload: Obj, container: Obj, ctype: Any) -> None:
    for probe in ("livenessProbe", "readinessProbe"):
        allowance = _probe_allowance(container.get(probe))
        if allowance is not None and allowance < MIN_FROZEN_PROBE_SECONDS:
            raise ActionFailed(
                "%s/%s's %s gives up after %g s (failureThreshold x periodSeconds), and a frozen controller answers no "
                "probe: the kubelet would %s during the window. Loosen it to at least %d s in the controller's values (%s), "
                "as test machinery" % (workload["metadata"]["namespace"], workload["metadata"]["name"], probe, allowance,
                                       "restart it" if probe == "livenessProbe" else "take its proxy out of the Service's endpoints",
                                       MIN_FROZEN_PROBE_SECONDS, ", ".join(ctype.sync_freeze.probe_values)))


def _signal_script(process: str, signal: str) -> list[str]:
    # Scans /proc for the process by its command line (no pidof or pkill in every image); prints
    # the pids signalled and fails when there is none.
    # (read fails at the end of cmdline, which has no newline, yet sets c: its status is ignored.)
    script = ('found=; for p in /proc/[0-9]*; do c=; read -r c < "$p/cmdline" 2>/dev/null; '
              'case "$c" in "$0"*) kill -%s "${p#/proc/}" && found="$found ${p#/proc/}";; esac; done; '
              '[ -n "$found" ] && echo "$found"' % signal)
    return ["sh", "-c", script, process]


def _signal_sync(client: Any, action: Action, signal: str, timeout: float) -> str:
    done = []
    for workload, container, ctype in _controller_workloads(client, action):
        if ctype.sync_freeze is None:
            raise ActionFailed("a %s controller cannot be frozen: %s" % (ctype.name, ctype.no_sync_freeze))
        if signal == "STOP":
            _check_probes(workload, container, ctype)
        pods = _pods_of(client, workload)
        if not pods:
            raise ActionFailed("%s/%s has no Running pod" % (action.namespace, workload["metadata"]["name"]))
        for pod in pods:
            name = pod["metadata"]["name"]
            res = client.pod_exec(action.namespace, name, container["name"],
                                  _signal_script(ctype.sync_freeze.process, signal), timeout)
            if res.rc != 0:
                why = res.error or (res.stderr or "").strip() or "no process %s" % ctype.sync_freeze.process
                raise ActionFailed("%s %s in %s/%s failed: %s" % ("stopping" if signal == "STOP" else "resuming",
                                                                  ctype.sync_freeze.process, action.namespace, name, why))
            done.append("%s/%s (pid%s)" % (action.namespace, name, res.stdout.rstrip()))
    verb = "stopped %s in " if signal == "STOP" else "resumed %s in "
    return verb % "the controller's syncing" + ", ".join(done) + (": its proxy keeps serving" if signal == "STOP" else "")


def _deployment(client: Any, action: Action) -> Obj:
    obj = client.get("apps/v1", "Deployment", action.target, action.namespace)
    if obj is None:
        raise ActionFailed("Deployment %s/%s not found" % (action.namespace, action.target))
    return dict(obj)


def _pod_ips(client: Any, namespace: str, selector: str) -> list[str]:
    pods = client.list("v1", "Pod", namespace=namespace, label_selector=selector)
    return sorted(str(p.get("status", {}).get("podIP")) for p in pods
                  if p.get("status", {}).get("podIP") and not p["metadata"].get("deletionTimestamp"))


def _wait_workload(client: Any, kind: str, namespace: str, name: str, timeout: float, sleep: Callable[[float], None],
                   clock: Callable[[], float]) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_for_workload

    wait_for_workload(client, kind, namespace, name, timeout, sleep=sleep, clock=clock)


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def _wait_replaced(client: Any, workload: Obj, deleted: set[str], timeout: float, sleep: Callable[[float], None],
                   clock: Callable[[], float]) -> None:
    """Until as many ready pods as the workload wants run, none of them one just deleted (its
    status would still count the deleted ones for a moment)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_until

    meta = workload["metadata"]

    def check() -> tuple[bool, str]:
        current = client.get("apps/v1", workload["kind"], meta["name"], meta["namespace"]) or workload
        spec, status = current.get("spec") or {}, current.get("status") or {}
        want = spec.get("replicas", 1) if workload["kind"] == "Deployment" else status.get("desiredNumberScheduled", 1)
        fresh = [p["metadata"]["name"] for p in _pods_of(client, current) if p["metadata"]["name"] not in deleted and _ready(p)]
        return len(fresh) >= int(want or 0), "%d/%s replacement pod(s) ready: %s" % (len(fresh), want, ", ".join(fresh) or "none")

    wait_until(check, timeout, "%s %s/%s to replace its deleted pods" % (workload["kind"], meta["namespace"], meta["name"]),
               sleep=sleep, clock=clock)


def _perform(client: Any, action: Action, sleep: Callable[[float], None], clock: Callable[[], float],
             facts: Obj) -> str:
    """Carry one action out; returns what it did in words, and records in `facts` what the report
    compares (a rollout's or scale's pod IPs before and after it)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import selector_string

    if action.kind in ("freeze_sync", "resume_sync"):
        return _signal_sync(client, action, "STOP" if action.kind == "freeze_sync" else "CONT", min(action.timeout, 30))
    if action.kind in ("rollout", "scale"):
        deployment = _deployment(client, action)
        selector = selector_string(deployment["spec"].get("selector"))
        before = facts["before"] = _pod_ips(client, action.namespace, selector)
        if action.kind == "rollout":
            # What `kubectl rollout restart` does: a new template annotation, so new pods, new IPs.
            body: Obj = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: iso(dt.datetime.now(dt.timezone.utc))}}}}}
        else:
            body = {"spec": {"replicas": action.replicas}}
        client.patch("apps/v1", "Deployment", action.target, action.namespace, body)
        if not action.wait:
            return "pods before: %s" % (", ".join(before) or "none")
        _wait_workload(client, "Deployment", action.namespace, action.target, action.timeout, sleep, clock)
        after = facts["after"] = _pod_ips(client, action.namespace, selector)
        return "pod IPs %s -> %s" % (", ".join(before) or "none", ", ".join(after) or "none")
    if action.kind == "restart_controller":
        names = []
        for workload, _container, _ctype in _controller_workloads(client, action):
            for pod in _pods_of(client, workload):
                client.delete("v1", "Pod", pod["metadata"]["name"], action.namespace)
                names.append(pod["metadata"]["name"])
            if action.wait:
                _wait_replaced(client, workload, set(names), action.timeout, sleep, clock)
        return "deleted %s%s" % (", ".join(names) or "no pod", "; the controller is ready again" if action.wait else "")
    if action.kind == "delete_pods":
        pods = client.list("v1", "Pod", namespace=action.namespace, label_selector=action.target)
        for pod in pods:
            client.delete("v1", "Pod", pod["metadata"]["name"], action.namespace)
        return "deleted %s" % (", ".join(p["metadata"]["name"] for p in pods) or "no pod (none matched)")
    meta = action.manifest["metadata"]
    if action.kind == "apply":
        res = client.apply(action.manifest)
        return "applied (%s)" % ("changed" if res.changed else "unchanged")
    existed = client.delete(action.manifest["apiVersion"], action.manifest["kind"], meta["name"], meta.get("namespace"))
    return "deleted" if existed else "was absent"


def run_actions(client: Any, actions: list[Action], sleep: Callable[[float], None] = time.sleep,
                clock: Callable[[], float] = time.monotonic,
                wall: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc)) -> list[Obj]:
    """Carry out the actions at their offsets; one result per action, in the order they ran."""
    start = clock()
    out = []
    for action in actions:
        delay = start + action.at - clock()
        if delay > 0:
            sleep(delay)
        offset = clock() - start
        started = wall()
        ok, error, detail = True, None, ""
        facts: Obj = {}
        try:
            detail = _perform(client, action, sleep, clock, facts)
        except KindlabError as exc:
            ok, error = False, str(exc)
        out.append(dict({"name": action.name, "kind": action.kind, "target": action.subject, "at": action.at,
                         "offset": round(offset, 3), "late": round(max(offset - action.at, 0.0), 3),
                         "started": iso(started), "ended": iso(wall()), "ok": ok, "error": error, "detail": detail,
                         "machinery": action.machinery}, **facts))
    return out


def plan(actions: list[Action]) -> list[Obj]:
    """What check mode reports: the actions, when they would start, nothing done."""
    return [{"name": a.name, "kind": a.kind, "target": a.subject, "at": a.at, "machinery": a.machinery} for a in actions]
