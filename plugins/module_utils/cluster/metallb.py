# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MetalLB for the lab: the installation (upstream manifest or rendered equivalent), then
the address pools and one L2Advertisement.

`upstream` applies the pinned metallb-native manifest document by document (server-side).
`rendered` builds the same core objects here for clusters without network access (the
twin): namespace with the pod-security labels, the IPAddressPool and L2Advertisement CRDs
(a faithful subset of their schema), service accounts, the `controller` Deployment and the
`speaker` DaemonSet with the upstream images and arguments. The validating webhook is
only in the upstream manifest; the pool apply is retried while it is not answering yet.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import apply_order
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_for_workload
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import (
    ClusterNetworks,
    Pool,
    PoolError,
    check_cluster_overlap,
    parse_pools,
    plan_host_access,
    split_cidrs,
)
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    METALLB_CONTROLLER_IMAGE,
    METALLB_SPEAKER_IMAGE,
)
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml

Obj = dict[str, Any]

NAMESPACE = "metallb-system"
API_VERSION = "metallb.io/v1beta1"
SOURCES = ("upstream", "rendered")
_LABELS = {"app": "metallb"}

# Errors the API server returns while MetalLB's webhook is not serving yet (no endpoints,
# pod starting, certificate not injected): worth retrying; anything else is final.
WEBHOOK_NOT_READY = (
    "failed calling webhook",
    "no endpoints available for service",
    "connection refused",
    "context deadline exceeded",
    "x509: certificate signed by unknown authority",
    "service unavailable",
)


class MetallbError(KindlabError):
    """MetalLB could not be installed or configured; the message is meant for the user."""


# --- rendered installation --------------------------------------------------------------


def _label_selector_schema() -> Obj:
    requirement = {
        "type": "object",
        "required": ["key", "operator"],
        "properties": {
            "key": {"type": "string"},
            "operator": {"type": "string"},
            "values": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
        },
    }
    return {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {
            "matchExpressions": {"type": "array", "items": requirement, "x-kubernetes-list-type": "atomic"},
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }


def _selectors() -> Obj:
    return {"type": "array", "items": _label_selector_schema()}


def _crd(kind: str, plural: str, spec_schema: Obj, status_schema: Obj, required: list[str], columns: list[Obj]) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.metallb.io" % plural},
        "spec": {
            "group": "metallb.io",
            "names": {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": plural[:-1]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1beta1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "required": required,
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": spec_schema,
                        "status": status_schema,
                    },
                }},
            }],
        },
    }


def ipaddresspool_crd() -> Obj:
    counter = {"type": "integer", "format": "int64"}
    spec = {
        "type": "object",
        "required": ["addresses"],
        "properties": {
            "addresses": {"type": "array", "items": {"type": "string"}},
            "autoAssign": {"type": "boolean", "default": True},
            "avoidBuggyIPs": {"type": "boolean", "default": False},
            "serviceAllocation": {
                "type": "object",
                "properties": {
                    "priority": {"type": "integer"},
                    "namespaces": {"type": "array", "items": {"type": "string"}},
                    "namespaceSelectors": _selectors(),
                    "serviceSelectors": _selectors(),
                },
            },
        },
    }
    status = {
        "type": "object",
        "required": ["assignedIPv4", "assignedIPv6", "availableIPv4", "availableIPv6"],
        "properties": {k: dict(counter) for k in ("assignedIPv4", "assignedIPv6", "availableIPv4", "availableIPv6")},
    }
    columns: list[Obj] = [
        {"name": "Auto Assign", "type": "boolean", "jsonPath": ".spec.autoAssign"},
        {"name": "Avoid Buggy IPs", "type": "boolean", "jsonPath": ".spec.avoidBuggyIPs"},
        {"name": "Addresses", "type": "string", "jsonPath": ".spec.addresses"},
    ]
    return _crd("IPAddressPool", "ipaddresspools", spec, status, ["spec"], columns)


def l2advertisement_crd() -> Obj:
    spec = {
        "type": "object",
        "properties": {
            "ipAddressPools": {"type": "array", "items": {"type": "string"}},
            "ipAddressPoolSelectors": _selectors(),
            "nodeSelectors": _selectors(),
            "serviceSelectors": _selectors(),
            "interfaces": {"type": "array", "items": {"type": "string"}},
        },
    }
    columns: list[Obj] = [
        {"name": "IPAddressPools", "type": "string", "jsonPath": ".spec.ipAddressPools"},
        {"name": "IPAddressPool Selectors", "type": "string", "jsonPath": ".spec.ipAddressPoolSelectors"},
        {"name": "Interfaces", "type": "string", "jsonPath": ".spec.interfaces"},
        {"name": "Node Selectors", "type": "string", "jsonPath": ".spec.nodeSelectors", "priority": 10},
    ]
    return _crd("L2Advertisement", "l2advertisements", spec, {"type": "object"}, [], columns)


def _meta(name: str, component: str | None = None) -> Obj:
    labels = dict(_LABELS)
    if component:
        labels["component"] = component
    return {"name": name, "namespace": NAMESPACE, "labels": labels}


def _field_env(name: str, path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _probe(path: str, host: str | None = None, period: int = 10) -> Obj:
    get: Obj = {"path": path, "port": 17472}
    if host:
        get["host"] = host
    return {"httpGet": get, "initialDelaySeconds": min(period, 10), "periodSeconds": period, "timeoutSeconds": 1,
            "successThreshold": 1, "failureThreshold": 3}


# Upstream's readiness probes wait 10 s before their first look. The webhook Service sends only to a
# ready controller, so that wait delays the pools by 10 s on every build; the lab looks every 2 s.
_READY_PERIOD = 2


# The speaker's default list of interfaces it never announces from (upstream ConfigMap).
_EXCLUDED_L2_INTERFACES = ["^docker.*", "^cbr.*", "^dummy.*", "^virbr.*", "^lxcbr.*", "^veth.*", "^lo$",
                           "^cali.*", "^tunl.*", "^flannel.*", "^kube-ipvs.*", "^cni.*", "^nodelocaldns.*", "^lxc.*"]


def controller_deployment(image: str = METALLB_CONTROLLER_IMAGE) -> Obj:
    selector = {"app": "metallb", "component": "controller"}
    container = {
        "name": "controller",
        "image": image,
        "args": ["--port=9120", "--log-level=info"],
        "env": [
            _field_env("METALLB_POD_NAME", "metadata.name"),
            {"name": "METALLB_ML_SECRET_NAME", "value": "memberlist"},
            {"name": "METALLB_DEPLOYMENT", "value": "controller"},
        ],
        "ports": [
            {"name": "metricshttps", "containerPort": 9120},
            {"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"},
        ],
        "livenessProbe": _probe("/healthz"),
        "readinessProbe": _probe("/readyz", period=_READY_PERIOD),
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["all"]}},
        "volumeMounts": [{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": True}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta("controller", "controller"),
        "spec": {
            "revisionHistoryLimit": 3,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": dict(selector),
                             "annotations": {"prometheus.io/port": "9120", "prometheus.io/scrape": "true"}},
                "spec": {
                    "serviceAccountName": "controller",
                    "terminationGracePeriodSeconds": 0,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "fsGroup": 65534},
                    "containers": [container],
                    "volumes": [{"name": "cert", "secret": {"secretName": "metallb-webhook-cert", "defaultMode": 420}}],
                },
            },
        },
    }


def speaker_daemonset(image: str = METALLB_SPEAKER_IMAGE) -> Obj:
    selector = {"app": "metallb", "component": "speaker"}
    container = {
        "name": "speaker",
        "image": image,
        "args": ["--port=9120", "--log-level=info"],
        "env": [
            _field_env("METALLB_NODE_NAME", "spec.nodeName"),
            _field_env("METALLB_POD_NAME", "metadata.name"),
            _field_env("METALLB_HOST", "status.hostIP"),
            _field_env("METALLB_ML_BIND_ADDR", "status.podIP"),
            {"name": "METALLB_ML_LABELS", "value": "app=metallb,component=speaker"},
            {"name": "METALLB_ML_SECRET_KEY_PATH", "value": "/etc/ml_secret_key"},
        ],
        "ports": [
            {"name": "metricshttps", "containerPort": 9120},
            {"name": "memberlist-tcp", "containerPort": 7946},
            {"name": "memberlist-udp", "containerPort": 7946, "protocol": "UDP"},
        ],
        "livenessProbe": _probe("/healthz", "127.0.0.1"),
        "readinessProbe": _probe("/readyz", "127.0.0.1", _READY_PERIOD),
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"], "add": ["NET_RAW"]}},
        "volumeMounts": [
            {"name": "memberlist", "mountPath": "/etc/ml_secret_key", "readOnly": True},
            {"name": "metallb-excludel2", "mountPath": "/etc/metallb", "readOnly": True},
            {"name": "memberlist-config", "mountPath": "/etc/metallb/memberlist", "readOnly": True},
        ],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _meta("speaker", "speaker"),
        "spec": {
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": dict(selector),
                             "annotations": {"prometheus.io/port": "9120", "prometheus.io/scrape": "true"}},
                "spec": {
                    "serviceAccountName": "speaker",
                    "hostNetwork": True,
                    "terminationGracePeriodSeconds": 2,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [
                        {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
                    ],
                    "containers": [container],
                    "volumes": [
                        {"name": "memberlist", "secret": {"secretName": "memberlist", "defaultMode": 420}},
                        {"name": "metallb-excludel2", "configMap": {"name": "metallb-excludel2", "defaultMode": 256}},
                        {"name": "memberlist-config", "configMap": {"name": "metallb-memberlist-config", "optional": True}},
                    ],
                },
            },
        },
    }


def controller_rbac() -> list[Obj]:
    """The controller's rights in metallb-native.yaml (v0.16.1), limited to the kinds this rendering
    installs (no BGP, BFD, webhook or ConfigurationState): it updates a Service's status, and
    through the status its `ip-allocated-from-pool` annotation, and may not update the Service."""
    rbac = "rbac.authorization.k8s.io/v1"
    cluster_role = "%s:controller" % NAMESPACE
    subject = [{"kind": "ServiceAccount", "name": "controller", "namespace": NAMESPACE}]
    cluster_rules = [
        {"apiGroups": [""], "resources": ["services", "namespaces"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["services/status"], "verbs": ["update"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]
    namespace_rules = [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
        {"apiGroups": ["apps"], "resourceNames": ["controller"], "resources": ["deployments"], "verbs": ["get"]},
        {"apiGroups": ["metallb.io"], "resources": ["ipaddresspools"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["metallb.io"], "resources": ["ipaddresspools/status"], "verbs": ["update"]},
        {"apiGroups": ["metallb.io"], "resources": ["l2advertisements"], "verbs": ["get", "list", "watch"]},
    ]
    return [
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": cluster_role, "labels": dict(_LABELS)},
         "rules": cluster_rules},
        {"apiVersion": rbac, "kind": "Role", "metadata": _meta("controller"), "rules": namespace_rules},
        {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": cluster_role, "labels": dict(_LABELS)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
         "subjects": subject},
        {"apiVersion": rbac, "kind": "RoleBinding", "metadata": _meta("controller"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "controller"},
         "subjects": subject},
    ]


def render_native(controller_image: str = METALLB_CONTROLLER_IMAGE, speaker_image: str = METALLB_SPEAKER_IMAGE) -> list[Obj]:
    """The core of metallb-native.yaml, for clusters that cannot download it."""
    privileged = {"pod-security.kubernetes.io/%s" % mode: "privileged" for mode in ("audit", "enforce", "warn")}
    excl = yaml.safe_dump({"announcedInterfacesToExclude": _EXCLUDED_L2_INTERFACES}, default_flow_style=True)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": privileged}},
        ipaddresspool_crd(),
        l2advertisement_crd(),
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("controller")},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("speaker")},
        *controller_rbac(),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "metallb-excludel2", "namespace": NAMESPACE},
         "data": {"excludel2.yaml": excl}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "metallb-webhook-cert", "namespace": NAMESPACE}},
        controller_deployment(controller_image),
        speaker_daemonset(speaker_image),
    ]


def use_images(objects: list[Obj], controller_image: str, speaker_image: str) -> tuple[list[Obj], list[str]]:
    """The manifest's objects with the lab's images (lab_images) in place of the pinned ones: every
    container (init containers too) that runs the pinned controller or speaker image runs the
    given one instead. Returns the objects and a warning for each given image that replaced
    nothing (a manifest_url of another release names other images)."""
    wanted = {METALLB_CONTROLLER_IMAGE: controller_image, METALLB_SPEAKER_IMAGE: speaker_image}
    used: set[str] = set()
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        for key in ("initContainers", "containers"):
            for container in pod.get(key) or []:
                if isinstance(container, dict) and container.get("image") in wanted:
                    used.add(container["image"])
                    container["image"] = wanted[container["image"]]
        out.append(obj)
    warnings = ["no container of the MetalLB manifest runs %s, so %s replaced nothing" % (pinned, image)
                for pinned, image in wanted.items() if pinned not in used and image != pinned]
    return out, warnings


def parse_manifest(text: str) -> list[Obj]:
    """The documents of a multi-document manifest (empty ones dropped)."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except YAMLError as exc:
        raise MetallbError("the MetalLB manifest is not valid YAML: %s" % exc) from None
    bad = [d for d in docs if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d]
    if bad or not docs:
        raise MetallbError("the MetalLB manifest has documents that are not Kubernetes objects")
    return docs


def fetch_manifest(url: str, open_url: Callable[..., Any], timeout: int = 30) -> list[Obj]:
    try:
        resp = open_url(url, timeout=timeout)
        text = resp.read().decode("utf-8")
    except Exception as exc:  # open_url raises urllib/HTTP/SSL errors alike
        raise MetallbError(
            "cannot download the MetalLB manifest %s: %s (offline? use source: rendered)" % (url, exc)
        ) from None
    return parse_manifest(text)


# --- configuration ---------------------------------------------------------------------------


def pool_object(pool: Pool) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "IPAddressPool",
        "metadata": {"name": pool.name, "namespace": NAMESPACE},
        "spec": {"addresses": pool.addresses(), "autoAssign": pool.auto_assign},
    }


def l2_object(name: str, pools: list[Pool]) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "L2Advertisement",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"ipAddressPools": [p.name for p in pools]},
    }


def webhook_not_ready(message: str) -> bool:
    low = message.lower()
    return any(marker in low for marker in WEBHOOK_NOT_READY)


def apply_with_retry(
    apply: Callable[[Obj], Any],
    obj: Obj,
    timeout: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    first_delay: float = 1.0,
    max_delay: float = 10.0,
) -> Any:
    """Apply, retrying with exponential backoff while MetalLB's webhook is not answering."""
    deadline = clock() + timeout
    delay = first_delay
    attempts = 0
    while True:
        attempts += 1
        try:
            return apply(obj)
        except K8sError as exc:
            if not webhook_not_ready(str(exc)):
                raise
            if clock() + delay > deadline:
                raise MetallbError(
                    "%s was still refused after %d attempts in %ss because MetalLB's validating webhook is not "
                    "answering (last error: %s); check the controller pod in %s and raise wait_timeout if it is slow"
                    % (ref_of(obj), attempts, timeout, exc, NAMESPACE)
                ) from None
            sleep(delay)
            delay = min(delay * 2, max_delay)


@dataclass
class Plan:
    pools: list[Pool]
    declared: list[Pool]
    host_access: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def cluster_networks(params: dict[str, Any]) -> ClusterNetworks:
    """Networks from the explicit options, else from a kind_cluster result in `cluster`."""
    cluster = params.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise PoolError("cluster: expected the registered result of kindlab.ingress.kind_cluster (a mapping)")

    def pick(option: str, key: str) -> tuple[str, ...]:
        value = params.get(option)
        return split_cidrs(value if value is not None else cluster.get(key))

    return ClusterNetworks(node=pick("node_subnets", "node_subnets"), pod=pick("pod_subnets", "pod_subnets"),
                           service=pick("service_subnets", "service_subnets"))


def plan(params: dict[str, Any]) -> Plan:
    """Everything that can be checked without a cluster: parse pools, overlap checks, host access."""
    declared = parse_pools(params.get("pools"))
    networks = cluster_networks(params)
    warnings = check_cluster_overlap(declared, networks, bool(params.get("allow_overlap_with_cluster_networks")))
    if not (networks.node or networks.pod or networks.service):
        warnings.append("no cluster networks given (node_subnets/pod_subnets/service_subnets or cluster): "
                        "pools were not checked for overlaps with the cluster")
    if params.get("host_access"):
        hosts, pools = plan_host_access(declared, networks.node)
    else:
        hosts, pools = [], declared
    return Plan(pools=pools, declared=declared, host_access=hosts, warnings=warnings)


def ensure_metallb(
    client: Any,
    the_plan: Plan,
    source: str,
    install_objects: list[Obj],
    l2_name: str | None,
    wait: bool,
    wait_timeout: int,
    check_mode: bool,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Install, wait for the controller, then apply pools and the L2Advertisement."""
    objects: list[dict[str, Any]] = []
    diffs: list[dict[str, Any]] = []

    def record(obj: Obj, changed: bool, diff: dict[str, Any] | None) -> None:
        objects.append({"ref": ref_of(obj), "changed": changed})
        if changed and diff:
            diffs.append(diff)

    results = client.apply_all(install_objects, check_mode=check_mode)
    for obj, res in zip(sorted(install_objects, key=apply_order), results):
        record(obj, res.changed, res.diff)
    crds_new = any(r.changed and r.before is None and r.after.get("kind") == "CustomResourceDefinition" for r in results)

    # Check mode changes nothing, so there is nothing new to wait for.
    if wait and not check_mode:
        wait_for_workload(client, "Deployment", NAMESPACE, "controller", wait_timeout, sleep=sleep, clock=clock,
                          what="the MetalLB controller Deployment %s/controller" % NAMESPACE)

    config = [pool_object(p) for p in the_plan.pools]
    if l2_name:
        config.append(l2_object(l2_name, the_plan.pools))
    for obj in config:
        if check_mode and crds_new:
            # The CRDs are not there yet, so the server cannot dry-run these: they would be created.
            record(obj, True, {"before": {}, "after": obj})
            continue
        res = apply_with_retry(lambda o: client.apply(o, check_mode=check_mode), obj, wait_timeout, sleep=sleep, clock=clock)
        record(obj, res.changed, res.diff)
    return {
        "changed": any(o["changed"] for o in objects),
        "source": source,
        "objects": objects,
        "diff": diffs,
        "pools": [p.summary() for p in the_plan.pools],
        "host_access": [h.summary() for h in the_plan.host_access],
        "warnings": list(the_plan.warnings),
    }
