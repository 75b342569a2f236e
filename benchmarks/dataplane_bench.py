"""Benchmark of ingress_dataplane's read and comparison (issue 24: "the data-plane read of 3
controllers x 200 Ingresses in under 2 s"). Prints numbers and PASS/FAIL; in-process, no network.

    .venv/bin/python benchmarks/dataplane_bench.py [--runs N] [--ingresses N] [--profile]

A fake client serves three controllers with two Running replicas each: ingress-nginx in `one`
and in `two` (namespace-scoped, their Ingresses annotated kubernetes.io/ingress.class: nginx, as
in the lab) and the lab's Traefik in `traefik` (its Ingress provider, class traefik), each serving N Ingresses (200) in its own
namespace (one, two, three), each Ingress with its own Service and an EndpointSlice of three
ready endpoints. The pods answer in the readers' real formats: ingress-nginx's `/dbg backends
all` (the JSON array of /configuration/backends, every backend with its Service, endpoints and
balancing settings), Traefik's GET /api/http/services (one page, its internal services too).
Every replica routes every backend to the ready endpoints, so the right answer is 0 findings.

Timed: dataplane_window.run(client, Selection()), the function ingress_dataplane calls (one
round, window 0): listing the objects, finding the controllers, reading each pod (parsing its
answer) and comparing every backend with the EndpointSlices. Reads cost nothing here (a real
exec or pod proxy GET costs a round trip per pod); the benchmark checks that each pod is read
once per round and the EndpointSlices listed once, not once per Ingress.
"""
from __future__ import annotations

import argparse
import cProfile
import copy
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / ".collections"))

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import LAB_VALUES  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import dataplane_window  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection  # noqa: E402

Obj = dict[str, Any]
Objs = list[Obj]  # `list` names the clients' method in their class bodies
Argv = list[str]
GOAL_S = 2.0
REPLICAS = 2
NGINX_FULL = "ingress-ingress-nginx-controller"
NGINX_LABELS = {"app.kubernetes.io/instance": "ingress", "app.kubernetes.io/component": "controller"}
TRAEFIK_LABELS = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-traefik"}
# (controller namespace, type, Ingress namespace, IngressClass)
CONTROLLERS = (("one", "ingress_nginx", "one", "nginx-one"), ("two", "ingress_nginx", "two", "nginx-two"),
               ("traefik", "traefik", "three", "traefik"))


def _pod(ns: str, name: str, labels: dict[str, str]) -> Obj:
    return {"metadata": {"namespace": ns, "name": name, "labels": dict(labels)}, "spec": {"nodeName": "lab-control-plane"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def _nginx_workload(ns: str) -> Obj:
    args = ["/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/" + NGINX_FULL,
            "--election-id=ingress-ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx-" + ns,
            "--ingress-class=nginx", "--watch-namespace=$(POD_NAMESPACE)"]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": NGINX_FULL, "namespace": ns},
            "spec": {"replicas": REPLICAS, "selector": {"matchLabels": NGINX_LABELS}, "template": {
                "metadata": {"labels": NGINX_LABELS}, "spec": {"serviceAccountName": "ingress-ingress-nginx", "containers": [
                    {"name": "controller", "image": "registry.k8s.io/ingress-nginx/controller:v1.11.0", "args": args,
                     "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}]}}}}


def _traefik_workload() -> Obj:
    cfg = chart.effective_config(LAB_VALUES, "traefik", "traefik")
    args = ["--entryPoints.traefik.address=:8080/tcp", "--entryPoints.web.address=:8000/tcp", "--api.dashboard=true",
            "--api.insecure=true", "--ping=true"] + cfg.args
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": "traefik"},
            "spec": {"replicas": REPLICAS, "selector": {"matchLabels": TRAEFIK_LABELS}, "template": {
                "metadata": {"labels": TRAEFIK_LABELS}, "spec": {"serviceAccountName": "traefik", "containers": [
                    {"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": args}]}}}}


def _lb(ns: str, name: str, selector: dict[str, str], ip: str) -> Obj:
    return {"metadata": {"namespace": ns, "name": name},
            "spec": {"type": "LoadBalancer", "clusterIP": "10.96.1.%d" % (len(ns) + len(name)), "selector": selector,
                     "ports": [{"name": "http", "port": 80}]},
            "status": {"loadBalancer": {"ingress": [{"ip": ip}]}}}


def _app(ns: str, i: int, n: int) -> tuple[Obj, Obj, Obj, list[str]]:
    """An Ingress, its Service and its EndpointSlice (three ready endpoints); their addresses."""
    name = "app-%03d" % i
    ips = ["10.%d.%d.%d" % (100 + n, i // 50, (i % 50) * 5 + k) for k in range(3)]
    service = {"metadata": {"namespace": ns, "name": name, "uid": "uid-%s-%s" % (ns, name)},
               "spec": {"type": "ClusterIP", "clusterIP": "10.96.%d.%d" % (10 + n, i), "clusterIPs": ["10.96.%d.%d" % (10 + n, i)],
                        "selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}}
    eps = {"metadata": {"namespace": ns, "name": name + "-x7k2p", "labels": {"kubernetes.io/service-name": name}},
           "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
           "endpoints": [{"addresses": [ip], "conditions": {"ready": True, "serving": True, "terminating": False},
                          "targetRef": {"kind": "Pod", "namespace": ns, "name": "%s-%d" % (name, k)}, "nodeName": "lab-control-plane"}
                         for k, ip in enumerate(ips)]}
    ingress = {"metadata": {"namespace": ns, "name": name}, "spec": {"rules": [{"host": "%s.%s.example.test" % (name, ns), "http": {
        "paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}]}}
    return ingress, service, eps, ips


def _nginx_backend(ns: str, service: Obj, ips: list[str]) -> Obj:
    """One entry of /configuration/backends as the controller posts it (pkg/apis/ingress/types.go Backend)."""
    return {"name": "%s-%s-80" % (ns, service["metadata"]["name"]), "service": service, "port": 80, "sslPassthrough": False,
            "endpoints": [{"address": ip, "port": "8080"} for ip in ips],
            "sessionAffinityConfig": {"name": "", "mode": "", "cookieSessionAffinity": {"name": ""}},
            "upstreamHashByConfig": {"upstream-hash-by-subset-size": 3}, "noServer": False,
            "trafficShapingPolicy": {"weight": 0, "weightTotal": 0, "header": "", "headerValue": "", "headerPattern": "", "cookie": ""}}


def _traefik_service(ns: str, name: str, ips: list[str]) -> Obj:
    full = "%s-%s-80@kubernetes" % (ns, name)
    urls = ["http://%s:8080" % ip for ip in ips]
    return {"loadBalancer": {"servers": [{"url": u} for u in urls], "strategy": "wrr", "passHostHeader": True,
                             "responseForwarding": {"flushInterval": "100ms"}},
            "status": "enabled", "usedBy": ["%s-%s-%s-example-test@kubernetes" % (ns, name, name)],
            "serverStatus": {u: "UP" for u in urls}, "name": full, "provider": "kubernetes", "type": "loadbalancer"}


class BenchClient:
    """The cluster above, in memory: list() and the two reads the readers make, counted."""

    def __init__(self, per_controller: int) -> None:
        self.objects: dict[str, list[Obj]] = {k: [] for k in (
            "Deployment", "DaemonSet", "Pod", "Service", "Node", "Namespace", "IngressClass", "ClusterRole",
            "ClusterRoleBinding", "Ingress", "EndpointSlice")}
        self.answers: dict[str, Any] = {}
        self.calls: dict[str, int] = {}
        o = self.objects
        o["Node"].append({"metadata": {"name": "lab-control-plane"},
                          "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}})
        for n, (ctl_ns, ctype, ing_ns, klass) in enumerate(CONTROLLERS):
            o["Namespace"] += [{"metadata": {"name": ctl_ns}}] + ([{"metadata": {"name": ing_ns}}] if ing_ns != ctl_ns else [])
            nginx = ctype == "ingress_nginx"
            o["IngressClass"].append({"metadata": {"name": klass}, "spec": {
                "controller": "k8s.io/ingress-nginx-" + ctl_ns if nginx else "traefik.io/ingress-controller"}})
            backends, services = [], []
            for i in range(per_controller):
                ingress, service, eps, ips = _app(ing_ns, i, n)
                if nginx:  # as the lab's scoped ingress-nginx take theirs (they may not list IngressClasses)
                    ingress["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
                else:
                    ingress["spec"]["ingressClassName"] = klass
                o["Ingress"].append(ingress)
                o["Service"].append(service)
                o["EndpointSlice"].append(eps)
                backends.append(_nginx_backend(ing_ns, service, ips))
                services.append(_traefik_service(ing_ns, service["metadata"]["name"], ips))
            if nginx:
                o["Deployment"].append(_nginx_workload(ctl_ns))
                o["Service"].append(_lb(ctl_ns, NGINX_FULL, NGINX_LABELS, "100.64.0.%d" % n))
                backends.append({"name": "upstream-default-backend", "port": 0, "endpoints": [{"address": "127.0.0.1", "port": "8181"}]})
                answer: Any = ExecResult(0, json.dumps(backends, indent=2) + "\n")
            else:
                o["Deployment"].append(_traefik_workload())
                o["Service"].append(_lb(ctl_ns, "traefik", {"app.kubernetes.io/name": "traefik"}, "100.64.0.%d" % n))
                o["ClusterRole"].append({"metadata": {"name": "traefik-traefik"}, "rules": [
                    {"apiGroups": [""], "resources": ["services", "nodes"], "verbs": ["get", "list", "watch"]},
                    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingressclasses"], "verbs": ["get", "list", "watch"]}]})
                o["ClusterRoleBinding"].append({"metadata": {"name": "traefik-traefik"},
                                                "roleRef": {"kind": "ClusterRole", "name": "traefik-traefik"},
                                                "subjects": [{"kind": "ServiceAccount", "name": "traefik", "namespace": "traefik"}]})
                internal = [{"name": s + "@internal", "provider": "internal", "status": "enabled"}
                            for s in ("api", "dashboard", "noop", "ping")]
                answer = Answer(200, json.dumps(sorted(services, key=lambda s: s["name"]) + internal),
                                headers=(("x-next-page", "1"), ("content-type", "application/json")))
            labels = NGINX_LABELS if nginx else TRAEFIK_LABELS
            for r in range(REPLICAS):
                name = "%s-%d" % ("ingress-ingress-nginx-controller-5d9c" if nginx else "traefik-7f6b", r)
                o["Pod"].append(_pod(ctl_ns, name, labels))
                self.answers["%s/%s" % (ctl_ns, name)] = answer

    def _count(self, what: str) -> None:
        self.calls[what] = self.calls.get(what, 0) + 1

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> Objs:
        self._count("list " + kind)
        # A real client returns new objects on every call: so does this one.
        return [copy.deepcopy(i) for i in self.objects[kind] if namespace is None or i["metadata"].get("namespace") == namespace]

    def pod_exec(self, namespace: str, name: str, container: str, command: Argv, timeout: float) -> ExecResult:
        self._count("exec")
        result: ExecResult = self.answers["%s/%s" % (namespace, name)]
        return result

    def pod_proxy_get(self, namespace: str, name: str, port: int, path: str, query: Any, timeout: float) -> Answer:
        self._count("proxy")
        answer: Answer = self.answers["%s/%s" % (namespace, name)]
        return answer


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ingresses", type=int, default=200, help="Ingresses per controller")
    parser.add_argument("--profile", action="store_true", help="print the top of a cProfile of one run")
    args = parser.parse_args()

    client = BenchClient(args.ingresses)
    times = []
    result: Obj = {}
    for _run in range(args.runs):
        client.calls.clear()
        start = time.perf_counter()
        result = dataplane_window.run(client, Selection())
        times.append(time.perf_counter() - start)
    pods = len(CONTROLLERS) * REPLICAS
    backends = sum(len(p["backends"]) for p in result["pods"].values())
    print("dataplane read+compare: %d controllers x %d Ingresses, %d replicas each (%d pods, %d pod/backend rows)"
          % (len(CONTROLLERS), args.ingresses, REPLICAS, pods, backends))
    print("  runs (s): %s" % " ".join("%.3f" % t for t in times))
    print("  min %.3f s, median %.3f s, max %.3f s" % (min(times), statistics.median(times), max(times)))
    print("  last run: %d exec, %d pod proxy GET, EndpointSlices listed %d time(s); findings %s, passed %s"
          % (client.calls.get("exec", 0), client.calls.get("proxy", 0), client.calls.get("list EndpointSlice", 0),
             result["counts"], result["passed"]))
    right = (result["passed"] and not result["findings"] and backends == pods * args.ingresses
             and client.calls.get("exec", 0) == 2 * REPLICAS and client.calls.get("proxy", 0) == REPLICAS
             and client.calls.get("list EndpointSlice", 0) == 1)
    if not right:
        print("  WRONG: expected 0 findings, %d rows, each pod read once and one EndpointSlice list" % (pods * args.ingresses))
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        dataplane_window.run(client, Selection())
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())
    ok = right and statistics.median(times) < GOAL_S
    print("%s: median %.3f s against the goal of %.1f s" % ("PASS" if ok else "FAIL", statistics.median(times), GOAL_S))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
