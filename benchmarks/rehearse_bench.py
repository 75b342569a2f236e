"""Benchmark of playbooks/rehearse.yml on a cluster of a team's size (issue 32: "a cluster of 50 Ingresses in
10 namespaces captured, rebuilt and rehearsed against two targets within 10 minutes on kind").

    .venv/bin/python benchmarks/rehearse_bench.py [--ingresses 50] [--namespaces 10]

As root on Linux, with the lab's engine (make kind-engine) or one that answers. Not timed: the team's
cluster (tests/kind/team/base.yml: kind, MetalLB, ingress-nginx), then its objects applied with kubectl:
per namespace one echo Deployment and Service, and INGRESSES/NAMESPACES Ingresses, each on a host of its
own with a Prefix path and an Exact one, every third with use-regex and a regex path, every fifth with TLS.
Timed: `hack/kind-lab.sh rehearse` against it (traefik-nginx-provider and traefik-ingress-provider), from
outside and per stage as the playbook prints them. Prints the stages, the requests sent, the differences
per target and PASS/FAIL of the total against 600 s; then deletes the team's cluster.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
KIND_LAB = str(REPO / "hack" / "kind-lab.sh")
TARGET = 600.0


def manifest(ingresses: int, namespaces: int, echo_image: str) -> list[dict[str, Any]]:
    """The team's objects: NAMESPACES namespaces, one echo app each, INGRESSES Ingresses spread over them."""
    objs: list[dict[str, Any]] = []
    for n in range(1, namespaces + 1):
        ns = "team-%d" % n
        labels = {"app": "echo"}
        objs += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "echo", "namespace": ns},
             "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                 "containers": [{"name": "echo", "image": echo_image, "ports": [{"name": "app", "containerPort": 3000}],
                                 "env": [{"name": "HTTP_PORT", "value": "3000"}, {"name": "SERVICE_NAME", "value": "echo"},
                                         {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                         {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}]}}}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo", "namespace": ns},
             "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "app"}]}},
        ]
    for i in range(ingresses):
        ns = "team-%d" % (i % namespaces + 1)
        host = "app-%d.%s.example.test" % (i, ns)
        backend = {"service": {"name": "echo", "port": {"name": "http"}}}
        annotations = {"nginx.ingress.kubernetes.io/use-regex": "true"} if i % 3 == 0 else {}
        first = {"path": "/api/v[0-9]+" if i % 3 == 0 else "/api", "pathType": "ImplementationSpecific" if i % 3 == 0 else "Prefix",
                 "backend": backend}
        spec: dict[str, Any] = {"ingressClassName": "nginx", "rules": [{"host": host, "http": {"paths": [
            first, {"path": "/login", "pathType": "Exact", "backend": backend}]}}]}
        if i % 5 == 0:
            spec["tls"] = [{"hosts": [host], "secretName": "app-%d-tls" % i}]
        objs.append({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                     "metadata": {"name": "app-%d" % i, "namespace": ns, "annotations": annotations}, "spec": spec})
    return objs


def sh(argv: list[str], log: Path) -> None:
    with log.open("a") as out:
        subprocess.run(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingresses", type=int, default=50)
    parser.add_argument("--namespaces", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kindlab-rehearse-bench."))
    log = work / "bench.log"
    started = time.monotonic()
    sh([KIND_LAB, "prepare"], log)
    print("prepare: %.0f s (not timed)" % (time.monotonic() - started))
    lab_vars = json.loads(subprocess.run([KIND_LAB, "vars"], cwd=REPO, capture_output=True, text=True, check=True).stdout)
    team = work / "team"
    try:
        started = time.monotonic()
        sh([KIND_LAB, "up", "tests/kind/team/base.yml", "-e", "lab_state_dir=%s" % team], log)
        objs = manifest(args.ingresses, args.namespaces, lab_vars["lab_images"]["echo"])
        (work / "team.yaml").write_text(yaml.safe_dump_all(objs))
        sh([KIND_LAB, "exec", "kubectl", "--kubeconfig", str(team / "kubeconfig"), "apply", "-f", str(work / "team.yaml")], log)
        for n in range(1, args.namespaces + 1):
            sh([KIND_LAB, "exec", "kubectl", "--kubeconfig", str(team / "kubeconfig"), "-n", "team-%d" % n, "rollout", "status",
                "deployment/echo", "--timeout=180s"], log)
        print("the team's cluster, %d Ingresses in %d namespaces: %.0f s (not timed)"
              % (args.ingresses, args.namespaces, time.monotonic() - started))
        started = time.monotonic()
        proc = subprocess.run([KIND_LAB, "rehearse", "-e", "rehearse_kubeconfig=%s" % (team / "kubeconfig"),
                               "-e", '{"rehearse_targets": ["traefik-nginx-provider", "traefik-ingress-provider"]}',
                               "-e", "rehearse_dir=%s" % (work / "rehearsal")],  # (the rehearsal chooses its own pool)
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        total = time.monotonic() - started
        (work / "rehearse.log").write_text(proc.stdout)
        stages = re.findall(r"- '([a-z ,()_]+): (\d+) s'", proc.stdout)
        print("\nrehearse.yml (rc %d), seconds:" % proc.returncode)
        for name, seconds in stages:
            print("  %-28s %6s" % (name, seconds))
        print("  %-28s %6.0f" % ("from outside", total))
        report = work / "rehearsal" / "verify" / "report.json"
        if report.exists():
            migration = json.loads(report.read_text())["results"]["migration"]
            print("requests sent: %d; Ingresses rehearsed: %d" % (migration["requests_sent"], len(migration["ingresses"])))
            for target, body in sorted(migration["comparison"]["targets"].items()):
                print("  %s: %s" % (target, ", ".join("%d %s" % (n, o) for o, n in body["counts"].items())))
        ok = proc.returncode == 0 and total <= TARGET
        print("\n%s: %.0f s against %.0f s (logs in %s)" % ("PASS" if ok else "FAIL", total, TARGET, work))
        return 0 if ok else 1
    finally:
        subprocess.run([KIND_LAB, "down", "tests/kind/team/base.yml", "-e", "lab_state_dir=%s" % team], cwd=REPO,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


if __name__ == "__main__":
    sys.exit(main())
