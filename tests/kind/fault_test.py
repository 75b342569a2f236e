"""ingress_status through the faults it watches, on real kind (hack/test-kind.sh).

    fault_test.py KUBECONFIG NODE HELM

One window of the collection's status watch (`verify/status/run.run`, what the ingress_status module does)
over a namespace with two Ingresses:
- `writer`, which no controller claims: a thread of this test writes its status every 2 s,
  alternating two addresses, and records each write the API server accepted;
- `nginx`, written by a real ingress-nginx controller (v1.11.0, the lab's time scale: a 6 s period).
During the window the API server is restarted (its container stopped with crictl inside the node
NODE; the kubelet starts it again) and the controller is restarted (scaled to 0: the old pod
clears the status on shutdown, being the last one; then to 1: the new pod writes its address).

It passes when the module returns normally and reports the outage as a blind interval, every
write made outside the blind intervals is in its timeline exactly once, and the clear and the
new address are attributed to the old and the new pod, with the restart named. Prints a table.
Runs where the cluster's API server is reachable (hack/kind-lab.sh exec).
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import Options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import install
from kindlab_twin import controller_types

NS = "fault"
WINDOW = 180.0  # seconds: the old pod may take 40 s to shut down, the new one 30 s to win the Lease and sync
WRITE_EVERY = 2.0
ADDRESSES = (["192.0.2.10"], ["192.0.2.11"])  # TEST-NET-1: written into a status, never reached
TIME_SCALE = 10.0
MARGIN = 1.5  # seconds either side of a blind interval where a write may be folded into a re-list


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Faults:
    def __init__(self, kubeconfig: str, node: str, helm: str) -> None:
        self.kubeconfig, self.node, self.helm = kubeconfig, node, helm
        # ingress-nginx's local chart and offline image, as the registry names them.
        offline = controller_types.offline_vars()
        self.chart = offline["lab_charts"]["ingress_nginx"]
        self.images = parse_images(offline["lab_images"])
        self.client = Client(kubeconfig)
        self.writes: list[tuple[dt.datetime, list[str]]] = []  # accepted by the API server
        self.refused = 0
        self.returned: dt.datetime | None = None  # when the status watch returned
        self.stop = threading.Event()
        self.events: list[str] = []

    def kubectl(self, *args: str) -> str:
        p = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], capture_output=True, text=True,
                           check=False, timeout=120)
        if p.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def note(self, text: str) -> None:
        self.events.append("%s  %s" % (now().strftime("%H:%M:%S.%f")[:-3], text))

    def setup(self) -> str:
        self.client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        values = {"controller": {"admissionWebhooks": {"enabled": False}, "ingressClass": "nginx",
                                 "scope": {"enabled": True}, "publishService": {"enabled": True},
                                 "ingressClassResource": {"name": "fault", "controllerValue": "k8s.io/fault"}},
                  # A ClusterRole that may list IngressClasses: with namespace RBAC alone it would take the
                  # writer's Ingress up at its first update (IgnoreIngressClass) and write its own address.
                  "rbac": {"scope": False}}
        req = install.Request(namespace=NS, release="ingress", method="helm", chart_path=self.chart, time_scale=TIME_SCALE,
                              values=install.controller_type("ingress_nginx").install.with_images(values, self.images),
                              kubeconfig=self.kubeconfig, wait=True, wait_timeout=180, create_namespace=False)
        install.run(req, False, client_factory=lambda: self.client, run_command=self.run_command, helm=self.helm)
        for name, annotation in (("nginx", "nginx"), ("writer", "kindlab-fault-writer")):
            self.client.apply({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                               "metadata": {"namespace": NS, "name": name, "annotations": {"kubernetes.io/ingress.class": annotation}},
                               "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the controller has written its address once
            ing = self.client.get("networking.k8s.io/v1", "Ingress", "nginx", NS) or {}
            if ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress"):
                return self.controller_pod()
            time.sleep(1)
        raise RuntimeError("the controller wrote no status into %s/nginx within 60 s" % NS)

    def run_command(self, argv: list[str]) -> tuple[int, str, str]:
        p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
        return p.returncode, p.stdout, p.stderr

    def controller_pod(self) -> str:
        out = self.kubectl("get", "pods", "-n", NS, "-l", "app.kubernetes.io/component=controller",
                           "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}")
        names = out.split()
        if len(names) != 1:
            raise RuntimeError("expected one running controller pod in %s, found %s" % (NS, names or "none"))
        return "%s/%s" % (NS, names[0])

    def writer(self) -> None:
        """Write the `writer` Ingress's status every WRITE_EVERY s; keep what was accepted."""
        i = 0
        while not self.stop.wait(WRITE_EVERY):
            addrs = ADDRESSES[i % 2]
            body = {"status": {"loadBalancer": {"ingress": [{"ip": a} for a in addrs]}}}
            p = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "patch", "ingress", "writer", "-n", NS,
                                "--subresource=status", "--type=merge", "--request-timeout=3s", "-p",
                                json.dumps(body)], capture_output=True, text=True, check=False, timeout=10)
            if p.returncode == 0:
                self.writes.append((now(), addrs))
                i += 1
            else:
                self.refused += 1

    def api_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "get", "--raw=/readyz", "--request-timeout=2s"],
                               capture_output=True, text=True, check=False, timeout=10)
            if p.returncode == 0 and p.stdout.strip() == "ok":
                return True
            time.sleep(1)
        return False

    def faults(self, old_pod: str) -> None:
        time.sleep(12)
        ids = subprocess.run(["docker", "exec", self.node, "crictl", "ps", "-q", "--name", "kube-apiserver"],
                             capture_output=True, text=True, check=True, timeout=30).stdout.split()
        self.note("API server: crictl stop %s" % " ".join(i[:12] for i in ids))
        subprocess.run(["docker", "exec", self.node, "crictl", "stop", *ids], capture_output=True, check=True, timeout=60)
        self.note("API server ready again: %s" % self.api_ready(90))
        time.sleep(5)
        self.note("controller: scale to 0 (%s shuts down, the last pod: it clears the status)" % old_pod)
        self.kubectl("scale", "-n", NS, "deploy/ingress-ingress-nginx-controller", "--replicas=0")
        self.kubectl("wait", "-n", NS, "--for=delete", "pod/" + old_pod.split("/", 1)[1], "--timeout=90s")
        self.note("controller: scale to 1")
        self.kubectl("scale", "-n", NS, "deploy/ingress-ingress-nginx-controller", "--replicas=1")
        self.kubectl("rollout", "status", "-n", NS, "deploy/ingress-ingress-nginx-controller", "--timeout=90s")
        self.note("controller: %s running" % self.controller_pod())

    def teardown(self) -> None:
        self.run_command(["helm", "uninstall", "ingress", "-n", NS, "--kubeconfig", self.kubeconfig, "--ignore-not-found"])
        self.kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=false")
        self.kubectl("delete", "pods", "--all", "-n", NS, "--force", "--grace-period=0", "--ignore-not-found")
        self.kubectl("wait", "--for=delete", "namespace/" + NS, "--timeout=180s")


def blind_at(when: dt.datetime, intervals: list[dict[str, Any]]) -> bool:
    for b in intervals:
        start = dt.datetime.fromisoformat(b["from"].replace("Z", "+00:00")) - dt.timedelta(seconds=MARGIN)
        end = dt.datetime.fromisoformat(b["to"].replace("Z", "+00:00")) + dt.timedelta(seconds=MARGIN)
        if start <= when <= end:
            return True
    return False


def judge(f: Faults, result: dict[str, Any], old_pod: str, new_pod: str, elapsed: float) -> list[str]:
    problems = []
    blind = result.get("blind_intervals") or []
    print("window %.1f s (asked %.0f s); blind intervals: %s" % (elapsed, WINDOW, "; ".join(
        "%s-%s %.1f s (%s)" % (b["from"][11:23], b["to"][11:23], b["seconds"], b["why"]) for b in blind) or "none"))
    if elapsed > WINDOW + 60:
        problems.append("the window ran %.0f s, more than its %.0f s plus a request's timeout" % (elapsed, WINDOW))
    if not blind:
        problems.append("the API server restart left no blind interval")
    # Every accepted write outside the blind intervals is in the timeline exactly once, in order.
    seen = [e for e in result["timeline"] if e["ingress"] == NS + "/writer"]
    used: set[int] = set()
    missing = outside = late = 0
    for when, addrs in f.writes:
        if blind_at(when, blind):
            continue
        match = next((i for i, e in enumerate(seen) if i not in used and e["new"] == addrs
                      and -1.0 <= (dt.datetime.fromisoformat(e["time"].replace("Z", "+00:00")) - when).total_seconds() <= 5.0), None)
        # The window closes before the watch returns (the last logs and publishers are read after it):
        # a write in the last MARGIN before the return may land after the window, unseen by design
        # (measured on kind: the writer's last write 0.2 s before the return, twice in a row).
        if match is None and f.returned is not None and when > f.returned - dt.timedelta(seconds=MARGIN):
            late += 1
            continue
        outside += 1
        if match is None:
            missing += 1
            problems.append("write of %s at %s not in the timeline" % (addrs, when.isoformat()[11:23]))
        else:
            used.add(match)
    extra = [e for i, e in enumerate(seen) if i not in used and not e.get("seen_after_blind")
             and not blind_at(dt.datetime.fromisoformat(e["time"].replace("Z", "+00:00")), blind)]
    for e in extra:
        problems.append("timeline change %s at %s matches no write (counted twice?)" % (e["new"], e["time"][11:23]))
    print("writer: %d writes accepted (%d refused while the server was away), %d outside the blind intervals: "
          "%d in the timeline once, %d missing, %d extra; %d unseen in the last %.1f s before the watch returned"
          % (len(f.writes), f.refused, outside, outside - missing, missing, len(extra), late, MARGIN))
    # The controller's restart: the clear by the old pod, the address by the new one.
    nginx = [e for e in result["timeline"] if e["ingress"] == NS + "/nginx"]
    print("controller's Ingress: %s" % "; ".join(
        "%s %s by %s (%s)" % (e["time"][11:23], e["new"] or "[]", e.get("pod") or "?", e.get("manager")) for e in nginx))
    clear = next((e for e in nginx if e["new"] == []), None)
    back = next((e for e in nginx if clear is not None and e["new"] and e["time"] > clear["time"]), None)
    if clear is None or clear.get("pod") != old_pod:
        problems.append("the shutdown clear is not attributed to the old pod %s: %s" % (old_pod, clear))
    if back is None or back.get("pod") != new_pod:
        problems.append("the new pod's address is not attributed to %s: %s" % (new_pod, back))
    restarts = result.get("pod_restarts") or []
    print("restarts named: %s" % restarts)
    if not any(r.get("from") == old_pod and r.get("to") == new_pod for r in restarts):
        problems.append("the restart %s -> %s is not named in pod_restarts" % (old_pod, new_pod))
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    f = Faults(*argv[1:4])
    try:
        old_pod = f.setup()
        writer = threading.Thread(target=f.writer, daemon=True)
        writer.start()
        faults = threading.Thread(target=f.faults, args=(old_pod,), daemon=True)
        started = time.monotonic()
        faults.start()
        try:
            result = run(f.client, Selection(namespaces=[NS]), Options(window=WINDOW, max_changes=1000))
        except K8sError as exc:
            print("FAIL: the status watch did not return normally: %s" % exc)
            return 1
        elapsed = time.monotonic() - started
        f.returned = now()
        f.stop.set()
        faults.join(timeout=5)
        writer.join(timeout=15)
        for line in f.events:
            print(line)
        new_pod = f.controller_pod()
        problems = judge(f, result, old_pod, new_pod, elapsed)
    finally:
        f.stop.set()
        f.teardown()
    for p in problems:
        print("  problem: " + p)
    print("fault test: %s" % ("PASS" if not problems else "FAIL (%d problems)" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
