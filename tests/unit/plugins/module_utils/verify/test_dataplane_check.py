from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import AnalysedController
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Reading, Upstream
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import dataplane as dp
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import BackendRef
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import FoundWorkload

Obj = dict[str, Any]

SERVICE = {"metadata": {"namespace": "two", "name": "web"},
           "spec": {"clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"], "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def endpoint(ip: str, ready: bool = True, terminating: bool = False, serving: bool | None = None, pod: str = "") -> Obj:
    conditions: Obj = {"ready": ready, "terminating": terminating}
    if serving is not None:
        conditions["serving"] = serving
    return {"addresses": [ip], "conditions": conditions, "targetRef": {"kind": "Pod", "name": pod or "web-" + ip.rsplit(".", 1)[1]}}


def slices(*endpoints: Obj) -> list[Obj]:
    return [{"ports": [{"name": "http", "port": 8080}], "endpoints": list(endpoints)},
            {"ports": [{"name": "metrics", "port": 9090}], "endpoints": [endpoint("10.244.9.9")]}]


# A rollout: .7 and .8 are the new ready pods, .5 is terminating, .4 is gone.
SLICES = slices(endpoint("10.244.0.7"), endpoint("10.244.0.8"), endpoint("10.244.0.5", ready=False, terminating=True, serving=True))
API = dp.api_side("two", BackendRef("web", 80, "*/"), SERVICE, SLICES)


def test_slice_endpoints_read_the_conditions_and_the_named_port() -> None:
    eps = {e.target: e for e in dp.slice_endpoints(SLICES, "http")}
    assert set(eps) == {"10.244.0.5:8080", "10.244.0.7:8080", "10.244.0.8:8080"}
    assert eps["10.244.0.5:8080"].terminating and eps["10.244.0.5:8080"].serving and not eps["10.244.0.5:8080"].ready
    unset = dp.slice_endpoints([{"ports": [{"port": 80}], "endpoints": [{"addresses": ["10.0.0.1"]}]}], None)
    assert unset[0].ready and unset[0].serving and not unset[0].terminating
    assert sorted(API.ready) == ["10.244.0.7:8080", "10.244.0.8:8080"] and API.cluster_targets == ("10.96.0.20:80",)


def reading(*targets: str, fenced: tuple[str, ...] = ()) -> Reading:
    ups = tuple(Upstream(t.rsplit(":", 1)[0], t.rsplit(":", 1)[1], t in fenced) for t in targets)
    return Reading("test", {"two-web-80": ups})


def test_compare_stale_and_missing() -> None:
    result = dp.compare(reading("10.244.0.4:8080", "10.244.0.5:8080", "10.244.0.7:8080"), ("two-web-80",), API)
    assert [(u.target, why) for u, why in result.stale] == [
        ("10.244.0.4:8080", "not in any EndpointSlice of the Service"), ("10.244.0.5:8080", "terminating")]
    assert [e.target for e in result.missing] == ["10.244.0.8:8080"] and result.missing[0].pod == "web-8"


def test_compare_up_to_date_fenced_and_cluster_ip() -> None:
    assert not dp.compare(reading("10.244.0.7:8080", "10.244.0.8:8080"), ("two-web-80",), API).stale
    drained = dp.compare(reading("10.244.0.5:8080", "10.244.0.7:8080", "10.244.0.8:8080", fenced=("10.244.0.5:8080",)),
                         ("two-web-80",), API)
    assert not drained.stale and drained.draining == ["10.244.0.5:8080"]
    via = dp.compare(reading("10.96.0.20:80"), ("two-web-80",), API)
    assert via.via_cluster_ip and not via.stale and not via.missing
    # An old ClusterIP (the Service was recreated) is stale, and the ready pods are missing.
    old = dp.compare(reading("10.96.0.99:80"), ("two-web-80",), API)
    assert [u.target for u, _w in old.stale] == ["10.96.0.99:80"] and len(old.missing) == 2


def test_an_external_name_service_is_not_compared() -> None:
    external = {"metadata": {"namespace": "two", "name": "web"},
                "spec": {"type": "ExternalName", "externalName": "example.org", "ports": [{"name": "http", "port": 80}]}}
    api = dp.api_side("two", BackendRef("web", 80, "*/"), external, [])
    result = dp.compare(Reading("test", {"two-web-80": (Upstream("example.org", "80"),)}), ("two-web-80",), api)
    assert not result.stale and not result.missing and "ExternalName" in result.note


def test_compare_backend_absent_from_the_data_plane() -> None:
    result = dp.compare(Reading("test", {}), ("two-web-80",), API)
    assert result.routed is None and "no backend two-web-80" in result.note and len(result.missing) == 2


def controller(ref_name: str = "ctl") -> AnalysedController:
    return AnalysedController(
        type="ingress_nginx", namespace="ingress", name=ref_name, kind="Deployment", pods=[], ready_pods=[], settings={},
        watch="all namespaces", publish_source="service", publish_detail="", address=["100.64.0.1"], address_from_lb=True,
        claim=lambda ing: ("yes", "its class"), watches_namespace=lambda ns: True)


def pod(name: str, phase: str = "Running") -> Obj:
    return {"metadata": {"namespace": "ingress", "name": name}, "status": {"phase": phase}}


def ingress(name: str = "test", service: str = "web") -> Obj:
    return {"metadata": {"namespace": "two", "name": name}, "spec": {"rules": [{"http": {"paths": [
        {"path": "/", "backend": {"service": {"name": service, "port": {"number": 80}}}}]}}]}}


def workload(*pods: Obj) -> FoundWorkload:
    return FoundWorkload(controller_type("ingress_nginx"), {"metadata": {"namespace": "ingress", "name": "ctl"}},
                         {"name": "controller"}, list(pods), [controller()])


def run_check(found: FoundWorkload, readings: dict[str, Reading], **kwargs: Any) -> Obj:
    reads: list[str] = []

    def read_pod(_found: FoundWorkload, p: Obj) -> Reading:
        reads.append(p["metadata"]["name"])
        return readings[p["metadata"]["name"]]

    result = dp.check([found], [ingress()], lambda ns, ref: API, read_pod, **kwargs)
    result["reads"] = reads
    return result


def test_replicas_diverge_per_pod() -> None:
    found = workload(pod("c1"), pod("c2"), pod("c3", phase="Pending"))
    result = run_check(found, {"c1": reading("10.244.0.7:8080", "10.244.0.8:8080"), "c2": reading("10.244.0.4:8080")},
                       last_ready={"two/web": {"10.244.0.4:8080": "2024-07-08T19:00:00Z"}})
    assert result["reads"] == ["c1", "c2"], "a pod that is not Running is not read"
    by_kind = {k: [(f["pod"], f.get("address")) for f in result["findings"] if f["kind"] == k] for k in dp.KINDS}
    assert by_kind == {"stale": [("ingress/c2", "10.244.0.4:8080")],
                       "missing": [("ingress/c2", "10.244.0.7:8080"), ("ingress/c2", "10.244.0.8:8080")],
                       "unread": [("ingress/c3", None)]}
    stale = next(f for f in result["findings"] if f["kind"] == "stale")
    assert stale["since"] == "2024-07-08T19:00:00Z" and stale["ingress"] == "two/test" and stale["backend"] == "web:80"
    assert stale["controller"] == "ingress/ctl" and stale["name"] == "two-web-80" and "last seen ready at 2024-07-08" in stale["message"]
    assert result["pods"]["ingress/c1"]["backends"][0]["stale"] == [] and result["pods"]["ingress/c3"]["unread"] == "pod not Running (phase Pending)"
    assert result["counts"] == {"stale": 1, "missing": 2, "unread": 1} and not result["passed"]


def test_fail_on_chooses_what_fails_but_every_finding_is_returned() -> None:
    found = workload(pod("c1"))
    unread = Reading("exec", unread="exec refused by the API server (403): forbidden", fix="grant pods/exec")
    result = run_check(found, {"c1": unread}, fail_on=("stale", "missing"))
    assert result["passed"] and result["counts"]["unread"] == 1 and result["failures"] == []
    result = run_check(found, {"c1": unread})
    assert not result["passed"] and "could not be read: exec refused" in result["failures"][0] and "grant pods/exec" in result["failures"][0]


def test_an_up_to_date_data_plane_passes() -> None:
    result = run_check(workload(pod("c1")), {"c1": reading("10.244.0.7:8080", "10.244.0.8:8080", "10.244.0.5:8080", fenced=("10.244.0.5:8080",))})
    assert result["passed"] and result["findings"] == []


def test_an_ingress_nobody_serves_is_unread() -> None:
    found = FoundWorkload(controller_type("ingress_nginx"), {"metadata": {"namespace": "ingress", "name": "ctl"}},
                          {"name": "controller"}, [pod("c1")], [])
    result = dp.check([found], [ingress()], lambda ns, ref: API, lambda f, p: Reading("x"))
    assert [f["reason"] for f in result["findings"]] == ["no controller found in the cluster serves it"] and not result["passed"]
