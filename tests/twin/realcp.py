"""Shared by the tests that run the real control plane (pinned binaries, kwok nodes): the
binaries' skip rule, a started twin cluster, a bare ControlPlane, kubectl on it, bounded polling, and the objects of
an ingress-nginx release as its chart renders them (the parts the twin reads)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import pytest

from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS, ControlPlane
from kindlab_twin.pki import ADMIN
from kindlab_twin.cluster import TwinCluster, node_specs

Obj = dict[str, Any]
POD_SUBNET = "10.244.0.0/16"
NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:" + "0" * 64
NGINX_LABELS = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}


def require(names: Sequence[str]) -> pytest.MarkDecorator:
    """Skip without the binaries, except under `make unit` (KINDLAB_REQUIRE_BINARIES=1), which
    builds them first: there a missing binary fails the run."""
    missing = binaries.missing(names)
    return pytest.mark.skipif(
        bool(missing) and os.environ.get("KINDLAB_REQUIRE_BINARIES") != "1",
        reason=f"pinned binaries not built ({', '.join(missing)}): run `kindlab-twin build binaries`")


@contextlib.contextmanager
def started_cluster(kind_config: Obj | None = None, name: str = "kind", time_scale: float = 60.0) -> Iterator[TwinCluster]:
    """A started twin cluster (time_scale 60: a 60 s status sync takes 1 s), stopped and removed
    after. Without the binaries: skipped, or failed under KINDLAB_REQUIRE_BINARIES=1 (see require).
    Its state lives in a short /tmp path: the egress proxy's Unix socket path must stay under
    108 bytes, which pytest's tmp_path does not promise."""
    missing = binaries.missing(COMPONENTS)
    if missing:
        message = f"pinned binaries not built ({', '.join(missing)}): run `kindlab-twin build binaries`"
        if os.environ.get("KINDLAB_REQUIRE_BINARIES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    root = tempfile.mkdtemp(prefix="twin-")
    cluster = TwinCluster(name, root, kind_config or {}, time_scale=time_scale)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def control_plane(cluster: str, root: Path, kind_config: dict[str, Any]) -> ControlPlane:
    return ControlPlane(cluster=cluster, root=root, nodes=node_specs(cluster, kind_config), pod_subnet=POD_SUBNET,
                        service_subnet="10.96.0.0/16", kubernetes_service_ip="10.96.0.1")


def kubectl(cp: ControlPlane, *args: str, stdin: str | None = None, check: bool = True) -> str:
    proc = subprocess.run(["kubectl", "--kubeconfig", str(cp.layout.kubeconfig(ADMIN)), *args], input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def kget(cp: ControlPlane, *args: str) -> Any:
    return json.loads(kubectl(cp, "get", *args, "-o", "json"))


def wait_for(pred: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05, what: str = "") -> Any:
    """pred()'s first truthy value; an AssertionError naming WHAT and the last value (or
    exception) seen when TIMEOUT passes first."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = pred()
        except Exception as exc:  # noqa: BLE001 - the object may not exist yet
            last = exc
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what or pred}: last={last!r}")
        time.sleep(interval)


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service(name: str, ns: str, selector: dict[str, str], ports: list[Obj], stype: str = "ClusterIP") -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"type": stype, "selector": selector, "ports": ports}}


def deployment(name: str, ns: str, image: str, replicas: int = 1, labels: dict[str, str] | None = None) -> Obj:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": image}]}}}}


def ingress_nginx_release(ns: str, *, scope: bool, publish_service: bool, extra_args: Sequence[str] = (),
                          release: str = "ingress", service_type: str = "LoadBalancer") -> list[Obj]:
    """What the ingress-nginx chart (4.15) renders, the parts the twin reads, in apply order:
    the controller's ServiceAccount, its RBAC (a Role when scope.enabled, else a
    ClusterRole), the controller Service and the Deployment with the chart's args."""
    full = f"{release}-ingress-nginx"
    labels = dict(NGINX_LABELS, **{"app.kubernetes.io/instance": release})
    objs: list[Obj] = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": full, "namespace": ns}}]
    rules = [{"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingressclasses"],
              "verbs": ["get", "list", "watch"]}]
    subjects = [{"kind": "ServiceAccount", "name": full, "namespace": ns}]
    if scope:
        objs += [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": full, "namespace": ns}, "rules": rules},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                  "metadata": {"name": full, "namespace": ns},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": full},
                  "subjects": subjects}]
    else:
        objs += [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": f"{ns}-{full}"},
                  "rules": rules + [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                  "metadata": {"name": f"{ns}-{full}"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-{full}"},
                  "subjects": subjects}]
    objs.append(service(f"{full}-controller", ns, labels, [{"name": "http", "port": 80, "targetPort": "http"},
                                                           {"name": "https", "port": 443, "targetPort": "https"}],
                        service_type))
    args = ["/nginx-ingress-controller"]
    if publish_service:
        args.append(f"--publish-service=$(POD_NAMESPACE)/{full}-controller")
    args += [f"--election-id={full}-leader", "--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx",
             f"--configmap=$(POD_NAMESPACE)/{full}-controller"]
    if scope:
        args.append("--watch-namespace=$(POD_NAMESPACE)")
    args += list(extra_args)
    dep = deployment(f"{full}-controller", ns, NGINX_IMAGE, labels=labels)
    dep["spec"]["template"]["spec"].update(serviceAccountName=full, containers=[{
        "name": "controller", "image": NGINX_IMAGE, "args": args,
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "ports": [{"name": "http", "containerPort": 80}, {"name": "https", "containerPort": 443}]}])
    objs.append(dep)
    return objs
