"""The twin through a real kubectl: the pinned kube-apiserver, workloads run by the real
controller-manager and scheduler (pods started by the kubelet emulation), events, server-side
apply, server dry runs, namespace deletion, pod logs served by kwok, and what keeps the API
server private (loopback only, no anonymous access, private key files, RBAC on tokens)."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import ssl
import stat
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from kindlab_twin.kubeapi import ServiceAccountToken
from kindlab_twin.cluster import TwinCluster, TwinClusterHandle

from realcp import NGINX_LABELS, ingress_nginx_release, namespace, wait_for

Kubectl = Callable[..., subprocess.CompletedProcess[str]]
# klog's text header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] message
KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.-]+\.go:\d+\] ")
CONTROLLER = "ingress-ingress-nginx-controller"

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  mode: lab
"""


def kjson(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl(*args, "-o", "json").stdout)


def test_version_workloads_events_apply_dry_run_and_namespace_deletion(kubectl: Kubectl) -> None:
    version = json.loads(kubectl("get", "--raw", "/version").stdout)
    assert version["gitVersion"] == _versions.KUBERNETES_VERSION
    assert re.fullmatch(r"v\d+\.\d+\.\d+", version["gitVersion"])  # a release build: no -dirty, no +suffix
    major, minor = _versions.KUBERNETES_VERSION[1:].split(".")[:2]
    assert (version["major"], version["minor"], version["gitTreeState"]) == (major, minor, "clean")

    # a Deployment, rolled out and scaled by the real controllers
    assert kubectl("create", "deployment", "web", "--image", "nginx").stdout.strip() == "deployment.apps/web created"
    out = kubectl("rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert 'deployment "web" successfully rolled out' in out
    out = kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s").stdout
    assert out.strip() == "deployment.apps/web condition met"
    assert kubectl("scale", "deployment/web", "--replicas=3").stdout.strip() == "deployment.apps/web scaled"
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    status = kjson(kubectl, "get", "deployment", "web")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)
    pods = kjson(kubectl, "get", "pods", "-l", "app=web")["items"]
    assert len(pods) == 3
    for pod in pods:
        assert pod["status"]["phase"] == "Running" and pod["spec"]["nodeName"] == "kind-control-plane"
        assert ipaddress.ip_address(pod["status"]["podIP"]) in ipaddress.ip_network("10.244.0.0/16")

    # the events the scheduler and the deployment controller recorded
    def events() -> list[Any] | None:
        items = kjson(kubectl, "get", "events")["items"]
        messages = [e["message"] for e in items if e.get("reason") == "ScalingReplicaSet"]
        scheduled = [e for e in items if e.get("reason") == "Scheduled"]
        return items if len(scheduled) >= 3 and any("from 1 to 3" in m for m in messages) else None
    wait_for(events, what="Scheduled and ScalingReplicaSet events")
    table = kubectl("get", "events").stdout.splitlines()
    assert table[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any("Scheduled" in row and "Successfully assigned default/web-" in row for row in table[1:])
    assert any("ScalingReplicaSet" in row and "deployment/web" in row for row in table[1:])

    # server-side apply: kubectl owns the fields it applied; another manager conflicts
    out = kubectl("apply", "--server-side", "-f", "-", input=CONFIGMAP).stdout
    assert out.strip() == "configmap/settings serverside-applied"
    managed = kjson(kubectl, "get", "configmap", "settings", "--show-managed-fields")["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("kubectl", "Apply")]
    assert "f:mode" in managed[0]["fieldsV1"]["f:data"]
    res = kubectl("apply", "--server-side", "--field-manager", "other", "-f", "-",
                  input=CONFIGMAP.replace("mode: lab", "mode: prod"), check=False)
    assert res.returncode != 0 and 'conflict with "kubectl"' in res.stderr and ".data.mode" in res.stderr
    assert kubectl("get", "configmap", "settings", "-o", "jsonpath={.data.mode}").stdout == "lab"

    # --dry-run=server: the server answers as if, and stores nothing
    out = kubectl("create", "deployment", "dry", "--image", "nginx", "--dry-run=server").stdout
    assert out.strip() == "deployment.apps/dry created (server dry run)"
    out = kubectl("apply", "--dry-run=server", "-f", "-", input=CONFIGMAP.replace("settings", "dry")).stdout
    assert out.strip() == "configmap/dry created (server dry run)"
    assert "(server dry run)" in kubectl("delete", "configmap", "settings", "--dry-run=server").stdout
    assert "(server dry run)" in kubectl("scale", "deployment/web", "--replicas=1", "--dry-run=server").stdout
    for kind, name in (("deployment", "dry"), ("configmap", "dry")):
        res = kubectl("get", kind, name, check=False)
        assert res.returncode != 0 and "NotFound" in res.stderr, res.stdout
    assert kubectl("get", "replicasets", "-l", "app=dry", "-o", "name").stdout == ""
    assert kubectl("get", "configmap", "settings", "-o", "name").stdout.strip() == "configmap/settings"
    assert kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"

    # deleting a namespace with running pods returns once it is gone
    kubectl("create", "namespace", "gone")
    kubectl("-n", "gone", "create", "deployment", "w", "--image", "nginx", "--replicas=2")
    kubectl("-n", "gone", "rollout", "status", "deployment/w", "--timeout=60s")
    out = kubectl("delete", "namespace", "gone", "--wait", "--timeout=90s", timeout=120).stdout
    assert out.strip() == 'namespace "gone" deleted'
    res = kubectl("get", "namespace", "gone", check=False)
    assert res.returncode != 0 and 'namespaces "gone" not found' in res.stderr
    assert kubectl("get", "pods", "-A", "-l", "app=w", "-o", "name").stdout == ""


def _https_get(server: str, ca_file: str, path: str, token: str | None = None) -> tuple[int, Any]:
    """GET without a client certificate (a bearer token if given), never through a proxy."""
    ctx = ssl.create_default_context(cafile=ca_file)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with opener.open(urllib.request.Request(server + path, headers=headers), timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_logs_and_rights_of_an_ingress_nginx_controller_pod(twin: TwinClusterHandle, kubectl: Kubectl) -> None:
    """The emulated controller's output is a CRI log file that kwok serves to `kubectl logs`
    through the API server; it runs with its ServiceAccount's token, whose rights the real
    authorizer decides: a namespace-scoped Role gives no cluster-wide IngressClass list."""
    twin.store.create(namespace("one"), "test")
    for obj in ingress_nginx_release("one", scope=True, publish_service=True, service_type="ClusterIP"):
        twin.store.create(obj, "test")
    kubectl("-n", "one", "rollout", "status", f"deployment/{CONTROLLER}", "--timeout=60s")
    selector = ",".join(f"{k}={v}" for k, v in NGINX_LABELS.items())
    pod = kubectl("-n", "one", "get", "pods", "-l", selector, "-o", "jsonpath={.items[*].metadata.name}").stdout
    assert pod.startswith(f"{CONTROLLER}-") and " " not in pod

    def started() -> str | None:
        out = kubectl("-n", "one", "logs", pod, check=False).stdout
        return out if '"Starting NGINX Ingress controller"' in out else None
    lines = wait_for(started, what=f"kubectl logs {pod} showing the controller's start").splitlines()
    assert "NGINX Ingress controller" in lines[:3]  # the banner comes first
    klog = [line for line in lines if KLOG.match(line)]
    assert len(klog) >= 3, lines
    assert any(line.startswith("I") and 'main.go:205] "Creating API client"' in line for line in klog), klog
    refused = [line for line in klog if "main.go:111]" in line]
    assert len(refused) == 1 and refused[0].startswith("W"), klog
    assert ('User "system:serviceaccount:one:ingress-ingress-nginx" cannot list resource "ingressclasses" '
            'in API group "networking.k8s.io" at the cluster scope' in refused[0])
    assert any('nginx.go:273] "Starting NGINX Ingress controller"' in line for line in klog), klog
    # the same file through the Deployment, --tail and -c
    out = kubectl("-n", "one", "logs", f"deployment/{CONTROLLER}", "-c", "controller", "--tail=1").stdout
    assert len(out.splitlines()) == 1 and KLOG.match(out), out

    creds = twin.credentials
    token = ServiceAccountToken(twin.store.client, "one", "ingress-ingress-nginx")()
    code, body = _https_get(creds.server, creds.ca_file, "/apis/networking.k8s.io/v1/ingressclasses", token)
    assert code == 403 and body["reason"] == "Forbidden", body
    assert ('User "system:serviceaccount:one:ingress-ingress-nginx" cannot list resource "ingressclasses"'
            in body["message"])
    code, body = _https_get(creds.server, creds.ca_file, "/apis/networking.k8s.io/v1/namespaces/one/ingresses", token)
    assert code == 200 and body["kind"] == "IngressList"  # the token is valid: its Role allows this
    code, body = _https_get(creds.server, creds.ca_file, "/api/v1/namespaces/one/secrets", token)
    assert code == 403, body


def _listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket process PID listens on (/proc/net/tcp{,6})."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            local, state, inode = cols[1], cols[3], cols[9]
            if state != "0A" or inode not in inodes:  # 0A: TCP_LISTEN
                continue
            addr_hex, port_hex = local.split(":")
            raw = bytes.fromhex(addr_hex)  # host-order 32-bit words
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            out.append((str(ipaddress.ip_address(raw)), int(port_hex, 16)))
    return out


def test_the_api_server_is_private(twin_cluster: TwinCluster, twin_kubeconfig: str) -> None:
    cp = twin_cluster.control_plane
    # kube-apiserver listens on 127.0.0.1 only, on its one port; no component on another address
    assert _listening(cp.procs["kube-apiserver"].pid) == [("127.0.0.1", cp.ports.apiserver)]
    for component, proc in cp.procs.items():
        listening = _listening(proc.pid)
        assert listening and all(addr == "127.0.0.1" for addr, _port in listening), (component, listening)

    # no anonymous access: TLS without a client certificate or token is refused, so is a bad token
    creds = twin_cluster.credentials
    for path in ("/api/v1/namespaces", "/version", "/apis/networking.k8s.io/v1/ingressclasses"):
        code, body = _https_get(creds.server, creds.ca_file, path)
        assert code == 401 and body["reason"] == "Unauthorized", (path, body)
    assert _https_get(creds.server, creds.ca_file, "/api/v1/namespaces", token="not-a-token")[0] == 401

    # the credentials on disk are the owner's only
    state_dir = twin_cluster.state_dir
    keys = sorted(state_dir.rglob("*.key"))
    assert {"ca.key", "sa.key", "admin.key", "apiserver.key", "etcd-server.key"} <= {k.name for k in keys}
    kubeconfigs = sorted(state_dir.rglob("*kubeconfig"))
    assert Path(twin_kubeconfig) in kubeconfigs
    for private in keys + kubeconfigs:
        assert stat.S_IMODE(private.stat().st_mode) == 0o600, private
