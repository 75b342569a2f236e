"""Benchmark of the migration rehearsal's two costs that do not depend on a cluster (issue 31: "the
corpus for 200 Ingresses generated in under 1 s"; "1,000 requests through three data planes,
compared, in under 60 s"). Prints numbers side by side and PASS/FAIL.

    .venv/bin/python benchmarks/migration_bench.py [--runs N] [--ingresses N] [--requests N]

- corpus: migration.corpus.generate over N Ingresses (200) of realistic shapes: hosts shared by
  several Ingresses, Prefix/Exact/regex paths, a third with use-regex, some with rewrite-target,
  enable-cors, proxy-body-size, canary and limit-rps annotations.
- replay: the first R requests (1,000) of that corpus through three data planes (the baseline
  twice, two targets once: 4,000 HTTP requests) and compared. The data planes are three real
  echo-basic servers (the rehearsal's backend, from the kindlab cache: `kindlab-twin build binaries
  echo-basic`) on 127.0.0.1; no proxy, so this measures the rehearsal's own client and comparison,
  not a proxy's latency. On kind the module's own `seconds.replay` says the same for real proxies
  (the migration scenarios' report.json).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / ".collections"))
sys.path.insert(0, str(REPO / "src"))

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import corpus as corpus_mod  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import Plane, compare  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address, replay  # noqa: E402
from kindlab_twin import binaries  # noqa: E402

NGINX = "nginx.ingress.kubernetes.io/"


def ingresses(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        annotations: dict[str, str] = {"kubernetes.io/ingress.class": "nginx"}
        paths = [{"path": "/svc%d" % i, "pathType": "Prefix"}, {"path": "/svc%d/exact" % i, "pathType": "Exact"}]
        if i % 3 == 0:
            annotations[NGINX + "use-regex"] = "true"
            paths.append({"path": "/r%d/v[0-9]+/(users|orders)" % i, "pathType": "ImplementationSpecific"})
        if i % 10 == 1:
            annotations[NGINX + "rewrite-target"] = "/$2"
            paths = [{"path": "/rw%d(/|$)(.*)" % i, "pathType": "ImplementationSpecific"}]
        if i % 7 == 2:
            annotations[NGINX + "enable-cors"] = "true"
            annotations[NGINX + "proxy-body-size"] = "16k"
        if i % 11 == 3:
            annotations.update({NGINX + "canary": "true", NGINX + "canary-by-header": "X-Canary"})
        if i % 13 == 4:
            annotations[NGINX + "limit-rps"] = "5"
        out.append({"metadata": {"namespace": "ns%d" % (i % 10), "name": "ing%d" % i, "annotations": annotations},
                    "spec": {"rules": [{"host": "host%d.example.test" % (i % 25),
                                        "http": {"paths": [dict(p, backend={"service": {"name": "s", "port": {"number": 80}}})
                                                           for p in paths]}}]}})
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_echo(name: str) -> tuple[subprocess.Popen[bytes], Address]:
    binary = binaries.binary_path("echo-basic")
    if not binary.exists():
        sys.exit("no echo-basic in the kindlab cache: run `.venv/bin/kindlab-twin build binaries echo-basic` first")
    port, h2c = free_port(), free_port()
    env = dict(os.environ, HTTP_PORT=str(port), H2C_PORT=str(h2c), NAMESPACE="bench", SERVICE_NAME=name, POD_NAME=name + "-0")
    proc = subprocess.Popen([str(binary)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, Address("127.0.0.1", port)
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("echo-basic did not listen on 127.0.0.1:%d" % port)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ingresses", type=int, default=200)
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    ings = ingresses(args.ingresses)

    gen_times = []
    for _run in range(args.runs):
        t0 = time.perf_counter()
        corpus = corpus_mod.generate(ings)
        gen_times.append(time.perf_counter() - t0)
    # bursts and slow requests measure the proxies' limits, not the rehearsal: left out here
    sample = [r for r in corpus if r.repeat == 1 and r.kind != "slow"][:args.requests]

    procs, planes = [], []
    for name in ("baseline", "target-a", "target-b"):
        proc, address = start_echo(name)
        procs.append(proc)
        planes.append((name, address))
    replay_times = []
    try:
        for _run in range(args.runs):
            t0 = time.perf_counter()
            answers = replay([(planes[0][0], planes[0][1], 2)] + [(n, a, 1) for n, a in planes[1:]], sample)
            compare(sample, [None] * len(sample), answers, Plane(*planes[0]), [Plane(n, a) for n, a in planes[1:]],
                    corpus_mod.regex_hosts(ings), {})
            replay_times.append(time.perf_counter() - t0)
    finally:
        for proc in procs:
            proc.kill()
    sent = len(sample) * 4
    print("%-58s %10s %10s %10s %8s" % ("measure", "min", "median", "max", "limit"))
    rows = [("corpus: %d Ingresses -> %d requests (s)" % (len(ings), len(corpus)), gen_times, 1.0),
            ("replay+compare: %d requests x 3 planes = %d sent (s)" % (len(sample), sent), replay_times, 60.0)]
    ok = True
    for label, times, limit in rows:
        med = statistics.median(times)
        ok &= med < limit
        verdict = "PASS" if med < limit else "FAIL"
        print("%-58s %10.3f %10.3f %10.3f %8.0f  %s" % (label, min(times), med, max(times), limit, verdict))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
