"""Traefik's method=manifest (controllers/traefik/manifests.py): what it refuses, and the install
flow it takes part in (check mode, apply, idempotency, pruning). That the objects equal the
chart's is checked against real `helm template` in tests/twin/test_traefik_chart_args.py."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import install as ctl
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart, manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import ValuesError
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.controllers.test_install import FakeClient

NO_CRDS: dict[str, Any] = {"providers": {"kubernetesCRD": {"enabled": False}}}


def traefik_req(values: dict[str, Any] | None = None, **kw: Any) -> ctl.Request:
    base: dict[str, Any] = {"type": "traefik", "namespace": "edge", "release": "traefik", "method": "manifest",
                            "values": NO_CRDS if values is None else values, "wait": False}
    base.update(kw)
    return ctl.Request(**base)


@pytest.mark.parametrize("values, message", [
    ({}, "providers.kubernetesCRD.enabled must be false: method=manifest applies none of the chart's CRDs"),
    ({**NO_CRDS, "tolerations": [{"key": "x"}]}, "values.tolerations (not rendered by method=manifest)"),
    ({**NO_CRDS, "deployment": {"kind": "DaemonSet"}}, "deployment.kind DaemonSet"),
    ({**NO_CRDS, "log": {"level": "debug"}}, "log.level: expected one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, PANIC"),
    ({"providers": {"kubernetesCRD": {"enabled": False}, "kubernetesGateway": {"enabled": True}}}, "kubernetesGateway"),
    ({**NO_CRDS, "api": {"insecure": "yes"}}, "api.insecure: expected a boolean"),
])
def test_values_it_cannot_render_are_refused_by_name(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValuesError, match="method=manifest cannot render these values \\(use method=helm\\): .*" + message.split("(")[0][:40]):
        manifests.render_manifests(chart.effective_config(values, "traefik", "edge"))
    with pytest.raises(ctl.ControllerError, match="values: method=manifest cannot render"):
        ctl.plan(traefik_req(values))


def test_cluster_and_namespace_scoped_objects() -> None:
    cluster = manifests.render_manifests(chart.effective_config(NO_CRDS, "traefik", "edge"))
    assert [(o["kind"], o["metadata"]["name"]) for o in cluster] == [
        ("ServiceAccount", "traefik"), ("ClusterRole", "traefik-edge"), ("ClusterRoleBinding", "traefik-edge"),
        ("Service", "traefik"), ("Deployment", "traefik"), ("IngressClass", "traefik")]
    scoped = {**NO_CRDS, "rbac": {"namespaced": True},
              "providers": {"kubernetesCRD": {"enabled": False}, "kubernetesIngress": {"namespaces": ["apps"]}}}
    roles = [o for o in manifests.render_manifests(chart.effective_config(scoped, "traefik", "edge")) if o["kind"] == "Role"]
    assert [o["metadata"]["namespace"] for o in roles] == ["apps", "edge"]
    assert all("ingresses" in [r for rule in o["rules"] for r in rule["resources"]] for o in roles)
    deployment = next(o for o in manifests.render_manifests(chart.effective_config(scoped, "traefik", "edge")) if o["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--providers.kubernetesingress.disableClusterScopeResources=true" in args and args[-1] == "--log.level=INFO"


def test_install_check_mode_apply_idempotent_then_prune() -> None:
    client = FakeClient()
    preview = ctl.run(traefik_req(), check_mode=True, client_factory=lambda: client)
    assert preview["changed"] is True and client.store == {}
    assert "Deployment edge/traefik" in preview["objects"] and "ClusterRole traefik-edge" in preview["objects"]
    applied = ctl.run(traefik_req(wait=True), check_mode=False, client_factory=lambda: client)
    assert applied["changed"] is True and applied["ready"].startswith("1/1 ready")
    again = ctl.run(traefik_req(), check_mode=False, client_factory=lambda: client)
    assert again["changed"] is False and again["diff"] == []
    # Namespace-scoped now: the ClusterRole and its binding are no longer rendered, so they go.
    scoped = traefik_req({**NO_CRDS, "rbac": {"namespaced": True}})
    moved = ctl.run(scoped, check_mode=False, client_factory=lambda: client)
    assert sorted(moved["pruned"]) == ["ClusterRole traefik-edge", "ClusterRoleBinding traefik-edge"]
    assert ("Role", "traefik", "edge") in client.store and ("ClusterRole", "traefik-edge", None) not in client.store
    gone = ctl.run(traefik_req({**NO_CRDS, "rbac": {"namespaced": True}}, state="absent"), check_mode=False,
                   client_factory=lambda: client)
    assert gone["changed"] is True and ("Deployment", "traefik", "edge") not in client.store


def deployment_args(parsed: dict[str, Any]) -> list[str]:
    cfg = chart.effective_config(parsed["values"], parsed["release"], parsed["namespace"])
    [deployment] = [o for o in manifests.render_manifests(cfg) if o["kind"] == "Deployment"]
    return list(deployment["spec"]["template"]["spec"]["containers"][0]["args"])


def test_the_lab_turns_the_api_on_and_a_users_install_does_not() -> None:
    """lab_definition (parse_controllers with the lab's images) folds the type's lab_values in:
    the API on the traefik entrypoint, for ingress_dataplane; a scenario may still turn it off;
    the ingress_controller module alone (no images) installs the chart's default, the API off."""
    lab = {"type": "traefik", "namespace": "edge", "release": "traefik", "method": "manifest", "values": NO_CRDS}
    [parsed] = ctl.parse_controllers([lab], {"traefik": "docker.io/traefik:v3.7.13"})
    assert parsed["values"]["api"] == {"insecure": True}
    args = deployment_args(parsed)
    assert args[args.index("--api.dashboard=true") + 1] == "--api.insecure=true"
    off = dict(lab, values={**NO_CRDS, "api": {"insecure": False}})
    [parsed] = ctl.parse_controllers([off], {"traefik": "docker.io/traefik:v3.7.13"})
    assert "--api.insecure=false" in deployment_args(parsed)
    [user] = ctl.parse_controllers([lab])
    assert "api" not in user["values"] and not any(a.startswith("--api.insecure") for a in deployment_args(user))
