"""The diagnose-vs-real table's Gateway rows: what ingress_diagnose predicted for each Gateway and
HTTPRoute of a scenario, against what the real controllers then wrote on kind (issue 25).

    gateway_rows.py KUBECONFIG REPORT.json [SECONDS]

REPORT is the scenario's verify report (its results.diagnose is the prediction, read before the
window). For SECONDS (default 12) it reads every Gateway and HTTPRoute about three times a second
(kubectl, in the lab's network namespace: hack/kind-lab.sh exec) and records, per Gateway, each
status.addresses it showed, the field managers of its status, and each listener's Accepted
condition; per route and parent, each Accepted condition of its status.parents entries. One row
per Gateway and per route parent; a row agrees when:
- Gateway: the addresses seen are exactly those the predicted writers write (two writers with
  different addresses: both seen, alternating; a writer whose sync stops: none), every status
  manager seen is a predicted writer's field manager, and each listener's Accepted is what its
  writers' entry points predict;
- route parent: each Accepted seen (status and reason) is one the predicted readers write.
Prints the rows; exit 1 on any disagreement, 2 when the report has no Gateway prediction.
Standalone on purpose (no import of the collection): it checks the module's output, not its code.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

Obj = dict[str, Any]
GROUP = "gateway.networking.k8s.io"


@dataclass
class Seen:
    addresses: set[tuple[str, ...]] = field(default_factory=set)
    managers: set[str] = field(default_factory=set)
    listeners: set[tuple[str, bool, str]] = field(default_factory=set)  # name, Accepted, reason
    # a route's parent (gateway ns/name, and /section when the parentRef names one) → (Accepted, reason)
    parents: dict[str, set[tuple[bool, str]]] = field(default_factory=dict)


def key(obj: Obj) -> str:
    return "%s/%s" % (obj["metadata"].get("namespace"), obj["metadata"]["name"])


def _accepted(conditions: list[Obj]) -> tuple[bool, str] | None:
    for c in conditions or []:
        if c.get("type") == "Accepted":
            return c.get("status") == "True", str(c.get("reason", ""))
    return None


def record(seen: dict[str, Seen], gateways: list[Obj], routes: list[Obj]) -> None:
    """Add one read of the Gateways and routes to SEEN (keyed by namespace/name; routes by 'route ns/name')."""
    for gw in gateways:
        s = seen.setdefault(key(gw), Seen())
        status = gw.get("status") or {}
        s.addresses.add(tuple(str(a.get("value")) for a in status.get("addresses") or []))
        s.managers.update(str(m.get("manager")) for m in gw["metadata"].get("managedFields") or []
                          if m.get("subresource") == "status")
        for ln in status.get("listeners") or []:
            acc = _accepted(ln.get("conditions"))
            if acc is not None:
                s.listeners.add((str(ln.get("name")), acc[0], acc[1]))
    for route in routes:
        s = seen.setdefault("route " + key(route), Seen())
        ns = route["metadata"].get("namespace")
        for entry in (route.get("status") or {}).get("parents") or []:
            ref = entry.get("parentRef") or {}
            acc = _accepted(entry.get("conditions"))
            if acc is not None:
                parent = "%s/%s" % (ref.get("namespace", ns), ref.get("name"))
                s.parents.setdefault(parent + ("/" + ref["sectionName"] if ref.get("sectionName") else ""), set()).add(acc)


def observe(kubeconfig: str, seconds: float, run: Callable[[list[str]], str] | None = None,
            clock: Callable[[], float] | None = None) -> dict[str, Seen]:
    def kubectl(argv: list[str]) -> str:
        return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout

    run = run or kubectl
    clock = clock or time.monotonic
    seen: dict[str, Seen] = {}
    end = clock() + seconds
    while True:
        doc = json.loads(run(["kubectl", "--kubeconfig", kubeconfig, "get", "gateways.%s,httproutes.%s" % (GROUP, GROUP),
                              "-A", "-o", "json", "--show-managed-fields"]))
        items = doc.get("items") or []
        record(seen, [i for i in items if i.get("kind") == "Gateway"], [i for i in items if i.get("kind") == "HTTPRoute"])
        if clock() >= end:
            return seen
        time.sleep(0.3)


def _fmt(addresses: set[tuple[str, ...]]) -> str:
    return ", ".join("[%s]" % ", ".join(a) for a in sorted(addresses)) or "none"


def compare(prediction: Obj, seen: dict[str, Seen]) -> list[tuple[str, str, str, bool]]:
    """(subject, predicted, observed, agree) per Gateway and per route parent."""
    managers = {c["controller"]: str((c.get("settings") or {}).get("field_manager", ""))
                for c in prediction.get("controllers") or []}
    rows = []
    for gw_key, gw in sorted((prediction.get("gateways") or {}).items()):
        s = seen.get(gw_key, Seen())
        writers = gw.get("writers") or []
        want_addresses = {tuple(w.get("address") or []) for w in writers}
        want_managers = {managers.get(w["controller"], "") for w in writers}
        want_listeners = {(name, any((w.get("listeners") or {}).get(name) for w in writers))
                          for name in {n for w in writers for n in (w.get("listeners") or {})}}
        got_listeners = {(name, acc) for name, acc, _reason in s.listeners}
        addresses_seen = {a for a in s.addresses if a} if want_addresses - {()} else s.addresses
        agree = (addresses_seen == want_addresses if writers else s.addresses <= {()}) \
            and s.managers <= want_managers and got_listeners == want_listeners
        predicted = "; ".join("%s → [%s]" % (w["controller"], ", ".join(w.get("address") or [])) for w in writers) or "no writer"
        predicted += "%s; listeners %s" % (" (flapping)" if gw.get("flapping") else "",
                                           ", ".join("%s %s" % (n, "accepted" if a else "not accepted") for n, a in sorted(want_listeners)))
        observed = "%s by %s; listeners %s" % (_fmt(s.addresses), ", ".join(sorted(s.managers)) or "nobody",
                                               ", ".join("%s %s (%s)" % (n, "accepted" if a else "not accepted", r)
                                                         for n, a, r in sorted(s.listeners)))
        rows.append(("Gateway " + gw_key, predicted, observed, agree))
    for route_key, route in sorted((prediction.get("routes") or {}).items()):
        s = seen.get("route " + route_key, Seen())
        for parent in route.get("parents") or []:
            want = {(bool(v["accepted"]), str(v["reason"])) for v in (parent.get("status_by") or {}).values()}
            target = parent["gateway"] + ("/" + parent["section_name"] if parent.get("section_name") else "")
            got = s.parents.get(target, set())
            rows.append(("HTTPRoute %s → %s" % (route_key, target),
                         ", ".join("%s %s" % ("Accepted" if a else "not accepted", r) for a, r in sorted(want)) or "no status",
                         ", ".join("%s %s" % ("Accepted" if a else "not accepted", r) for a, r in sorted(got)) or "no status",
                         got == want))
    return rows


def main(argv: list[str], run: Callable[[list[str]], str] | None = None) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        prediction = (((json.load(f).get("results") or {}).get("diagnose") or {}).get("gateway_api") or {})
    if not prediction.get("served"):
        print("gateway_rows: %s has no Gateway API prediction (the CRDs were not served)" % argv[1], file=sys.stderr)
        return 2
    rows = compare(prediction, observe(argv[0], float(argv[2]) if len(argv) > 2 else 12.0, run))
    for subject, predicted, observed, agree in rows:
        print("%-6s | %s | predicted: %s | real: %s" % ("agree" if agree else "DIFFER", subject, predicted, observed))
    print("gateway rows: %d, %d agree" % (len(rows), sum(1 for r in rows if r[3])))
    return 0 if rows and all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
