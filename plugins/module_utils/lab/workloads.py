# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test workloads: a compact spec → Deployment + Service (+ Ingress).

The spec is what a lab author writes; validation names the field and what was
expected, for every workload, before anything is sent to the cluster.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._images import EXPECTED as IMAGE_EXPECTED
from ansible_collections.kindlab.ingress.plugins.module_utils._images import valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils._names import DNS1123_LABEL, is_dns1123_label, is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import ECHO_APP_IMAGE, TEST_APP_IMAGE
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import HOSTNAME, ensure_certificates, valid_hostname

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params

Obj = dict[str, Any]

# Ingress hosts: a DNS name, optionally with one leading wildcard label (networking/v1 rules).
_INGRESS_HOST = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
PATH_TYPES = ("Prefix", "Exact", "ImplementationSpecific")
# What a workload's pods run: `web`, its image's own server (the nginx welcome page by default), or
# `echo`, the Gateway API conformance echo server, which answers every request with JSON naming the
# path, host, method and headers that arrived and its namespace, Service and pod (the migration
# rehearsal reads them).
APPS = ("web", "echo")
_APP_LABEL = "app.kubernetes.io/name"
_PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF = "kindlab-ingress"


class WorkloadError(OptionError):
    """A workload spec is invalid; the message names the field."""


@dataclass
class IngressPath:
    path: str
    path_type: str


@dataclass
class IngressSpec:
    name: str
    ingress_class: str | None
    host: str | None
    paths: list[IngressPath]
    annotations: dict[str, str] = field(default_factory=dict)
    tls: bool = False  # spec.tls for its host, with a self-signed certificate the lab generates once

    @property
    def tls_secret(self) -> str:
        return self.name + "-tls"


ROUTE_PATH_TYPES = ("PathPrefix", "Exact")


@dataclass
class ParentRef:
    namespace: str
    name: str  # the Gateway's
    section_name: str | None = None  # a listener's name; None: every listener

    @property
    def gateway(self) -> str:
        return "%s/%s" % (self.namespace, self.name)


@dataclass
class BackendRef:
    name: str  # a Service in the route's namespace
    port: int
    weight: int | None = None  # None: Gateway API's default (1)


@dataclass
class HTTPRouteSpec:
    name: str
    parent_refs: list[ParentRef]
    hostnames: list[str]
    paths: list[IngressPath]  # path_type PathPrefix or Exact
    backend_refs: list[BackendRef]


@dataclass
class Rollout:
    """What a graceful rolling update needs from the pod: a readiness probe (without one a new pod
    is an endpoint before it listens), a preStop delay (the old pod keeps serving while every
    controller drops it from its endpoints) and a grace period longer than that delay."""
    readiness_probe: bool = True
    pre_stop_sleep: int = 0
    grace_period: int | None = None  # None: Kubernetes' default (30 s)


@dataclass
class Workload:
    name: str
    namespace: str
    image: str
    replicas: int
    port: int
    labels: dict[str, str]
    ingress: IngressSpec | None
    rollout: Rollout = field(default_factory=Rollout)
    httproute: HTTPRouteSpec | None = None
    app: str = "web"  # one of APPS


def _require(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise WorkloadError("%s: expected %s, got %r" % (where, expected, got))


def _dns_label(value: Any, where: str) -> str:
    _require(is_dns1123_label(value), where, DNS1123_LABEL, value)
    return str(value)


def _str_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    _require(isinstance(value, dict) and all(isinstance(k, str) for k in value), where,
             "a mapping of string keys to string values", value)
    out = {}
    for key, val in value.items():
        _require(isinstance(val, (str, int, float, bool)), "%s.%s" % (where, key), "a string", val)
        out[key] = val if isinstance(val, str) else str(val).lower() if isinstance(val, bool) else str(val)
    return out


def _int_in(value: Any, where: str, low: int, high: int) -> int:
    _require(isinstance(value, int) and not isinstance(value, bool) and low <= value <= high, where,
             "an integer from %d to %d" % (low, high), value)
    return int(value)


def _parse_path(raw: Any, where: str, types: tuple[str, ...] = PATH_TYPES, max_length: int | None = None) -> IngressPath:
    """An Ingress path (TYPES: its pathTypes, the first the default), or an HTTPRoute's
    (ROUTE_PATH_TYPES, at most 1024 characters as the CRD says)."""
    if isinstance(raw, str):
        raw = {"path": raw}
    _require(isinstance(raw, dict), where, "a path string or a mapping with path and path_type", raw)
    unknown = set(raw) - {"path", "path_type"}
    _require(not unknown, where, "only the keys path and path_type", sorted(unknown))
    path = raw.get("path", "/")
    _require(isinstance(path, str) and path.startswith("/") and (max_length is None or len(path) <= max_length), where + ".path",
             "an absolute path starting with '/'" + (" (at most %d characters)" % max_length if max_length else ""), path)
    path_type = raw.get("path_type", types[0])
    _require(path_type in types, where + ".path_type", "one of " + ", ".join(types), path_type)
    return IngressPath(path=path, path_type=path_type)


def _parse_ingress(raw: Any, default_name: str, where: str) -> IngressSpec | None:
    if raw is None or raw is False:
        return None
    if raw is True:
        raw = {}
    _require(isinstance(raw, dict), where, "a mapping, true or false", raw)
    known = {"name", "class", "host", "paths", "annotations", "tls"}
    unknown = set(raw) - known
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), sorted(unknown))
    name = _dns_label(raw.get("name", default_name), where + ".name")
    ingress_class = raw.get("class")
    if ingress_class is not None:
        _require(is_dns1123_subdomain(ingress_class), where + ".class",
                 "an IngressClass name (DNS-1123 subdomain) or null", ingress_class)
    host = raw.get("host") or None
    if host is not None:
        _require(isinstance(host, str) and bool(_INGRESS_HOST.match(host)), where + ".host",
                 "a DNS name, optionally starting with '*.'; no IP addresses or ports", host)
    raw_paths = raw.get("paths", [{"path": "/", "path_type": "Prefix"}])
    _require(isinstance(raw_paths, list) and len(raw_paths) > 0, where + ".paths", "a non-empty list", raw_paths)
    paths = [_parse_path(p, "%s.paths[%d]" % (where, i)) for i, p in enumerate(raw_paths)]
    annotations = _str_map(raw.get("annotations"), where + ".annotations")
    tls = raw.get("tls", False)
    _require(isinstance(tls, bool), where + ".tls", "true or false", tls)
    _require(not tls or (host is not None and not host.startswith("*.")), where + ".tls",
             "a host without a wildcard beside it (the certificate is made for that name)", host)
    return IngressSpec(name=name, ingress_class=ingress_class, host=host, paths=paths, annotations=annotations, tls=tls)


def _parse_parent(raw: Any, namespace: str, where: str) -> ParentRef:
    if isinstance(raw, str):
        raw = {"gateway": raw}
    _require(isinstance(raw, dict), where, "a Gateway (namespace/name, or a name in the workload's namespace) or a "
             "mapping with gateway and section_name", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"gateway", "section_name"}
    _require(not unknown, where, "only the keys gateway and section_name", sorted(unknown))
    gateway = raw.get("gateway")
    ns, sep, name = gateway.rpartition("/") if isinstance(gateway, str) else ("", "", "")
    ns = ns if sep else namespace
    _require(is_dns1123_label(ns) and is_dns1123_subdomain(name), where + ".gateway",
             "a Gateway as namespace/name, or its name in the workload's namespace", gateway)
    section = raw.get("section_name")
    if section is not None:
        _require(is_dns1123_label(section), where + ".section_name", "a listener name (%s)" % DNS1123_LABEL, section)
    return ParentRef(namespace=ns, name=name, section_name=section)


def _parse_backend(raw: Any, default_name: str, where: str) -> BackendRef:
    _require(isinstance(raw, dict), where, "a mapping with name, port and weight", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"name", "port", "weight"}
    _require(not unknown, where, "only the keys name, port and weight", sorted(unknown))
    name = raw.get("name", default_name)
    _require(is_dns1123_label(name), where + ".name", "a Service name in the workload's namespace (%s)" % DNS1123_LABEL, name)
    port = _int_in(raw.get("port", 80), where + ".port", 1, 65535)
    weight = raw.get("weight")
    if weight is not None:
        weight = _int_in(weight, where + ".weight", 0, 1000000)
    return BackendRef(name=name, port=port, weight=weight)


def _parse_httproute(raw: Any, wl_name: str, namespace: str, where: str) -> HTTPRouteSpec | None:
    """A workload's HTTPRoute (Gateway API), beside or instead of its Ingress: its parents (the
    Gateways and listeners it attaches to), hostnames, path matches and backends (the workload's
    Service, port 80, unless given)."""
    if raw is None or raw is False:
        return None
    known = {"name", "parent_refs", "hostnames", "paths", "backend_refs"}
    _require(isinstance(raw, dict), where, "a mapping with " + ", ".join(sorted(known)) + ", or false", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - known
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), sorted(unknown))
    name = _dns_label(raw.get("name", wl_name), where + ".name")
    raw_parents = raw.get("parent_refs")
    _require(isinstance(raw_parents, list) and 1 <= len(raw_parents) <= 32, where + ".parent_refs",
             "a list of 1 to 32 Gateways the route attaches to (namespace/name, or mappings with gateway and section_name)",
             raw_parents)
    parents = [_parse_parent(p, namespace, "%s.parent_refs[%d]" % (where, i)) for i, p in enumerate(raw_parents)]
    seen: dict[tuple[str, str | None], int] = {}
    for i, parent in enumerate(parents):
        key = (parent.gateway, parent.section_name)
        _require(key not in seen, "%s.parent_refs[%d]" % (where, i),
                 "a parent not already named by parent_refs[%d]" % seen.get(key, -1), raw_parents[i])
        seen[key] = i
    hostnames = raw.get("hostnames", [])
    _require(isinstance(hostnames, list) and len(hostnames) <= 16, where + ".hostnames", "a list of at most 16 hostnames",
             hostnames)
    for i, host in enumerate(hostnames):
        _require(valid_hostname(host), "%s.hostnames[%d]" % (where, i), HOSTNAME, host)
    raw_paths = raw.get("paths", [{"path": "/", "path_type": "PathPrefix"}])
    _require(isinstance(raw_paths, list) and 1 <= len(raw_paths) <= 64, where + ".paths", "a list of 1 to 64 paths", raw_paths)
    paths = [_parse_path(p, "%s.paths[%d]" % (where, i), ROUTE_PATH_TYPES, 1024) for i, p in enumerate(raw_paths)]
    raw_backends = raw.get("backend_refs", [{}])
    _require(isinstance(raw_backends, list) and 1 <= len(raw_backends) <= 16, where + ".backend_refs",
             "a list of 1 to 16 backends (the workload's Service on port 80 when omitted)", raw_backends)
    backends = [_parse_backend(b, wl_name, "%s.backend_refs[%d]" % (where, i)) for i, b in enumerate(raw_backends)]
    return HTTPRouteSpec(name=name, parent_refs=parents, hostnames=list(hostnames), paths=paths, backend_refs=backends)


def _parse_rollout(raw: Any, where: str) -> Rollout:
    if raw is None:
        return Rollout()
    _require(isinstance(raw, dict), where, "a mapping with readiness_probe, pre_stop_sleep, grace_period", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"readiness_probe", "pre_stop_sleep", "grace_period"}
    _require(not unknown, where, "only the keys grace_period, pre_stop_sleep, readiness_probe", sorted(unknown))
    probe = raw.get("readiness_probe", True)
    _require(isinstance(probe, bool), where + ".readiness_probe", "true or false", probe)
    sleep = _int_in(raw.get("pre_stop_sleep", 0), where + ".pre_stop_sleep", 0, 600)
    grace = raw.get("grace_period")
    if grace is not None:
        grace = _int_in(grace, where + ".grace_period", 0, 3600)
        # The kubelet kills the container when the grace period ends, preStop or not.
        _require(grace > sleep, where + ".grace_period", "more seconds than pre_stop_sleep (%d)" % sleep, grace)
    return Rollout(readiness_probe=probe, pre_stop_sleep=sleep, grace_period=grace)


# What a lab's own test apps answer, for the default reachability probes (lab_expect.reachability:
# each_ingress): the test app's nginx page, and the echo app's JSON (it names the path it received).
_DEFAULT_BODIES = {"web": "Welcome to nginx!", "echo": '"path":'}


def default_probe(workload: Workload, test_app_image: str) -> dict[str, Any] | None:
    """The probe of a workload's Ingress when the lab names none: it must answer, and with the page its
    app serves where the lab knows it (the lab's test app or the echo app; another image: any answer)."""
    if workload.ingress is None:
        return None
    probe: dict[str, Any] = {"ingress": "%s/%s" % (workload.namespace, workload.ingress.name)}
    if workload.app == "echo" or workload.image == test_app_image:
        probe["body_regex"] = _DEFAULT_BODIES[workload.app]
    return probe


def parse_workload(raw: Any, where: str, default_image: str = TEST_APP_IMAGE, echo_image: str = ECHO_APP_IMAGE) -> Workload:
    """Validate one workload spec; `where` prefixes error messages (e.g. workloads[0]). A
    workload without `image` runs `default_image` (the lab's lab_images.test_app), or with
    `app: echo` `echo_image` (lab_images.echo)."""
    _require(isinstance(raw, dict), where, "a mapping", raw)
    # Ansible's argument spec fills unset suboptions with None: treat them as unset.
    raw = {key: val for key, val in raw.items() if val is not None}
    known = {"name", "namespace", "app", "image", "replicas", "port", "labels", "ingress", "rollout", "httproute"}
    unknown = set(raw) - known
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), sorted(unknown))
    name = _dns_label(raw.get("name"), where + ".name")
    namespace = _dns_label(raw.get("namespace", "default"), where + ".namespace")
    app = raw.get("app", "web")
    _require(app in APPS, where + ".app", "one of " + ", ".join(APPS), app)
    image = raw.get("image", echo_image if app == "echo" else default_image)
    _require(isinstance(image, str) and image.strip() != "" and " " not in image, where + ".image",
             "a container image reference", image)
    replicas = _int_in(raw.get("replicas", 1), where + ".replicas", 0, 100)
    port = _int_in(raw.get("port", 80), where + ".port", 1, 65535)
    labels = _str_map(raw.get("labels"), where + ".labels")
    ingress = _parse_ingress(raw.get("ingress", True), name, where + ".ingress")
    rollout = _parse_rollout(raw.get("rollout"), where + ".rollout")
    httproute = _parse_httproute(raw.get("httproute"), name, namespace, where + ".httproute")
    return Workload(name=name, namespace=namespace, image=image, replicas=replicas, port=port,
                    labels=labels, ingress=ingress, rollout=rollout, httproute=httproute, app=app)


def parse_workloads(raw: Any, where: str = "workloads", default_image: str = TEST_APP_IMAGE,
                    echo_image: str = ECHO_APP_IMAGE) -> list[Workload]:
    """Validate every workload, and that no two share a namespace/name."""
    _require(isinstance(raw, list), where, "a list of workloads", raw)
    parsed = [parse_workload(item, "%s[%d]" % (where, i), default_image, echo_image) for i, item in enumerate(raw)]
    seen: dict[tuple[str, str], int] = {}
    for i, wl in enumerate(parsed):
        key = (wl.namespace, wl.name)
        _require(key not in seen, "%s[%d].name" % (where, i),
                 "a name unique within its namespace (also used by %s[%d])" % (where, seen.get(key, -1)), wl.name)
        seen[key] = i
    return parsed


def _labels(wl: Workload) -> dict[str, str]:
    return {_APP_LABEL: wl.name, _PART_OF_LABEL: PART_OF, **wl.labels}


def _pod_spec(wl: Workload) -> Obj:
    container: Obj = {
        "name": "app",
        "image": wl.image,
        "ports": [{"name": "http", "containerPort": wl.port, "protocol": "TCP"}],
    }
    if wl.app == "echo":
        # echo-basic listens on HTTP_PORT and names its pod, namespace and Service from these.
        container["env"] = [
            {"name": "HTTP_PORT", "value": str(wl.port)},
            {"name": "SERVICE_NAME", "value": wl.name},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        ]
    if wl.rollout.readiness_probe:
        probe_path = "/health" if wl.app == "echo" else "/"
        container["readinessProbe"] = {"httpGet": {"path": probe_path, "port": "http"}, "periodSeconds": 2}
    if wl.rollout.pre_stop_sleep:
        # An exec of the image's sleep, not the preStop sleep action, which needs Kubernetes 1.30.
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(wl.rollout.pre_stop_sleep)]}}}
    spec: Obj = {"containers": [container]}
    if wl.rollout.grace_period is not None:
        spec["terminationGracePeriodSeconds"] = wl.rollout.grace_period
    return spec


def render(wl: Workload) -> list[Obj]:
    """Deployment, Service and (optionally) Ingress for one workload."""
    selector = {_APP_LABEL: wl.name}
    labels = _labels(wl)
    meta = {"name": wl.name, "namespace": wl.namespace, "labels": labels}
    objs: list[Obj] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": wl.replicas,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": _pod_spec(wl),
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {
                "type": "ClusterIP",
                "selector": selector,
                "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
            },
        },
    ]
    if wl.ingress is not None:
        objs.append(_render_ingress(wl, wl.ingress, labels))
    if wl.httproute is not None:
        objs.append(render_httproute(wl, wl.httproute, labels))
    return objs


def render_httproute(wl: Workload, route: HTTPRouteSpec, labels: dict[str, str]) -> Obj:
    """The workload's HTTPRoute (gateway.networking.k8s.io/v1): one rule with every path match."""
    parents = []
    for parent in route.parent_refs:
        ref: Obj = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": parent.name}
        if parent.namespace != wl.namespace:
            ref["namespace"] = parent.namespace
        if parent.section_name:
            ref["sectionName"] = parent.section_name
        parents.append(ref)
    backends = []
    for backend in route.backend_refs:
        item: Obj = {"group": "", "kind": "Service", "name": backend.name, "port": backend.port}
        if backend.weight is not None:
            item["weight"] = backend.weight
        backends.append(item)
    spec: Obj = {"parentRefs": parents,
                 "rules": [{"matches": [{"path": {"type": p.path_type, "value": p.path}} for p in route.paths],
                            "backendRefs": backends}]}
    if route.hostnames:
        spec["hostnames"] = list(route.hostnames)
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": route.name, "namespace": wl.namespace, "labels": labels}, "spec": spec}


def _render_ingress(wl: Workload, ing: IngressSpec, labels: dict[str, str]) -> Obj:
    backend = {"service": {"name": wl.name, "port": {"name": "http"}}}
    rule: Obj = {"http": {"paths": [
        {"path": p.path, "pathType": p.path_type, "backend": backend} for p in ing.paths
    ]}}
    if ing.host:
        rule["host"] = ing.host
    metadata: Obj = {"name": ing.name, "namespace": wl.namespace, "labels": labels}
    if ing.annotations:
        metadata["annotations"] = ing.annotations
    spec: Obj = {"rules": [rule]}
    if ing.tls:
        spec["tls"] = [{"hosts": [ing.host], "secretName": ing.tls_secret}]
    if ing.ingress_class:
        spec["ingressClassName"] = ing.ingress_class
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec}


def summary(wl: Workload) -> Obj:
    """What the module returns per workload."""
    out: Obj = {"name": wl.name, "namespace": wl.namespace, "app": wl.app, "image": wl.image, "replicas": wl.replicas,
                "rollout": {"readiness_probe": wl.rollout.readiness_probe, "pre_stop_sleep": wl.rollout.pre_stop_sleep,
                            "grace_period": wl.rollout.grace_period}}
    if wl.ingress is not None:
        out["ingress"] = {
            "name": wl.ingress.name,
            "class": wl.ingress.ingress_class,
            "host": wl.ingress.host,
            "paths": [{"path": p.path, "path_type": p.path_type} for p in wl.ingress.paths],
            "annotations": wl.ingress.annotations,
            "tls": wl.ingress.tls,
        }
    if wl.httproute is not None:
        route = wl.httproute
        out["httproute"] = {
            "name": route.name,
            "parent_refs": [{"gateway": p.gateway, "section_name": p.section_name} for p in route.parent_refs],
            "hostnames": list(route.hostnames),
            "paths": [{"path": p.path, "path_type": p.path_type} for p in route.paths],
            "backend_refs": [{"name": b.name, "port": b.port, "weight": b.weight} for b in route.backend_refs],
        }
    return out


def ensure(client: Any, workloads: list[Workload], state: str, check_mode: bool,
           wait: bool, wait_timeout: int) -> Obj:
    """Apply (or delete) every workload's objects; wait for their Deployments when asked.

    `client` is a k8s.client.Client. Returns changed, per-object actions and diffs.
    """
    # Imported here so the pure parts above stay importable without the kubernetes package.
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult, delete_all, summarize
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of

    objs = [obj for wl in workloads for obj in render(wl)]
    if state == "absent":
        secrets = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}}
                   for ns, name, _host in tls_secrets(workloads)]
        return delete_all(client, objs + secrets, check_mode)

    namespaces = sorted({wl.namespace for wl in workloads})
    missing = [ns for ns in namespaces if client.get("v1", "Namespace", ns) is None]
    if missing and not check_mode:
        raise WorkloadError("namespace(s) %s do not exist: create them first (the lab's namespaces list)" % ", ".join(missing))
    routes_unserved = check_mode and any(o["kind"] == "HTTPRoute" for o in objs) and not _serves_httproutes(client)
    # In check mode the Gateway API CRDs may be ones an earlier task would have applied: the
    # server cannot dry-run an HTTPRoute before then, so it is reported as created.
    unserved = [o for o in objs if routes_unserved and o["kind"] == "HTTPRoute"]
    result = summarize(client.apply_all([o for o in objs if o["metadata"]["namespace"] not in missing and o not in unserved],
                                        check_mode)
                       + ensure_certificates(client, tls_secrets(workloads), missing, check_mode))
    for obj in unserved:
        if obj["metadata"]["namespace"] not in missing:
            result["objects"].append({"object": ref_of(obj), "action": "created"})
            result["diff"].append(ApplyResult(changed=True, before=None, after=obj).diff)
            result["changed"] = True
    # In check mode a namespace may be one an earlier task would have created: its objects
    # would all be created, and the server cannot dry-run them, so report them as such.
    for obj in objs:
        if obj["metadata"]["namespace"] in missing:
            result["objects"].append({"object": ref_of(obj), "action": "created"})
            result["diff"].append(ApplyResult(changed=True, before=None, after=obj).diff)
            result["changed"] = True
    if wait and not check_mode:
        for wl in workloads:
            if wl.replicas > 0:
                _wait_ready(client, wl, wait_timeout)
    return result


def tls_secrets(workloads: list[Workload]) -> list[tuple[str, str, str]]:
    """(namespace, Secret, host) of every Ingress with tls: its certificate, generated once."""
    return [(wl.namespace, wl.ingress.tls_secret, str(wl.ingress.host)) for wl in workloads if wl.ingress and wl.ingress.tls]


def _serves_httproutes(client: Any) -> bool:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

    try:
        client.resource("gateway.networking.k8s.io/v1", "HTTPRoute")
    except K8sError:
        return False
    return True


def _wait_ready(client: Any, wl: Workload, timeout: int) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_for_workload

    wait_for_workload(client, "Deployment", wl.namespace, wl.name, timeout)


def parse_namespaces(names: Any, labels: Any) -> tuple[list[str], dict[str, str]]:
    """Validate namespace names (unique DNS-1123 labels) and their extra labels."""
    _require(isinstance(names, list), "names", "a list of namespace names", names)
    parsed = [_dns_label(name, "names[%d]" % i) for i, name in enumerate(names)]
    dupes = sorted({n for n in parsed if parsed.count(n) > 1})
    _require(not dupes, "names", "unique names", dupes)
    return parsed, _str_map(labels, "labels")


def ensure_namespaces(client: Any, names: list[str], labels: dict[str, str], state: str, check_mode: bool) -> Obj:
    """Apply (or delete) one Namespace per name."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import delete_all, summarize

    objs = [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": n, "labels": {_PART_OF_LABEL: PART_OF, **labels}}} for n in names]
    if state == "absent":
        return delete_all(client, objs, check_mode)
    return summarize(client.apply_all(objs, check_mode=check_mode))


# --- module entries (KindlabModule.run) -------------------------------------------------------


def run_lab_namespaces(params: Params, module: Module) -> Obj:
    """The lab_namespaces module: validate the names and labels, then ensure the namespaces."""
    names, labels = parse_namespaces(params["names"], params["labels"])
    return ensure_namespaces(module.client(), names, labels, params["state"], module.check_mode)


def run_lab_workload(params: Params, module: Module) -> Obj:
    """The lab_workload module: validate every workload, then ensure (or delete) their objects."""
    default_image = params.get("default_image") or TEST_APP_IMAGE
    echo_image = params.get("echo_image") or ECHO_APP_IMAGE
    for option, image in (("default_image", default_image), ("echo_image", echo_image)):
        if not valid_image(image):
            raise WorkloadError("%s: expected %s, got %r" % (option, IMAGE_EXPECTED, image))
    workloads = parse_workloads(params["workloads"], default_image=default_image, echo_image=echo_image)
    result = ensure(module.client(), workloads, params["state"], module.check_mode, params["wait"], params["wait_timeout"])
    return dict(result, workloads=[summary(wl) for wl in workloads])
