# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import copy

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import chart as ng
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import config as ng_config
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import manifests as ng_manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import values as ng_values
from ansible_collections.kindlab.ingress.tests.unit.schema import SchemaError, validate_all, validate_k8s

# The puzzle's values files (networkop/ingress-puzzle config/v1.yml, v2.yml, v3.yml).
SEED_ONE = {"controller": {"scope": {"enabled": True}, "admissionWebhooks": {"enabled": False}}, "rbac": {"scope": {"enabled": True}}}
SEED_TWO = {
    "controller": {
        "publishService": {"enabled": False, "pathOverride": "two/svc"},
        "scope": {"enabled": False},
        "admissionWebhooks": {"enabled": False},
    }
}
SEED_THREE = copy.deepcopy(SEED_ONE)
NO_HOOKS = {"controller": {"admissionWebhooks": {"enabled": False}}}

CC = "--controller-class=k8s.io/ingress-nginx"
EID = "--election-id=ingress-ingress-nginx-leader"
CM = "--configmap=$(POD_NAMESPACE)/ingress-ingress-nginx-controller"
PUB = "--publish-service=$(POD_NAMESPACE)/ingress-ingress-nginx-controller"
HOOKS = [
    "--validating-webhook=:8443",
    "--validating-webhook-certificate=/usr/local/certificates/cert",
    "--validating-webhook-key=/usr/local/certificates/key",
]
BIN = "/nginx-ingress-controller"


def cfg(values, release="ingress", namespace="one"):
    return ng.effective_config(values, release, namespace)


def _deep(a, b):
    out = copy.deepcopy(a)
    for key, value in b.items():
        out[key] = _deep(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else copy.deepcopy(value)
    return out


def merged(*parts):
    """Plain deep merge for building test values (keeps nulls, unlike helm's coalescing)."""
    out = {}
    for part in parts:
        out = _deep(out, part)
    return out


# values → (args, rbac scope, watch namespace, publish source, publish service)
TABLE = [
    pytest.param(
        SEED_ONE, "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM, "--watch-namespace=$(POD_NAMESPACE)"],
        "namespace", "one", "service", "one/ingress-ingress-nginx-controller", id="seed-one",
    ),
    pytest.param(
        SEED_TWO, "two",
        [BIN, EID, CC, "--ingress-class=nginx", CM],
        "cluster", None, "node-addresses", None, id="seed-two",
    ),
    pytest.param(
        SEED_THREE, "three",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM, "--watch-namespace=$(POD_NAMESPACE)"],
        "namespace", "three", "service", "three/ingress-ingress-nginx-controller", id="seed-three",
    ),
    pytest.param(
        {}, "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM] + HOOKS,
        "cluster", None, "service", "one/ingress-ingress-nginx-controller", id="chart-defaults",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"publishService": {"pathOverride": "other/lb"}}}), "one",
        [BIN, "--publish-service=other/lb", EID, CC, "--ingress-class=nginx", CM],
        "cluster", None, "service", "other/lb", id="path-override-honoured-when-enabled",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"service": {"enabled": False}}}), "one",
        [BIN, EID, CC, "--ingress-class=nginx", CM],
        "cluster", None, "node-addresses", None, id="service-disabled-no-publish",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"service": {"external": {"enabled": False}, "internal": {"enabled": True}}}}), "one",
        [BIN, PUB + "-internal", EID, CC, "--ingress-class=nginx", CM],
        "cluster", None, "service", "one/ingress-ingress-nginx-controller-internal", id="internal-service",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"scope": {"enabled": True, "namespace": "apps"}}}), "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM, "--watch-namespace=apps"],
        "cluster", "apps", "service", "one/ingress-ingress-nginx-controller", id="scope-other-namespace",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"scope": {"namespaceSelector": "team=a"}}}), "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM, "--watch-namespace-selector=team=a"],
        "cluster", None, "service", "one/ingress-ingress-nginx-controller", id="namespace-selector",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"publishService": {"enabled": False}, "reportNodeInternalIp": True, "hostNetwork": True}}), "one",
        [BIN, EID, CC, "--ingress-class=nginx", CM, "--report-node-internal-ip-address=true"],
        "cluster", None, "node-addresses", None, id="internal-ip-with-host-network",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"ingressClass": "", "watchIngressWithoutClass": True, "ingressClassByName": True,
                                         "electionID": "lead", "ingressClassResource": {"controllerValue": "example.com/x"}}}), "one",
        [BIN, PUB, "--election-id=lead", "--controller-class=example.com/x", CM, "--ingress-class-by-name=true",
         "--watch-ingress-without-class=true"],
        "cluster", None, "service", "one/ingress-ingress-nginx-controller", id="class-options",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"extraArgs": {"v": 2, "publish-status-address": "1.2.3.4, 5.6.7.8", "enable-ssl-passthrough": "",
                                                       "a-flag": False, "b-null": None, "huge": 1000000}}}), "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM, "--a-flag=false", "--b-null=", "--enable-ssl-passthrough",
         "--huge=1e+06", "--publish-status-address=1.2.3.4, 5.6.7.8", "--v=2"],
        "cluster", None, "status-address", None, id="extra-args-sorted-and-rendered",
    ),
    pytest.param(
        merged(SEED_TWO, {"controller": {"extraArgs": {"watch-namespace": "two"}}}), "two",
        [BIN, EID, CC, "--ingress-class=nginx", CM, "--watch-namespace=two"],
        "cluster", "two", "node-addresses", None, id="extra-args-override-scope",
    ),
    pytest.param(
        merged(NO_HOOKS, {"rbac": {"create": False}}), "one",
        [BIN, PUB, EID, CC, "--ingress-class=nginx", CM],
        "none", None, "service", "one/ingress-ingress-nginx-controller", id="rbac-create-false",
    ),
    pytest.param(
        merged(NO_HOOKS, {"controller": {"metrics": {"enabled": True}, "healthCheckPath": "/hz", "enableAnnotationValidations": False,
                                         "disableLeaderElection": True, "electionTTL": "30s"}}), "one",
        [BIN, "--enable-annotation-validation=false", PUB, EID, CC, "--ingress-class=nginx", CM, "--health-check-path=/hz",
         "--enable-metrics=true", "--disable-leader-election=true", "--election-ttl=30s"],
        "cluster", None, "service", "one/ingress-ingress-nginx-controller", id="misc-flags-order",
    ),
]


@pytest.mark.parametrize("values,namespace,args,rbac,watch,source,service", TABLE)
def test_values_to_args_table(values, namespace, args, rbac, watch, source, service):
    c = cfg(values, namespace=namespace)
    assert c.args == args
    assert c.rbac.scope == rbac
    assert c.watch_namespace == watch
    assert c.publish.source == source
    assert c.publish.service == service


def test_seed_two_is_the_culprit():
    c = cfg(SEED_TWO, namespace="two")
    assert c.rbac.can_list_ingress_classes is True
    assert c.class_annotation == "nginx"
    notes = "\n".join(c.notes)
    assert "pathOverride 'two/svc' is ignored" in notes
    assert "watches every namespace" in notes
    assert "nodes running Ready controller pods" in notes


def test_seed_one_namespace_rbac_ignores_class_name():
    c = cfg(SEED_ONE)
    assert c.rbac.kinds == ("Role", "RoleBinding")
    assert c.rbac.can_list_ingress_classes is False
    assert c.summary()["ingress_class"]["class_name_honoured"] is False
    notes = "\n".join(c.notes)
    assert "rbac.scope is a map" in notes
    assert "ignores spec.ingressClassName" in notes


def test_rbac_scope_map_with_enabled_false_is_still_true():
    c = cfg({"controller": {"scope": {"enabled": True}}, "rbac": {"scope": {"enabled": False}}})
    assert c.rbac.scope == "namespace"
    assert any("even with enabled=false" in n for n in c.notes)


def test_rbac_scope_without_controller_scope_is_refused():
    with pytest.raises(ng_values.ValuesError, match=r"rbac.scope: the chart refuses .*should be equal"):
        cfg({"rbac": {"scope": True}})


def test_cluster_rbac_with_scoped_controller_is_allowed_and_noted():
    c = cfg({"controller": {"scope": {"enabled": True}}, "rbac": {"scope": False}})
    assert c.rbac.scope == "cluster"
    assert any("still creates a ClusterRole" in n for n in c.notes)


def test_namespace_rbac_without_publish_service_gets_no_node_addresses():
    c = cfg(merged(SEED_ONE, {"controller": {"publishService": {"enabled": False}}}))
    assert c.publish.source == "node-addresses"
    assert any("cannot get Nodes" in n for n in c.notes)


def test_scope_namespace_elsewhere_with_namespace_rbac_is_fatal_at_start():
    c = cfg({"controller": {"scope": {"enabled": True, "namespace": "apps"}}, "rbac": {"scope": True}})
    assert c.watch_namespace == "apps"
    assert any("exits at start-up" in n for n in c.notes)


@pytest.mark.parametrize(
    "values,message",
    [
        ({"controller": {"scope": {"enabled": "yes"}}}, "controller.scope.enabled: expected a boolean, got 'yes'"),
        ({"controller": {"replicaCount": "2"}}, "controller.replicaCount: expected an integer, got '2'"),
        ({"controller": {"replicaCount": True}}, "controller.replicaCount: expected an integer, got True"),
        ({"controller": {"scope": True}}, "controller.scope: expected a mapping, got True"),
        ({"controller": {"extraArgs": {"x": [1]}}}, "controller.extraArgs: expected a mapping of scalars"),
        ({"controller": {"image": {"tag": 1.15}}}, "controller.image.tag: expected a string, got 1.15"),
        ({"rbac": {"scope": "true"}}, "rbac.scope: expected a boolean or a mapping, got 'true'"),
        ({"controller": {"service": {"type": "Loadbalancer"}}}, "controller.service.type: expected one of LoadBalancer"),
        ({"controller": {"extraArgs": {"update-status": False}}}, "controller.extraArgs.update-status: .*quote it"),
        ("not a map", "values: expected a mapping"),
    ],
)
def test_wrong_types_name_the_key(values, message):
    with pytest.raises(ng_values.ValuesError, match=message.replace("(", r"\(").replace(")", r"\)") if ".*" not in message else message):
        cfg(values)


def test_null_removes_chart_default():
    c = cfg(merged(NO_HOOKS, {"controller": {"ingressClass": None}}))
    assert not any(a.startswith("--ingress-class=") for a in c.args)
    assert c.class_annotation == "nginx"  # the binary's own default
    assert any("binary still uses 'nginx'" in n for n in c.notes)


def test_unknown_and_unmodelled_keys_pass_through():
    c = cfg({"foo": 1, "controller": {"admissionWebhooks": {"enabled": False}, "tolerations": []}})
    assert c.not_modelled == ["foo", "controller.tolerations"]
    assert any(n.startswith("foo: not a chart 4.15.1 value") for n in c.notes)
    assert c.user_values["foo"] == 1


@pytest.mark.parametrize(
    "release,override,fullname",
    [
        ("ingress", {}, "ingress-ingress-nginx"),
        ("ingress-nginx", {}, "ingress-nginx"),
        ("my-ingress-nginx-prod", {}, "my-ingress-nginx-prod"),
        ("x", {"nameOverride": "nx"}, "x-nx"),
        ("x", {"fullnameOverride": "edge-"}, "edge"),
        ("a" * 70, {}, "a" * 63),
    ],
)
def test_fullname_follows_helpers(release, override, fullname):
    c = cfg(merged(NO_HOOKS, override), release=release)
    assert c.fullname == fullname
    assert c.election_id == ng_values.go_default(fullname + "-leader", None)
    assert c.controller_fullname == ng_values.trunc63(fullname + "-controller")


def test_service_account_and_namespace_override():
    c = cfg(merged(NO_HOOKS, {"serviceAccount": {"create": False}, "namespaceOverride": "edge"}))
    assert c.service_account == "default"
    assert c.namespace == "edge"
    assert c.deployment == ("edge", "ingress-ingress-nginx-controller")


@pytest.mark.parametrize(
    "image,ref",
    [
        ({}, "registry.k8s.io/ingress-nginx/controller:v1.15.1@" + ng_values.INGRESS_NGINX_CONTROLLER_DIGEST),
        ({"digest": ""}, "registry.k8s.io/ingress-nginx/controller:v1.15.1"),
        ({"registry": "mirror.local", "digest": None, "tag": "v1.15.0"}, "mirror.local/ingress-nginx/controller:v1.15.0"),
        ({"repository": "me/ctl", "digest": ""}, "me/ctl:v1.15.1"),
        ({"chroot": True, "digestChroot": "sha256:abc"}, "registry.k8s.io/ingress-nginx/controller-chroot:v1.15.1@sha256:abc"),
    ],
)
def test_image_ref(image, ref):
    assert cfg(merged(NO_HOOKS, {"controller": {"image": image}})).image == ref


def test_ingress_class_resource_and_notes():
    c = cfg(merged(NO_HOOKS, {"controller": {"ingressClassResource": {"name": "nginx-one", "controllerValue": "k8s.io/ingress-nginx-one", "default": True}}}))
    assert c.ingress_class == ng_config.IngressClassInfo("nginx-one", "k8s.io/ingress-nginx-one", True)
    assert c.controller_class == "k8s.io/ingress-nginx-one"
    assert c.class_annotation == "nginx"
    assert any("annotation kubernetes.io/ingress.class: nginx (not kubernetes.io/ingress.class: nginx-one)" in n for n in c.notes)
    assert not any("second release" in n for n in c.notes)
    assert any("second release with the default name collides" in n for n in cfg(NO_HOOKS).notes)
    off = cfg(merged(NO_HOOKS, {"controller": {"ingressClassResource": {"enabled": False}}}))
    assert off.ingress_class is None
    assert "--controller-class=k8s.io/ingress-nginx" in off.args  # still rendered


def test_report_node_internal_ip_needs_host_network():
    c = cfg(merged(NO_HOOKS, {"controller": {"reportNodeInternalIp": True, "publishService": {"enabled": False}}}))
    assert not any("report-node-internal" in a for a in c.args)
    assert c.publish.node_address_type.startswith("ExternalIP")
    assert any("ignored without hostNetwork" in n for n in c.notes)


def test_conflicting_publish_flags_noted():
    c = cfg(merged(NO_HOOKS, {"controller": {"extraArgs": {"publish-status-address": "1.2.3.4"}}}))
    assert c.publish.addresses == ("1.2.3.4",)
    assert any("mutually exclusive" in n for n in c.notes)


def test_update_status_string_false_drops_role_grant():
    c = cfg(merged(SEED_ONE, {"controller": {"extraArgs": {"update-status": "false"}}}))
    assert c.update_status is False
    assert c.rbac.can_update_ingress_status is False
    role = next(o for o in ng_manifests.render_manifests(c) if o["kind"] == "Role")
    assert not any("ingresses/status" in r["resources"] for r in role["rules"])


@pytest.mark.parametrize("number,text", [(1, "1"), (2.5, "2.5"), (123456, "123456"), (1000000, "1e+06"), (1234567, "1.234567e+06"),
                                         (0.00001, "1e-05"), (0, "0"), (-3, "-3")])
def test_go_number(number, text):
    assert ng_values.go_number(number) == text


def test_extra_args_note_override():
    c = cfg(merged(NO_HOOKS, {"controller": {"extraArgs": {"election-id": "x", "b": None}}}))
    assert c.flags["election-id"] == "x"
    assert any("extraArgs.election-id overrides the chart's --election-id=ingress-ingress-nginx-leader" in n for n in c.notes)
    assert any("extraArgs.b is null" in n for n in c.notes)


# ---------------------------------------------------------------- manifests

RENDER_CASES = [
    pytest.param(SEED_ONE, id="seed-one"),
    pytest.param(SEED_TWO, id="seed-two"),
    pytest.param(SEED_THREE, id="seed-three"),
    pytest.param(merged(NO_HOOKS, {"controller": {"service": {"type": "NodePort", "annotations": {"x": "y"}},
                                                  "updateStrategy": {"type": "Recreate"},
                                                  "config": {"use-forwarded-headers": True, "n": 3}, "allowSnippetAnnotations": True,
                                                  "ingressClassResource": {"default": True}, "metrics": {"enabled": True},
                                                  "podAnnotations": {"a": 1}}}), id="variety"),
    pytest.param(merged(NO_HOOKS, {"controller": {"scope": {"enabled": True, "namespace": "apps"}, "replicaCount": 2, "hostNetwork": True},
                                   "serviceAccount": {"annotations": {"k": "v"}}}), id="scoped-cluster-rbac"),
    pytest.param(merged(NO_HOOKS, {"rbac": {"create": False},
                                   "controller": {"service": {"enabled": False}, "containerSecurityContext": {"runAsUser": 1}}}), id="minimal"),
]


@pytest.mark.parametrize("values", RENDER_CASES)
def test_rendered_objects_validate(values):
    objs = ng_manifests.render_manifests(cfg(values))
    validate_all(objs)


def test_seed_objects_and_deployment_shape():
    c = cfg(SEED_TWO, namespace="two")
    objs = ng_manifests.render_manifests(c)
    assert ng_manifests.object_names(objs) == [
        "ServiceAccount two/ingress-ingress-nginx",
        "ClusterRole ingress-ingress-nginx",
        "ClusterRoleBinding ingress-ingress-nginx",
        "Role two/ingress-ingress-nginx",
        "RoleBinding two/ingress-ingress-nginx",
        "ConfigMap two/ingress-ingress-nginx-controller",
        "IngressClass nginx",
        "Service two/ingress-ingress-nginx-controller",
        "Deployment two/ingress-ingress-nginx-controller",
    ]
    dep = objs[-1]
    pod = dep["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert container["args"] == c.args
    assert [e["name"] for e in container["env"]][:2] == ["POD_NAME", "POD_NAMESPACE"]
    assert [(p["name"], p["containerPort"]) for p in container["ports"]] == [("http", 80), ("https", 443)]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": 10254, "scheme": "HTTP"}
    labels = pod["metadata"]["labels"]
    assert labels["app.kubernetes.io/name"] == "ingress-nginx"
    assert labels["app.kubernetes.io/instance"] == "ingress"
    assert labels["app.kubernetes.io/component"] == "controller"
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    svc = objs[-2]
    assert svc["spec"]["type"] == "LoadBalancer"
    assert [p["port"] for p in svc["spec"]["ports"]] == [80, 443]
    cluster_role = objs[1]
    assert "namespaces" in cluster_role["rules"][0]["resources"]
    assert any(r["resources"] == ["ingressclasses"] for r in cluster_role["rules"])


def test_namespace_rbac_renders_role_only_with_lease():
    objs = ng_manifests.render_manifests(cfg(SEED_ONE))
    kinds = [o["kind"] for o in objs]
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds
    role = next(o for o in objs if o["kind"] == "Role")
    lease = [r for r in role["rules"] if r.get("resourceNames")]
    assert lease == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["ingress-ingress-nginx-leader"],
                      "verbs": ["get", "update"]}]


def test_scoped_cluster_role_grants_target_namespace_get():
    objs = ng_manifests.render_manifests(cfg(merged(NO_HOOKS, {"controller": {"scope": {"enabled": True, "namespace": "apps"}}})))
    cr = next(o for o in objs if o["kind"] == "ClusterRole")
    assert "namespaces" not in cr["rules"][0]["resources"]
    assert {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["apps"], "verbs": ["get"]} in cr["rules"]


def test_ingress_class_default_annotation():
    objs = ng_manifests.render_manifests(cfg(merged(NO_HOOKS, {"controller": {"ingressClassResource": {"default": True}}})))
    ic = next(o for o in objs if o["kind"] == "IngressClass")
    assert ic["metadata"]["annotations"] == {"ingressclass.kubernetes.io/is-default-class": "true"}
    assert ic["spec"] == {"controller": "k8s.io/ingress-nginx"}


@pytest.mark.parametrize(
    "values,field",
    [
        ({}, "controller.admissionWebhooks.enabled"),
        (merged(NO_HOOKS, {"defaultBackend": {"enabled": True}}), "defaultBackend.enabled"),
        (merged(NO_HOOKS, {"controller": {"kind": "DaemonSet"}}), "controller.kind"),
        (merged(NO_HOOKS, {"tcp": {"8080": "a/b:80"}}), "tcp"),
    ],
)
def test_manifest_refuses_what_it_cannot_render(values, field):
    with pytest.raises(ng_values.ValuesError, match=field.replace(".", r"\.")):
        ng_manifests.render_manifests(cfg(values))


def test_schema_helper_catches_mistakes():
    with pytest.raises(SchemaError, match="spec.ports.0.port"):
        validate_k8s({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"ports": [{"port": "80"}]}})
    with pytest.raises(SchemaError, match="unexpected"):
        validate_k8s({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "dat": {}})
    with pytest.raises(SchemaError, match="Couldn't find schema"):
        validate_k8s({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}})
    with pytest.raises(SchemaError, match="metadata.name"):
        validate_k8s({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})


# ---------------------------------------------------------------- convenience options


def test_apply_options_fill_in():
    out = ng.apply_options({}, scope=True, publish_service=True, ingress_class="nginx-one")
    assert out == {
        "controller": {
            "scope": {"enabled": True},
            "publishService": {"enabled": True},
            "ingressClassResource": {"name": "nginx-one", "controllerValue": "k8s.io/ingress-nginx-nginx-one"},
            "ingressClass": "nginx-one",
        },
        "rbac": {"scope": True},
    }
    c = cfg(out)
    assert "--ingress-class=nginx-one" in c.args and "--controller-class=k8s.io/ingress-nginx-nginx-one" in c.args
    assert ng.apply_options({}, ingress_class="nginx")["controller"]["ingressClassResource"]["controllerValue"] == "k8s.io/ingress-nginx"


def test_apply_options_agree_or_fail():
    # The seed's map form agrees with scope=true (both true).
    assert ng.apply_options(SEED_ONE, scope=True)["rbac"]["scope"] == {"enabled": True}
    with pytest.raises(ng_values.ValuesError, match=r"scope=False conflicts with values.controller.scope.enabled=True"):
        ng.apply_options(SEED_ONE, scope=False)
    with pytest.raises(ng_values.ValuesError, match="publish_service=True conflicts"):
        ng.apply_options(SEED_TWO, publish_service=True)
    original = copy.deepcopy(SEED_TWO)
    ng.apply_options(SEED_TWO, scope=False)
    assert SEED_TWO == original  # never mutates the caller's values


def test_chart_4_11_renders_metrics_and_annotation_validation_the_other_way_round() -> None:
    old = ng.effective_config({}, "ingress", "one", "4.11.0")
    assert "--enable-metrics=false" in old.args and not any(a.startswith("--enable-annotation") for a in old.args)
    on = ng.effective_config({"controller": {"enableAnnotationValidations": True, "metrics": {"enabled": True}}},
                             "ingress", "one", "4.11.0")
    assert "--enable-annotation-validation=true" in on.args and not any(a.startswith("--enable-metrics") for a in on.args)
    new = ng.effective_config({}, "ingress", "one")
    assert not any(a.startswith("--enable-metrics") or a.startswith("--enable-annotation") for a in new.args)
    assert old.image.startswith("registry.k8s.io/ingress-nginx/controller:v1.11.0@sha256:")


def test_a_chart_version_not_modelled_is_rendered_as_the_pin_and_says_so() -> None:
    cfg = ng.effective_config({}, "ingress", "one", "4.13.0")
    assert cfg.args == ng.effective_config({}, "ingress", "one").args
    assert any("chart 4.13.0 is not modelled" in n for n in cfg.notes)


@pytest.mark.parametrize("scale, interval", [(1, 60), (10, 6), (12, 5), (6.0, 10), (2, 30)])
def test_the_time_scale_becomes_the_controllers_own_status_period(scale, interval) -> None:
    assert ng.status_update_interval(scale) == interval
    values = ng.with_time_scale({"controller": {"scope": {"enabled": True}}}, scale)
    args = ng.effective_config(values, "ingress", "one").args
    if interval == 60:
        assert not any("status-update-interval" in a for a in args)  # the binary's own default
    else:
        assert "--status-update-interval=%d" % interval in args


@pytest.mark.parametrize("scale", [30, 7, 0, -1, True, "10"])
def test_a_time_scale_the_flag_cannot_carry_is_refused_naming_it(scale) -> None:
    with pytest.raises(ng_values.ValuesError, match="time_scale"):
        ng.status_update_interval(scale)


def test_a_status_period_the_user_set_wins_over_the_time_scale() -> None:
    values = ng.with_time_scale({"controller": {"extraArgs": {"status-update-interval": 20}}}, 10)
    assert values["controller"]["extraArgs"] == {"status-update-interval": 20}
    assert ng.with_time_scale({}, 1) == {}
