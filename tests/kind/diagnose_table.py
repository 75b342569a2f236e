"""ingress_diagnose against the real controllers on kind (hack/test-kind.sh): ingress-nginx and Traefik.

    diagnose_table.py KUBECONFIG HELM [ROW ...]

Each row is one controller configuration. It installs its releases with the collection's own
install logic (real helm, the real chart at CHART, the lab's time scale 10: a 6 s status period),
creates its Services and Ingresses in fresh namespaces, asks the collection's diagnosis
(`_diagnose.run`, what the ingress_diagnose module returns) who will write each Ingress's status
and with what address, then lets the real controllers run: every Ingress is touched once (an
annotation) after a first window, and the controllers' own "updating Ingress status" lines say
who wrote which address into which Ingress before the edit (the diagnosis's `writers`) and after
it (its `writers` and `writers_after_update`: a controller that may not list IngressClasses takes
an Ingress up at its next update). A row passes when the prediction equals what the real
controllers did: the same writers with the same addresses per Ingress in both windows, the same
controllers crashing, and the same refusal for a configuration the chart does not render. Prints the table; exits 1 on any
difference. Runs where the cluster's API server is reachable (hack/kind-lab.sh exec).

Traefik rows install Traefik's pinned chart (hack/traefik-chart.sh) with the offline image. Traefik's
"Updated ingress status" line names the Ingress and (by its source file) the provider, not the
address: the address is the one the Ingress showed while its status field manager was `traefik`
(the Ingresses are read at every poll).

Rows whose controllers all watch their own namespace only (ingress-nginx with `scope.enabled`,
Traefik with `rbac.namespaced`) cannot see each other's Ingresses: they run side by side on the
cluster (DIAGNOSE_PARALLEL at a time, default 4), each in namespaces and IngressClasses of its own
(`dta`/`dtb` renamed per row). The other rows watch every namespace, and run one at a time after.
"""
from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose as _diagnose
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import parse_log_line, status_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import install as _controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import binary as traefik_binary
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from kindlab_twin import controller_types

TIME_SCALE = 10.0
PERIOD = 6  # seconds: 60 / TIME_SCALE
MIN_WATCH = 2 * PERIOD + 2  # an unpredicted write has had two status periods to show
WATCH = 6 * PERIOD  # the longest a predicted write may take (the pod's readiness gates node addresses)
READY_TIMEOUT = 120
TIMINGS = bool(os.environ.get("KINDLAB_TIMINGS"))
NS_LABEL = {"kindlab.io/diagnose-table": "row"}
PARALLEL = int(os.environ.get("DIAGNOSE_PARALLEL", "4"))
Writer = tuple[str, tuple[str, ...]]  # (controller Deployment ns/name, the addresses it wrote)
BASE = {"controller": {"admissionWebhooks": {"enabled": False}, "ingressClass": "nginx"}}


def values(ns: str, **controller: Any) -> dict[str, Any]:
    """The lab's base values plus CONTROLLER keys; each release its own IngressClass resource."""
    out = copy.deepcopy(BASE)
    out["controller"]["ingressClassResource"] = {"name": "dt-%s" % ns, "controllerValue": "k8s.io/dt-%s" % ns}
    rbac = controller.pop("rbac", None)
    for key, value in controller.items():
        out["controller"][key] = value
    if rbac is not None:
        out["rbac"] = rbac
    return out


def scoped(ns: str, **extra: Any) -> dict[str, Any]:
    return values(ns, scope={"enabled": True}, rbac={"scope": True}, **extra)


def ctl(ns: str, vals: dict[str, Any], release: str = "ingress", kind: str = "ingress_nginx") -> dict[str, Any]:
    return {"namespace": ns, "release": release, "values": vals, "type": kind}


def traefik(ns: str, **providers: Any) -> dict[str, Any]:
    """A Traefik release in NS: no telemetry, Ingresses only, its own non-default IngressClass."""
    # Debug level: its status lines then name the provider's source file (ingress/ or ingress-nginx/).
    vals: dict[str, Any] = {"global": {"checkNewVersion": False, "sendAnonymousUsage": False}, "log": {"level": "DEBUG"},
                            "ingressClass": {"name": "dt-%s-traefik" % ns, "isDefaultClass": False},
                            "providers": dict({"kubernetesCRD": {"enabled": False}}, **providers)}
    rbac = vals["providers"].pop("rbac", None)
    if rbac is not None:
        vals["rbac"] = rbac
    return ctl(ns, vals, release="traefik", kind="traefik")


def ing(ns: str, name: str, annotation: str | None = "nginx", class_name: str | None = None) -> dict[str, Any]:
    return {"namespace": ns, "name": name, "annotation": annotation, "class_name": class_name}


LB = {"enabled": True}
ROWS: list[dict[str, Any]] = [
    {"name": "scoped, publishes its LoadBalancer Service",
     "controllers": [ctl("dta", scoped("dta", publishService=LB))], "ingresses": [ing("dta", "t")]},
    {"name": "cluster-wide, no publish Service: node addresses (puzzle's two)",
     "controllers": [ctl("dta", values("dta", scope={"enabled": False}, publishService={"enabled": False}))],
     "ingresses": [ing("dta", "t"), ing("dtb", "t")]},
    {"name": "publish Service missing: fatal at start",
     "controllers": [ctl("dta", scoped("dta", publishService={"enabled": True, "pathOverride": "dta/missing"}))],
     "ingresses": [ing("dta", "t")]},
    {"name": "publish Service of another release's name, present",
     "services": [{"namespace": "dta", "name": "edge", "type": "LoadBalancer"}],
     "controllers": [ctl("dta", scoped("dta", publishService={"enabled": True, "pathOverride": "dta/edge"}))],
     "ingresses": [ing("dta", "t")]},
    {"name": "--publish-status-address",
     "controllers": [ctl("dta", scoped("dta", publishService={"enabled": False},
                                       extraArgs={"publish-status-address": "203.0.113.7"}))],
     "ingresses": [ing("dta", "t")]},
    {"name": "class by IngressClass name, cluster-wide RBAC",
     "controllers": [ctl("dta", values("dta", scope={"enabled": True}, publishService=LB))],
     "ingresses": [ing("dta", "byname", annotation=None, class_name="dt-dta"),
                   ing("dta", "other", annotation=None, class_name="dt-elsewhere")]},
    {"name": "class by IngressClass name, namespace RBAC (classes cannot be listed)",
     "controllers": [ctl("dta", scoped("dta", publishService=LB))],
     "ingresses": [ing("dta", "byname", annotation=None, class_name="dt-dta")]},
    {"name": "without class, --watch-ingress-without-class",
     "controllers": [ctl("dta", scoped("dta", publishService=LB, watchIngressWithoutClass=True))],
     "ingresses": [ing("dta", "none", annotation=None)]},
    {"name": "without class, default flags",
     "controllers": [ctl("dta", scoped("dta", publishService=LB))],
     "ingresses": [ing("dta", "none", annotation=None)]},
    {"name": "rbac.scope with a cluster-wide controller: the chart refuses",
     "controllers": [ctl("dta", values("dta", scope={"enabled": False}, rbac={"scope": True}))],
     "ingresses": []},
    {"name": "two releases sharing a controllerValue, cluster-wide",
     "controllers": [
         ctl("dta", values("dta", scope={"enabled": False}, publishService=LB,
                           ingressClassResource={"name": "dt-dta", "controllerValue": "k8s.io/dt-shared"}), release="ia"),
         ctl("dtb", values("dtb", scope={"enabled": False}, publishService=LB,
                           ingressClassResource={"name": "dt-dtb", "controllerValue": "k8s.io/dt-shared"}), release="ib")],
     "ingresses": [ing("dta", "byname", annotation=None, class_name="dt-dta")]},
    {"name": "two cluster-wide releases with one release name: their ClusterRole clashes",
     "controllers": [
         ctl("dta", values("dta", scope={"enabled": False}, publishService=LB)),
         ctl("dtb", values("dtb", scope={"enabled": False}, publishService=LB))],
     "ingresses": [ing("dta", "t")]},
    {"name": "a second release in the same namespace",
     "controllers": [
         ctl("dta", scoped("dta", publishService=LB), release="r1"),
         ctl("dta", values("dta", scope={"enabled": True}, rbac={"scope": True}, publishService=LB,
                           ingressClassResource={"name": "dt-dta-r2", "controllerValue": "k8s.io/dt-dta-r2"}),
             release="r2")],
     "ingresses": [ing("dta", "t")]},
    {"name": "Traefik, Ingress provider publishing its Service: its class and class-less Ingresses",
     "controllers": [traefik("dta")],
     "ingresses": [ing("dta", "byclass", annotation=None, class_name="dt-dta-traefik"), ing("dta", "none", annotation=None),
                   ing("dta", "other")]},
    {"name": "Traefik with rbac.namespaced: no IngressClass lookup, a class-named Ingress is never claimed",
     "controllers": [traefik("dta", rbac={"namespaced": True})],
     "ingresses": [ing("dta", "byclass", annotation=None, class_name="dt-dta-traefik"), ing("dta", "none", annotation=None)]},
    {"name": "ingress-nginx and Traefik's ingress-nginx provider, both publishing (the migration fight)",
     "controllers": [ctl("dta", scoped("dta", publishService=LB)),
                     traefik("dtb", kubernetesIngressNGINX={"enabled": True, "publishService": {"enabled": True}})],
     "ingresses": [ing("dta", "t")]},
    {"name": "Traefik's ingress-nginx provider publishing nothing (the guide's fix)",
     "controllers": [ctl("dta", scoped("dta", publishService=LB)),
                     traefik("dtb", kubernetesIngressNGINX={"enabled": True})],
     "ingresses": [ing("dta", "t")]},
]


class Table:
    def __init__(self, kubeconfig: str, helm: str) -> None:
        self.kubeconfig, self.helm = kubeconfig, helm
        # Each type's local chart and offline image, as the registry names them (the offline kind lab's).
        offline = controller_types.offline_vars()
        self.charts = offline["lab_charts"]
        self.images = parse_images(offline["lab_images"])
        self.client = Client(kubeconfig)
        # ns/name -> {(status field manager, addresses)} seen at the polls
        self.polled: dict[str, set[tuple[str, tuple[str, ...]]]] = {}

    def run_command(self, argv: list[str]) -> tuple[int, str, str]:
        p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
        return p.returncode, p.stdout, p.stderr

    def kubectl(self, *args: str, data: str | None = None) -> str:
        p = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=data, capture_output=True,
                           text=True, check=False, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def namespaces(self, row: dict[str, Any]) -> list[str]:
        names = {c["namespace"] for c in row["controllers"]} | {i["namespace"] for i in row["ingresses"]}
        return sorted(names | {s["namespace"] for s in row.get("services", [])})

    def chart_refuses(self, c: dict[str, Any]) -> str:
        """What real helm says of the values: "" when the chart renders them, else its error."""
        with tempfile.NamedTemporaryFile("w", suffix=".json") as values_file:
            json.dump(c["values"], values_file)
            values_file.flush()
            rc, _out, err = self.run_command([self.helm, "template", c["release"], self.charts[c["type"]], "--namespace",
                                              c["namespace"], "--values", values_file.name])
        return "" if rc == 0 else (err.strip().splitlines() or ["helm template failed"])[-1]

    def install(self, c: dict[str, Any]) -> str:
        """The collection's install (ingress_controller, method helm, local chart); "" or why it refused."""
        vals = _controllers.controller_type(c["type"]).install.with_images(c["values"], self.images)
        req = _controllers.Request(type=c["type"], namespace=c["namespace"], release=c["release"], values=vals, method="helm",
                                   chart_path=self.charts[c["type"]], time_scale=TIME_SCALE, kubeconfig=self.kubeconfig,
                                   wait=False, create_namespace=False)
        try:
            _controllers.run(req, False, client_factory=lambda: self.client, run_command=self.run_command,
                             helm=self.helm)
        except _controllers.ControllerError as exc:
            return str(exc)
        return ""

    def objects(self, row: dict[str, Any]) -> None:
        docs: list[dict[str, Any]] = []
        for s in row.get("services", []):
            docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": s["namespace"], "name": s["name"]},
                         "spec": {"type": s["type"], "selector": {"app": "none"}, "ports": [{"port": 80}]}})
        for i in row["ingresses"]:
            meta: dict[str, Any] = {"namespace": i["namespace"], "name": i["name"]}
            if i["annotation"]:
                meta["annotations"] = {"kubernetes.io/ingress.class": i["annotation"]}
            spec: dict[str, Any] = {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
            if i["class_name"]:
                spec["ingressClassName"] = i["class_name"]
            docs.append({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta, "spec": spec})
        if docs:
            self.kubectl("apply", "-f", "-", data="\n---\n".join(json.dumps(d) for d in docs))

    def settle(self, row: dict[str, Any]) -> dict[str, str]:
        """Wait until every controller Deployment is ready or one of its pods cannot start:
        ns/release -> "" (started) or why it cannot start (the collection's controller_health)."""
        parsed = [_controllers.parse_controller(c, images=self.images) for c in row["controllers"]]
        out: dict[str, str] = {}
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            results = _controllers.health(self.client, parsed)["controllers"]
            for key, entry in results.items():
                if entry["passed"]:
                    out[key] = ""
                elif entry["failure"]:
                    out[key] = str(entry["reason"])
            if all(key in out for key in results):
                return out
            time.sleep(2)
        for key in results:
            out.setdefault(key, "neither ready nor failing after %d s" % READY_TIMEOUT)
        return out

    def poll(self, row: dict[str, Any]) -> None:
        """Who wrote each Ingress's status as it stands now (its newest status field manager)."""
        for ns in sorted({i["namespace"] for i in row["ingresses"]}):
            for obj in self.client.list("networking.k8s.io/v1", "Ingress", namespace=ns):
                writer = status_writer(obj)
                addrs = tuple(sorted(a for a in status_addresses(obj) if a)) if writer else ()
                if writer and addrs:
                    self.polled.setdefault("%s/%s" % (ns, obj["metadata"]["name"]), set()).add((writer["manager"], addrs))

    def written(self, row: dict[str, Any]) -> dict[str, set[tuple[str, tuple[str, ...], datetime.datetime]]]:
        """Ingress -> {(controller ns/name, addresses, when)} from the controllers' own log lines; a
        Traefik line names its provider (ns/name@provider), and its address comes from the polls."""
        self.poll(row)
        out: dict[str, set[tuple[str, tuple[str, ...], datetime.datetime]]] = {}
        year = datetime.datetime.now(datetime.timezone.utc).year
        for ns in sorted({c["namespace"] for c in row["controllers"]}):
            for deploy in self.client.list("apps/v1", "Deployment", namespace=ns):
                name = deploy["metadata"]["name"]
                try:
                    logs = self.kubectl("logs", "-n", ns, "deploy/" + name, "--all-containers", "--tail=-1")
                except RuntimeError:
                    continue
                for line in logs.splitlines():
                    entry = parse_log_line("%s/%s" % (ns, name), line, year)
                    if entry is None or entry.when is None:
                        continue
                    key = "%s/%s" % (entry.namespace, entry.ingress)
                    if entry.new is not None:
                        out.setdefault(key, set()).add((entry.pod, entry.new, entry.when))
                        continue
                    provider = traefik_binary.provider_of_line(line) or "unknown provider"
                    for manager, addrs in self.polled.get(key, set()):
                        if manager == entry.manager:
                            out.setdefault(key, set()).add(("%s@%s" % (entry.pod, provider), addrs, entry.when))
        return out

    @staticmethod
    def expected(row: dict[str, Any], diagnosis: dict[str, Any]) -> dict[str, tuple[set[Writer], set[Writer]]]:
        """Ingress -> (writers before an edit, writers after it), as the diagnosis predicts them."""
        out = {}
        for i in row["ingresses"]:
            key = "%s/%s" % (i["namespace"], i["name"])
            predicted = diagnosis["ingresses"].get(key, {})
            before = {(w["controller"], tuple(sorted(w["address"] or []))) for w in predicted.get("writers", [])}
            out[key] = (before, before | {(w["controller"], tuple(sorted(w["address"] or [])))
                                          for w in predicted.get("writers_after_update", [])})
        return out

    @staticmethod
    def real(written: dict[str, set[tuple[str, tuple[str, ...], datetime.datetime]]], key: str,
             before: datetime.datetime | None) -> set[Writer]:
        """Who wrote a non-empty address into KEY (before BEFORE, when given)."""
        return {(ref, a) for ref, a, at in written.get(key, set()) if a and (before is None or at < before)}

    def observe(self, row: dict[str, Any],
                want: dict[str, set[Writer]]) -> dict[str, set[tuple[str, tuple[str, ...], datetime.datetime]]]:
        """Read the controllers' lines until every Ingress has had the writers WANT names (at
        least MIN_WATCH, so that a write nobody predicted shows), or WATCH has passed."""
        started = time.monotonic()
        while True:
            written = self.written(row)
            elapsed = time.monotonic() - started
            seen = {key: self.real(written, key, None) for key in written}
            if (elapsed >= MIN_WATCH and all(seen.get(k, set()) >= w for k, w in want.items())) or elapsed >= WATCH:
                return written
            time.sleep(2)

    def row(self, row: dict[str, Any]) -> tuple[bool, list[str]]:
        lines: list[str] = []
        t0 = time.monotonic()

        def phase(name: str) -> None:
            if TIMINGS:
                lines.append("  %5.1f s  %s" % (time.monotonic() - t0, name))
        namespaces = self.namespaces(row)
        for ns in namespaces:
            self.client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": dict(NS_LABEL)}})
        try:
            # The collection refuses a configuration before helm runs; real helm must refuse it too.
            real_refusal = {"%s/%s" % (c["namespace"], c["release"]): self.chart_refuses(c) for c in row["controllers"]}
            refused = {"%s/%s" % (c["namespace"], c["release"]): self.install(c) for c in row["controllers"]}
            # The collection's own verdict: each release (the module's plan), then the releases together
            # (lab_definition: cluster-wide names created twice) - the later of two clashing is refused.
            predicted_refusal = {}
            for i, c in enumerate(row["controllers"]):
                try:
                    _controllers.plan(_controllers.Request(type=c["type"], namespace=c["namespace"], release=c["release"],
                                                           values=c["values"], method="helm", chart_path=self.charts[c["type"]]))
                    _controllers.parse_controllers(row["controllers"][:i + 1])
                    predicted_refusal["%s/%s" % (c["namespace"], c["release"])] = False
                except _controllers.ControllerError:
                    predicted_refusal["%s/%s" % (c["namespace"], c["release"])] = True
            ok = True
            for key, why in real_refusal.items():
                if not why and refused[key].startswith("`"):  # helm's own refusal at install ("`helm upgrade ...` failed")
                    why = refused[key].split("): ", 1)[-1].strip().splitlines()[-1]
                real = bool(why)
                lines.append("  install %-14s predicted %-8s real %-8s%s" % (
                    key, "refused" if predicted_refusal[key] else "renders", "refused" if real else "renders",
                    ("  (helm: " + why[:100] + ")") if why else ""))
                ok &= predicted_refusal[key] == real
            installed = [c for c in row["controllers"] if not refused["%s/%s" % (c["namespace"], c["release"])]]
            phase("installed")
            if not installed:
                return ok, lines
            self.objects(row)
            started = self.settle(dict(row, controllers=installed))
            phase("settled")
            diagnosis = _diagnose.run(self.client, Selection(namespaces=namespaces))
            expected = self.expected(row, diagnosis)
            self.observe(dict(row, controllers=installed), {k: v[0] for k, v in expected.items()})
            touched = datetime.datetime.now(datetime.timezone.utc)
            for i in row["ingresses"]:  # the next update: IgnoreIngressClass controllers take it up now
                self.kubectl("annotate", "--overwrite", "-n", i["namespace"], "ingress/" + i["name"],
                             "kindlab.io/touched=%d" % time.time())
            written = self.observe(dict(row, controllers=installed), {k: v[1] for k, v in expected.items()})
            phase("watched")
            crash_predicted = {ref for f in diagnosis["findings"] if f["kind"] in ("publish_service_missing", "cannot_start")
                               for ref in f.get("controllers", [])}
            for c in installed:
                key = "%s/%s" % (c["namespace"], c["release"])
                deploy = next((d["controller"] for d in diagnosis["controllers"] if d["controller"].startswith(c["namespace"] + "/")
                               and c["release"] in d["controller"]), key)
                real_crash = bool(started.get(key))
                lines.append("  start   %-14s predicted %-8s real %-8s%s" % (
                    key, "crash" if deploy in crash_predicted else "start", "crash" if real_crash else "start",
                    ("  (" + started[key][:80] + ")") if real_crash else ""))
                ok &= (deploy in crash_predicted) == real_crash
            for i in row["ingresses"]:
                key = "%s/%s" % (i["namespace"], i["name"])
                for when, want, real in (
                        ("before edit", expected[key][0], self.real(written, key, touched)),
                        ("after edit", expected[key][1], self.real(written, key, None))):
                    same = want == real
                    ok &= same
                    lines.append("  writes  %-14s %-11s predicted %s\n  %-36s real      %s%s" % (
                        key, when, sorted(want) or "nobody", "", sorted(real) or "nobody", "" if same else "   <- differs"))
            return ok, lines
        finally:
            self.polled.clear()
            self.reset(row, namespaces)
            phase("reset")

    def reset(self, row: dict[str, Any], namespaces: list[str]) -> None:
        """Uninstall the row's releases and delete its namespaces. The controller pods are removed
        at once: a controller whose RBAC goes with its namespace spends about a minute failing to
        clear its status on shutdown, which no row looks at."""
        for c in row["controllers"]:
            self.run_command([self.helm, "uninstall", c["release"], "-n", c["namespace"], "--kubeconfig", self.kubeconfig,
                              "--ignore-not-found"])
        self.kubectl("delete", "namespace", *namespaces, "--ignore-not-found", "--wait=false")
        for ns in namespaces:
            self.kubectl("delete", "pods", "--all", "-n", ns, "--force", "--grace-period=0", "--ignore-not-found")
        self.kubectl("wait", "--for=delete", *("namespace/" + ns for ns in namespaces), "--timeout=180s")


def watches_own_namespace_only(c: dict[str, Any]) -> bool:
    """The controller's informers are limited to its release namespace (the chart's scope option)."""
    vals = c["values"]
    if c["type"] == "traefik":
        return bool(vals.get("rbac", {}).get("namespaced"))
    return bool(vals.get("controller", {}).get("scope", {}).get("enabled"))


def renamed(obj: Any, row_index: int) -> Any:
    """OBJ with the row's namespaces dta/dtb (and every name built from them) made the row's own."""
    if isinstance(obj, str):
        return obj.replace("dta", "d%02da" % row_index).replace("dtb", "d%02db" % row_index)
    if isinstance(obj, dict):
        return {renamed(k, row_index): renamed(v, row_index) for k, v in obj.items()}
    if isinstance(obj, list):
        return [renamed(v, row_index) for v in obj]
    return obj


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    wanted = argv[3:]
    rows = [(i, row) for i, row in enumerate(ROWS) if not wanted or row["name"] in wanted]
    side_by_side = [(i, row) for i, row in rows if row["controllers"] and all(
        watches_own_namespace_only(c) for c in row["controllers"])]
    alone = [(i, row) for i, row in rows if (i, row) not in side_by_side]
    failed = []
    printing = threading.Lock()

    def run(indexed: tuple[int, dict[str, Any]], shared: bool) -> None:
        i, row = indexed
        started = time.monotonic()
        ok, lines = Table(*argv[1:3]).row(renamed(row, i) if shared else row)
        with printing:
            where = ", side by side" if shared else ""
            print("%s  %s  (%.0f s%s)" % ("ok   " if ok else "DIFFERS", row["name"], time.monotonic() - started, where),
                  flush=True)
            for line in lines:
                print(line, flush=True)
            if not ok:
                failed.append(row["name"])

    with ThreadPoolExecutor(max_workers=max(1, PARALLEL)) as pool:
        list(pool.map(lambda r: run(r, True), side_by_side))  # (re-raises a row's exception)
    for indexed in alone:
        run(indexed, False)
    print("\ndiagnose vs the real controller: %d rows, %d agree, %d differ%s" % (
        len(rows), len(rows) - len(failed), len(failed),
        (": " + "; ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
