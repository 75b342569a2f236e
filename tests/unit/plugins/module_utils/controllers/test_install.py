# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import install as ctl
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import wait as k8s_wait
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult, apply_order
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import WorkloadFailed

SEED_ONE = {"controller": {"scope": {"enabled": True}, "admissionWebhooks": {"enabled": False}}, "rbac": {"scope": {"enabled": True}}}
SEED_TWO = {"controller": {"publishService": {"enabled": False, "pathOverride": "two/svc"}, "scope": {"enabled": False},
                           "admissionWebhooks": {"enabled": False}}}


class FakeClient:
    """In-memory stand-in for k8s.client.Client: apply stores, reports a change only when the
    object differs; deployments become ready on request."""

    def __init__(self) -> None:
        self.store: dict[tuple[str, str, str | None], dict] = {}
        self.applied: list[tuple[str, bool]] = []
        self.ready = True

    @staticmethod
    def key(kind, name, namespace):
        return (kind, name, namespace)

    def get(self, api_version, kind, name, namespace=None):
        obj = self.store.get(self.key(kind, name, namespace))
        if obj is not None and kind == "Deployment":
            obj = copy.deepcopy(obj)
            n = obj["spec"].get("replicas", 1) if self.ready else 0
            obj["status"] = {"readyReplicas": n, "updatedReplicas": n, "availableReplicas": n}
        return obj

    def apply_all(self, objs, check_mode=False):
        out = []
        for obj in sorted(objs, key=apply_order):
            meta = obj["metadata"]
            k = self.key(obj["kind"], meta["name"], meta.get("namespace"))
            before = self.store.get(k)
            changed = before != obj
            if changed and not check_mode:
                self.store[k] = copy.deepcopy(obj)
            self.applied.append((k[0], check_mode))
            out.append(ApplyResult(changed, before, obj))
        return out

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        wanted = dict(req.split("=", 1) for req in (label_selector or "").split(",") if req)
        return [copy.deepcopy(obj) for (k, _name, ns), obj in self.store.items()
                if k == kind and namespace in (None, ns)
                and all((obj["metadata"].get("labels") or {}).get(key) == val for key, val in wanted.items())]

    def delete(self, api_version, kind, name, namespace=None, check_mode=False):
        k = self.key(kind, name, namespace)
        if k not in self.store:
            return False
        if not check_mode:
            del self.store[k]
        return True


class FakeHelm:
    """Answers helm argv like helm v3/v4 would, from an in-memory release table."""

    def __init__(self) -> None:
        self.releases: dict[tuple[str, str], dict] = {}
        self.calls: list[list[str]] = []

    def __call__(self, argv):
        self.calls.append(argv)
        ns = argv[argv.index("--namespace") + 1]
        verb = argv[1]
        if verb == "list":
            name = argv[argv.index("--filter") + 1].strip("^$").replace("\\", "")
            rel = self.releases.get((ns, name))
            items = [] if rel is None else [{
                "name": name, "namespace": ns, "revision": str(rel["rev"]), "updated": "2026-11-21 23:00:00 +0000 UTC",
                "status": rel["status"], "chart": "ingress-nginx-" + rel["version"], "app_version": "1.15.1",
            }]
            return 0, json.dumps(items), ""
        if verb == "get":
            rel = self.releases.get((ns, argv[3]))
            if rel is None:
                return 1, "", "Error: release: not found"
            return 0, json.dumps(rel["values"] or None), ""
        if verb == "upgrade":
            name, version = argv[3], argv[argv.index("--version") + 1]
            with open(argv[argv.index("--values") + 1]) as handle:
                values = json.load(handle)
            old = self.releases.get((ns, name))
            self.releases[(ns, name)] = {"rev": (old["rev"] + 1) if old else 1, "status": "deployed", "version": version, "values": values}
            return 0, "Release has been upgraded", ""
        if verb == "status":  # helm v3 and v4 strip the chart from status, which is why the module must not rely on it
            rel = self.releases[(ns, argv[2])]
            return 0, json.dumps({"name": argv[2], "namespace": ns, "version": rel["rev"], "apply_method": "csa",
                                  "info": {"status": rel["status"], "last_deployed": "2026-11-21T23:00:00Z"}}), ""
        if verb == "uninstall":
            self.releases.pop((ns, argv[2]))
            return 0, 'release "%s" uninstalled' % argv[2], ""
        raise AssertionError(argv)


def req(**kw):
    base = {"namespace": "two", "values": SEED_TWO, "wait": False}
    base.update(kw)
    return ctl.Request(**base)


def test_registry():
    assert ctl.installable_names() == ["ingress_nginx", "traefik"]
    t = ctl.controller_type("ingress_nginx")
    assert (t.install.chart_name, t.install.chart_version) == ("ingress-nginx", "4.15.1")
    assert (ctl.controller_type("traefik").install.chart_name, ctl.controller_type("traefik").install.chart_version) == ("traefik", "41.6.0")
    with pytest.raises(ctl.ControllerError, match="type: expected one of ingress_nginx, traefik, got 'kong'"):
        ctl.controller_type("kong")


def test_charts_give_the_local_chart_of_the_controllers_type(tmp_path):
    nginx, traefik = tmp_path / "ingress-nginx", tmp_path / "traefik"
    for chart, name, version in ((nginx, "ingress-nginx", "4.11.0"), (traefik, "traefik", "41.6.0")):
        chart.mkdir()
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: %s\nversion: %s\n" % (name, version))
    charts = {"ingress_nginx": str(nginx), "traefik": str(traefik)}
    p = ctl.plan(req(charts=charts))  # no type: the default type's entry
    assert (p.chart.ref, p.chart.version, p.chart.repo) == (str(nginx), "4.11.0", "")
    assert ctl.plan(req(charts={"traefik": str(traefik)})).chart.repo  # no entry of its type: the pinned repository
    assert ctl.plan(req(charts=charts, method="manifest")).chart is None  # manifests need no chart
    with pytest.raises(ctl.ControllerError, match="charts.kong: expected a controller type the lab installs, one of ingress_nginx, traefik"):
        ctl.plan(req(charts={"kong": str(nginx)}))
    with pytest.raises(ctl.ControllerError, match="charts.ingress_nginx: expected a chart directory or .tgz"):
        ctl.plan(req(charts={"ingress_nginx": str(tmp_path / "missing")}))


def test_plan_validates_before_anything():
    with pytest.raises(ctl.ControllerError, match="values: controller.scope.enabled: expected a boolean, got 'yes'"):
        ctl.plan(req(values={"controller": {"scope": {"enabled": "yes"}}}))
    with pytest.raises(ctl.ControllerError, match="scope=True conflicts"):
        ctl.plan(req(scope=True))
    with pytest.raises(ctl.ControllerError, match="manifest method cannot render"):
        ctl.plan(req(values={}, method="manifest"))
    p = ctl.plan(req(method="manifest"))
    assert p.objects[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two"}}
    ic = next(o for o in p.objects if o["kind"] == "IngressClass")
    assert ic["metadata"]["annotations"] == {ctl.OWNER_ANNOTATION: "two/ingress"}


def test_plan_refuses_a_release_name_helm_or_the_api_server_would_refuse():
    """The ingress_controller module on its own: helm refuses 'Ingress!' only once it runs, and the
    manifest method would send objects named after it."""
    for method in ("helm", "manifest"):
        with pytest.raises(ctl.ControllerError, match=r"^release: expected a helm release name .*, got 'Ingress!'$"):
            ctl.plan(req(release="Ingress!", method=method))
        with pytest.raises(ctl.ControllerError, match=r"^release: expected a release name that makes the controller's "
                                                      r"Service name a DNS-1035 label .*\(Service '2nd-ingress-nginx-controller'\)$"):
            ctl.plan(req(release="2nd", method=method))


def test_manifest_check_mode_then_apply_then_idempotent():
    client = FakeClient()
    first = ctl.run(req(method="manifest"), check_mode=True, client_factory=lambda: client)
    assert first["changed"] is True and client.store == {}
    assert first["rbac_scope"] == "cluster" and first["watch_namespace"] is None
    assert first["publish"]["source"] == "node-addresses"
    assert "Deployment two/ingress-ingress-nginx-controller" in first["objects"]
    assert len(first["diff"]) == 10  # namespace + 9 objects, one diff each
    second = ctl.run(req(method="manifest", wait=True), check_mode=False, client_factory=lambda: client)
    assert second["changed"] is True and second["ready"].startswith("1/1 ready")
    third = ctl.run(req(method="manifest"), check_mode=False, client_factory=lambda: client)
    assert third["changed"] is False and third["diff"] == []
    check = ctl.run(req(method="manifest"), check_mode=True, client_factory=lambda: client)
    assert check["changed"] is False


def test_manifest_prunes_what_the_release_no_longer_renders():
    client = FakeClient()
    cluster_scoped = ctl.run(req(method="manifest"), check_mode=False, client_factory=lambda: client)
    assert cluster_scoped["pruned"] == []
    assert ("ClusterRole", "ingress-ingress-nginx", None) in client.store
    someone_elses = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": "other", "namespace": "one", "labels": {
                         "app.kubernetes.io/instance": "ingress", "app.kubernetes.io/managed-by": "kindlab.ingress"}}}
    client.store[("Role", "other", "one")] = someone_elses  # same release name, another namespace
    scoped = req(method="manifest", values={"controller": {"scope": {"enabled": True}, "admissionWebhooks": {"enabled": False}},
                                            "rbac": {"scope": True}})
    preview = ctl.run(scoped, check_mode=True, client_factory=lambda: client)
    assert preview["changed"] is True and sorted(preview["pruned"]) == [
        "ClusterRole ingress-ingress-nginx", "ClusterRoleBinding ingress-ingress-nginx"]
    assert ("ClusterRole", "ingress-ingress-nginx", None) in client.store  # check mode deletes nothing
    fixed = ctl.run(scoped, check_mode=False, client_factory=lambda: client)
    assert sorted(fixed["pruned"]) == ["ClusterRole ingress-ingress-nginx", "ClusterRoleBinding ingress-ingress-nginx"]
    assert ("ClusterRole", "ingress-ingress-nginx", None) not in client.store
    assert ("Role", "ingress-ingress-nginx", "two") in client.store and ("Role", "other", "one") in client.store
    again = ctl.run(scoped, check_mode=False, client_factory=lambda: client)
    assert again["changed"] is False and again["pruned"] == []


def test_manifest_wait_times_out_with_detail(monkeypatch):
    client = FakeClient()
    client.ready = False

    def wait_until(check, timeout, what, **kw):
        raise ctl.K8sError("timed out waiting for %s; last seen: %s" % (what, check()[1]))

    monkeypatch.setattr(k8s_wait, "wait_until", wait_until)
    with pytest.raises(ctl.K8sError, match="Deployment two/ingress-ingress-nginx-controller to be ready; last seen: 0/1 ready"):
        ctl.run(req(method="manifest", wait=True), check_mode=False, client_factory=lambda: client)


def test_manifest_wait_fails_at_once_when_the_controller_crash_loops():
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_wait import FATAL, crashing_pod

    class Crashing(FakeClient):
        def pod_log(self, namespace, name, container=None, since_seconds=None, tail_lines=None, previous=False):
            return FATAL + "\n"

    client = Crashing()
    client.ready = False
    pod = crashing_pod()
    pod["metadata"]["labels"] = _controller_selector()
    client.store[client.key("Pod", pod["metadata"]["name"], "two")] = pod
    with pytest.raises(WorkloadFailed, match="Deployment two/ingress-ingress-nginx-controller cannot start: .*"
                                             "CrashLoopBackOff.*last exit code 255.*no service with name missing") as info:
        ctl.run(req(method="manifest", wait=True), check_mode=False, client_factory=lambda: client)
    assert info.value.details["changed"] is True  # the objects were applied before the wait failed


def _controller_selector():
    (dep,) = [o for o in ctl.plan(req(method="manifest")).objects if o["kind"] == "Deployment"]
    return dict(dep["spec"]["selector"]["matchLabels"])


def test_manifest_refuses_another_releases_ingress_class():
    client = FakeClient()
    ctl.run(req(method="manifest", namespace="one", values=SEED_ONE), check_mode=False, client_factory=lambda: client)
    with pytest.raises(ctl.ControllerError, match="IngressClass nginx already exists and belongs to release one/ingress"):
        ctl.run(req(method="manifest"), check_mode=True, client_factory=lambda: client)
    # Per-release class names (the lab's choice) coexist.
    values = json.loads(json.dumps(SEED_TWO))
    values["controller"]["ingressClassResource"] = {"name": "nginx-two", "controllerValue": "k8s.io/ingress-nginx-two"}
    assert ctl.run(req(method="manifest", values=values), check_mode=False, client_factory=lambda: client)["changed"] is True


def test_manifest_absent_deletes_own_objects_only():
    client = FakeClient()
    ctl.run(req(method="manifest", namespace="one", values=SEED_ONE), check_mode=False, client_factory=lambda: client)
    before = dict(client.store)
    check = ctl.run(req(method="manifest", namespace="one", values=SEED_ONE, state="absent"), check_mode=True, client_factory=lambda: client)
    assert check["changed"] is True and client.store == before
    gone = ctl.run(req(method="manifest", namespace="one", values=SEED_ONE, state="absent"), check_mode=False, client_factory=lambda: client)
    assert gone["deleted"][0] == "Deployment one/ingress-ingress-nginx-controller"
    assert list(client.store) == [("Namespace", "one", None)]
    again = ctl.run(req(method="manifest", namespace="one", values=SEED_ONE, state="absent"), check_mode=False, client_factory=lambda: client)
    assert again["changed"] is False


def test_helm_install_check_mode_never_upgrades():
    h = FakeHelm()
    res = ctl.run(req(), check_mode=True, run_command=h, helm="helm")
    assert res["changed"] is True and res["reason"] == "release not installed"
    assert [c[1] for c in h.calls] == ["list"]
    assert res["diff"] == {"before": {}, "after": SEED_TWO}


def test_helm_install_then_idempotent_then_change():
    h = FakeHelm()
    res = ctl.run(req(), check_mode=False, run_command=h, helm="/bin/helm")
    assert res["changed"] is True
    assert res["release"]["revision"] == 1 and res["release"]["chart"] == "ingress-nginx-4.15.1"
    upgrade = next(c for c in h.calls if c[1] == "upgrade")
    assert upgrade[:5] == ["/bin/helm", "upgrade", "--install", "ingress", "ingress-nginx"]
    assert "--reset-values" in upgrade and "--create-namespace" in upgrade
    assert h.releases[("two", "ingress")]["values"] == SEED_TWO
    assert res["args"][-1] == "--configmap=$(POD_NAMESPACE)/ingress-ingress-nginx-controller"
    h.calls.clear()
    again = ctl.run(req(), check_mode=False, run_command=h, helm="helm")
    assert again["changed"] is False and "up to date" in again["reason"]
    assert [c[1] for c in h.calls] == ["list", "get"]
    check = ctl.run(req(values=SEED_ONE), check_mode=True, run_command=h, helm="helm")
    assert check["changed"] is True and check["reason"] == "user-supplied values differ"
    assert h.releases[("two", "ingress")]["rev"] == 1
    bumped = ctl.run(req(chart_version="4.15.0"), check_mode=False, run_command=h, helm="helm")
    assert bumped["changed"] is True and bumped["release"]["revision"] == 2


def test_helm_wait_uses_the_deployment():
    h, client = FakeHelm(), FakeClient()
    ctl.run(req(method="manifest"), check_mode=False, client_factory=lambda: client)  # a Deployment to wait on
    res = ctl.run(req(wait=True), check_mode=False, run_command=h, helm="helm", client_factory=lambda: client)
    assert res["ready"].startswith("1/1 ready")


def test_helm_absent_and_errors():
    h = FakeHelm()
    ctl.run(req(), check_mode=False, run_command=h, helm="helm")
    check = ctl.run(req(state="absent"), check_mode=True, run_command=h, helm="helm")
    assert check["changed"] is True and ("two", "ingress") in h.releases
    gone = ctl.run(req(state="absent"), check_mode=False, run_command=h, helm="helm")
    assert gone["changed"] is True and h.releases == {}
    assert ctl.run(req(state="absent"), check_mode=False, run_command=h, helm="helm")["changed"] is False

    def broken(argv):
        return 1, "", "Error: Kubernetes cluster unreachable"

    with pytest.raises(ctl.ControllerError, match=r"`helm list --namespace two .*` failed \(rc=1\): Error: Kubernetes cluster unreachable"):
        ctl.run(req(), check_mode=False, run_command=broken, helm="helm")


# ---------------------------------------------------------------- lab definitions


def lab_values(ns, puzzle=False):
    """The values the report recommends for the lab: per-release IngressClass names and
    controller values (IngressClasses are cluster-wide), the annotation value kept at nginx."""
    klass = {"name": "nginx-" + ns, "controllerValue": "k8s.io/ingress-nginx-" + ns}
    if puzzle and ns == "two":
        return {"controller": {"publishService": {"enabled": False, "pathOverride": "two/svc"}, "scope": {"enabled": False},
                               "admissionWebhooks": {"enabled": False}, "ingressClassResource": klass}}
    if puzzle:
        return {"controller": {"scope": {"enabled": True}, "admissionWebhooks": {"enabled": False}, "ingressClassResource": klass},
                "rbac": {"scope": {"enabled": True}}}
    return {"controller": {"scope": {"enabled": True}, "publishService": {"enabled": True}, "admissionWebhooks": {"enabled": False},
                           "ingressClass": "nginx", "ingressClassResource": klass}, "rbac": {"scope": True}}


def test_parse_controllers_healthy_lab():
    parsed = ctl.parse_controllers([{"namespace": ns, "type": "ingress_nginx", "release": "ingress", "values": lab_values(ns)}
                                    for ns in ("one", "two", "three")])
    for ns, c in zip(("one", "two", "three"), parsed):
        assert (c["namespace"], c["rbac_scope"], c["watch_namespace"], c["ingress_class_resource"]) == (ns, "namespace", ns, "nginx-" + ns)
        assert c["publish"] == {"source": "service", "service": ns + "/ingress-ingress-nginx-controller", "addresses": [], "node_address_type": None}
        assert "--ingress-class=nginx" in c["args"] and "--controller-class=k8s.io/ingress-nginx-" + ns in c["args"]


def test_parse_controllers_puzzle_keeps_the_seed_behaviour():
    one, two, three = ctl.parse_controllers([{"namespace": ns, "values": lab_values(ns, puzzle=True)} for ns in ("one", "two", "three")])
    assert two["watch_namespace"] is None and two["rbac_scope"] == "cluster" and two["publish"]["source"] == "node-addresses"
    assert "--ingress-class=nginx" in two["args"]  # claims every namespace's annotated Ingress
    for c in (one, three):
        assert c["rbac_scope"] == "namespace" and c["publish"]["source"] == "service"


def test_parsed_values_carry_the_convenience_options():
    """What lab.yml installs is the parsed entry's values: scope/publish_service/ingress_class
    must be folded in, not left beside them for a role to drop."""
    (c,) = ctl.parse_controllers([{"namespace": "two", "scope": True, "publish_service": False, "ingress_class": "nginx-two",
                                   "values": {"controller": {"admissionWebhooks": {"enabled": False}}}}])
    assert "scope" not in c and "publish_service" not in c
    assert c["values"]["controller"]["scope"] == {"enabled": True} and c["values"]["rbac"] == {"scope": True}
    assert c["values"]["controller"]["publishService"] == {"enabled": False}
    assert c["ingress_class_resource"] == "nginx-two" and c["deployment"] == "two/ingress-ingress-nginx-controller"
    # Installing the parsed values alone renders what was validated.
    p = ctl.plan(ctl.Request(namespace="two", values=c["values"], method="manifest"))
    assert p.config.summary()["args"] == c["args"] and "--watch-namespace=$(POD_NAMESPACE)" in c["args"]
    assert not any(a.startswith("--publish-service") for a in c["args"])


def test_health_says_which_controller_started_and_why_the_other_did_not():
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_wait import FATAL, crashing_pod

    class Cluster(FakeClient):
        def pod_log(self, namespace, name, container=None, since_seconds=None, tail_lines=None, previous=False):
            return FATAL + "\n"

    client = Cluster()
    parsed = ctl.parse_controllers([{"namespace": ns, "values": lab_values(ns)} for ns in ("one", "two", "three")])
    for ns in ("one", "two"):
        ctl.run(ctl.Request(namespace=ns, values=lab_values(ns), method="manifest", wait=False), False, lambda: client)
    client.ready = False
    pod = crashing_pod()
    pod["metadata"]["labels"] = _controller_selector()
    client.store[client.key("Pod", pod["metadata"]["name"], "two")] = pod
    result = ctl.health(client, parsed)
    assert result["passed"] is False
    one, two, three = (result["controllers"][ns + "/ingress"] for ns in ("one", "two", "three"))
    assert one["passed"] is False and one["reason"] == "not ready: Deployment one/ingress-ingress-nginx-controller 0/1 ready, 0 updated, 0 available"
    assert two["reason"].startswith("cannot start: pod two/ingress-ingress-nginx-controller-") and two["reason"].endswith(FATAL)
    assert two["failure"]["exit_code"] == 255
    assert three["reason"] == "Deployment three/ingress-ingress-nginx-controller not found"
    client.ready = True
    assert ctl.health(client, parsed[:1])["controllers"]["one/ingress"]["reason"].startswith(
        "started: Deployment one/ingress-ingress-nginx-controller 1/1 ready")


def test_parse_controllers_clashes():
    same_class = [{"namespace": "one", "values": SEED_ONE}, {"namespace": "two", "values": SEED_TWO}]
    with pytest.raises(ctl.ControllerError,
                       match=r"\[1\].values.controller.ingressClassResource.name: IngressClass 'nginx' is already created by \[0\] \(one/ingress\)"):
        ctl.parse_controllers(same_class)
    with pytest.raises(ctl.ControllerError, match=r"\[1\].release: release one/ingress is already defined by \[0\]"):
        ctl.parse_controllers([{"namespace": "one", "values": lab_values("one")}, {"namespace": "one", "values": lab_values("two")}])
    with pytest.raises(ctl.ControllerError, match=r"\[0\].values: controller.scope.enabled: expected a boolean"):
        ctl.parse_controllers([{"namespace": "one", "values": {"controller": {"scope": {"enabled": "yes"}}}}])
    with pytest.raises(ctl.ControllerError, match=r"\[0\]: unknown keys \['valuez'\]"):
        ctl.parse_controllers([{"namespace": "one", "valuez": {}}])
    with pytest.raises(ctl.ControllerError, match=r"\[0\].namespace: expected a namespace name"):
        ctl.parse_controllers([{"values": {}}])
    with pytest.raises(ctl.ControllerError, match="expected a list"):
        ctl.parse_controllers({"namespace": "one"})


def test_unreadable_helm_output_is_a_controller_error():
    with pytest.raises(ctl.ControllerError, match="helm list printed output that is not JSON"):
        ctl.run(req(), check_mode=True, run_command=lambda argv: (0, "NAME\tNAMESPACE\n", ""), helm="helm")


@pytest.mark.parametrize("puzzle", [False, True], ids=["healthy", "puzzle"])
@pytest.mark.parametrize("ns", ["one", "two", "three"])
def test_lab_manifests_validate(ns, puzzle):
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all

    p = ctl.plan(ctl.Request(namespace=ns, values=lab_values(ns, puzzle), method="manifest"))
    validate_all(p.objects)
    ic = next(o for o in p.objects if o["kind"] == "IngressClass")
    assert ic["metadata"]["name"] == "nginx-" + ns and ic["spec"]["controller"] == "k8s.io/ingress-nginx-" + ns


def test_a_controllers_method_is_checked_before_the_lab_changes_anything():
    base = {"namespace": "edge", "type": "traefik", "release": "traefik"}
    no_crds = {"providers": {"kubernetesCRD": {"enabled": False}}}
    assert ctl.parse_controller(dict(base, values=no_crds, method="manifest"), "[0]")["method"] == "manifest"
    assert ctl.parse_controller(dict(base, values={}), "[0]")["method"] is None  # the installer's default
    with pytest.raises(ctl.ControllerError, match=r"\[0\]\.method: expected one of helm, manifest, got 'kubectl'"):
        ctl.parse_controller(dict(base, method="kubectl"), "[0]")
    with pytest.raises(ctl.ControllerError, match=r"\[0\]\.values: method=manifest cannot render .*kubernetesCRD.enabled must be false"):
        ctl.parse_controller(dict(base, values={}, method="manifest"), "[0]")
    # helm renders what the manifest method refuses: nothing to refuse without method=manifest
    assert ctl.parse_controller(dict(base, values={}, method="helm"), "[0]")["method"] == "helm"


def test_health_reads_again_a_controller_between_two_runs_of_its_crash_loop():
    """Seen on kind: a reading between two runs of a crash loop (the container neither waiting
    in CrashLoopBackOff nor ready) said only "not ready"; controller_health reads it again."""
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_wait import crashing_pod

    class Cluster(FakeClient):
        def pod_log(self, namespace, name, container=None, since_seconds=None, tail_lines=None, previous=False):
            return "F1125 main.go:89] no service with name ingress-nginx-missing found in namespace two\n"

    client = Cluster()
    ctl.run(ctl.Request(namespace="two", values=lab_values("two"), method="manifest", wait=False), False, lambda: client)
    client.ready = False
    parsed = ctl.parse_controllers([{"namespace": "two", "values": lab_values("two")}])
    pod = crashing_pod()
    pod["metadata"]["labels"] = _controller_selector()
    between_runs = copy.deepcopy(pod)
    between_runs["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": "2026-11-23T14:02:51Z"}}
    client.store[client.key("Pod", pod["metadata"]["name"], "two")] = between_runs
    now = [0.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds
        client.store[client.key("Pod", pod["metadata"]["name"], "two")] = pod  # back-off again: CrashLoopBackOff

    once = ctl.health(client, parsed)["controllers"]["two/ingress"]
    assert once["reason"].startswith("not ready: Deployment two/ingress-ingress-nginx-controller 0/1 ready")
    settled = ctl.health(client, parsed, settle_timeout=30, sleep=sleep, clock=lambda: now[0])["controllers"]["two/ingress"]
    assert settled["reason"].startswith("cannot start: pod two/ingress-ingress-nginx-controller-") and "CrashLoopBackOff" in settled["reason"]
    assert slept == [ctl.HEALTH_POLL_SECONDS] and "settled" not in settled
    # Still neither ready nor failing when the time is up: the reading says so, after settle_timeout.
    client.store[client.key("Pod", pod["metadata"]["name"], "two")] = between_runs
    now[0], slept[:] = 0.0, []
    stuck = ctl.health(client, parsed, settle_timeout=5, sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)),
                       clock=lambda: now[0])["controllers"]["two/ingress"]
    assert stuck["reason"].startswith("not ready:") and sum(slept) == 5
