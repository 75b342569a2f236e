from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import ensure_namespaces, tls_secrets
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import WORKLOAD_KEYS, WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import render
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.summary import default_probes, summary
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import TEST_APP_IMAGE


def test_defaults_fill_a_minimal_spec() -> None:
    (w,) = parse_workloads([{"name": "test", "namespace": "one"}])
    assert (w.image, w.replicas, w.port) == (TEST_APP_IMAGE, 1, 80)
    assert w.ingress is not None
    assert [(p.path, p.path_type) for p in w.ingress.paths] == [("/", "Prefix")]
    assert w.ingress.host is None and w.ingress.ingress_class is None


def test_none_values_from_the_argument_spec_count_as_unset() -> None:
    (w,) = parse_workloads([{"name": "a", "namespace": None, "image": None, "replicas": 2, "ingress": None}])
    assert w.namespace == "default" and w.image == TEST_APP_IMAGE and w.ingress is not None


@pytest.mark.parametrize(
    "spec, field, expected",
    [
        ({"name": "Bad_Name"}, "workloads[0].name", "DNS-1123 label"),
        ({"name": "a", "namespace": "x" * 64}, "workloads[0].namespace", "DNS-1123 label"),
        ({"name": "a", "replicas": -1}, "workloads[0].replicas", "integer from 0 to 100"),
        ({"name": "a", "replicas": True}, "workloads[0].replicas", "integer from 0 to 100"),
        ({"name": "a", "port": 70000}, "workloads[0].port", "integer from 1 to 65535"),
        ({"name": "a", "image": "two words"}, "workloads[0].image", "container image"),
        ({"name": "a", "colour": "red"}, "workloads[0]", "only the keys"),
        ({"name": "a", "ingress": "yes"}, "workloads[0].ingress", "a mapping, true or false"),
        ({"name": "a", "ingress": {"host": "10.0.0.1:80"}}, "workloads[0].ingress.host", "DNS name"),
        ({"name": "a", "ingress": {"host": "a.*.example.com"}}, "workloads[0].ingress.host", "DNS name"),
        ({"name": "a", "ingress": {"paths": []}}, "workloads[0].ingress.paths", "non-empty list"),
        ({"name": "a", "ingress": {"paths": ["login"]}}, "workloads[0].ingress.paths[0].path", "absolute path"),
        ({"name": "a", "ingress": {"paths": [{"path": "/", "path_type": "Regex"}]}},
         "workloads[0].ingress.paths[0].path_type", "one of Prefix, Exact, ImplementationSpecific"),
        ({"name": "a", "ingress": {"class": "Nginx!"}}, "workloads[0].ingress.class", "IngressClass name"),
        ({"name": "a", "ingress": {"annotations": {"x": ["list"]}}}, "workloads[0].ingress.annotations.x", "a string"),
        ({"name": "a", "labels": ["x"]}, "workloads[0].labels", "mapping of string keys"),
    ],
)
def test_invalid_specs_name_the_field(spec: dict, field: str, expected: str) -> None:
    with pytest.raises(WorkloadError) as err:
        parse_workloads([spec])
    assert str(err.value).startswith(field + ": expected")
    assert expected in str(err.value)


def test_duplicate_names_in_a_namespace_are_rejected() -> None:
    with pytest.raises(WorkloadError, match=r"workloads\[1\]\.name: expected a name unique .*workloads\[0\]"):
        parse_workloads([{"name": "a", "namespace": "one"}, {"name": "a", "namespace": "one"}])


def test_same_name_in_two_namespaces_is_fine() -> None:
    assert len(parse_workloads([{"name": "a", "namespace": "one"}, {"name": "a", "namespace": "two"}])) == 2


def test_workloads_must_be_a_list() -> None:
    with pytest.raises(WorkloadError, match="^workloads: expected a list"):
        parse_workloads({"name": "a"})


def test_render_links_deployment_service_and_ingress() -> None:
    (w,) = parse_workloads([{
        "name": "login", "namespace": "team-a", "replicas": 2,
        "ingress": {"class": "nginx", "host": "*.example.test", "paths": ["/login", {"path": "/x", "path_type": "Exact"}],
                    "annotations": {"kubernetes.io/ingress.class": "nginx"}},
    }])
    deployment, service, ingress = render(w)
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert all(pod_labels[k] == v for k, v in service["spec"]["selector"].items())
    assert deployment["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert deployment["spec"]["replicas"] == 2
    rule = ingress["spec"]["rules"][0]
    assert rule["host"] == "*.example.test"
    assert [(p["path"], p["pathType"]) for p in rule["http"]["paths"]] == [("/login", "Prefix"), ("/x", "Exact")]
    assert rule["http"]["paths"][0]["backend"]["service"] == {"name": "login", "port": {"name": "http"}}
    assert service["spec"]["ports"][0]["name"] == "http"
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["metadata"]["annotations"] == {"kubernetes.io/ingress.class": "nginx"}


def test_ingress_false_renders_no_ingress_and_no_class_renders_no_class_field() -> None:
    a, b = parse_workloads([{"name": "a", "ingress": False}, {"name": "b"}])
    assert [o["kind"] for o in render(a)] == ["Deployment", "Service"]
    ingress = render(b)[2]
    assert "ingressClassName" not in ingress["spec"] and "host" not in ingress["spec"]["rules"][0]


def test_every_rendered_object_validates_against_the_pinned_schema() -> None:
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all

    specs = [
        {"name": "test", "namespace": "one", "ingress": {"annotations": {"kubernetes.io/ingress.class": "nginx"}}},
        {"name": "login", "namespace": "team-a", "replicas": 0, "port": 8080, "labels": {"team": "a"},
         "ingress": {"class": "nginx", "host": "*.example.test", "paths": ["/login", {"path": "/x", "path_type": "Exact"}]}},
        {"name": "bare", "ingress": False},
    ]
    validate_all([obj for w in parse_workloads(specs) for obj in render(w)])


def test_rendered_namespaces_validate_against_the_pinned_schema() -> None:
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all
    from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

    client = FakeClient([])
    ensure_namespaces(client, ["one", "two"], {"team": "a"}, "present", False)
    validate_all([obj for (kind, _ns, _name), obj in client.objects.items()])


def test_workloads_without_image_run_the_default_image() -> None:
    a, b = parse_workloads([{"name": "a", "namespace": "one"}, {"name": "b", "namespace": "one", "image": "busybox:1.37"}],
                           default_image="registry.example.com/mirror/nginx:1.29.3")
    assert (a.image, b.image) == ("registry.example.com/mirror/nginx:1.29.3", "busybox:1.37")
    assert render(a)[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/mirror/nginx:1.29.3"


def container_and_pod(spec: dict) -> tuple[dict, dict]:
    (w,) = parse_workloads([dict({"name": "shop", "namespace": "one"}, **spec)])
    pod_spec = render(w)[0]["spec"]["template"]["spec"]
    return pod_spec["containers"][0], pod_spec


def test_by_default_the_app_has_a_readiness_probe_and_no_prestop_or_grace_period() -> None:
    container, pod_spec = container_and_pod({})
    assert container["readinessProbe"] == {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 2}
    assert "lifecycle" not in container and "terminationGracePeriodSeconds" not in pod_spec
    # None from the argument spec's suboptions is unset, as is rollout: null
    assert container_and_pod({"rollout": {"readiness_probe": None, "pre_stop_sleep": None, "grace_period": None}})[0] == container
    assert container_and_pod({"rollout": None})[0] == container


def test_rollout_options_are_rendered_into_the_pod_spec() -> None:
    container, pod_spec = container_and_pod({"rollout": {"readiness_probe": False}})
    assert "readinessProbe" not in container and "lifecycle" not in container
    container, pod_spec = container_and_pod({"rollout": {"pre_stop_sleep": 15, "grace_period": 30}})
    assert container["readinessProbe"]["httpGet"] == {"path": "/", "port": "http"}
    # an exec of the image's sleep (the preStop sleep action needs Kubernetes 1.30)
    assert container["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "15"]}}}
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    container, pod_spec = container_and_pod({"rollout": {"grace_period": 1}})
    assert pod_spec["terminationGracePeriodSeconds"] == 1 and "lifecycle" not in container
    container, pod_spec = container_and_pod({"rollout": {"pre_stop_sleep": 5}})
    assert container["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "5"] and "terminationGracePeriodSeconds" not in pod_spec


def test_the_summary_says_how_the_app_rolls_out() -> None:
    (w,) = parse_workloads([{"name": "shop", "rollout": {"readiness_probe": False, "pre_stop_sleep": 10, "grace_period": 20}}])
    assert summary(w)["rollout"] == {"readiness_probe": False, "pre_stop_sleep": 10, "grace_period": 20}
    (w,) = parse_workloads([{"name": "shop"}])
    assert summary(w)["rollout"] == {"readiness_probe": True, "pre_stop_sleep": 0, "grace_period": None}


@pytest.mark.parametrize("rollout, message", [
    ({"pre_stop_sleep": 10, "grace_period": 10},
     r"^workloads\[0\]\.rollout\.grace_period: expected more seconds than pre_stop_sleep \(10\), got 10$"),
    ({"pre_stop_sleep": 10, "grace_period": 5}, r"^workloads\[0\]\.rollout\.grace_period: expected more seconds than pre_stop_sleep \(10\), got 5$"),
    # the documented rule holds without a preStop too: the grace period must exceed pre_stop_sleep (0)
    ({"pre_stop_sleep": 0, "grace_period": 0}, r"^workloads\[0\]\.rollout\.grace_period: expected more seconds than pre_stop_sleep \(0\), got 0$"),
    ({"readiness_probe": "no"}, r"^workloads\[0\]\.rollout\.readiness_probe: expected true or false, got 'no'$"),
    ({"pre_stop_sleep": 601}, r"^workloads\[0\]\.rollout\.pre_stop_sleep: "),
    ({"pre_stop_sleep": -1}, r"^workloads\[0\]\.rollout\.pre_stop_sleep: "),
    ({"grace_period": 3601}, r"^workloads\[0\]\.rollout\.grace_period: "),
    ({"prestop": 5}, r"^workloads\[0\]\.rollout: expected only the keys grace_period, pre_stop_sleep, readiness_probe, got \['prestop'\]$"),
    ("graceful", r"^workloads\[0\]\.rollout: expected a mapping with readiness_probe, pre_stop_sleep, grace_period, got 'graceful'$"),
])
def test_bad_rollout_options_are_refused_naming_the_field(rollout: object, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        parse_workloads([{"name": "shop", "rollout": rollout}])


def test_rendered_rollout_options_validate_against_the_pinned_schema() -> None:
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all

    specs = [{"name": "a", "rollout": {"readiness_probe": False, "pre_stop_sleep": 20, "grace_period": 45}},
             {"name": "b", "rollout": {"grace_period": 1}}]
    validate_all([obj for w in parse_workloads(specs) for obj in render(w)])


def test_the_lab_workload_module_takes_the_rollout_suboptions() -> None:
    from ansible_collections.kindlab.ingress.plugins.modules import lab_workload

    doc = __import__("yaml").safe_load(lab_workload.DOCUMENTATION)
    suboptions = doc["options"]["workloads"]["suboptions"]["rollout"]["suboptions"]
    assert {k: (v["type"], v.get("default")) for k, v in suboptions.items()} == {
        "readiness_probe": ("bool", True), "pre_stop_sleep": ("int", 0), "grace_period": ("int", None)}


def test_echo_app_runs_the_conformance_echo_server_and_names_itself() -> None:
    [w] = parse_workloads([{"name": "api", "namespace": "shop", "app": "echo"}], echo_image="kindlab/echo-basic:v1.6.1")
    deployment = render(w)[0]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "kindlab/echo-basic:v1.6.1"
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
    assert env["HTTP_PORT"] == "80" and env["SERVICE_NAME"] == "api"
    assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    with pytest.raises(WorkloadError, match=r"workloads\[0\]\.app: expected one of web, echo"):
        parse_workloads([{"name": "api", "app": "whoami"}])


def test_tls_needs_a_plain_host_and_renders_spec_tls() -> None:
    [w] = parse_workloads([{"name": "shop", "namespace": "shop", "ingress": {"host": "shop.example.test", "tls": True}}])
    ingress = render(w)[-1]
    assert ingress["spec"]["tls"] == [{"hosts": ["shop.example.test"], "secretName": "shop-tls"}]
    assert tls_secrets([w]) == [("shop", "shop-tls", ["shop.example.test"])]
    for host in (None, "*.example.test"):
        with pytest.raises(WorkloadError, match=r"workloads\[0\]\.ingress\.tls: expected a host without a wildcard"):
            parse_workloads([{"name": "shop", "ingress": {"host": host, "tls": True}}])


def test_the_module_documents_and_accepts_every_key_of_a_workload() -> None:
    import yaml

    from ansible_collections.kindlab.ingress.plugins.modules import lab_workload

    documented = yaml.safe_load(lab_workload.DOCUMENTATION)["options"]["workloads"]["suboptions"]
    assert set(documented) == WORKLOAD_KEYS
    source = open(lab_workload.__file__, encoding="utf-8").read()
    spec = source[source.index("workloads={"):source.index('"rollout": {"type": "dict"')]
    assert {k for k in WORKLOAD_KEYS if k != "rollout"} <= {k for k in WORKLOAD_KEYS if '"%s": {' % k in spec}


def test_a_whole_ingress_names_other_services_and_their_ports() -> None:
    workloads = parse_workloads([
        {"name": "api", "namespace": "shop", "app": "echo", "ports": [{"name": "web", "port": 8080}], "ingress": {
            "name": "shop", "rules": [{"host": "a.test", "paths": [
                {"path": "/api", "port": "web"}, {"path": "/", "service": "web", "port": 9000}]}],
            "default_backend": {"service": "web"}, "tls": [{"hosts": ["a.test", "b.test"]}]}},
        {"name": "web", "namespace": "shop", "ports": [{"name": "http", "port": 80}, {"name": "admin", "port": 9000}],
         "ingress": [{"name": "docs", "host": "a.test", "paths": ["/docs"]}, {"name": "more", "host": "b.test"}]},
    ])
    api, web = workloads
    [svc] = [o for o in render(api, workloads) if o["kind"] == "Service"]
    assert svc["spec"]["ports"] == [{"name": "web", "port": 8080, "targetPort": "http", "protocol": "TCP"}]
    [ing] = [o for o in render(api, workloads) if o["kind"] == "Ingress"]
    paths = ing["spec"]["rules"][0]["http"]["paths"]
    assert [p["backend"]["service"] for p in paths] == [{"name": "api", "port": {"name": "web"}},
                                                        {"name": "web", "port": {"number": 9000}}]
    # a backend naming another workload's Service without a port takes that Service's first port, by name
    assert ing["spec"]["defaultBackend"] == {"service": {"name": "web", "port": {"name": "http"}}}
    assert ing["spec"]["tls"] == [{"hosts": ["a.test", "b.test"], "secretName": "shop-tls"}]
    assert tls_secrets(workloads) == [("shop", "shop-tls", ["a.test", "b.test"])]
    assert [o["metadata"]["name"] for o in render(web, workloads) if o["kind"] == "Ingress"] == ["docs", "more"]
    assert [p["ingress"] for p in default_probes(workloads, TEST_APP_IMAGE)] == ["shop/shop", "shop/docs", "shop/more"]


@pytest.mark.parametrize("spec, message", [
    ({"name": "a", "ingress": {"rules": [{"paths": [{"path": "/", "service": "nope"}]}]}},
     r"workloads\[0\].ingress.rules\[0\].paths\[0\].service: expected the name of a workload in namespace default \(its Service\), got 'nope'"),
    ({"name": "a", "ingress": {"rules": [{"paths": [{"path": "/", "port": 8080}]}]}},
     r"workloads\[0\].ingress.rules\[0\].paths\[0\].port: expected a port of Service a \(http\), got 8080"),
    ({"name": "a", "ports": [{"port": 80}, {"port": 81}]},
     r"workloads\[0\].ports\[0\].name: expected a name \(a Service with several ports names each\)"),
    ({"name": "a", "ingress": [{"host": "a.test"}]}, r"workloads\[0\].ingress\[0\].name: expected a name"),
    ({"name": "a", "ingress": {"host": "a.test", "rules": []}}, r"workloads\[0\].ingress.rules: expected rules alone"),
    ({"name": "a", "ingress": {"rules": [{"host": "a.test", "paths": ["/"]}], "tls": [{"hosts": []}]}},
     r"workloads\[0\].ingress.tls\[0\].hosts: expected a non-empty list"),
])
def test_a_whole_ingress_that_cannot_be_built_names_its_field(spec: dict, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        parse_workloads([spec])
