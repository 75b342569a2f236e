"""Benchmarks of the verification modules on the twin. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/verify_bench.py

a. diagnose: the puzzle lab at lab_time_scale=1 (the first status re-sync is 60 s after the
   controllers start), then ingress_diagnose's logic right after `lab.yml` returns: its wall
   time, whether it named the culprit (two/ingress-ingress-nginx-controller) on one/test and
   three/test, and the seconds since lab-up (< 60 s: before the first flap).
b. status: the default (healthy, namespace-scoped) lab at lab_time_scale=60, 200 Ingresses
   server-side applied in namespace `one` (claimed by the scoped controller `one` only), then
   ingress_status over them for a 10 s window started right away, so every Ingress gets its
   first address during the window (max_changes 1, allow_empty): wall time, watch streams
   opened, events processed, verdict.
c. requests per resource kind: a bare real control plane (no lab, no controller) with the pinned
   Gateway API CRDs, 200 Ingresses in namespace `bench`, then ingress_status's logic for a 10 s
   window twice, side by side: over the 200 Ingresses as before (gateway_api false), and over the
   200 Ingresses plus 50 Gateways and 200 HTTPRoutes, while the benchmark writes every Gateway's
   status once as a fake controller (field manager `traefik`). Each request the client makes is
   counted by verb and kind: each kind must be listed once and watched by one stream.

    .venv/bin/python benchmarks/verify_bench.py [a] [b] [c]   (default: all three)

Twin state goes to a private KINDLAB_TWIN_HOME; every cluster started here is torn down on
exit, also on errors and SIGTERM. Bounded: the whole run stops within TOTAL_BUDGET_S.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
sys.path.insert(0, str(REPO / ".collections"))

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose as _diagnose  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection  # noqa: E402

TOTAL_BUDGET_S = 260.0
TIMEOUT_UP, TIMEOUT_DOWN = 60.0, 25.0
CULPRIT = "two/ingress-ingress-nginx-controller"
N_INGRESSES = 200
WINDOW_S = 10.0
_START = time.monotonic()


def left() -> float:
    return max(1.0, TOTAL_BUDGET_S - (time.monotonic() - _START))


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = "%s%s%s" % (VENV_BIN, os.pathsep, env.get("PATH", ""))
    env["ANSIBLE_COLLECTIONS_PATH"] = str(REPO / ".collections")
    env["KINDLAB_TWIN_HOME"] = str(home)
    return env


def playbook(name: str, extra: list[str], env: dict[str, str], timeout: float, log: Path) -> tuple[float, int]:
    argv = [str(VENV_BIN / "ansible-playbook"), "playbooks/%s.yml" % name] + extra
    start = time.perf_counter()
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = -9
    return time.perf_counter() - start, rc


def lab_args(name: str, state: Path, scale: int, scenario: str | None) -> list[str]:
    extra = ["-e", "lab_backend=twin", "-e", "lab_verify=false", "-e", "lab_time_scale=%d" % scale, "-e", "lab_state_dir=%s" % state,
             "-e", json.dumps({"lab_cluster": {"name": name, "workers": 0, "kind_config": {}}})]
    return extra + (["-e", "@scenarios/%s.yml" % scenario] if scenario else [])


def bench_diagnose(env: dict[str, str], tmp: Path, log: Path) -> None:
    """lab.yml runs in the background: at time scale 1 its last step waits for the first status
    re-sync (60 s), so diagnose runs as soon as the lab's Ingresses exist (the controllers are
    Ready by then), and the playbook is then stopped and the lab torn down."""
    extra = lab_args("vbench-diag", tmp / "diag", 1, "puzzle")
    kubeconfig = tmp / "diag" / "kubeconfig"
    argv = [str(VENV_BIN / "ansible-playbook"), "playbooks/lab.yml"] + extra
    start = time.monotonic()
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        client = None
        ingresses: list[dict[str, Any]] = []
        while time.monotonic() - start < min(TIMEOUT_UP, left() - 60) and proc.poll() is None:
            time.sleep(0.5)
            try:
                client = client or (Client(str(kubeconfig)) if kubeconfig.exists() else None)
                ingresses = client.list("networking.k8s.io/v1", "Ingress") if client else []
            except Exception:  # the API is still coming up
                client = None
            if len(ingresses) >= 3:
                break
        built = time.monotonic()
        print("a. puzzle lab built (time scale 1): %.1f s (its Ingresses exist)" % (built - start))
        if client is None or len(ingresses) < 3:
            print("   lab did not come up; see %s" % log)
            return
        t0 = time.perf_counter()
        result = _diagnose.run(client, Selection())
        took = time.perf_counter() - t0
        found = {f["ingress"]: f.get("culprits") for f in result["findings"] if f["kind"] == "multiple_writers"}
        ok = found.get("one/test") == [CULPRIT] and found.get("three/test") == [CULPRIT]
        status = {"%s/%s" % (i["metadata"]["namespace"], i["metadata"]["name"]): status_addresses(i)
                  for i in client.list("networking.k8s.io/v1", "Ingress")}
        print("   diagnose wall time: %.3f s, %.1f s after the lab was built (the first re-sync is 60 s after "
              "the controllers start); status at that moment: %s" % (took, time.monotonic() - built, json.dumps(status)))
        print("   culprit found: %s (%s)" % ("yes" if ok else "NO", json.dumps(found)))
        for f in result["findings"]:
            if f["kind"] == "multiple_writers" and f["ingress"] == "one/test":
                print("   finding: %s" % f["message"])
                print("   fix: %s" % json.dumps(f["fix"]))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        down, rc = playbook("teardown", extra, env, min(TIMEOUT_DOWN, left()), log)
        print("   teardown: %.1f s, rc=%d" % (down, rc))


def bench_status(env: dict[str, str], tmp: Path, log: Path) -> None:
    extra = lab_args("vbench-status", tmp / "status", 60, None)
    try:
        up, rc = playbook("lab", extra, env, min(TIMEOUT_UP, left() - 30), log)
        print("b. healthy lab up (time scale 60): %.1f s, rc=%d" % (up, rc))
        if rc != 0:
            return
        client = Client(str(tmp / "status" / "kubeconfig"))
        # The window opens first, then the Ingresses are applied: every one is ADDED and then
        # gets its first address inside the one stream (hence max_changes 1 and allow_empty).
        options = parse_options(WINDOW_S, 1, True, ["100.64.0.0/16"], False, True)
        box: dict[str, Any] = {}

        def watch() -> None:
            t = time.perf_counter()
            box["result"] = run(Client(str(tmp / "status" / "kubeconfig")), Selection(namespaces=["one"], label_selector="bench=verify"), options)
            box["took"] = time.perf_counter() - t

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        time.sleep(1.0)
        t0 = time.perf_counter()
        for i in range(N_INGRESSES):
            client.apply(ingress(i))
        print("   %d Ingresses server-side applied in %.1f s, inside the window" % (N_INGRESSES, time.perf_counter() - t0))
        thread.join(WINDOW_S + 30)
        result, took = box["result"], box["took"]
        changed = sum(1 for v in result["ingresses"].values() if v["changes"])
        print("   ingress_status: %d Ingresses, window %.0f s, wall %.1f s, watch streams %d, events %d, "
              "status changes %d (on %d Ingresses), passed %s"
              % (len(result["ingresses"]), WINDOW_S, took, result["watch_streams"], result["events"],
                 len(result["timeline"]), changed, result["passed"]))
        attributed = sum(1 for t in result["timeline"] if t.get("pod"))
        print("   changes attributed to a pod from its log: %d/%d" % (attributed, len(result["timeline"])))
        for line in result["failures"][:3]:
            print("   failure: %s" % line)
        t0 = time.perf_counter()
        published = 0
        while time.perf_counter() - t0 < min(40.0, left() - 35):
            items = client.list("networking.k8s.io/v1", "Ingress", namespace="one", label_selector="bench=verify")
            published = sum(1 for i in items if status_addresses(i))
            if published == N_INGRESSES:
                break
            time.sleep(1)
        print("   %d/%d published %.1f s after the window (the twin's controller writes them)"
              % (published, N_INGRESSES, time.perf_counter() - t0))
        options = parse_options(WINDOW_S, 0, False, ["100.64.0.0/16"], False, True)
        t0 = time.perf_counter()
        result = run(client, Selection(namespaces=["one"], label_selector="bench=verify"), options)
        print("   ingress_status again (settled, max_changes 0): %d Ingresses, wall %.1f s, watch streams %d, "
              "events %d, changes %d, passed %s, failures %d"
              % (len(result["ingresses"]), time.perf_counter() - t0, result["watch_streams"], result["events"],
                 len(result["timeline"]), result["passed"], len(result["failures"])))
    finally:
        down, rc = playbook("teardown", extra, env, min(TIMEOUT_DOWN, left()), log)
        print("   teardown: %.1f s, rc=%d" % (down, rc))


N_GATEWAYS, N_ROUTES = 50, 200
GATEWAY_API = "gateway.networking.k8s.io/v1"


class Counting:
    """A Client that counts its requests by (verb, kind): a watch counts each stream it opens."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.counts: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def _count(self, verb: str, kind: str) -> None:
        with self.lock:
            self.counts[(verb, kind)] = self.counts.get((verb, kind), 0) + 1

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> Any:
        self._count("list", kind)
        return self.client.list_with_version(api_version, kind, **kw)

    def watch(self, api_version: str, kind: str, **kw: Any) -> Any:
        self._count("watch", kind)
        return self.client.watch(api_version, kind, **kw)

    def list(self, api_version: str, kind: str, **kw: Any) -> Any:
        self._count("list", kind)
        return self.client.list(api_version, kind, **kw)

    def pod_log(self, *args: Any, **kw: Any) -> Any:
        self._count("log", "Pod")
        return self.client.pod_log(*args, **kw)

    def serves(self, api_version: str, kind: str) -> bool:
        self._count("discovery", kind)
        return self.client.serves(api_version, kind)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def gateway_objects() -> list[dict[str, Any]]:
    gateways = [{"apiVersion": GATEWAY_API, "kind": "Gateway", "metadata": {"name": "gw-%02d" % i, "namespace": "bench"},
                 "spec": {"gatewayClassName": "bench", "listeners": [{"name": "web", "port": 8000, "protocol": "HTTP"}]}}
                for i in range(N_GATEWAYS)]
    routes = [{"apiVersion": GATEWAY_API, "kind": "HTTPRoute", "metadata": {"name": "route-%03d" % i, "namespace": "bench"},
               "spec": {"parentRefs": [{"name": "gw-%02d" % (i % N_GATEWAYS)}], "hostnames": ["r%03d.example.test" % i],
                        "rules": [{"backendRefs": [{"name": "test", "port": 80}]}]}} for i in range(N_ROUTES)]
    return [{"apiVersion": GATEWAY_API, "kind": "GatewayClass", "metadata": {"name": "bench"},
             "spec": {"controllerName": "traefik.io/gateway-controller"}}] + gateways + routes


def bench_requests(tmp: Path) -> None:
    from kindlab_twin import binaries
    from kindlab_twin.cluster import node_specs
    from kindlab_twin.controlplane import ControlPlane
    from kindlab_twin.pki import ADMIN
    import yaml

    crds = binaries.cache_root() / _versions.GATEWAY_API_OFFLINE_CRDS
    if binaries.missing(("kube-apiserver", "etcd", "gateway-api-crds")):
        print("c. skipped: run `kindlab-twin build binaries kube-apiserver etcd gateway-api-crds` first")
        return
    cp = ControlPlane(cluster="vbench-gw", root=tmp / "gw", nodes=node_specs("vbench-gw", {}), pod_subnet="10.244.0.0/16",
                      service_subnet="10.96.0.0/16", kubernetes_service_ip="10.96.0.1")
    kubeconfig = str(cp.layout.kubeconfig(ADMIN))

    def kubectl(*args: str, stdin: str | None = None) -> None:
        subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], input=stdin, capture_output=True, text=True,
                       timeout=120, check=True)
    try:
        t0 = time.perf_counter()
        cp.start(timeout=min(90.0, left()))
        kubectl("apply", "--server-side", "-f", str(crds))
        kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/gateways.gateway.networking.k8s.io",
                "crd/httproutes.gateway.networking.k8s.io")
        docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}] + [
            dict(ingress(i), metadata=dict(ingress(i)["metadata"], namespace="bench")) for i in range(N_INGRESSES)]
        kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(docs))
        print("c. control plane with the Gateway API CRDs and %d Ingresses: %.1f s" % (N_INGRESSES, time.perf_counter() - t0))
        selection = Selection(namespaces=["bench"])
        before = Counting(Client(kubeconfig))
        alone = run(before, selection, parse_options(WINDOW_S, 0, True, [], False, True, gateway_api=False))
        kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(gateway_objects()))

        written = [0]

        def controller() -> None:  # a fake Gateway controller: writes each Gateway's address once, as `traefik`
            time.sleep(1.0)
            for i in range(N_GATEWAYS):
                status = {"status": {"addresses": [{"type": "IPAddress", "value": "100.64.1.%d" % i}],
                                     "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
                                                     "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]}}
                kubectl("patch", "gateway", "gw-%02d" % i, "-n", "bench", "--subresource=status", "--type=merge",
                        "--field-manager=traefik", "-p", json.dumps(status))
                written[0] += 1
        writer = threading.Thread(target=controller, daemon=True)
        after = Counting(Client(kubeconfig))
        writer.start()
        both = run(after, selection, parse_options(WINDOW_S, 1, True, [], False, True))
        inside = written[0]  # the writes done when the window ended (one kubectl each: a slow machine makes fewer)
        writer.join(30)
        kinds = ("Ingress", "Gateway", "HTTPRoute")
        print("   requests over one %.0f s window, by kind (lists / watch streams):" % WINDOW_S)
        together = "%d Ingresses + %d Gateways + %d HTTPRoutes" % (N_INGRESSES, N_GATEWAYS, N_ROUTES)
        print("   %-10s %-28s %s" % ("kind", "%d Ingresses" % N_INGRESSES, together))
        for kind in kinds:
            cells = ["%d / %d" % (c.counts.get(("list", kind), 0), c.counts.get(("watch", kind), 0)) for c in (before, after)]
            print("   %-10s %-28s %s" % (kind, cells[0], cells[1]))
        rest = [sum(n for (_verb, kind), n in c.counts.items() if kind not in kinds) for c in (before, after)]
        print("   %-10s %-28s %d  (controller pods, their publishers and logs: per window, not per object; a window with "
              "changes reads them once more at its end to attribute them)" % ("other", rest[0], rest[1]))
        print("   discovery (served kinds): %s / %s" % (
            sorted(k for (v, k) in before.counts if v == "discovery"), sorted(k for (v, k) in after.counts if v == "discovery")))
        changed = sum(1 for e in both["timeline"] if e.get("kind") == "Gateway")
        by_traefik = sum(1 for e in both["timeline"] if e.get("kind") == "Gateway" and e.get("manager") == "traefik")
        numbers = (len(both["ingresses"]), len(both.get("gateways", {})), len(both.get("routes", {})), inside, changed, by_traefik,
                   both["events"], both["watch_streams"], alone["watch_streams"], both["passed"])
        print("   second window: %d Ingresses, %d Gateways, %d HTTPRoutes watched; %d Gateway status writes done by its end, "
              "%d Gateway changes recorded, %d with field manager traefik; events %d; watch streams %d (first window: %d); "
              "passed %s" % numbers)
        for line in both["failures"][:2]:
            print("   failure: %s" % line)
    finally:
        cp.stop()


def ingress(i: int) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "bench-%03d" % i, "namespace": "one", "labels": {"bench": "verify"},
                         "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"rules": [{"host": "b%03d.example.test" % i, "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "test", "port": {"number": 80}}}}]}}]}}


def main() -> int:
    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt("terminated")

    signal.signal(signal.SIGTERM, on_term)
    tmp = Path(tempfile.mkdtemp(prefix="kindlab-vbench-"))
    env = env_for(tmp / "twin-home")
    log = tmp / "ansible.log"
    parts = set(sys.argv[1:]) or {"a", "b", "c"}
    try:
        if "a" in parts:
            bench_diagnose(env, tmp, log)
        if "b" in parts:
            bench_status(env, tmp, log)
        if "c" in parts:
            bench_requests(tmp)
    finally:
        home = tmp / "twin-home"
        leftover = sorted(d.name for d in home.iterdir() if d.is_dir() and not d.name.startswith(".")) if home.is_dir() else []
        if leftover:
            subprocess.run([str(VENV_BIN / "kindlab-twin"), "delete", "clusters", *leftover], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
        print("total: %.1f s (log: %s)" % (time.monotonic() - _START, log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
