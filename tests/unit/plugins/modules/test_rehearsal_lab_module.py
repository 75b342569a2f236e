"""The rehearsal_lab module and its logic (migration/rehearsal_lab.py): a capture of a team's cluster made into
a rehearsal that validates as a lab definition; check mode, idempotence, errors naming the option."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.capture import scenario as cap
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.round_trip import round_trip_differences
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_NAMED_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import validate
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import rehearsal_lab as rehearsal
from ansible_collections.kindlab.ingress.plugins.modules import rehearsal_lab
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.capture.test_capture_cluster import cluster, rebuilt, team_cluster

Obj = dict[str, Any]


def team_capture() -> Obj:
    """The team's cluster with its ingress-nginx (the puzzle's cluster-wide one, class nginx), captured."""
    state = team_cluster()
    puzzle = cluster()
    state.workloads += [w for w in puzzle.workloads if w["metadata"]["namespace"] == "two"]
    state.ingress_classes, state.namespaces = puzzle.ingress_classes, puzzle.namespaces + state.namespaces
    state.cluster_roles, state.cluster_role_bindings = puzzle.cluster_roles, puzzle.cluster_role_bindings
    return cap.capture(state, "team").lab


def binary() -> str:
    from kindlab_twin import binaries

    path = binaries.binary_path("ingress2gateway")
    if not path.exists():
        pytest.skip("no %s (kindlab-twin build binaries ingress2gateway; make test builds it)" % path)
    return str(path)


def run(args: dict[str, Any], check_mode: bool = False) -> Exit:
    """The module with the real ingress2gateway, reading no other kind cluster (this machine's are not the test's)."""
    return run_module(rehearsal_lab.main, dict({"ingress2gateway": binary(), "kind_clusters": False}, **args,
                                               _ansible_check_mode=check_mode))


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    use_fake_exits(monkeypatch, None)
    src = tmp_path / "captured.yml"
    src.write_text(yaml.safe_dump(team_capture()))
    return src


def test_the_rehearsal_adds_each_target_beside_the_captured_baseline_and_validates_as_a_lab() -> None:
    lab = team_capture()
    out = rehearsal.compose(lab, ["traefik-nginx-provider", "traefik-ingress-provider", "gateway-api"], ["shop"], "rehearsal")
    migration = out["lab_expect"]["migration"]
    # the ingress-nginx whose class the shop Ingresses carry (annotation nginx) is the baseline
    nginx = [c for c in lab["lab_controllers"] if c["type"] == "ingress_nginx"]
    assert migration["baseline"] == {"name": "ingress-nginx", "namespace": "two"} and len(nginx) >= 1
    assert migration["report_only"] is True and migration["namespaces"] == ["shop"]
    assert migration["targets"] == [{"name": "traefik-nginx-provider", "namespace": "rehearse-traefik"},
                                    {"name": "traefik-ingress-provider", "namespace": "rehearse-traefik-native"},
                                    {"name": "gateway-api", "gateway": "shop/nginx"}]
    traefik = {c["namespace"]: c["values"]["providers"] for c in out["lab_controllers"] if c["type"] == "traefik"}
    # both Traefik Ingress providers match their ingressClass against the class annotation (the baseline's nginx, as
    # its --ingress-class); the nginx one takes an IngressClass by its controller
    assert traefik["rehearse-traefik"]["kubernetesIngressNGINX"] == {"enabled": True, "ingressClass": "nginx",
                                                                     "controllerClass": "k8s.io/ingress-nginx-two"}
    assert traefik["rehearse-traefik-native"]["kubernetesIngress"]["ingressClass"] == "nginx"
    # Traefik's own provider runs its CRD provider too, for the Middlewares its fixes make; the others do not
    assert traefik["rehearse-traefik-native"]["kubernetesCRD"] == {"enabled": True}
    assert traefik["rehearse-traefik"]["kubernetesCRD"] == {"enabled": False}
    # ingress2gateway selects by the class the Ingresses name (their annotation, nginx), and names the Gateway after it
    assert out["lab_gateways"]["translations"] == [{"namespaces": ["shop"], "class": rehearsal.GATEWAY_CLASS,
                                                    "ingress_class": "nginx"}]
    # everything captured is still there, and the whole validates as a lab definition
    assert out["lab_workloads"] == lab["lab_workloads"] and lab["lab_namespaces"] == out["lab_namespaces"][:len(lab["lab_namespaces"])]
    summary = validate("kind", out["lab_cluster"], [{"name": "p", "addresses": ["100.64.0.0/16"]}], out["lab_namespaces"],
                       out["lab_controllers"], out["lab_workloads"], out["lab_expect"], gateway_api=out["lab_gateway_api"],
                       gateways=out["lab_gateways"])
    assert summary["cluster"]["name"] == "rehearsal"


def test_ingresses_that_name_the_baseline_by_its_class_and_by_its_annotation_are_translated_class_by_class() -> None:
    """The baseline claims its IngressClass's name (nginx-two) and its annotation's value (nginx): ingress2gateway
    selects by one name, so each is translated (a Gateway each, served by the target's one Traefik) and replayed
    through the first; none is refused."""
    lab = team_capture()
    shop = next(w for w in lab["lab_workloads"] if w["namespace"] == "shop" and w.get("ingress"))
    first = shop["ingress"][0] if isinstance(shop["ingress"], list) else shop["ingress"]
    spec_class = dict(first, name="by-class", annotations={}, **{"class": "nginx-two"})
    shop["ingress"] = [first, spec_class] if not isinstance(shop["ingress"], list) else shop["ingress"] + [spec_class]
    out = rehearsal.compose(lab, ["gateway-api"], ["shop"], "rehearsal")
    assert out["lab_gateways"]["translations"] == [
        {"namespaces": ["shop"], "class": rehearsal.GATEWAY_CLASS, "ingress_class": name} for name in ("nginx", "nginx-two")]
    assert out["lab_expect"]["migration"]["targets"] == [{"name": "gateway-api", "gateway": "shop/nginx"}]
    # the real ingress2gateway translates both, before any cluster exists

    def run_command(argv: list[str]) -> tuple[int, str, str]:
        import subprocess
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr
    assert rehearsal.preflight_translation(out, binary(), run_command) >= 4  # a Gateway and an HTTPRoute per class at least


def test_with_traefiks_own_provider_the_baselines_ingressclass_is_named_by_the_annotation_and_given_back() -> None:
    """Traefik's own Ingress provider takes a spec.ingressClassName only when that IngressClass's controller is
    Traefik's, so it would serve none of the Ingresses of the baseline's class: with that target they name the class
    by the annotation instead (what every other controller reads alike), the round trip and the migrated manifests
    give the class back, and the change is said. Without that target nothing changes."""
    lab = team_capture()
    shop = next(w for w in lab["lab_workloads"] if w["namespace"] == "shop" and w.get("ingress"))
    first = shop["ingress"][0] if isinstance(shop["ingress"], list) else shop["ingress"]
    by_class = dict(first, name="by-class", annotations={"nginx.ingress.kubernetes.io/use-regex": "true"},
                    **{"class": "nginx-two"})
    shop["ingress"] = ([first] if not isinstance(shop["ingress"], list) else shop["ingress"]) + [by_class]
    assert rehearsal.compose(lab, ["traefik-nginx-provider", "gateway-api"], ["shop"], "rehearsal")["lab_workloads"] == \
        lab["lab_workloads"]
    notes: list[str] = []
    out = rehearsal.compose(lab, ["traefik-ingress-provider", "gateway-api"], ["shop"], "rehearsal", notes)
    made = next(i for w in out["lab_workloads"] if w["namespace"] == "shop" and w.get("ingress")
                for i in w["ingress"] if i["name"] == "by-class")
    assert "class" not in made and made["annotations"] == {
        "nginx.ingress.kubernetes.io/use-regex": "true", "kubernetes.io/ingress.class": "nginx",
        CLASS_NAMED_ANNOTATION: "nginx-two"}
    assert any("shop/by-class" in n and "traefik-ingress-provider" in n for n in notes)
    # every Ingress of the baseline is now of one class for ingress2gateway (its annotation's value)
    assert out["lab_gateways"]["translations"] == [{"namespaces": ["shop"], "class": rehearsal.GATEWAY_CLASS,
                                                    "ingress_class": "nginx"}]
    # the rebuild captured back says the class as the first capture did
    assert round_trip_differences(lab, cap.capture(rebuilt(out), "team").lab, ["shop"]) == []
    validate("kind", out["lab_cluster"], [{"name": "p", "addresses": ["100.64.0.0/16"]}], out["lab_namespaces"],
             out["lab_controllers"], out["lab_workloads"], out["lab_expect"], gateway_api=out["lab_gateway_api"],
             gateways=out["lab_gateways"])


def with_own_routes(lab: Obj, controller_name: str = "example.net/gateway-controller") -> Obj:
    """LAB plus the team's own Gateway (another implementation's class, port 80 and 443) and an HTTPRoute of shop."""
    lab = dict(lab, lab_gateway_api=True, lab_gateways={
        "classes": [{"name": "team", "controller_name": controller_name}],
        "gateways": [{"namespace": "shop", "name": "edge", "class": "team",
                      "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"},
                                    {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "shop.example.test"}]}]})
    shop = next(w for w in lab["lab_workloads"] if w["namespace"] == "shop")
    shop["httproute"] = {"name": "shop", "parent_refs": [{"gateway": "shop/edge"}], "hostnames": ["shop.example.test"],
                         "rules": [{"matches": [{"path": "/api"}], "filters": [
                             {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]}]}
    return lab


def test_own_routes_serve_the_teams_gateway_with_the_rehearsals_traefik() -> None:
    lab = with_own_routes(team_capture())
    notes: list[str] = []
    out = rehearsal.compose(lab, ["gateway-api", "own-routes"], ["shop"], "rehearsal", notes)
    targets = out["lab_expect"]["migration"]["targets"]
    assert targets == [{"name": "gateway-api", "gateway": "shop/nginx"}, {"name": "own-routes", "gateway": "shop/edge"}]
    classes = {c["name"]: c for c in out["lab_gateways"]["classes"]}
    # each Gateway target's Traefik serves its own class alone
    assert classes["team"]["controller_name"] == "traefik.io/gateway-controller"
    assert classes["team"]["labels"] == {rehearsal.TARGET_LABEL: "own-routes"}
    assert classes[rehearsal.GATEWAY_CLASS]["labels"] == {rehearsal.TARGET_LABEL: "gateway-api"}
    selectors = {c["namespace"]: c["values"]["providers"]["kubernetesGateway"]["labelSelector"]
                 for c in out["lab_controllers"] if c["namespace"] in ("rehearse-gateway", "rehearse-own-routes")}
    assert selectors == {"rehearse-gateway": rehearsal.TARGET_LABEL + "=gateway-api",
                         "rehearse-own-routes": rehearsal.TARGET_LABEL + "=own-routes"}
    [edge] = out["lab_gateways"]["gateways"]
    assert [(ln["name"], ln["port"]) for ln in edge["listeners"]] == [("http", 8000), ("https", 8443)]
    assert notes == ["GatewayClass team: served by the rehearsal's Traefik (controllerName traefik.io/gateway-controller, "
                     "was example.net/gateway-controller)",
                     "Gateway shop/edge listener http: on port 8000, where Traefik's entry point listens (was 80)",
                     "Gateway shop/edge listener https: on port 8443, where Traefik's entry point listens (was 443)"]
    assert lab["lab_gateways"]["gateways"][0]["listeners"][0]["port"] == 80  # the capture itself is unchanged
    summary = validate("kind", out["lab_cluster"], [{"name": "p", "addresses": ["100.64.0.0/16"]}], out["lab_namespaces"],
                       out["lab_controllers"], out["lab_workloads"], out["lab_expect"], gateway_api=out["lab_gateway_api"],
                       gateways=out["lab_gateways"])
    assert summary["httproutes"] == ["shop/shop"]


def test_own_routes_needs_one_gateway_and_no_traefik_serving_every_class() -> None:
    with pytest.raises(rehearsal.RehearsalError) as err:
        rehearsal.compose(team_capture(), ["own-routes"], ["shop"], "rehearsal")
    assert str(err.value) == ("targets: own-routes replays through the one Gateway the HTTPRoutes of shop attach to, and they "
                              "attach to none (captured Gateways: none)")
    lab = with_own_routes(team_capture())
    lab["lab_controllers"] = lab["lab_controllers"] + [{"namespace": "edge", "type": "traefik", "release": "traefik",
                                                        "values": {"providers": {"kubernetesGateway": {"enabled": True}}}}]
    with pytest.raises(rehearsal.RehearsalError) as err:
        rehearsal.compose(lab, ["own-routes"], ["shop"], "rehearsal")
    assert str(err.value) == ("targets: own-routes serves its Gateway with a Traefik of its own, and the captured edge/traefik "
                              "serves every Traefik GatewayClass (providers.kubernetesGateway without a labelSelector), so both "
                              "would serve it")


@pytest.mark.parametrize("targets, namespaces, message", [
    ([], [], "targets: expected a non-empty list"),
    (["traefik-nginx-provider", "traefik-nginx-provider"], [], "targets: expected each target once"),
    (["traefik-nginx-provider"], ["payments"], "namespaces: payments has no captured Ingress (namespaces with Ingresses: shop)"),
])
def test_bad_input_names_the_option(targets: list[str], namespaces: list[str], message: str) -> None:
    with pytest.raises(rehearsal.RehearsalError) as err:
        rehearsal.compose(team_capture(), targets, namespaces, "rehearsal")
    assert str(err.value).startswith(message)


def test_a_cluster_without_ingress_nginx_has_no_move_to_rehearse() -> None:
    lab = team_capture()
    lab["lab_controllers"] = [c for c in lab["lab_controllers"] if c["type"] != "ingress_nginx"]
    with pytest.raises(rehearsal.RehearsalError, match="src: the captured cluster runs no ingress-nginx"):
        rehearsal.compose(lab, ["traefik-nginx-provider"], [], "rehearsal")


def test_module_check_mode_then_write_then_no_change(captured: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rehearsal.yml"
    r = run({"src": str(captured), "dest": str(dest)}, check_mode=True)
    assert not r.failed and r.result["changed"] is True and not dest.exists()
    r = run({"src": str(captured), "dest": str(dest)})
    assert not r.failed and r.result["changed"] is True
    assert yaml.safe_load(dest.read_text()) == r.result["lab"]
    assert [t["name"] for t in r.result["targets"]] == rehearsal.DEFAULT_TARGETS
    again = run({"src": str(captured), "dest": str(dest)})
    assert not again.failed and again.result["changed"] is False


def test_module_errors_name_the_option_and_write_nothing(captured: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rehearsal.yml"
    r = run({"src": str(tmp_path / "none.yml"), "dest": str(dest)})
    assert r.failed and r.result["msg"].startswith("src: cannot read the captured lab definition") and not dest.exists()
    r = run({"src": str(captured), "dest": str(dest), "targets": ["haproxy"]})
    assert r.failed and "targets" in r.result["msg"] and not dest.exists()
    r = run({"src": str(captured), "dest": str(dest), "cluster_name": "Bad Name"})
    assert r.failed and r.result["msg"].startswith("cluster_name: expected a kind cluster name") and not dest.exists()


def test_the_translation_runs_before_any_cluster_and_its_failure_writes_nothing(captured: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rehearsal.yml"
    r = run({"src": str(captured), "dest": str(dest), "targets": ["gateway-api"]}, check_mode=True)
    assert not r.failed and r.result["translated"] > 0  # the real ingress2gateway v1.2.0, on the rebuilt objects
    failing = tmp_path / "failing-translator"
    failing.write_text("#!/bin/sh\necho 'Error: unknown provider' >&2\nexit 3\n")
    failing.chmod(0o755)
    r = run({"src": str(captured), "dest": str(dest), "ingress2gateway": str(failing)})
    assert r.failed and r.result["msg"].startswith("ingress2gateway (%s) failed with exit code 3: Error: unknown provider" % failing)
    assert not dest.exists()
    r = run({"src": str(captured), "dest": str(dest), "ingress2gateway": "no-such-translator"})
    assert r.failed and r.result["msg"].startswith("ingress2gateway: expected the ingress2gateway binary") and not dest.exists()
    # without the gateway-api target the translator is not needed
    r = run({"src": str(captured), "dest": str(dest), "targets": ["traefik-nginx-provider"], "ingress2gateway": "no-such-translator"})
    assert not r.failed and r.result["translated"] == 0


class AnnouncingCluster:
    """A cluster as announced() reads it: LoadBalancer Services, Ingress statuses, MetalLB pools."""

    def __init__(self, services: list[Obj] = (), pools: list[str] = ()) -> None:  # type: ignore[assignment]
        self.services, self.pools = list(services), list(pools)

    def serves(self, api_version: str, kind: str) -> bool:
        return bool(self.pools)

    def list(self, api_version: str, kind: str, namespace: str | None = None, **_kw: Any) -> list[Obj]:
        if kind == "IPAddressPool":
            return [{"metadata": {"namespace": "metallb-system", "name": "lab-pool"}, "spec": {"addresses": self.pools}}]
        return self.services if kind == "Service" else []


def lb_service(namespace: str, name: str, ip: str) -> Obj:
    return {"metadata": {"namespace": namespace, "name": name}, "spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{"ip": ip}]}}}


@pytest.fixture
def beside_other_clusters(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The captured cluster (its ingress-nginx at 100.64.0.2), and the kind clusters lab (MetalLB pool 100.65.0.0/16)
    and rehearsal (a rehearsal left up: not read) on the engine, as a fake kind binary lists them."""
    from ansible_collections.kindlab.ingress.plugins.module_utils import _module

    clusters = {"captured.kubeconfig": AnnouncingCluster([lb_service("ingress", "ingress-nginx-controller", "100.64.0.2")]),
                "kind-lab": AnnouncingCluster(pools=["100.65.0.0/16"])}
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: clusters[context or kubeconfig])
    kind = tmp_path / "kind"
    kind.write_text('#!/bin/sh\ncase "$1 $2" in\n  "get clusters") printf "lab\\nrehearsal\\n" ;;\n'
                    '  "get kubeconfig") echo "apiVersion: v1" ;;\n  *) exit 1 ;;\nesac\n')
    kind.chmod(0o755)
    return kind


def run_beside(args: dict[str, Any], kind: Path) -> Exit:
    return run_module(rehearsal_lab.main, dict({"targets": ["traefik-nginx-provider"], "kubeconfig": "captured.kubeconfig",
                                                "kind_binary": str(kind)}, **args))


def test_the_pool_is_chosen_clear_of_every_address_the_captured_and_other_kind_clusters_announce(
        captured: Path, beside_other_clusters: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rehearsal.yml"
    r = run_beside({"src": str(captured), "dest": str(dest)}, beside_other_clusters)
    assert not r.failed, r.result
    assert r.result["pool"] == "100.66.0.0/16"
    assert r.result["lab"]["lab_metallb_pools"] == [{"name": "rehearsal-pool", "addresses": ["100.66.0.0/16"]}]
    assert r.result["held"] == {"the captured cluster": {"100.64.0.2": ["Service ingress/ingress-nginx-controller"]},
                                "kind cluster lab": {"100.65.0.0/16": ["MetalLB pool metallb-system/lab-pool"]}}
    assert r.result["notes"][0] == ("pool 100.66.0.0/16 (rehearsal-pool, chosen): clear of the captured cluster: 1 address(es) "
                                    "and pool(s); kind cluster lab: 1 address(es) and pool(s)")
    assert "# pool 100.66.0.0/16 (rehearsal-pool, chosen)" in dest.read_text()


@pytest.mark.parametrize("pool, message", [
    ("100.65.3.0/24", "pool: 100.65.3.0/24 overlaps 100.65.0.0/16, held by MetalLB pool metallb-system/lab-pool in kind "
                      "cluster lab: the rehearsal's Services would get addresses that cluster answers on"),
    ("100.64.0.0-100.64.0.9", "pool: 100.64.0.0-100.64.0.9 overlaps 100.64.0.2, held by Service "
                              "ingress/ingress-nginx-controller in the captured cluster"),
    ("shop.example", "pool: expected a CIDR (100.66.0.0/16) or a range"),
])
def test_a_pool_that_overlaps_an_announced_address_is_refused_before_anything_is_written(
        captured: Path, beside_other_clusters: Path, tmp_path: Path, pool: str, message: str) -> None:
    dest = tmp_path / "rehearsal.yml"
    r = run_beside({"src": str(captured), "dest": str(dest), "pool": pool}, beside_other_clusters)
    assert r.failed and r.result["msg"].startswith(message) and not dest.exists()
    r = run_beside({"src": str(captured), "dest": str(dest), "pool": "100.70.0.0/16"}, beside_other_clusters)
    assert not r.failed and r.result["lab"]["lab_metallb_pools"][0]["addresses"] == ["100.70.0.0/16"]


@pytest.mark.parametrize("args, message", [
    ({"targets": ["traefik", "gateway-api"]}, "value of targets must be one or more of"),
    ({"namespaces": ["shop", "payments"]}, "namespaces: payments is not in the captured cluster (its namespaces: "
                                           "default, ingress, shop)"),
    ({"pool": "100.65.0.0/24"}, "pool: 100.65.0.0/24 overlaps 100.65.0.0/16, held by MetalLB pool"),
    ({"cluster_name": "Rehearsal"}, "cluster_name: expected a kind cluster name"),
    # a rehearsal kept with rehearse_keep: building into it would mix its objects in, and the teardown delete it
    ({"cluster_name": "rehearsal"}, "cluster_name: a kind cluster named rehearsal exists already (one a rehearsal kept "
                                    "with rehearse_keep, or another lab's)"),
])
def test_without_src_the_options_are_checked_against_the_cluster_before_anything_is_captured(
        beside_other_clusters: Path, monkeypatch: pytest.MonkeyPatch, args: Obj, message: str) -> None:
    class Namespaces(AnnouncingCluster):
        def list(self, api_version: str, kind: str, namespace: str | None = None, **kw: Any) -> list[Obj]:
            if kind == "Namespace":
                return [{"metadata": {"name": n}} for n in ("default", "ingress", "shop")]
            return super().list(api_version, kind, namespace, **kw)

    from ansible_collections.kindlab.ingress.plugins.module_utils import _module

    use_fake_exits(monkeypatch, None)
    clusters = {"captured.kubeconfig": Namespaces([lb_service("ingress", "ingress-nginx-controller", "100.64.0.2")]),
                "kind-lab": AnnouncingCluster(pools=["100.65.0.0/16"]), "kind-rehearsal": AnnouncingCluster()}
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: clusters[context or kubeconfig])
    own = {"cluster_name": "rehearsal-2"}  # the engine already has a cluster named rehearsal
    ok = run_beside(dict(own, namespaces=["shop"]), beside_other_clusters)
    assert not ok.failed and ok.result["changed"] is False and ok.result["pool"] == "100.66.0.0/16"
    assert "lab" not in ok.result and "dest" not in ok.result
    r = run_beside(dict(own, **args), beside_other_clusters)
    assert r.failed and message in r.result["msg"]
    r = run_module(rehearsal_lab.main, {"src": "captured.yml", "kind_clusters": False})
    assert r.failed and "missing parameter(s) required by 'src': dest" in r.result["msg"]


def test_a_ci_gate_writes_its_allowances_and_no_longer_only_reports() -> None:
    lab = team_capture()
    out = rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", allow=[{"cause": "^spec\\.tls"}],
                            fail_on_change=True)
    assert out["lab_expect"]["migration"]["report_only"] is False
    assert out["lab_expect"]["migration"]["allowed"] == [{"cause": "^spec\\.tls"}]
    assert rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal")["lab_expect"]["migration"]["report_only"]
    assert "fix" not in out["lab_expect"]["migration"]
    assert rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", fix=True)["lab_expect"]["migration"]["fix"] is True
    with pytest.raises(rehearsal.RehearsalError, match=r"^allow\[0\]\.cause: '\(' is not a valid regular expression"):
        rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", allow=[{"cause": "("}])
    with pytest.raises(rehearsal.RehearsalError, match=r"^allow\[0\]: expected only the keys"):
        rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", allow=[{"host": "x"}])


def test_the_ingresses_of_another_ingress_nginx_are_named_and_rehearsed_in_a_run_of_their_own() -> None:
    """Two ingress-nginx releases share a namespace's Ingresses: the rehearsal takes the one that claims most, names the
    other's Ingresses, and baseline_class rehearses those."""
    import copy

    lab = team_capture()
    two = next(c for c in lab["lab_controllers"] if c["type"] == "ingress_nginx")
    second = copy.deepcopy(two)
    second.update(namespace="internal", release="internal")
    second["values"]["controller"]["ingressClassResource"] = {"name": "nginx-internal",
                                                              "controllerValue": "k8s.io/ingress-nginx-internal"}
    second["values"]["controller"]["ingressClass"] = "nginx-internal"
    lab["lab_controllers"].append(second)
    lab["lab_namespaces"] = sorted(lab["lab_namespaces"] + ["internal"])
    other = "nginx-internal"
    shop = next(w for w in lab["lab_workloads"] if w["namespace"] == "shop" and w.get("ingress"))
    first = shop["ingress"][0] if isinstance(shop["ingress"], list) else shop["ingress"]
    internal = dict(first, name="internal", annotations={}, **{"class": other})
    shop["ingress"] = ([first] if not isinstance(shop["ingress"], list) else shop["ingress"]) + [internal]
    notes: list[str] = []
    out = rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", notes)
    assert out["lab_expect"]["migration"]["baseline"]["namespace"] == "two"
    assert any(n.startswith("the Ingresses of class %s (ingress-nginx " % other) and "shop/internal" in n
               and "-e rehearse_class=%s" % other in n for n in notes), notes
    theirs = rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", baseline_class=other)
    assert theirs["lab_expect"]["migration"]["baseline"]["namespace"] == "internal"
    with pytest.raises(rehearsal.RehearsalError, match=r"^baseline_class: no captured ingress-nginx has IngressClass nope \(theirs: "):
        rehearsal.compose(lab, ["traefik-nginx-provider"], ["shop"], "rehearsal", baseline_class="nope")
