from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.lab import workloads as wl
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import TEST_APP_IMAGE


def test_defaults_fill_a_minimal_spec() -> None:
    (w,) = wl.parse_workloads([{"name": "test", "namespace": "one"}])
    assert (w.image, w.replicas, w.port) == (TEST_APP_IMAGE, 1, 80)
    assert w.ingress is not None
    assert [(p.path, p.path_type) for p in w.ingress.paths] == [("/", "Prefix")]
    assert w.ingress.host is None and w.ingress.ingress_class is None


def test_none_values_from_the_argument_spec_count_as_unset() -> None:
    (w,) = wl.parse_workloads([{"name": "a", "namespace": None, "image": None, "replicas": 2, "ingress": None}])
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
    with pytest.raises(wl.WorkloadError) as err:
        wl.parse_workloads([spec])
    assert str(err.value).startswith(field + ": expected")
    assert expected in str(err.value)


def test_duplicate_names_in_a_namespace_are_rejected() -> None:
    with pytest.raises(wl.WorkloadError, match=r"workloads\[1\]\.name: expected a name unique .*workloads\[0\]"):
        wl.parse_workloads([{"name": "a", "namespace": "one"}, {"name": "a", "namespace": "one"}])


def test_same_name_in_two_namespaces_is_fine() -> None:
    assert len(wl.parse_workloads([{"name": "a", "namespace": "one"}, {"name": "a", "namespace": "two"}])) == 2


def test_workloads_must_be_a_list() -> None:
    with pytest.raises(wl.WorkloadError, match="^workloads: expected a list"):
        wl.parse_workloads({"name": "a"})


def test_render_links_deployment_service_and_ingress() -> None:
    (w,) = wl.parse_workloads([{
        "name": "login", "namespace": "team-a", "replicas": 2,
        "ingress": {"class": "nginx", "host": "*.example.test", "paths": ["/login", {"path": "/x", "path_type": "Exact"}],
                    "annotations": {"kubernetes.io/ingress.class": "nginx"}},
    }])
    deployment, service, ingress = wl.render(w)
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
    a, b = wl.parse_workloads([{"name": "a", "ingress": False}, {"name": "b"}])
    assert [o["kind"] for o in wl.render(a)] == ["Deployment", "Service"]
    ingress = wl.render(b)[2]
    assert "ingressClassName" not in ingress["spec"] and "host" not in ingress["spec"]["rules"][0]


def test_every_rendered_object_validates_against_the_pinned_schema() -> None:
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all

    specs = [
        {"name": "test", "namespace": "one", "ingress": {"annotations": {"kubernetes.io/ingress.class": "nginx"}}},
        {"name": "login", "namespace": "team-a", "replicas": 0, "port": 8080, "labels": {"team": "a"},
         "ingress": {"class": "nginx", "host": "*.example.test", "paths": ["/login", {"path": "/x", "path_type": "Exact"}]}},
        {"name": "bare", "ingress": False},
    ]
    validate_all([obj for w in wl.parse_workloads(specs) for obj in wl.render(w)])


def test_rendered_namespaces_validate_against_the_pinned_schema() -> None:
    from ansible_collections.kindlab.ingress.tests.unit.schema import validate_all
    from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

    client = FakeClient([])
    wl.ensure_namespaces(client, ["one", "two"], {"team": "a"}, "present", False)
    validate_all([obj for (kind, _ns, _name), obj in client.objects.items()])


def test_workloads_without_image_run_the_default_image() -> None:
    a, b = wl.parse_workloads([{"name": "a", "namespace": "one"}, {"name": "b", "namespace": "one", "image": "busybox:1.37"}],
                              default_image="registry.example.com/mirror/nginx:1.29.3")
    assert (a.image, b.image) == ("registry.example.com/mirror/nginx:1.29.3", "busybox:1.37")
    assert wl.render(a)[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/mirror/nginx:1.29.3"
