"""HTTPRoutes that tie for the same requests on one listener, and the winner Gateway API's precedence names."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import route_conflicts as rc
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate

Obj = dict[str, Any]


def gateway(*listeners: Obj) -> Obj:
    return {"metadata": {"namespace": "traefik", "name": "edge"}, "spec": {"gatewayClassName": "traefik", "listeners": list(listeners) or [
        {"name": "web", "port": 8000, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}}]}}


def route(ns: str, created: str, path: str = "/login", path_type: str = "PathPrefix", hosts: tuple[str, ...] = ("app.example.test",),
          **match: Any) -> Obj:
    return {"metadata": {"namespace": ns, "name": "login", "creationTimestamp": created},
            "spec": {"parentRefs": [{"name": "edge", "namespace": "traefik"}], "hostnames": list(hosts),
                     "rules": [{"matches": [dict({"path": {"type": path_type, "value": path}}, **match)],
                                "backendRefs": [{"name": "login", "port": 80}]}]}}


def state(*routes: Obj, gw: Obj | None = None) -> base.ClusterState:
    return base.ClusterState(gateway_api=True, gateways=[gw or gateway()], http_routes=list(routes),
                             namespaces=[{"metadata": {"name": n}} for n in ("traefik", "team-a", "team-b")])


def test_two_teams_same_host_and_path_the_older_route_wins() -> None:
    [c] = rc.find(state(route("team-b", "2026-11-26T10:00:00Z"), route("team-a", "2026-11-26T10:00:05Z")))
    assert c["routes"] == ["team-b/login", "team-a/login"] and c["winner"] == "team-b/login"
    assert (c["gateway"], c["listener"], c["host"], c["path"]) == ("traefik/edge", "web", "app.example.test", "PathPrefix /login")
    assert c["why"] == "the older route wins (created 2026-11-26T10:00:00Z, the other 2026-11-26T10:00:05Z)"
    assert "team-a/login's rule 0 (to login:80) serves nothing there" in c["message"]


def test_created_in_one_second_the_first_by_name_wins_and_a_trailing_slash_is_the_same_prefix() -> None:
    [c] = rc.find(state(route("team-b", "2026-11-26T10:00:00Z"), route("team-a", "2026-11-26T10:00:00Z", path="/login/")))
    assert c["winner"] == "team-a/login" and c["why"] == "created in the same second: the first by namespace/name wins"


def test_precedence_settles_what_is_no_tie() -> None:
    t = "2026-11-26T10:00:00Z"
    assert rc.find(state(route("team-a", t), route("team-b", t, path="/login/admin"))) == []  # the longer prefix wins
    assert rc.find(state(route("team-a", t), route("team-b", t, path_type="Exact"))) == []  # Exact before Prefix
    assert rc.find(state(route("team-a", t), route("team-b", t, method="POST"))) == []  # a method match first
    assert rc.find(state(route("team-a", t), route("team-b", t, hosts=("other.example.test",)))) == []  # another host
    # a wildcard covering the host, and a route without hostnames, take the same requests
    assert [c["host"] for c in rc.find(state(route("team-a", t), route("team-b", t, hosts=("*.example.test",))))] == ["app.example.test"]
    assert len(rc.find(state(route("team-a", t), route("team-b", t, hosts=())))) == 1


def test_only_routes_the_listener_takes() -> None:
    t = "2026-11-26T10:00:00Z"
    same_ns_only = gateway({"name": "web", "port": 8000, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "Same"}}})
    assert rc.find(state(route("team-a", t), route("team-b", t), gw=same_ns_only)) == []
    no_api = state(route("team-a", t), route("team-b", t))
    no_api.gateway_api = False
    assert rc.find(no_api) == []


def test_the_conflicts_check_expects_the_pair_and_its_winner() -> None:
    found = {"conflicts": [], "route_conflicts": rc.find(state(route("team-b", "2026-11-26T10:00:00Z"), route("team-a", "2026-11-26T10:00:05Z")))}
    ok = evaluate({"conflicts": found}, {"conflicts": {"expected": [{"routes": ["team-a/login", "team-b/login"], "winner": "team-b/login"}]}})
    assert [(v.subject, v.met) for v in ok] == [("team-a/login vs team-b/login", True)]
    wrong = evaluate({"conflicts": found}, {"conflicts": {"expected": [{"routes": ["team-a/login", "team-b/login"], "winner": "team-a/login"}]}})
    assert [v.met for v in wrong] == [False] and wrong[0].expected == "conflict, won by team-a/login"
    assert [v.met for v in evaluate({"conflicts": found}, {})] == [False]  # unexpected, like an Ingress conflict


def traefik_serving(ns: str = "traefik") -> tuple[list[Obj], list[Obj]]:
    """A Traefik Deployment with its Gateway provider on (its entry point web on :8000), and its pod."""
    labels = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-" + ns}
    args = ["--entryPoints.web.address=:8000/tcp", "--providers.kubernetesgateway"]
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": ns},
              "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                  "containers": [{"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": args}]}}}}
    pod = {"metadata": {"namespace": ns, "name": "traefik-abc", "labels": labels}, "spec": {},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    return [deploy], [pod]


def test_an_implementation_that_ignores_the_tie_break_is_named_beside_the_spec_winner() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import gateway as traefik_gateway
    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_workloads, gateway_controllers

    t = "2026-11-26T10:00:00Z"
    s = state(route("team-b", t), route("team-a", t))
    s.workloads, s.pods = traefik_serving()
    s.gateway_classes = [{"metadata": {"name": "traefik"}, "spec": {"controllerName": traefik_gateway.CONTROLLER_NAME}}]
    controllers = gateway_controllers(s, find_workloads(s))
    assert [c.ref for c in controllers] == ["traefik/traefik@kubernetesgateway"]
    [c] = rc.find(s, controllers)
    assert c["winner"] == "team-a/login"  # the spec's answer is still the one given
    assert c["served_otherwise"] == {"traefik/traefik@kubernetesgateway": traefik_gateway.ON_ROUTE_TIE}
    assert c["message"].endswith("; but traefik/traefik@kubernetesgateway serves this Gateway: " + traefik_gateway.ON_ROUTE_TIE)
    # a class it does not claim: it serves nothing here, and nothing is added
    s.gateway_classes = [{"metadata": {"name": "traefik"}, "spec": {"controllerName": "example.com/other"}}]
    [c] = rc.find(s, controllers)
    assert c["served_otherwise"] == {} and "but" not in c["message"]
