from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import LabError, validate

ROOT = Path(__file__).resolve().parents[5]
DEFAULT_LAB = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())


def lab(**overrides: Any) -> dict[str, Any]:
    out = copy.deepcopy(DEFAULT_LAB)
    out.update(overrides)
    return out


def run(v: dict[str, Any]) -> dict[str, Any]:
    return validate(v["lab_backend"], v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"],
                    v["lab_controllers"], v["lab_workloads"], v.get("lab_expect"),
                    gateway_api=v.get("lab_gateway_api"), gateways=v.get("lab_gateways"))


def routed(out: dict[str, Any]) -> list[str]:
    """What a lab routes: its Ingresses and its HTTPRoutes (a Gateway API scenario may have no Ingress)."""
    return out["ingresses"] + out["httproutes"]


def test_the_default_lab_and_every_scenario_validate() -> None:
    assert run(lab())["ingresses"] == ["one/test", "two/test", "three/test"]
    for scenario in sorted((ROOT / "scenarios").glob("*.yml")):
        assert routed(run(lab(**yaml.safe_load(scenario.read_text())))), scenario.name


@pytest.mark.parametrize("scenario", sorted(p.name for p in (ROOT / "scenarios").glob("*.yml")))
def test_every_scenario_validates_on_kind_as_lab_yml_passes_it(scenario: str) -> None:
    """Every argument playbooks/lab.yml hands lab_definition, on kind (where every scenario runs)."""
    v = lab(**yaml.safe_load((ROOT / "scenarios" / scenario).read_text()))
    out = validate("kind", v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"],
                   v["lab_workloads"], v.get("lab_expect", {}), v.get("lab_images", {}), v.get("lab_images_load", []),
                   v.get("lab_charts", {}), v["lab_time_scale"], v.get("lab_actions", []),
                   v.get("lab_gateway_api"), v.get("lab_gateways"))
    assert routed(out) and out["pools"]
    assert len(out["actions"]) == len(v.get("lab_actions") or [])


def test_puzzle_controller_two_watches_everything_and_publishes_node_addresses() -> None:
    puzzle = run(lab(**yaml.safe_load((ROOT / "scenarios/puzzle.yml").read_text())))
    two = next(c for c in puzzle["controllers"] if c["namespace"] == "two")
    assert not any(a.startswith(("--publish-service", "--watch-namespace")) for a in two["args"])
    assert any("pathOverride 'two/svc' is ignored" in n for n in two["notes"])


def controllers_with(index: int, **changes: Any) -> list[dict[str, Any]]:
    ctls = copy.deepcopy(DEFAULT_LAB["lab_controllers"])
    ctls[index].update(changes)
    return ctls


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"lab_backend": "docker"}, "lab_backend: expected one of auto, kind, twin, got 'docker'"),
        ({"lab_cluster": {"name": "Ingress_Lab"}}, "lab_cluster.name: expected a lower-case DNS label"),
        ({"lab_cluster": {"name": "lab", "workers": "2"}}, "lab_cluster.workers: expected an integer from 0 to 10"),
        ({"lab_cluster": {"name": "lab", "nodes": 3}}, "lab_cluster: expected only the keys"),
        ({"lab_cluster": {"name": "lab", "kind_config": "x"}}, "lab_cluster.kind_config: expected a mapping"),
        ({"lab_metallb_pools": [{"name": "p", "addresses": ["100.64.0.0/33"]}]}, "lab_metallb_pools"),
        ({"lab_metallb_pools": []}, "lab_metallb_pools"),
        ({"lab_namespaces": ["one", "one"]}, "lab_namespaces: names: expected unique names"),
        ({"lab_namespaces": ["One"]}, "lab_namespaces: names[0]: expected a DNS-1123 label"),
        ({"lab_controllers": controllers_with(1, namespace="four")},
         "lab_controllers[1].namespace: expected one of lab_namespaces"),
        ({"lab_controllers": controllers_with(0, type="haproxy")}, "lab_controllers[0].type"),
        ({"lab_controllers": controllers_with(2, values={"controller": {"scope": {"enabled": "yes"}}})},
         "controller.scope.enabled: expected a boolean, got 'yes'"),
        ({"lab_expect": {"status": {"failing": {"one/test": "("}}}}, "lab_expect.status.failing[one/test]"),
        ({"lab_expect": {"latency": {}}}, "lab_expect: expected only the keys"),
        ({"lab_expect": {"controllers": {"failing": {"two/nginx": "CrashLoopBackOff"}}}},
         "lab_expect.controllers.failing[two/nginx]: expected a controller of lab_controllers (namespace/release), "
         "one of ['one/ingress', 'two/ingress', 'three/ingress']"),
        ({"lab_expect": {"addresses": {"failing": {"two/web": "no address"}}}},
         "lab_expect.addresses.failing[two/web]: expected an Ingress of lab_workloads (namespace/name)"),
        ({"lab_workloads": [{"name": "test", "namespace": "four"}]},
         "lab_workloads[0].namespace: expected one of lab_namespaces"),
        ({"lab_workloads": [{"name": "test", "namespace": "one", "ingress": {"paths": [{"path": "/", "path_type": "Regex"}]}}]},
         "lab_workloads[0].ingress.paths[0].path_type: expected one of Prefix, Exact, ImplementationSpecific"),
    ],
)
def test_bad_fields_are_named(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(LabError) as err:
        run(lab(**overrides))
    assert message in str(err.value)


def test_two_releases_creating_the_same_ingressclass_are_refused() -> None:
    ctls = copy.deepcopy(DEFAULT_LAB["lab_controllers"])
    ctls[1]["values"]["controller"]["ingressClassResource"]["name"] = "nginx-one"
    with pytest.raises(LabError, match=r"lab_controllers\[1\]\.values\.controller\.ingressClassResource\.name: IngressClass 'nginx-one'"):
        run(lab(lab_controllers=ctls))


def test_convenience_options_are_folded_into_the_values_the_lab_installs() -> None:
    """lab.yml installs lab_definition's controllers: `scope: true` must reach the chart values."""
    ctls = [{"namespace": "one", "scope": True, "publish_service": True,
             "values": {"controller": {"admissionWebhooks": {"enabled": False},
                                       "ingressClassResource": {"name": "nginx-one", "controllerValue": "k8s.io/ingress-nginx-one"}}}}]
    (one,) = run(lab(lab_namespaces=["one"], lab_controllers=ctls, lab_workloads=[], lab_expect={}))["controllers"]
    assert one["values"]["controller"]["scope"] == {"enabled": True} and one["values"]["rbac"] == {"scope": True}
    assert "--watch-namespace=$(POD_NAMESPACE)" in one["args"] and one["rbac_scope"] == "namespace"


def test_ingresses_expected_to_get_no_address_are_not_waited_for() -> None:
    scenario = yaml.safe_load((ROOT / "scenarios/missing-publish-service.yml").read_text())
    out = run(lab(**scenario))
    assert out["ingresses"] == ["one/test", "two/test", "three/test"]
    assert out["addressed_ingresses"] == ["one/test", "three/test"]
    assert set(out["expect"]["controllers"]["failing"]) == {"two/ingress"}
    two = next(c for c in out["controllers"] if c["namespace"] == "two")
    assert "--publish-service=two/ingress-nginx-missing" in two["args"]


def test_the_default_expectations_follow_the_labs_own_workloads() -> None:
    """Issue 33: a lab file that defines only its own lab_workloads inherits the inventory's lab_expect, which
    probes each Ingress the lab defines (one/test, two/test, three/test only where the lab has them)."""
    assert run(lab())["expect"]["reachability"] == [{"ingress": ns + "/test", "body_regex": "Welcome to nginx!"}
                                                    for ns in ("one", "two", "three")]
    mine = [{"name": "shop", "namespace": "one", "ingress": {"class": "nginx-one", "host": "shop.example.test"}},
            {"name": "api", "namespace": "two", "app": "echo", "ingress": {"class": "nginx-two"}},
            {"name": "who", "namespace": "three", "image": "traefik/whoami:v1.11.0", "ingress": {"class": "nginx-three"}},
            {"name": "worker", "namespace": "three", "ingress": False}]
    out = run(lab(lab_workloads=mine))
    assert out["expect"]["reachability"] == [{"ingress": "one/shop", "body_regex": "Welcome to nginx!"},
                                             {"ingress": "two/api", "body_regex": '"path":'},
                                             {"ingress": "three/who"}]  # an image the lab does not know: any answer
    # an Ingress expected to get no address is not probed; a list the user writes is taken as written
    silent = run(lab(lab_workloads=mine, lab_expect={"reachability": "each_ingress", "addresses": {"failing": {"one/shop": "."}}}))
    assert [p["ingress"] for p in silent["expect"]["reachability"]] == ["two/api", "three/who"]
    with pytest.raises(LabError, match=r"lab_expect.reachability\[0\].ingress: .*one/test"):
        run(lab(lab_workloads=mine, lab_expect={"reachability": [{"ingress": "one/test"}]}))
    with pytest.raises(LabError, match="lab_expect.reachability: expected a list of probes, or each_ingress"):
        run(lab(lab_expect={"reachability": "every"}))


# --- lab_images ------------------------------------------------------------------------------

MIRROR = "registry.example.com/mirror"


def run_with_images(images: Any, load: Any = None, **overrides: Any) -> dict[str, Any]:
    v = lab(**overrides)
    return validate(v["lab_backend"], v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"],
                    v["lab_controllers"], v["lab_workloads"], v.get("lab_expect"), images, load)


def test_the_default_images_change_nothing_the_chart_would_not_render() -> None:
    out = run_with_images(None)
    assert out["images"]["test_app"] == "nginx:1.29.3" and out["images_load"] == []
    assert all("image" not in (ctl["values"].get("controller") or {}) for ctl in out["controllers"])
    assert {wl["image"] for wl in out["workloads"]} == {"nginx:1.29.3"}


def test_lab_images_reach_the_controllers_and_the_workloads() -> None:
    images = {"ingress_nginx_controller": MIRROR + "/ingress-nginx/controller:v1.15.1", "test_app": MIRROR + "/nginx:1.29.3"}
    out = run_with_images(images, True)
    for ctl in out["controllers"]:
        assert ctl["values"]["controller"]["image"] == {
            "repository": MIRROR + "/ingress-nginx/controller", "tag": "v1.15.1", "digest": ""}
        assert ctl["values"]["controller"]["scope"] == {"enabled": True}  # the lab's own values stay
    assert {wl["image"] for wl in out["workloads"]} == {MIRROR + "/nginx:1.29.3"}
    assert MIRROR + "/nginx:1.29.3" in out["images_load"] and len(out["images_load"]) == 4
    # A workload's own image still wins over the default.
    workloads = copy.deepcopy(DEFAULT_LAB["lab_workloads"])
    workloads[0]["image"] = "busybox:1.37"
    out = run_with_images(images, None, lab_workloads=workloads)
    assert [wl["image"] for wl in out["workloads"]] == ["busybox:1.37", MIRROR + "/nginx:1.29.3", MIRROR + "/nginx:1.29.3"]


def test_a_controller_image_in_two_places_is_an_error() -> None:
    controllers = copy.deepcopy(DEFAULT_LAB["lab_controllers"])
    controllers[1]["values"]["controller"]["image"] = {"tag": "v1.15.0"}
    with pytest.raises(LabError, match=r"lab_controllers\[1\]\.values: controller\.image\.tag: chooses the controller "
                                       r"image while lab_images\.ingress_nginx_controller is"):
        run_with_images({"ingress_nginx_controller": MIRROR + "/controller:v1"}, None, lab_controllers=controllers)
    # With the pinned image the controller's own choice stands.
    out = run_with_images({}, None, lab_controllers=controllers)
    assert out["controllers"][1]["values"]["controller"]["image"] == {"tag": "v1.15.0"}


@pytest.mark.parametrize("images, load, message", [
    ({"test_app": "nginx latest"}, None, "lab_images.test_app: expected an image reference"),
    ({"speaker": "x:1"}, None, "lab_images.speaker: expected one of the keys"),
    ({}, ["nginx:1.29.3", "no spaces allowed"], r"lab_images_load\[1\]: expected an image reference"),
])
def test_bad_images_fail_naming_the_field(images, load, message) -> None:
    with pytest.raises(LabError, match=message.replace("lab_images.", r"lab_images\.")):
        run_with_images(images, load)


def test_lab_charts_are_read_before_anything_changes(tmp_path: Path) -> None:
    chart = tmp_path / "ingress-nginx"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: ingress-nginx\nversion: 4.11.0\n")
    v = lab()
    out = validate(v["lab_backend"], v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"],
                   v["lab_workloads"], charts={"ingress_nginx": str(chart)})
    assert out["charts"]["ingress_nginx"]["version"] == "4.11.0"
    for charts, message in (({"traefik2": str(chart)}, "lab_charts.traefik2: expected a controller type"),
                            ({"ingress_nginx": str(tmp_path / "nope")}, "lab_charts.ingress_nginx: chart_path: expected"),
                            ({"ingress_nginx": 3}, "lab_charts.ingress_nginx: expected the path"),
                            ("x", "lab_charts: expected a mapping")):
        with pytest.raises(LabError, match=message):
            validate(v["lab_backend"], v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"],
                     v["lab_controllers"], v["lab_workloads"], charts=charts)


def test_on_kind_the_time_scale_must_fit_the_controllers_own_flags() -> None:
    v = lab()
    args = (v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"], v["lab_workloads"])
    validate("kind", *args, time_scale=10)
    validate("twin", *args, time_scale=30)  # the twin scales its own clocks
    with pytest.raises(LabError, match=r"lab_time_scale \(lab_controllers\[0\], kind\): time_scale: .*whole seconds"):
        validate("kind", *args, time_scale=30)


def test_two_cluster_wide_releases_with_one_name_are_refused() -> None:
    """Both would create ClusterRole ingress-ingress-nginx; helm refused the second on kind
    ("exists and cannot be imported into the current release")."""
    v = lab()
    wide = {"controller": {"admissionWebhooks": {"enabled": False}, "scope": {"enabled": False}}}
    controllers = [{"namespace": "one", "values": dict(wide, controller=dict(wide["controller"], ingressClassResource={"name": "a"}))},
                   {"namespace": "two", "values": dict(wide, controller=dict(wide["controller"], ingressClassResource={"name": "b"}))}]
    with pytest.raises(LabError, match=r"lab_controllers\[1\]\.release: ClusterRole ingress-ingress-nginx is already created by \[0\]"):
        validate("twin", v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], controllers, v["lab_workloads"])
    controllers[1]["release"] = "edge"
    validate("twin", v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], controllers, v["lab_workloads"])


@pytest.mark.parametrize("method", [None, "helm", "manifest"])
def test_traefik_is_refused_on_the_twin_however_it_is_installed(method: str | None) -> None:
    """The twin runs no real proxy and emulates no Traefik: every Traefik scenario is kind only,
    whether its Traefik comes from helm or from the collection's manifests."""
    v = lab()
    traefik: dict[str, Any] = {"namespace": "traefik", "type": "traefik", "release": "traefik",
                               "values": {"providers": {"kubernetesCRD": {"enabled": False}}}}
    if method:
        traefik["method"] = method
    controllers = v["lab_controllers"] + [traefik]
    namespaces = v["lab_namespaces"] + ["traefik"]
    with pytest.raises(LabError, match=r"lab_controllers\[%d\]\.type: traefik runs on lab_backend kind only" % (len(controllers) - 1)):
        validate("twin", v["lab_cluster"], v["lab_metallb_pools"], namespaces, controllers, v["lab_workloads"])
    validate("kind", v["lab_cluster"], v["lab_metallb_pools"], namespaces, controllers, v["lab_workloads"])
    for path in sorted((ROOT / "scenarios").glob("*.yml")):
        scenario = yaml.safe_load(path.read_text())
        if any(c.get("type") == "traefik" for c in scenario.get("lab_controllers") or []):
            with pytest.raises(LabError, match="runs on lab_backend kind only"):
                validate("twin", scenario.get("lab_cluster", v["lab_cluster"]), scenario.get("lab_metallb_pools", v["lab_metallb_pools"]),
                         scenario["lab_namespaces"], scenario["lab_controllers"], scenario.get("lab_workloads", v["lab_workloads"]),
                         gateway_api=scenario.get("lab_gateway_api"), gateways=scenario.get("lab_gateways"))


# --- refused up front (issue 23: accepted before, refused only once the cluster existed, or never) ---


def pools(*addresses: str) -> list[dict[str, Any]]:
    return [{"name": "lab-pool", "addresses": list(addresses)}]


@pytest.mark.parametrize("overrides, message", [
    # MetalLB would hand out the nodes' own addresses (kind's network as docker usually creates it, the twin's).
    ({"lab_metallb_pools": pools("172.18.0.0/24")},
     "lab_metallb_pools[0].addresses[0]: expected addresses outside the node network 172.18.0.0/16 (the subnet "
     "docker usually gives kind's network, and the twin's; MetalLB would hand out the nodes' addresses), "
     "got '172.18.0.0/24'"),
    ({"lab_metallb_pools": [{"name": "a", "addresses": ["100.64.0.0/24"]},
                            {"name": "b", "addresses": ["100.65.0.0/24", "172.18.255.200-172.18.255.250"]}]},
     "lab_metallb_pools[1].addresses[1]: expected addresses outside the node network 172.18.0.0/16 (the subnet "
     "docker usually gives kind's network, and the twin's; MetalLB would hand out the nodes' addresses), "
     "got '172.18.255.200-172.18.255.250'"),
    # The same check for the pod and service subnets: kind's defaults, or what lab_cluster.kind_config sets.
    ({"lab_metallb_pools": pools("10.244.1.0/24")}, "lab_metallb_pools[0].addresses[0]: expected addresses outside "
                                                    "the pod CIDR 10.244.0.0/16 (kind's default, "
                                                    "or networking.podSubnet of lab_cluster.kind_config; MetalLB "
                                                    "would hand out pod addresses), got '10.244.1.0/24'"),
    ({"lab_metallb_pools": pools("10.96.0.10")}, "lab_metallb_pools[0].addresses[0]: expected addresses outside "
                                                 "the service CIDR 10.96.0.0/16"),
    ({"lab_metallb_pools": pools("10.100.5.0/24"),
      "lab_cluster": {"name": "lab", "kind_config": {"networking": {"podSubnet": "10.100.0.0/16"}}}},
     "lab_metallb_pools[0].addresses[0]: expected addresses outside the pod CIDR 10.100.0.0/16"),
    ({"lab_cluster": {"name": "lab", "kind_config": {"networking": {"serviceSubnet": "10.96.0.0/33"}}}},
     "lab_cluster.kind_config.networking.serviceSubnet: '10.96.0.0/33' is not a valid CIDR"),
])
def test_a_pool_inside_a_cluster_network_is_refused(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(LabError) as err:
        run(lab(**overrides))
    assert message in str(err.value)


def test_pools_outside_the_cluster_networks_are_accepted() -> None:
    assert run(lab(lab_metallb_pools=pools("172.19.255.0/24", "192.168.250.0/24")))["pools"][0]["size"] == 512
    # A kind config that moves the pod subnet frees kind's default one.
    cluster = {"name": "lab", "kind_config": {"networking": {"podSubnet": "10.100.0.0/16"}}}
    assert run(lab(lab_cluster=cluster, lab_metallb_pools=pools("10.244.0.0/24")))["pools"][0]["size"] == 256


@pytest.mark.parametrize("release, message", [
    ("Ingress!", "lab_controllers[0].release: expected a helm release name (lower-case letters, digits, '-' and '.', "
                 "starting and ending with a letter or digit, at most 53 characters), got 'Ingress!'"),
    ("a" * 54, "lab_controllers[0].release: expected a helm release name"),
    ("edge-", "lab_controllers[0].release: expected a helm release name"),
    # helm takes these, but the charts name the controller's Service after them, and a Service
    # name must be a DNS-1035 label: the API server would refuse it once the cluster exists.
    ("1st", "lab_controllers[0].release: expected a release name that makes the controller's Service name a DNS-1035 "
            "label (a lower-case letter, then lower-case letters, digits and '-', at most 63 characters), got '1st' "
            "(Service '1st-ingress-nginx-controller')"),
    ("edge.one", "lab_controllers[0].release: expected a release name that makes the controller's Service name"),
])
def test_a_release_name_helm_or_kubernetes_refuses_is_refused(release: str, message: str) -> None:
    with pytest.raises(LabError) as err:
        run(lab(lab_controllers=controllers_with(0, release=release)))
    assert message in str(err.value)


def test_release_names_helm_and_kubernetes_take_are_accepted() -> None:
    for release in ("edge", "a" * 53, "ingress-2"):
        assert run(lab(lab_controllers=controllers_with(0, release=release)))["controllers"][0]["release"] == release
    # The values name the objects: the release is then only helm's.
    ctls = controllers_with(0, release="1st")
    ctls[0]["values"]["fullnameOverride"] = "edge"
    assert run(lab(lab_controllers=ctls))["controllers"][0]["deployment"] == "one/edge-controller"
    ctls[0]["values"]["fullnameOverride"] = "9edge"
    with pytest.raises(LabError, match=r"lab_controllers\[0\]\.values: expected values that make the controller's "
                                       r"Service name a DNS-1035 label .*, got Service '9edge-controller'"):
        run(lab(lab_controllers=ctls))


INGRESSES = "one of ['one/test', 'two/test', 'three/test']"


@pytest.mark.parametrize("expect, message", [
    ({"status": {"failing": {"nine/none": "change"}}},
     "lab_expect.status.failing[nine/none]: expected an Ingress of lab_workloads (namespace/name), %s, got 'nine/none'"
     % INGRESSES),
    ({"backends": {"failing": {"two/web": "endpoints"}}}, "lab_expect.backends.failing[two/web]: expected an Ingress"),
    ({"addresses": {"failing": {"two/web": "no address"}}}, "lab_expect.addresses.failing[two/web]: expected an Ingress"),
    ({"conflicts": {"expected": [{"ingresses": ["one/test", "nine/none"]}]}},
     "lab_expect.conflicts.expected[0].ingresses[1]: expected an Ingress of lab_workloads (namespace/name), %s, "
     "got 'nine/none'" % INGRESSES),
    ({"reachability": [{"ingress": "one/test"}, {"ingress": "nine/none"}]},
     "lab_expect.reachability[1].ingress: expected an Ingress of lab_workloads (namespace/name), %s, got 'nine/none'"
     % INGRESSES),
    ({"reachability": [{"ingress": ["one/test", "nine/none"]}]}, "lab_expect.reachability[0].ingress[1]: expected an Ingress"),
    ({"reachability": [{"ingress": {"namespace": "nine", "name": "none"}}]},
     "lab_expect.reachability[0].ingress: expected an Ingress of lab_workloads (namespace/name), %s, got 'nine/none'"
     % INGRESSES),
    ({"reachability": [{"ingress": "test"}]},
     "lab_expect.reachability[0].ingress: expected 'namespace/name' or a mapping with namespace and name, got 'test'"),
    ({"reachability": ["one/test"]}, "lab_expect.reachability[0]: expected a probe mapping"),
    ({"diagnose": {"findings": [{"kind": "multiple_writers", "ingress": "^nine/none$"}]}},
     "lab_expect.diagnose.findings[0].ingress: expected a regular expression matching an Ingress of lab_workloads "
     "(namespace/name), %s, got '^nine/none$'" % INGRESSES),
])
def test_an_expectation_naming_an_ingress_the_lab_does_not_define_is_refused(expect: dict[str, Any], message: str) -> None:
    with pytest.raises(LabError) as err:
        run(lab(lab_expect=expect))
    assert message in str(err.value)


def test_expectations_naming_the_labs_own_ingresses_are_accepted() -> None:
    expect = {"status": {"failing": {"two/test": "change"}}, "backends": {"failing": {"three/test": "endpoints"}},
              "conflicts": {"expected": [{"ingresses": ["one/test", "two/test"]}]},
              "reachability": [{"ingress": ["one/test", {"namespace": "two", "name": "test"}]}, {"url": "http://app.example.test/"}],
              "diagnose": {"findings": [{"kind": "multiple_writers", "ingress": "^one/"}, {"kind": "publish_service_missing"}]}}
    assert run(lab(lab_expect=expect))["expect"] == expect


# --- lab_actions: checked with the lab, refused on the twin ---


def run_with_actions(backend: str, actions: Any, **overrides: Any) -> dict[str, Any]:
    v = lab(**overrides)
    return validate(backend, v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"],
                    v["lab_workloads"], v.get("lab_expect"), actions=actions)


def test_lab_actions_are_refused_on_the_twin() -> None:
    actions = [{"at": 5, "rollout": "one/test"}, {"at": 10, "restart_controller": "one"}]
    with pytest.raises(LabError, match=r"^lab_actions: a scenario with timed actions runs on lab_backend kind only; the twin's "
                                       r"emulated controllers have no data plane for an action to disturb \(got 2 action\(s\)\)$"):
        run_with_actions("twin", actions)
    assert run_with_actions("twin", [])["actions"] == [] and run_with_actions("twin", None)["actions"] == []


def test_lab_actions_on_kind_are_returned_in_the_order_they_start() -> None:
    out = run_with_actions("kind", [{"at": 10, "restart_controller": "two", "name": "the on-call restarts it"},
                                    {"at": 5, "freeze_sync": "one"}, {"at": 7, "scale": "three/test", "replicas": 2}])
    assert out["actions"] == [
        {"name": "freeze_sync one", "kind": "freeze_sync", "target": "one", "at": 5.0, "machinery": True},
        {"name": "scale three/test", "kind": "scale", "target": "three/test", "at": 7.0, "machinery": False},
        {"name": "the on-call restarts it", "kind": "restart_controller", "target": "two", "at": 10.0, "machinery": False},
    ]


@pytest.mark.parametrize("actions, message", [
    ([{"at": 0, "rollout": "one/shop"}], r"^lab_actions\[0\]\.rollout: expected a workload of lab_workloads \(namespace/name\), "
                                         r"one of \['one/test', 'two/test', 'three/test'\], got 'one/shop'$"),
    ([{"at": 0, "rollout": "one/test"}, {"at": 1, "restart_controller": "four"}],
     r"^lab_actions\[1\]\.restart_controller: expected a namespace with lab controllers, one of \['one', 'three', 'two'\], got 'four'$"),
    ([{"at": -5, "rollout": "one/test"}], r"^lab_actions\[0\]\.at: expected a number of seconds from 0 to 3600, got -5$"),
    ("one/test", r"^lab_actions: expected a list of actions, got 'one/test'$"),
])
def test_bad_lab_actions_are_lab_errors_naming_the_field(actions: Any, message: str) -> None:
    for backend in ("kind", "twin"):  # checked before the twin refuses them
        with pytest.raises(LabError, match=message):
            run_with_actions(backend, actions)


def test_freezing_a_traefik_controller_is_refused_with_why() -> None:
    v = lab()
    traefik = {"namespace": "traefik", "type": "traefik", "release": "traefik",
               "values": {"providers": {"kubernetesCRD": {"enabled": False}}}}
    with pytest.raises(LabError, match=r"^lab_actions\[0\]\.freeze_sync: a traefik controller cannot be frozen: Traefik's providers "
                                       r"and its router are one process"):
        run_with_actions("kind", [{"at": 0, "freeze_sync": "traefik"}], lab_namespaces=v["lab_namespaces"] + ["traefik"],
                         lab_controllers=v["lab_controllers"] + [traefik])
