"""The HTTP API through a real kubectl (v1.32): what the lab's users and modules run."""
from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

Kubectl = Callable[..., subprocess.CompletedProcess[str]]

MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata:
  name: one
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: one
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: one
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: one
  annotations:
    kubernetes.io/ingress.class: nginx
spec:
  rules:
  - host: one.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: web, port: {number: 80}}
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ipaddresspools.metallb.io
spec:
  group: metallb.io
  scope: Namespaced
  names: {kind: IPAddressPool, listKind: IPAddressPoolList, plural: ipaddresspools, singular: ipaddresspool}
  versions:
  - name: v1beta1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Auto Assign, type: boolean, jsonPath: .spec.autoAssign}
    - {name: Addresses, type: string, jsonPath: .spec.addresses}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              addresses: {type: array, items: {type: string}}
              autoAssign: {type: boolean}
"""


def test_apply_manifest_client_side(kubectl: Kubectl, tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(MANIFEST)
    out = kubectl("apply", "-f", str(f)).stdout
    assert "deployment.apps/web created" in out and "ingress.networking.k8s.io/web created" in out
    out = kubectl("apply", "-f", str(f)).stdout
    assert "deployment.apps/web unchanged" in out
    f.write_text(MANIFEST.replace("replicas: 2", "replicas: 3"))
    assert "deployment.apps/web configured" in kubectl("apply", "-f", str(f)).stdout
    assert kubectl("get", "deploy", "-n", "one", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    # a typo in a field is refused like a real server does with kubectl's default --validate=strict
    bad = tmp_path / "bad.yaml"
    bad.write_text(MANIFEST.split("---\n")[1].replace("replicas: 2", "replicaz: 2"))
    res = kubectl("apply", "-f", str(bad), check=False)
    assert res.returncode != 0 and 'unknown field "spec.replicaz"' in res.stderr


def test_apply_server_side_and_conflicts(kubectl: Kubectl, tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(MANIFEST)
    assert "deployment.apps/web serverside-applied" in kubectl("apply", "--server-side", "-f", str(f)).stdout
    f.write_text(MANIFEST.replace("replicas: 2", "replicas: 4"))
    res = kubectl("apply", "--server-side", "--field-manager", "other", "-f", str(f), check=False)
    assert res.returncode != 0 and 'conflict with "kubectl"' in res.stderr and ".spec.replicas" in res.stderr
    kubectl("apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", str(f))
    fields = kubectl("get", "deploy", "-n", "one", "web", "--show-managed-fields", "-o",
                     "jsonpath={.metadata.managedFields[*].manager}").stdout.split()
    assert fields == ["kubectl", "other"]
    # client-side apply first, server-side later: kubectl takes its fields over without a conflict
    f.write_text(MANIFEST.replace("name: web", "name: web2").replace("replicas: 2", "replicas: 1"))
    kubectl("apply", "-f", str(f))
    f.write_text(MANIFEST.replace("name: web", "name: web2").replace("replicas: 2", "replicas: 5"))
    kubectl("apply", "--server-side", "-f", str(f))
    assert kubectl("get", "deploy", "-n", "one", "web2", "-o", "jsonpath={.spec.replicas}").stdout == "5"


def test_get_wide_shows_columns(api: Any, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=MANIFEST)
    ing = api.store.get(("networking.k8s.io/v1", "Ingress"), "one", "web")
    ing["status"] = {"loadBalancer": {"ingress": [{"ip": "100.64.0.1"}]}}
    api.store.update(ing, "ingress-nginx", subresource="status")
    out = kubectl("get", "ingress", "-A", "-o", "wide").stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert out[1].split()[:6] == ["one", "web", "<none>", "one.example.com", "100.64.0.1", "80"]
    out = kubectl("get", "deploy", "-n", "one", "-o", "wide").stdout
    assert "CONTAINERS" in out and "nginx:1.27" in out and "app=web" in out
    out = kubectl("get", "all", "-n", "one").stdout
    assert "service/web" in out and "deployment.apps/web" in out
    assert "web" in kubectl("get", "ing", "-n", "one", "-o", "name").stdout


def test_get_ingress_watch_receives_event_then_times_out(api: Any, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=MANIFEST)

    def publish() -> None:
        time.sleep(1.0)
        ing = api.store.get(("networking.k8s.io/v1", "Ingress"), "one", "web")
        ing["status"] = {"loadBalancer": {"ingress": [{"ip": "172.18.0.2"}]}}
        api.store.update(ing, "ingress-nginx", subresource="status")

    threading.Thread(target=publish).start()
    t0 = time.monotonic()
    res = kubectl("get", "ingress", "-A", "-w", "--request-timeout=3s", check=False, timeout=20)
    lines = res.stdout.splitlines()
    assert lines[0].split()[:5] == ["NAMESPACE", "NAME", "CLASS", "HOSTS", "ADDRESS"]
    assert any("172.18.0.2" in ln for ln in lines[2:]), res.stdout
    assert time.monotonic() - t0 < 10


def test_delete_and_cascade(api: Any, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=MANIFEST)
    d = api.store.get(("apps/v1", "Deployment"), "one", "web")
    api.store.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                      "metadata": {"name": "web-1", "namespace": "one",
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                        "uid": d["metadata"]["uid"], "controller": True}]},
                      "spec": d["spec"] | {"template": d["spec"]["template"]}}, "deployment-controller")
    assert 'deployment.apps "web" deleted' in kubectl("delete", "deploy", "-n", "one", "web").stdout
    assert api.store.list(("apps/v1", "ReplicaSet"), "one") == []
    res = kubectl("delete", "deploy", "-n", "one", "web", check=False)
    assert res.returncode != 0 and 'deployments.apps "web" not found' in res.stderr
    out = kubectl("delete", "-f", "-", input=MANIFEST, check=False)
    assert 'namespace "one" deleted' in out.stdout


def test_logs(api: Any, kubectl: Kubectl) -> None:
    kubectl("run", "p", "--image", "nginx:1.27", "--restart", "Never")
    for i in range(4):
        api.pod_logs.append("default", "p", f"log line {i}")
    assert kubectl("logs", "p").stdout == "".join(f"log line {i}\n" for i in range(4))
    assert kubectl("logs", "p", "--tail", "1").stdout == "log line 3\n"
    assert kubectl("logs", "pod/p", "-c", "p").stdout.startswith("log line 0")
    threading.Timer(0.5, lambda: api.pod_logs.append("default", "p", "followed")).start()
    res = kubectl("logs", "-f", "p", "--tail", "1", "--request-timeout=2s", check=False, timeout=20)
    assert res.stdout == "log line 3\nfollowed\n", res.stderr


def test_errors_as_kubectl_shows_them(kubectl: Kubectl) -> None:
    res = kubectl("apply", "-f", "-", input="apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", check=False)
    assert res.returncode != 0 and 'no matches for kind "Widget" in version "example.com/v1"' in res.stderr
    res = kubectl("apply", "-f", "-", check=False,
                  input="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: missing\n")
    assert res.returncode != 0 and 'namespaces "missing" not found' in res.stderr
    res = kubectl("apply", "-f", "-", check=False, input="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    assert res.returncode != 0 and "is invalid" in res.stderr
    res = kubectl("create", "namespace", "default", check=False)
    assert res.returncode != 0 and 'namespaces "default" already exists' in res.stderr


def test_crd_explain_and_scale(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=CRD)
    kubectl("apply", "-f", "-", input="apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata:\n  name: pool\n"
                                      "  namespace: default\nspec:\n  addresses: [100.64.0.0/16]\n  autoAssign: true\n")
    pool2 = ("apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata:\n  name: pool\n"
             "  namespace: default\nspec:\n  addresses: [100.64.0.0/16, 100.65.0.0/16]\n  autoAssign: true\n")
    assert "configured" in kubectl("apply", "-f", "-", input=pool2).stdout
    assert "serverside-applied" in kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=pool2).stdout
    out = kubectl("get", "ipaddresspools").stdout.splitlines()
    assert out[0].split()[:4] == ["NAME", "AUTO", "ASSIGN", "ADDRESSES"] and "100.65.0.0/16" in out[1]
    assert "pool" in kubectl("get", "ipaddresspools.metallb.io", "-o", "name").stdout
    assert "host\t" in kubectl("explain", "ingress.spec.rules").stdout
    kubectl("apply", "-f", "-", input=MANIFEST.split("---\n")[1].replace("namespace: one", "namespace: default"))
    kubectl("scale", "deployment", "web", "--replicas", "3")
    assert kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"


@pytest.mark.parametrize("verb", ["get", "describe"])
def test_get_and_describe_nodes_namespaces(kubectl: Kubectl, verb: str) -> None:
    assert "default" in kubectl(verb, "namespaces").stdout


def test_typed_create_commands(kubectl: Kubectl) -> None:
    """kubectl sends these as protobuf; the twin decodes the few kinds they create."""
    kubectl("create", "namespace", "two")
    kubectl("create", "configmap", "cfg", "-n", "two", "--from-literal", "k=v")
    kubectl("create", "secret", "generic", "sec", "-n", "two", "--from-literal", "a=b")
    kubectl("create", "serviceaccount", "robot", "-n", "two")
    assert kubectl("get", "cm", "cfg", "-n", "two", "-o", "jsonpath={.data.k}").stdout == "v"
    assert kubectl("get", "secret", "sec", "-n", "two", "-o", "jsonpath={.data.a}").stdout == "Yg=="
    res = kubectl("create", "deployment", "web", "--image", "nginx", check=False)
    assert res.returncode != 0 and "use kubectl apply" in res.stderr
