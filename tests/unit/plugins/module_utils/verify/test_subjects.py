"""The status watch over Gateway API (verify/subjects.py read by verify/status/'s Tracker and Window):
Gateways' addresses and conditions, each route parent entry keyed by parentRef and controllerName,
their verdicts beside the Ingresses', one list and watch per kind, and nothing extra without the CRDs."""
from __future__ import annotations

import copy
import datetime as dt
import threading
from typing import Any, Iterator

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import change_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.verdict import verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import subjects as sub
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers as w
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose_gateways import two_installs
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_status import ing

Obj = dict[str, Any]
T0 = dt.datetime(2026, 11, 21, 23, 40, 0, tzinfo=dt.timezone.utc)
CONTROLLER = "traefik.io/gateway-controller"
POD_A, POD_B = "traefik-a/traefik-abc", "traefik-b/traefik-abc"


def managed(writes: list[tuple[str, str]]) -> list[Obj]:
    out = [{"manager": "kindlab.ingress", "operation": "Apply", "time": "2026-11-21T23:39:00Z"}]
    return out + [{"manager": m, "operation": "Update", "subresource": "status", "time": t} for m, t in writes]


def cond(kind: str, status: str = "True", reason: str | None = None) -> Obj:
    return {"type": kind, "status": status, "reason": reason or kind, "message": "", "observedGeneration": 1,
            "lastTransitionTime": "2026-11-21T23:39:00Z"}


def gw(ip: str | None, rv: int = 1, ns: str = "traefik-a", name: str = "traefik-gateway", listener_ok: bool = True,
       writes: list[tuple[str, str]] | None = None) -> Obj:
    listener = [cond("Accepted") if listener_ok else cond("Accepted", "False", "PortUnavailable"), cond("Programmed")]
    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": str(rv),
                         "managedFields": managed(writes if writes is not None else [("traefik", "2026-11-21T23:39:30Z")])},
            "spec": {"gatewayClassName": "traefik", "listeners": [{"name": "web", "port": 8000, "protocol": "HTTP"}]},
            "status": {"addresses": [{"type": "IPAddress", "value": ip}] if ip else [],
                       "conditions": [cond("Accepted"), cond("Programmed")],
                       "listeners": [{"name": "web", "attachedRoutes": 1, "conditions": listener}]}}


def route(parents: list[tuple[str, bool]], rv: int = 1, ns: str = "traefik-a", name: str = "app",
          named: tuple[str, ...] = ("traefik-gateway",), writes: list[tuple[str, str]] | None = None) -> Obj:
    """An HTTPRoute naming NAMED Gateways of its namespace; PARENTS: (gateway, accepted) status entries by Traefik."""
    entries = [{"parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gateway},
                "controllerName": CONTROLLER,
                "conditions": [cond("Accepted") if ok else cond("Accepted", "False", "NotAllowedByListeners"), cond("ResolvedRefs")]}
               for gateway, ok in parents]
    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": str(rv),
                         "managedFields": managed(writes if writes is not None else [("traefik", "2026-11-21T23:39:30Z")])},
            "spec": {"parentRefs": [{"name": n} for n in named], "rules": [{"backendRefs": [{"name": "app", "port": 80}]}]},
            "status": {"parents": entries}}


def test_what_a_gateway_and_a_route_status_say() -> None:
    [g] = sub.GATEWAY.read(gw("100.64.0.1", listener_ok=False))
    assert (g.subject, g.obj, g.addresses) == ("Gateway traefik-a/traefik-gateway", "traefik-a/traefik-gateway", ["100.64.0.1"])
    assert g.conditions == ["Accepted=True", "Programmed=True", "listener web: Accepted=False (PortUnavailable)",
                            "listener web: Programmed=True", "listener web: attachedRoutes=1"]
    [r] = sub.HTTPROUTE.read(route([("traefik-gateway", False)]))
    assert r.subject == "HTTPRoute traefik-a/app parent traefik-a/traefik-gateway by " + CONTROLLER
    assert (r.parent, r.controller, r.addresses) == ("traefik-a/traefik-gateway by " + CONTROLLER, CONTROLLER, [])
    assert r.conditions == ["Accepted=False (NotAllowedByListeners)", "ResolvedRefs=True"]
    assert sub.HTTPROUTE.parents is not None and sub.HTTPROUTE.parents(route([])) == ["traefik-a/traefik-gateway"]
    assert sub.INGRESS.read(ing("one", "100.64.0.0"))[0].subject == "one/test"  # an Ingress's id is as it always was


def tracker(max_changes: int = 0, pools: list[str] | None = None) -> Tracker:
    t = Tracker(parse_options(10, max_changes, False, pools or [], False, True), T0)
    t.initial([ing("one", "100.64.0.0")])
    t.initial([gw("100.64.0.1")], sub.GATEWAY)
    t.initial([route([("traefik-gateway", True)])], sub.HTTPROUTE)
    return t


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_a_gateway_flap_is_counted_with_its_writers_as_an_ingress_flap_is() -> None:
    t = tracker(pools=["100.64.0.0/16"])
    [first] = t.event("MODIFIED", gw("100.64.0.2", rv=2, writes=[("traefik", "2026-11-21T23:40:01Z")]), at(1), sub.GATEWAY)
    assert (first["kind"], first["subject"], first["object"], first["old"], first["new"], first["manager"]) == (
        "Gateway", "Gateway traefik-a/traefik-gateway", "traefik-a/traefik-gateway", ["100.64.0.1"], ["100.64.0.2"], "traefik")
    assert first["conditions_old"] == first["conditions_new"] and "ingress" not in first
    t.event("MODIFIED", gw("100.64.0.1", rv=3), at(2), sub.GATEWAY)
    assert t.event("MODIFIED", gw("100.64.0.1", rv=4), at(3), sub.GATEWAY) == []  # not a status change
    r = verdict(t)
    item = r["gateways"]["traefik-a/traefik-gateway"]
    assert (item["changes"], item["passed"], item["addresses_seen"]) == (2, False, [["100.64.0.1"], ["100.64.0.2"]])
    assert item["reason"] == "2 changes in 10s (max 0): 100.64.0.1 ↔ 100.64.0.2"
    assert item["conditions"][:2] == ["Accepted=True", "Programmed=True"]
    assert r["ingresses"]["one/test"]["passed"] and r["routes"]["traefik-a/app"]["passed"]
    assert r["failures"] == ["Gateway traefik-a/traefik-gateway: 2 changes in 10s (max 0): 100.64.0.1 ↔ 100.64.0.2, "
                             "written by traefik"]


def test_a_gateway_without_an_address_or_outside_the_pools_fails() -> None:
    t = tracker(max_changes=5, pools=["100.64.0.0/16"])
    t.event("MODIFIED", gw(None, rv=2), at(1), sub.GATEWAY)
    t.event("MODIFIED", gw("172.18.0.2", rv=3), at(2), sub.GATEWAY)
    assert verdict(t)["gateways"]["traefik-a/traefik-gateway"]["reason"] == (
        "no address in status.addresses; 172.18.0.2 outside expected_pools 100.64.0.0/16")
    t = tracker(max_changes=5)
    t.event("MODIFIED", gw("100.64.0.1", rv=2, listener_ok=False), at(1), sub.GATEWAY)  # a condition is a change too
    [change] = t.timeline
    assert change["old"] == change["new"] == ["100.64.0.1"]
    assert "listener web: Accepted=False (PortUnavailable)" in change["conditions_new"]


def test_a_route_is_judged_by_every_parent_it_names() -> None:
    t = tracker(max_changes=5)
    refused = route([("traefik-gateway", False)], rv=2, named=("traefik-gateway", "other"))
    [change] = t.event("MODIFIED", refused, at(1), sub.HTTPROUTE)
    assert (change["kind"], change["parent"], change["controller"]) == (
        "HTTPRoute", "traefik-a/traefik-gateway by " + CONTROLLER, CONTROLLER)
    assert change["conditions_old"] == ["Accepted=True", "ResolvedRefs=True"]
    r = verdict(t)
    item = r["routes"]["traefik-a/app"]
    assert not item["passed"] and item["named_parents"] == ["traefik-a/traefik-gateway", "traefik-a/other"]
    assert item["reason"] == ("parent traefik-a/other: no status entry (no controller accepted or refused it); parent "
                              "traefik-a/traefik-gateway by %s: not Accepted: Accepted=False (NotAllowedByListeners), "
                              "written by traefik" % CONTROLLER)
    assert item["parents"]["traefik-a/traefik-gateway by " + CONTROLLER]["conditions"][0] == "Accepted=False (NotAllowedByListeners)"
    assert [f.split(":")[0] for f in r["failures"]] == ["HTTPRoute traefik-a/app"] * 2


def test_a_parent_entry_removed_and_a_second_controller_entry_are_changes_of_their_own() -> None:
    t = tracker(max_changes=5)
    two = route([("traefik-gateway", True)], rv=2)
    two["status"]["parents"].append(dict(copy.deepcopy(two["status"]["parents"][0]), controllerName="example.net/other"))
    [added] = t.event("MODIFIED", two, at(1), sub.HTTPROUTE)
    assert added["controller"] == "example.net/other" and added["conditions_old"] == []
    [removed] = t.event("MODIFIED", route([], rv=3), at(2), sub.HTTPROUTE)[:1]
    assert removed["conditions_new"] == []
    r = verdict(t)
    assert r["routes"]["traefik-a/app"]["reason"].startswith("parent traefik-a/traefik-gateway: no status entry")
    deleted = t.event("DELETED", route([], rv=4), at(3), sub.HTTPROUTE)
    assert deleted == [] and "traefik-a/app" not in t.objects["HTTPRoute"]


def test_a_relist_after_410_diffs_each_kind_against_its_own_objects() -> None:
    t = tracker(max_changes=5)
    changes = t.resync([gw("100.64.0.2", rv=9)], at(4), sub.GATEWAY)
    assert [(c["subject"], c["new"], c["seen_after_blind"]) for c in changes] == [
        ("Gateway traefik-a/traefik-gateway", ["100.64.0.2"], True)]
    assert t.resync([], at(5), sub.HTTPROUTE)[0]["event"] == "DELETED"
    assert not t.tracks["one/test"].deleted  # the Ingresses were not re-listed


def test_gateway_changes_are_attributed_by_address_and_route_entries_by_controller_name() -> None:
    publishers = w.publishers_of(two_installs(selectors=False))
    gateway_side = {p.controller: p for p in publishers if p.surface == w.GATEWAY_SURFACE}
    assert {k: (p.addresses, p.field_manager, p.controller_name) for k, p in gateway_side.items()} == {
        "traefik-a/traefik@kubernetesgateway": (("100.64.0.1",), "traefik", CONTROLLER),
        "traefik-b/traefik@kubernetesgateway": (("100.64.0.2",), "traefik", CONTROLLER)}
    t = tracker(max_changes=5)
    t.event("MODIFIED", gw("100.64.0.2", rv=2), at(1), sub.GATEWAY)
    t.event("MODIFIED", gw("100.64.0.1", rv=3), at(2), sub.GATEWAY)
    t.event("MODIFIED", route([("traefik-gateway", False)], rv=4), at(3), sub.HTTPROUTE)
    t.event("MODIFIED", gw(None, rv=5), at(4), sub.GATEWAY)
    w.attribute(t.timeline, [], w.Evidence(publishers))
    assert [(c["pod"], c["attributed_by"], c["candidates"]) for c in t.timeline] == [
        (POD_B, "address", []), (POD_A, "address", []),
        (None, "candidates", [POD_A, POD_B]),  # both write routes with that controllerName: nothing decides
        (None, "candidates", [POD_A, POD_B])]  # an empty address is published by neither
    assert change_writer(t.timeline[0]) == "%s [by address] (traefik Update)" % POD_B


class GatewayApi:
    """On the real clock, in windows of a second or less: serves Ingresses and every Gateway API kind (or, with served=False, Ingresses only):
    each list returns its kind's objects (none of a GRPCRoute), each kind's first watch stream its events, later streams nothing."""

    def __init__(self, served: bool, events: dict[str, list[tuple[str, Obj]]]) -> None:
        self.served = served
        self.events = events
        self.items = {"Ingress": [ing("one", "100.64.0.0")], "Gateway": [gw("100.64.0.1")],
                      "HTTPRoute": [route([("traefik-gateway", True)])]}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def serves(self, api_version: str, kind: str) -> bool:
        return self.served or kind == "Ingress"

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> tuple[list[Obj], str]:
        if not self.serves(api_version, kind):
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        with self.lock:
            self.requests.append(("list", kind))
        return copy.deepcopy(self.items.get(kind, [])), "5"

    def watch(self, api_version: str, kind: str, **kw: Any) -> Iterator[tuple[str, Obj]]:
        with self.lock:
            self.requests.append(("watch", kind))
            events, self.events[kind] = self.events.get(kind, []), []
        yield from events


def test_one_list_and_watch_per_kind_side_by_side_and_the_verdicts_of_each() -> None:
    api = GatewayApi(True, {"Gateway": [("MODIFIED", gw("100.64.0.2", rv=6)), ("MODIFIED", gw("100.64.0.1", rv=7))],
                            "HTTPRoute": [("MODIFIED", route([("traefik-gateway", False)], rv=8))]})
    r = run(api, Selection(namespaces=["one", "traefik-a"]), parse_options(1, 0, False, [], False, False))
    assert {k: api.requests.count(("list", k)) for k in ("Ingress", "Gateway", "HTTPRoute")} == {"Ingress": 1, "Gateway": 1, "HTTPRoute": 1}
    assert set(r["watches"]) == {"Ingress", "Gateway", "HTTPRoute", "GRPCRoute"} and r["grpcroutes"] == {}
    assert sorted((c.get("kind", "Ingress"), c["new"]) for c in r["timeline"]) == [
        ("Gateway", ["100.64.0.1"]), ("Gateway", ["100.64.0.2"]), ("HTTPRoute", [])]
    assert r["ingresses"]["one/test"]["passed"] and not r["gateways"]["traefik-a/traefik-gateway"]["passed"]
    assert r["routes"]["traefik-a/app"]["reason"].endswith("not Accepted: Accepted=False (NotAllowedByListeners), written by traefik")
    assert not r["passed"] and len(r["failures"]) == 2
    assert r["gateways"]["traefik-a/traefik-gateway"]["note"] is None


def test_without_the_crds_nothing_extra_is_asked_and_nothing_extra_is_returned() -> None:
    api = GatewayApi(False, {})
    r = run(api, Selection(), parse_options(0.5, 0, False, [], False, False))
    assert {k for _verb, k in api.requests} == {"Ingress"}
    assert "gateways" not in r and "routes" not in r and "watches" not in r and r["passed"]


def test_gateway_api_false_watches_ingresses_only_and_stop_on_violation_stops_every_watch() -> None:
    api = GatewayApi(True, {})
    r = run(api, Selection(), parse_options(0.5, 0, False, [], False, False, gateway_api=False))
    assert {k for _verb, k in api.requests} == {"Ingress"} and "gateways" not in r
    api = GatewayApi(True, {"Gateway": [("MODIFIED", gw(None, rv=6))]})
    r = run(api, Selection(), parse_options(30, 5, False, [], True, False))
    assert r["stopped_early"] == "Gateway traefik-a/traefik-gateway"


def test_a_parent_entry_of_a_controller_name_no_known_writer_uses_is_nobodys() -> None:
    """gateway-api#3846's shape: an entry under a controllerName none of the known Gateway API writers claims."""
    t = tracker(max_changes=5)
    other = route([("traefik-gateway", True)], rv=2)
    other["status"]["parents"][0]["controllerName"] = "example.net/other"
    t.event("MODIFIED", other, at(1), sub.HTTPROUTE)
    added = [c for c in t.timeline if c["controller"] == "example.net/other"]
    w.attribute(added, [], w.Evidence(w.publishers_of(two_installs(selectors=False))))
    assert [(c["pod"], c["attributed_by"], c["candidates"]) for c in added] == [(None, "none", [])]
