"""Helpers for the controller/data-plane tests against a running twin (the real control plane
plus the emulations, time_scale 60; tests/twin/conftest.py's `twin` fixture): object
builders, bounded polling, the data plane's connect-to map, HTTP over loopback."""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import time
from typing import Any, Iterator

from kindlab_twin.contract import CONNECT_TO_FILE, Conflict, NotFound, Store
from kindlab_twin.cluster import TwinClusterHandle

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import metallb as mlb
from realcp import started_cluster, wait_for

Obj = dict[str, Any]
MANAGER = "kindlab-test"  # the field manager of everything the tests write
CRD: tuple[str, str] = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
IPADDRESSPOOL: tuple[str, str] = ("metallb.io/v1beta1", "IPAddressPool")
L2ADVERTISEMENT: tuple[str, str] = ("metallb.io/v1beta1", "L2Advertisement")
POD_READY_TIMEOUT = 30.0  # real controller-manager + scheduler + kwok on a 2-core machine


@contextlib.contextmanager
def started_twin(kind_config: Obj, name: str = "kind", time_scale: float = 60.0) -> Iterator[TwinClusterHandle]:
    """A twin cluster with KIND_CONFIG (conftest's `twin` has none): realcp.started_cluster's handle."""
    with started_cluster(kind_config, name, time_scale) as cluster:
        assert cluster.handle is not None
        yield cluster.handle


def crd(group: str, kind: str, plural: str, version: str = "v1beta1", status: bool = True) -> Obj:
    v: Obj = {"name": version, "served": True, "storage": True,
              "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    if status:
        v["subresources"] = {"status": {}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                                               "listKind": f"{kind}List"},
                     "scope": "Namespaced", "versions": [v]}}


def _served(store: Store, ref: tuple[str, str]) -> bool:
    try:
        store.list(ref)
    except NotFound:
        return False
    return True


def install_metallb_crds(store: Store) -> None:
    """MetalLB's two CRDs the twin reads, created and waited for until the API serves them."""
    for kind, plural in (("IPAddressPool", "ipaddresspools"), ("L2Advertisement", "l2advertisements")):
        if store.get(CRD, None, f"{plural}.metallb.io") is None:
            store.create(crd("metallb.io", kind, plural), MANAGER)
    wait_for(lambda: all(_served(store, ref) for ref in (IPADDRESSPOOL, L2ADVERTISEMENT)), what="MetalLB's kinds served")


def namespace(store: Store, name: str) -> None:
    if store.get(("v1", "Namespace"), None, name) is None:
        store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, MANAGER)


def deployment(name: str, ns: str, image: str, labels: dict[str, str] | None = None, replicas: int = 1,
               args: list[str] | None = None, ports: list[Obj] | None = None, sa: str | None = None,
               env: list[Obj] | None = None) -> Obj:
    labels = labels or {"app": name}
    c: Obj = {"name": name.split("-")[-1] if "controller" in name else name, "image": image}
    if args:
        c["args"] = args
    if ports:
        c["ports"] = ports
    if env:
        c["env"] = env
    spec: Obj = {"containers": [c]}
    if sa:
        spec["serviceAccountName"] = sa
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def service(name: str, ns: str, selector: dict[str, str], ports: list[Obj], stype: str = "ClusterIP") -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"type": stype, "selector": selector, "ports": ports}}


def ingress(name: str, ns: str, backend: str, port: int = 80, host: str | None = None, path: str = "/",
            path_type: str = "Prefix", annotations: dict[str, str] | None = None, class_name: str | None = None) -> Obj:
    rule: Obj = {"http": {"paths": [{"path": path, "pathType": path_type,
                                     "backend": {"service": {"name": backend, "port": {"number": port}}}}]}}
    if host:
        rule["host"] = host
    spec: Obj = {"rules": [rule]}
    if class_name:
        spec["ingressClassName"] = class_name
    meta: Obj = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta, "spec": spec}


def ready_deployment(store: Store, ns: str, name: str, timeout: float = POD_READY_TIMEOUT) -> Obj:
    def ok() -> Obj | None:
        d = store.get(("apps/v1", "Deployment"), ns, name)
        st = (d or {}).get("status") or {}
        want = (d or {}).get("spec", {}).get("replicas", 1)
        # kubectl rollout status: observed, all updated, no old replicas left, all available
        return d if d and st.get("observedGeneration", 0) >= d["metadata"].get("generation", 1) \
            and st.get("updatedReplicas", 0) == want and st.get("replicas", 0) == want \
            and st.get("availableReplicas", 0) == want and st.get("readyReplicas", 0) == want else None
    return wait_for(ok, timeout, what=f"deployment {ns}/{name} rolled out")  # type: ignore[no-any-return]


def connect_to(state_dir: str) -> list[Obj]:
    try:
        with open(os.path.join(state_dir, CONNECT_TO_FILE)) as fh:
            return json.load(fh)  # type: ignore[no-any-return]
    except FileNotFoundError:
        return []


def target_for(state_dir: str, host: str, port: int) -> int | None:
    for e in connect_to(state_dir):
        if e["host"] == host and e["port"] == port:
            return int(e["target_port"])
    return None


def http_get(port: int, path: str = "/", host: str = "example.com", timeout: float = 2.0) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": host})
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:" + "0" * 64
ECHO_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"


def nginx_release(store: Store, ns: str, *, scope: bool, publish_service: bool,
                  service_type: str = "LoadBalancer", extra_args: list[str] | None = None,
                  release: str = "ingress") -> None:
    """What helm chart 4.15.1 renders (the parts the twin reads): SA, RBAC (role.yaml always,
    clusterrole.yaml unless scope.enabled), controller Deployment with _params.tpl args,
    Service. The namespace must exist."""
    full = f"{release}-ingress-nginx"
    labels = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/instance": release,
              "app.kubernetes.io/component": "controller"}
    store.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": full, "namespace": ns}}, MANAGER)
    ingresses = [{"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
                 {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]},
                 {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
                 {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch", "get"]}]
    # role.yaml, always rendered: its IngressClass rule grants nothing (a cluster-scoped kind)
    role_rules = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
                  {"apiGroups": [""], "resources": ["configmaps", "pods", "secrets", "endpoints", "services"],
                   "verbs": ["get", "list", "watch"]},
                  {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [f"{full}-leader"],
                   "verbs": ["get", "update"]},
                  {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                  {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]}] + ingresses
    # clusterrole.yaml, rendered unless scope.enabled
    cluster_rules = [{"apiGroups": [""], "resources": ["configmaps", "endpoints", "nodes", "pods", "secrets", "namespaces"],
                      "verbs": ["list", "watch"]},
                     {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list", "watch"]},
                     {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
                     {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
                     {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]}] + ingresses
    rbac = "rbac.authorization.k8s.io/v1"
    store.create({"apiVersion": rbac, "kind": "Role", "metadata": {"name": full, "namespace": ns}, "rules": role_rules},
                 MANAGER)
    store.create({"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"name": full, "namespace": ns},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": full},
                  "subjects": [{"kind": "ServiceAccount", "name": full, "namespace": ns}]}, MANAGER)
    if not scope:
        store.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": f"{ns}-{full}"},
                      "rules": cluster_rules}, MANAGER)
        store.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": f"{ns}-{full}"},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-{full}"},
                      "subjects": [{"kind": "ServiceAccount", "name": full, "namespace": ns}]}, MANAGER)
    args = ["/nginx-ingress-controller"]
    if publish_service:
        args.append(f"--publish-service=$(POD_NAMESPACE)/{full}-controller")
    args += [f"--election-id={full}-leader", "--controller-class=k8s.io/ingress-nginx",
             "--ingress-class=nginx", f"--configmap=$(POD_NAMESPACE)/{full}-controller"]
    if scope:
        args.append("--watch-namespace=$(POD_NAMESPACE)")
    args += extra_args or []
    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
           {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    dep = deployment(f"{full}-controller", ns, NGINX_IMAGE, labels=labels, args=args, sa=full, env=env,
                     ports=[{"name": "http", "containerPort": 80}, {"name": "https", "containerPort": 443}])
    dep["spec"]["template"]["spec"]["containers"][0]["name"] = "controller"
    store.create(dep, MANAGER)
    store.create(service(f"{full}-controller", ns, labels,
                         [{"name": "http", "port": 80, "targetPort": "http"},
                          {"name": "https", "port": 443, "targetPort": "https"}], service_type), MANAGER)


def metallb_rbac(store: Store) -> None:
    """The controller's RBAC, as the lab renders it (_metallb.controller_rbac)."""
    for obj in mlb.controller_rbac():
        store.create(obj, MANAGER)


def metallb_controller(store: Store, rbac: bool = True) -> None:
    """The MetalLB controller Deployment with its ServiceAccount (and, with rbac, its rights):
    the emulation acts as that pod's ServiceAccount."""
    store.create({"apiVersion": "v1", "kind": "ServiceAccount",
                  "metadata": {"name": "controller", "namespace": "metallb-system"}}, MANAGER)
    if rbac:
        metallb_rbac(store)
    store.create(deployment("controller", "metallb-system", "quay.io/metallb/controller:v0.16.1",
                            labels={"app": "metallb", "component": "controller"}, sa="controller"), MANAGER)


def metallb(store: Store, addresses: list[str], l2: bool = True) -> None:
    """MetalLB's native manifest (the parts the twin reads): CRDs, the controller Deployment and
    its RBAC, the speaker DaemonSet, a pool `default` and (l2) an L2Advertisement of every pool."""
    namespace(store, "metallb-system")
    install_metallb_crds(store)
    metallb_controller(store)
    speaker = deployment("speaker", "metallb-system", "quay.io/metallb/speaker:v0.16.1",
                         labels={"app": "metallb", "component": "speaker"})
    speaker["kind"] = "DaemonSet"
    speaker["spec"].pop("replicas")
    # as the manifest has it; only multi-node clusters keep the taint this tolerates
    speaker["spec"]["template"]["spec"]["tolerations"] = [
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
    store.create(speaker, MANAGER)
    store.create({"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
                  "metadata": {"name": "default", "namespace": "metallb-system"},
                  "spec": {"addresses": addresses}}, MANAGER)
    if l2:
        store.create({"apiVersion": "metallb.io/v1beta1", "kind": "L2Advertisement",
                      "metadata": {"name": "default", "namespace": "metallb-system"}, "spec": {}}, MANAGER)


def lb_ip(store: Store, ns: str, name: str) -> str | None:
    svc = store.get(("v1", "Service"), ns, name) or {}
    ing = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return ing[0].get("ip") if ing else None


def ingress_addr(store: Store, ns: str, name: str) -> list[str]:
    ing = store.get(("networking.k8s.io/v1", "Ingress"), ns, name) or {}
    return [e.get("ip") or e.get("hostname")
            for e in ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []]


def update_retry(store: Store, obj: Obj, manager: str = MANAGER, attempts: int = 20) -> Obj:
    """PUT obj; on a resourceVersion conflict (a controller wrote meanwhile) carry the test's
    spec/labels/annotations over to the fresh object and try again."""
    for _attempt in range(attempts):
        try:
            return store.update(obj, manager)
        except Conflict:
            m = obj["metadata"]
            fresh = store.get((obj["apiVersion"], obj["kind"]), m.get("namespace"), m["name"])
            assert fresh is not None
            if "spec" in obj:
                fresh["spec"] = obj["spec"]
            for k in ("labels", "annotations"):
                if k in m:
                    fresh["metadata"][k] = m[k]
            obj = fresh
            time.sleep(0.05)
    raise AssertionError("update kept conflicting")
