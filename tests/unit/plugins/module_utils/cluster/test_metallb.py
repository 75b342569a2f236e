from __future__ import annotations

import copy
import io
from typing import Any

import jsonschema
import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import metallb as mlb
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, WaitTimeout
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import PoolError, parse_pools
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import METALLB_VERSION
from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all

WEBHOOK_DOWN = (
    'apply IPAddressPool metallb-system/lab failed: Internal error occurred: failed calling webhook '
    '"ipaddresspoolvalidationwebhook.metallb.io": failed to call webhook: Post '
    '"https://metallb-webhook-service.metallb-system.svc:443/validate-metallb-io-v1beta1-ipaddresspool?timeout=10s": '
    'dial tcp 10.96.112.40:443: connect: connection refused'
)
NO_ENDPOINTS = (
    'apply IPAddressPool metallb-system/lab failed: Internal error occurred: failed calling webhook '
    '"ipaddresspoolvalidationwebhook.metallb.io": failed to call webhook: Post "https://metallb-webhook-service.'
    'metallb-system.svc:443/validate-metallb-io-v1beta1-ipaddresspool?timeout=10s": no endpoints available for '
    'service "metallb-webhook-service"'
)


# --- a strict validator for custom resources against the CRD we render -----------------------


def _strict(schema: Any) -> Any:
    """OpenAPI v3 schema → JSON schema that rejects unknown fields (the API server would
    prune them silently, which hides typos)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def validate_custom(obj: dict[str, Any], crd: dict[str, Any]) -> None:
    group, _sep, version = obj["apiVersion"].partition("/")
    spec = crd["spec"]
    assert spec["group"] == group and spec["names"]["kind"] == obj["kind"]
    (served,) = [v for v in spec["versions"] if v["name"] == version and v["served"]]
    jsonschema.validate(obj, _strict(served["schema"]["openAPIV3Schema"]))


def crd_for(kind: str) -> dict[str, Any]:
    return {"IPAddressPool": mlb.ipaddresspool_crd(), "L2Advertisement": mlb.l2advertisement_crd()}[kind]


# --- rendered installation ------------------------------------------------------------------------


def test_rendered_objects_validate_against_kubernetes() -> None:
    validate_all(mlb.render_native())


def test_rendered_objects_are_the_core_of_the_native_manifest() -> None:
    refs = [(o["kind"], o["metadata"]["name"]) for o in mlb.render_native()]
    assert refs == [
        ("Namespace", "metallb-system"),
        ("CustomResourceDefinition", "ipaddresspools.metallb.io"),
        ("CustomResourceDefinition", "l2advertisements.metallb.io"),
        ("ServiceAccount", "controller"),
        ("ServiceAccount", "speaker"),
        ("ClusterRole", "metallb-system:controller"),
        ("Role", "controller"),
        ("ClusterRoleBinding", "metallb-system:controller"),
        ("RoleBinding", "controller"),
        ("ConfigMap", "metallb-excludel2"),
        ("Secret", "metallb-webhook-cert"),
        ("Deployment", "controller"),
        ("DaemonSet", "speaker"),
    ]


def test_namespace_is_privileged_for_the_speaker() -> None:
    ns = mlb.render_native()[0]
    assert ns["metadata"]["labels"] == {
        "pod-security.kubernetes.io/audit": "privileged",
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
    }


def test_images_and_args_match_upstream() -> None:
    objs = {o["kind"]: o for o in mlb.render_native()}
    (ctrl,) = objs["Deployment"]["spec"]["template"]["spec"]["containers"]
    (spk,) = objs["DaemonSet"]["spec"]["template"]["spec"]["containers"]
    assert ctrl["image"] == "quay.io/metallb/controller:%s" % METALLB_VERSION
    assert spk["image"] == "quay.io/metallb/speaker:%s" % METALLB_VERSION
    assert ctrl["args"] == spk["args"] == ["--port=9120", "--log-level=info"]
    assert objs["DaemonSet"]["spec"]["template"]["spec"]["hostNetwork"] is True
    assert objs["Deployment"]["spec"]["selector"]["matchLabels"] == {"app": "metallb", "component": "controller"}
    excl = yaml.safe_load(objs["ConfigMap"]["data"]["excludel2.yaml"])
    assert "^veth.*" in excl["announcedInterfacesToExclude"]


def test_crd_schema_subset() -> None:
    pool = mlb.ipaddresspool_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert pool["required"] == ["addresses"]
    assert set(pool["properties"]) == {"addresses", "autoAssign", "avoidBuggyIPs", "serviceAllocation"}
    assert set(pool["properties"]["serviceAllocation"]["properties"]) == {"priority", "namespaces", "namespaceSelectors", "serviceSelectors"}
    l2 = mlb.l2advertisement_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert {"ipAddressPools", "ipAddressPoolSelectors", "nodeSelectors", "interfaces"} <= set(l2["properties"])


# --- pool and advertisement objects -----------------------------------------------------------------


POOLS = parse_pools([
    {"name": "lab", "addresses": ["100.64.0.0/16"]},
    {"name": "reserved", "addresses": ["100.65.0.10-100.65.0.20", "fd00:64::1"], "auto_assign": False},
])


def test_pool_objects_validate_against_the_crd() -> None:
    for pool in POOLS:
        obj = mlb.pool_object(pool)
        validate_custom(obj, crd_for("IPAddressPool"))
    assert mlb.pool_object(POOLS[1])["spec"] == {"addresses": ["100.65.0.10-100.65.0.20", "fd00:64::1/128"], "autoAssign": False}


def test_l2_object_validates_against_the_crd() -> None:
    obj = mlb.l2_object("kindlab", POOLS)
    validate_custom(obj, crd_for("L2Advertisement"))
    assert obj["spec"] == {"ipAddressPools": ["lab", "reserved"]}


def test_validator_catches_typos() -> None:
    obj = mlb.pool_object(POOLS[0])
    obj["spec"]["autoassign"] = True
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(obj, crd_for("IPAddressPool"))
    obj = mlb.pool_object(POOLS[0])
    del obj["spec"]["addresses"]
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(obj, crd_for("IPAddressPool"))


def test_full_upstream_style_pool_validates() -> None:
    obj = {"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool", "metadata": {"name": "p", "namespace": "metallb-system"},
           "spec": {"addresses": ["192.168.10.0/24"], "autoAssign": True, "avoidBuggyIPs": True,
                    "serviceAllocation": {"priority": 50, "namespaces": ["one"],
                                          "namespaceSelectors": [{"matchLabels": {"team": "a"}}],
                                          "serviceSelectors": [{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}]}}}
    validate_custom(obj, crd_for("IPAddressPool"))
    l2 = {"apiVersion": "metallb.io/v1beta1", "kind": "L2Advertisement", "metadata": {"name": "l2", "namespace": "metallb-system"},
          "spec": {"ipAddressPoolSelectors": [{"matchLabels": {"x": "y"}}], "nodeSelectors": [{"matchLabels": {"kubernetes.io/hostname": "lab-worker"}}],
                   "interfaces": ["eth0"]}}
    validate_custom(l2, crd_for("L2Advertisement"))


# --- manifest --------------------------------------------------------------------------------------


def test_parse_manifest_drops_empty_documents() -> None:
    text = ("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: metallb-system\n---\n---\n"
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: controller\n")
    assert [d["kind"] for d in mlb.parse_manifest(text)] == ["Namespace", "ServiceAccount"]


@pytest.mark.parametrize("text", ["", "just a string\n", "key: [unclosed\n", "- a\n- b\n"])
def test_parse_manifest_rejects_non_objects(text) -> None:
    with pytest.raises(mlb.MetallbError):
        mlb.parse_manifest(text)


def test_fetch_manifest_uses_open_url() -> None:
    seen = {}

    def open_url(url, timeout):
        seen["url"], seen["timeout"] = url, timeout
        return io.BytesIO(b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: metallb-system\n")

    docs = mlb.fetch_manifest("https://example.invalid/m.yaml", open_url)
    assert docs[0]["kind"] == "Namespace" and seen == {"url": "https://example.invalid/m.yaml", "timeout": 30}


def test_fetch_manifest_offline_suggests_rendered() -> None:
    def open_url(url, timeout):
        raise OSError("<urlopen error [Errno -3] Temporary failure in name resolution>")

    with pytest.raises(mlb.MetallbError, match="use source: rendered"):
        mlb.fetch_manifest("https://raw.githubusercontent.com/x", open_url)


# --- retry ------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s


def test_retry_until_the_webhook_answers() -> None:
    clock = Clock()
    errors = [K8sError(WEBHOOK_DOWN), K8sError(NO_ENDPOINTS), K8sError(WEBHOOK_DOWN)]

    def apply(obj):
        if errors:
            raise errors.pop(0)
        return "ok"

    assert mlb.apply_with_retry(apply, mlb.pool_object(POOLS[0]), 60, sleep=clock.sleep, clock=clock) == "ok"
    assert clock.sleeps == [1.0, 2.0, 4.0]


def test_retry_gives_up_with_a_clear_error() -> None:
    clock = Clock()

    def apply(obj):
        raise K8sError(WEBHOOK_DOWN)

    with pytest.raises(mlb.MetallbError) as exc:
        mlb.apply_with_retry(apply, mlb.pool_object(POOLS[0]), 30, sleep=clock.sleep, clock=clock)
    msg = str(exc.value)
    assert "IPAddressPool metallb-system/lab was still refused after" in msg
    assert "validating webhook is not answering" in msg and "connection refused" in msg
    assert clock.now <= 30 and max(clock.sleeps) == 10.0


def test_other_errors_are_not_retried() -> None:
    calls = []

    def apply(obj):
        calls.append(obj)
        raise K8sError('admission webhook "ipaddresspoolvalidationwebhook.metallb.io" denied the request: '
                       'CIDR "100.64.0.0/16" in pool "lab" overlaps with already defined CIDR "100.64.0.0/24"')

    with pytest.raises(K8sError, match="denied the request"):
        mlb.apply_with_retry(apply, {"kind": "IPAddressPool", "metadata": {"name": "lab"}}, 60, sleep=lambda s: None)
    assert len(calls) == 1


# --- plan ------------------------------------------------------------------------------------------

KIND_RESULT = {"node_subnets": ["fc00:f853:ccd:e793::/64", "172.18.0.0/16"], "pod_subnets": ["10.244.0.0/16"],
               "service_subnets": ["10.96.0.0/16"], "kubeconfig": "/k", "context": "kind-lab"}


def test_plan_reads_networks_from_the_cluster_result() -> None:
    with pytest.raises(PoolError, match="overlaps the node network 172.18.0.0/16"):
        mlb.plan({"pools": [{"name": "lab", "addresses": ["172.18.255.200-172.18.255.250"]}], "cluster": KIND_RESULT})
    p = mlb.plan({"pools": [{"name": "lab", "addresses": ["172.18.255.200-172.18.255.250"]}], "cluster": KIND_RESULT,
                  "allow_overlap_with_cluster_networks": True})
    assert p.warnings == ["pool 'lab' entry '172.18.255.200-172.18.255.250' overlaps the node network 172.18.0.0/16"]


def test_plan_explicit_networks_override_the_cluster() -> None:
    p = mlb.plan({"pools": [{"name": "lab", "addresses": ["172.18.255.200-172.18.255.250"]}], "cluster": KIND_RESULT,
                  "node_subnets": ["192.168.0.0/16"]})
    assert p.warnings == []


def test_plan_warns_without_networks() -> None:
    p = mlb.plan({"pools": [{"name": "lab", "addresses": ["100.64.0.0/16"]}]})
    assert "were not checked for overlaps" in p.warnings[0]


def test_plan_with_host_access_carves_the_pool() -> None:
    p = mlb.plan({"pools": [{"name": "lab", "addresses": ["100.64.0.0/16"]}], "cluster": KIND_RESULT, "host_access": True})
    assert [h.cidr for h in p.host_access] == ["100.64.255.254/16"]
    assert p.pools[0].addresses() == ["100.64.0.1-100.64.255.253"]
    assert p.declared[0].addresses() == ["100.64.0.0/16"]


# --- ensure_metallb with a fake client -----------------------------------------------------------


class FakeClient:
    """Stores objects by (kind, namespace, name); apply reports a change when the object differs."""

    def __init__(self, ready: bool = True, webhook_failures: int = 0):
        self.store: dict[tuple, dict] = {}
        self.ready = ready
        self.webhook_failures = webhook_failures
        self.applied: list[str] = []

    def _key(self, obj):
        return (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])

    def apply(self, obj, check_mode=False, force=True):
        if obj["kind"] in ("IPAddressPool", "L2Advertisement"):
            if not any(k[0] == "CustomResourceDefinition" for k in self.store):
                raise K8sError("the cluster does not serve metallb.io/v1beta1 %s" % obj["kind"])
            if self.webhook_failures:
                self.webhook_failures -= 1
                raise K8sError(WEBHOOK_DOWN)
        before = self.store.get(self._key(obj))
        changed = before != obj
        if changed and not check_mode:
            self.store[self._key(obj)] = copy.deepcopy(obj)
            self.applied.append(obj["kind"])
        return ApplyResult(changed=changed, before=before, after=obj)

    def apply_all(self, objs, check_mode=False):
        from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import apply_order

        return [self.apply(o, check_mode) for o in sorted(objs, key=apply_order)]

    def get(self, api_version, kind, name, namespace=None):
        if kind == "Deployment":
            obj = self.store.get((kind, namespace, name))
            if obj is None:
                return None
            status = {"readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1} if self.ready else {}
            return dict(obj, status=status)
        return self.store.get((kind, namespace, name))

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        return []  # no pods: a controller that is not ready is still starting, not failing


def run(client, check_mode=False, **params):
    the_plan = mlb.plan({"pools": [{"name": "lab", "addresses": ["100.64.0.0/16"]}], "cluster": KIND_RESULT, **params})
    clock = Clock()
    return mlb.ensure_metallb(client, the_plan, "rendered", mlb.render_native(), "kindlab", True, 60, check_mode,
                              sleep=clock.sleep, clock=clock)


def test_install_then_idempotent() -> None:
    client = FakeClient(webhook_failures=2)
    first = run(client)
    assert first["changed"] is True
    assert client.applied[-2:] == ["IPAddressPool", "L2Advertisement"]
    assert {"ref": "IPAddressPool metallb-system/lab", "changed": True} in first["objects"]
    assert first["pools"][0]["size"] == 65536 and first["host_access"] == []
    second = run(client)
    assert second["changed"] is False and second["diff"] == []


def test_check_mode_on_an_empty_cluster_plans_everything_and_writes_nothing() -> None:
    client = FakeClient()
    result = run(client, check_mode=True)
    assert result["changed"] is True and client.store == {}
    assert {"ref": "L2Advertisement metallb-system/kindlab", "changed": True} in result["objects"]


def test_check_mode_after_install_reports_no_change() -> None:
    client = FakeClient()
    run(client)
    assert run(client, check_mode=True)["changed"] is False


def test_controller_never_ready_times_out() -> None:
    with pytest.raises(WaitTimeout, match="MetalLB controller Deployment metallb-system/controller"):
        run(FakeClient(ready=False))


def test_host_access_is_returned_and_applied() -> None:
    client = FakeClient()
    result = run(client, host_access=True)
    assert result["host_access"][0]["cidr"] == "100.64.255.254/16"
    assert client.store[("IPAddressPool", "metallb-system", "lab")]["spec"]["addresses"] == ["100.64.0.1-100.64.255.253"]
