from __future__ import annotations

from typing import Any

import pytest
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.modules import ingress_diagnose
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import puzzle
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json, run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient as FakeStore
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose_gateways import healthy


class FakeClient:
    def __init__(self) -> None:
        self.state = puzzle()

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[dict]:
        s = self.state
        table = {"Deployment": s.workloads, "DaemonSet": [], "Pod": s.pods, "Service": s.services, "Node": s.nodes,
                 "Namespace": s.namespaces, "IngressClass": s.ingress_classes, "ClusterRole": s.cluster_roles,
                 "ClusterRoleBinding": s.cluster_role_bindings, "Ingress": s.ingresses}
        if kind not in table:  # no Gateway API CRDs: the real client's answer
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        return [i for i in table[kind] if namespace is None or i["metadata"].get("namespace") == namespace]


@pytest.fixture
def made(monkeypatch) -> list[tuple]:
    calls: list[tuple] = []

    def make_client(kubeconfig=None, context=None):
        calls.append((kubeconfig, context))
        return FakeClient()

    monkeypatch.setattr(_module, "Client", make_client)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    return calls


def run(args: dict[str, Any]) -> Exit:
    return run_module(ingress_diagnose.main, args)


def test_puzzle_findings_returned_without_failing(made) -> None:
    r = run({"kubeconfig": "/tmp/kc"})
    assert not r.failed and r.result["changed"] is False and r.result["passed"] is False
    assert made == [("/tmp/kc", None)]
    culprits = {c for f in r.result["findings"] for c in f.get("culprits", [])}
    assert culprits == {"two/ingress-ingress-nginx-controller"}


def test_fail_on_findings(made) -> None:
    r = run({"fail_on_findings": True, "namespaces": ["one"]})
    assert r.failed and "1 error finding(s): one/test: 2 controllers write its status" in r.result["msg"]
    assert r.result["findings"]


def test_bad_selection_fails_before_any_request(made) -> None:
    r = run({"namespaces": ["Not_A_Namespace"]})
    assert r.failed and r.result["msg"].startswith("namespaces: expected a list of namespace names")
    r = run({"label_selector": "a in b"})
    assert r.failed and "label_selector" in r.result["msg"]
    assert made == []


def gateway_lab() -> FakeStore:
    """The repo's in-memory client holding one Traefik with its Gateway provider, its GatewayClass,
    Gateway and a route; Gateway API is served unless a test says otherwise."""
    st = healthy()
    client = FakeStore(["traefik-a", "apps"])
    for kind, objs in (("Deployment", st.workloads), ("Pod", st.pods), ("Service", st.services),
                       ("GatewayClass", st.gateway_classes), ("Gateway", st.gateways), ("HTTPRoute", st.http_routes)):
        for obj in objs:
            client.objects[(kind, obj["metadata"].get("namespace"), obj["metadata"]["name"])] = dict(obj, kind=kind)
    return client


def test_gateway_api_is_diagnosed_where_it_is_served(monkeypatch) -> None:
    client = gateway_lab()
    use_fake_exits(monkeypatch, client)
    r = run_module(ingress_diagnose.main, {"fail_on_findings": True})
    assert not r.failed and r.result["passed"] and r.result["gateway_api"]["served"]
    assert r.result["gateway_api"]["gateways"]["traefik-a/traefik-gateway"]["writers"][0]["address"] == ["100.64.0.1"]
    assert [f["kind"] for f in r.result["findings"]] == ["gateway_class_claimed", "gateway_address"]
    # its status Service gone: the sync stops, an error finding that fails the task when asked to
    del client.objects[("Service", "traefik-a", "traefik")]
    r = run_module(ingress_diagnose.main, {"fail_on_findings": True})
    assert r.failed and "gateway_status_blocked" in [f["kind"] for f in r.result["findings"]]


def test_without_gateway_api_crds_there_is_nothing_to_say(monkeypatch) -> None:
    client = gateway_lab()
    client.not_served = {"GatewayClass", "Gateway", "HTTPRoute"}
    use_fake_exits(monkeypatch, client)
    r = run_module(ingress_diagnose.main, {})
    assert not r.failed and r.result["findings"] == []
    gateway_api = r.result["gateway_api"]
    assert not gateway_api["served"] and gateway_api["gateways"] == gateway_api["routes"] == {}
    # the controller is still read from its args
    assert [c["controller"] for c in gateway_api["controllers"]] == ["traefik-a/traefik@kubernetesgateway"]
