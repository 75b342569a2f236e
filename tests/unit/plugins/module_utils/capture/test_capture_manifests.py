"""A team's manifests captured as a cluster is (issue 54: rehearse manifests, not only a cluster)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.capture.scenario import CaptureError
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.manifests import capture_manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.manifests import ManifestClient, read
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import rehearsal_lab as rehearsal

# As `helm template` prints a team's chart: a Deployment and Service, two Ingresses (one by annotation, one with
# spec.ingressClassName and a default backend), a ConfigMap and a Secret the capture has no use for.
APP = """
---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: example/web:1, ports: [{name: http, containerPort: 8080}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Secret
metadata: {name: web-tls, namespace: shop}
data: {tls.key: c2VjcmV0}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {a: b}
"""
INGRESSES = """
apiVersion: v1
kind: List
items:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: web
      namespace: shop
      annotations:
        kubernetes.io/ingress.class: public
        nginx.ingress.kubernetes.io/use-regex: "true"
    spec:
      rules:
        - host: shop.example.test
          http:
            paths:
              - {path: "/api/v[0-9]+", pathType: ImplementationSpecific, backend: {service: {name: web, port: {name: http}}}}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: www, namespace: shop}
    spec:
      ingressClassName: public
      defaultBackend: {service: {name: web, port: {number: 80}}}
      tls: [{hosts: [www.example.test], secretName: web-tls}]
      rules:
        - host: www.example.test
          http:
            paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
"""


def team(tmp_path: Path) -> Path:
    (tmp_path / "app.yaml").write_text(APP)
    (tmp_path / "ingresses.yml").write_text(INGRESSES)
    (tmp_path / "README.md").write_text("not read")
    return tmp_path


def test_a_directory_of_manifests_is_read_as_a_cluster_without_its_secrets(tmp_path: Path) -> None:
    found = read(str(team(tmp_path)))
    assert [(Path(f).name, o["kind"], o["metadata"]["name"]) for f, o in found] == [
        ("app.yaml", "Deployment", "web"), ("app.yaml", "Service", "web"), ("app.yaml", "ConfigMap", "web-config"),
        ("ingresses.yml", "Ingress", "web"), ("ingresses.yml", "Ingress", "www")]
    client = ManifestClient([o for _f, o in found], str(tmp_path))
    assert [i["metadata"]["name"] for i in client.list("networking.k8s.io/v1", "Ingress", namespace="shop")] == ["web", "www"]
    assert client.list("v1", "Pod") == [] and client.get("v1", "Service", "web", "shop") is not None
    with pytest.raises(KindNotServed):
        client.list("gateway.networking.k8s.io/v1", "GatewayClass")


def test_the_capture_adds_the_chart_s_ingress_nginx_for_the_class_the_ingresses_name(tmp_path: Path) -> None:
    result = capture_manifests(str(team(tmp_path)), [], "team")
    lab = result.lab
    [nginx] = [c for c in lab["lab_controllers"] if c["type"] == "ingress_nginx"]
    assert (nginx["namespace"], nginx["release"]) == ("ingress-nginx", "ingress-nginx")
    assert nginx["values"]["controller"]["ingressClassResource"] == {"name": "public"}
    assert nginx["values"]["controller"]["ingressClass"] == "public"
    assert any("hold no ingress-nginx" in n for n in result.unexpressed)
    [web] = parse_workloads(lab["lab_workloads"])
    assert web.replicas == 3 and sorted(i.name for i in web.ingresses) == ["web", "www"]
    assert "c2VjcmV0" not in yaml.safe_dump(lab)
    # and the rehearsal composes from it as from a cluster's capture
    out = rehearsal.compose(lab, ["traefik-nginx-provider", "gateway-api"], ["shop"], "rehearsal")
    assert out["lab_expect"]["migration"]["baseline"] == {"name": "ingress-nginx", "namespace": "ingress-nginx"}
    assert [t["ingress_class"] for t in out["lab_gateways"]["translations"]] == ["public"]


@pytest.mark.parametrize("files, said", [
    ({"a.yaml": APP}, "manifests: {dir} holds no Ingress"),
    ({"a.yaml": INGRESSES.replace("name: web, port: {name: http}", "name: api, port: {name: http}")},
     "{dir}/a.yaml: Ingress shop/web: its backend shop.example.test/api/v[0-9]+ names Service shop/api, which the "
     "manifests do not define"),
    ({"a.yaml": "apiVersion: v1\nkind: Service\n"},
     "manifests: {dir}/a.yaml document 1: expected a Kubernetes object, without metadata.name"),
    ({"a.yaml": "- just\n- a list\n"}, "manifests: {dir}/a.yaml document 1: expected a Kubernetes object (a mapping"),
    ({"a.yaml": "key: [unclosed\n"}, "manifests: {dir}/a.yaml: not YAML"),
    ({"notes.txt": "x"}, "manifests: {dir}: no *.yaml, *.yml, *.json file in this directory"),
])
def test_bad_manifests_are_refused_in_one_line_naming_the_file_and_object(tmp_path: Path, files: dict, said: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(CaptureError) as exc:
        capture_manifests(str(tmp_path), [], "team")
    assert str(exc.value).startswith(said.format(dir=tmp_path)), str(exc.value)
    assert "\n" not in str(exc.value)
