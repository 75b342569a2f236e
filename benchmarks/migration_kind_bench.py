"""Benchmark of the migration rehearsal through real proxies on kind (issue 31: "1,000 requests
through three data planes (the baseline and both targets), compared, in under 60 s on kind").

    hack/kind-lab.sh up migration-quirks          # the lab: ingress-nginx and both Traefik providers
    hack/kind-lab.sh exec .venv/bin/python benchmarks/migration_kind_bench.py [--ingresses 125] [--runs 3]

Adds N Ingresses (125; class annotation nginx, one host and one Prefix path each, backed by the
lab's echo Service shop/plain) to the running lab, waits until every data plane serves the last
one, then runs the rehearsal's own function (migration.ingress_migration.rehearse, what ingress_migration
calls) over namespace shop against both targets RUNS times and prints the requests in the corpus,
the requests sent and the seconds of the replay and of the whole rehearsal (min, median, max), with
PASS/FAIL against 60 s. The added Ingresses are deleted at the end. Run it inside the lab engine's
network namespace (hack/kind-lab.sh exec), where the data planes' addresses are.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / ".collections"))

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.sides import parse_all, resolve  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.ingress_migration import rehearse  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import send  # noqa: E402

LABEL = "kindlab.bench/migration"
BASELINE = {"name": "ingress-nginx", "namespace": "ingress-nginx"}
TARGETS = [{"name": "traefik-nginx-provider", "namespace": "traefik"},
           {"name": "traefik-ingress-provider", "namespace": "traefik-native"}]


def ingress(i: int) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "bench-%d" % i, "namespace": "shop", "labels": {LABEL: "true"},
                         "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"rules": [{"host": "b%d.bench.test" % i, "http": {"paths": [
                {"path": "/p%d" % i, "pathType": "Prefix",
                 "backend": {"service": {"name": "plain", "port": {"name": "http"}}}}]}}]}}


def wait_served(client: Client, last: int, timeout: float = 120) -> float:
    """Seconds until every data plane answers the last Ingress added from its backend."""
    started = time.monotonic()
    planes = [resolve(client, spec) for spec in [parse_all(BASELINE, TARGETS)[0]] + parse_all(BASELINE, TARGETS)[1]]
    probe = Request(id="probe", ingress="shop/bench-%d" % last, host="b%d.bench.test" % last, target="/p%d" % last,
                    kind="path", rule="")
    while time.monotonic() - started < timeout:
        if all(send(p.address, probe, timeout=5).backend == "shop/plain" for p in planes):
            return time.monotonic() - started
        time.sleep(1)
    raise SystemExit("the data planes did not all serve b%d.bench.test within %d s" % (last, timeout))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", default=str(REPO / "artifacts" / "ingress-lab" / "kubeconfig"))
    parser.add_argument("--ingresses", type=int, default=125)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    client = Client(args.kubeconfig)
    objs = [ingress(i) for i in range(args.ingresses)]
    client.apply_all(objs)
    try:
        loaded = wait_served(client, args.ingresses - 1)
        params = {"namespaces": ["shop"], "names": [], "label_selector": None, "baseline": BASELINE, "targets": TARGETS,
                  "requests": [], "expected": [], "same": [], "samples": 2, "workers": 16}
        replays, totals = [], []
        result: dict[str, Any] = {}
        for _run in range(args.runs):
            result = rehearse(client, params)
            replays.append(result["seconds"]["replay"])
            totals.append(result["seconds"]["total"])
    finally:
        for obj in objs:
            client.delete("networking.k8s.io/v1", "Ingress", obj["metadata"]["name"], "shop")
    counts = {t: b["counts"] for t, b in result["comparison"]["targets"].items()}
    print("%d Ingresses added, served by all three data planes after %.1f s" % (args.ingresses, loaded))
    print("corpus: %d requests (%d Ingresses), %d HTTP requests sent per run (the baseline twice)"
          % (len(result["corpus"]), len(result["ingresses"]), result["requests_sent"]))
    print("%-40s %8s %8s %8s %6s" % ("seconds", "min", "median", "max", "limit"))
    ok = True
    for label, values in (("replay (3 data planes)", replays), ("whole rehearsal (list, corpus, replay, compare)", totals)):
        med = statistics.median(values)
        ok &= med < 60
        verdict = "PASS" if med < 60 else "FAIL"
        print("%-40s %8.1f %8.1f %8.1f %6d  %s" % (label, min(values), med, max(values), 60, verdict))
    for target, c in sorted(counts.items()):
        print("  %s: %s" % (target, ", ".join("%s %d" % kv for kv in c.items())))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
