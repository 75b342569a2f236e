"""lab_capture's logic (capture/scenario.py and its parts, capture/anonymize.py) on an in-memory cluster: the seed's
puzzle (three ingress-nginx, two of them scoped without RBAC for IngressClasses, one cluster-wide
publishing node addresses) with real Ingresses and backends, a hand-written ingress-nginx with a
licence key, a Traefik, and a class of a controller the collection does not know."""
from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.capture import scenario as cap
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.cluster import watch_status
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.round_trip import round_trip_differences
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.stand_ins import NOT_REBUILT_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import nginx_workload, puzzle

Obj = dict[str, Any]
NAMES = ("one", "two", "three", "shop", "edge", "web")
HOSTS = ("shop.corp.internal", "api.corp.internal", "legacy.corp.internal")


def backend(ns: str, name: str, replicas: int) -> tuple[Obj, Obj]:
    labels = {"app": name}
    svc = {"metadata": {"namespace": ns, "name": name},
           "spec": {"type": "ClusterIP", "selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": ns, "name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "corp.registry/web:1"}]}}}}
    return svc, dep


def ingress(ns: str, name: str, rules: list[Obj], annotations: dict[str, str] | None = None, **spec: Any) -> Obj:
    return {"metadata": {"namespace": ns, "name": name, "annotations": annotations or {}}, "spec": dict(rules=rules, **spec)}


def rule(service: str, host: str | None = None, path: str = "/", port: Any = 80) -> Obj:
    key = "number" if isinstance(port, int) else "name"
    out: Obj = {"http": {"paths": [{"path": path, "pathType": "Prefix",
                                    "backend": {"service": {"name": service, "port": {key: port}}}}]}}
    if host:
        out["host"] = host
    return out


def cluster() -> base.ClusterState:
    state = puzzle()
    nginx = {"kubernetes.io/ingress.class": "nginx"}
    state.ingresses = [ingress(ns, "test", [rule("web")], nginx) for ns in ("one", "two", "three")]
    for ns in ("one", "two", "three"):
        svc, dep = backend(ns, "web", 2 if ns == "one" else 1)
        state.services.append(svc)
        state.workloads.append(dep)
    # A team's Ingress: two hosts, TLS, a routing annotation and one that may hold code.
    svc, dep = backend("shop", "web", 0)
    state.services.append(svc)
    state.workloads.append(dep)
    state.ingresses.append(ingress(
        "shop", "storefront", [rule("web", HOSTS[0], "/cart"), rule("api", HOSTS[1])],
        {"nginx.ingress.kubernetes.io/rewrite-target": "/", "nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers x",
         "kubectl.kubernetes.io/last-applied-configuration": "{}"},
        ingressClassName="nginx-one", tls=[{"hosts": [HOSTS[0]], "secretName": "shop-tls"}]))
    # ingress-nginx from plain manifests, args by hand, with a licence key; and a class of an unknown controller.
    edge = nginx_workload("edge", ["--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
                                   "--election-id=ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx",
                                   "--maxmind-license-key", "s3cr3t-licence", "--v=2"])
    edge["metadata"]["name"] = "ingress-nginx-controller"
    state.workloads.append(edge)
    state.ingress_classes.append({"metadata": {"name": "kong"}, "spec": {"controller": "ingress-controllers.konghq.com/kong"}})
    state.ingresses.append(ingress("edge", "legacy", [rule("legacy", HOSTS[2], port=8080)], ingressClassName="kong"))
    state.namespaces += [{"metadata": {"name": n}} for n in ("shop", "edge", "kube-system", "kube-node-lease")]
    return state


@pytest.fixture(scope="module")
def captured() -> cap.Capture:
    return cap.capture(cluster(), "puzzle-captured")


def lab_ingresses(lab: Obj) -> dict[tuple[str, str], Obj]:
    """(namespace, name) → the lab's Ingress, of every workload (one Ingress or a list)."""
    out = {}
    for w in lab["lab_workloads"]:
        ings = w["ingress"] if isinstance(w["ingress"], list) else [w["ingress"]] if w["ingress"] else []
        out.update({(w["namespace"], i["name"]): dict(i, workload=w["name"]) for i in ings})
    return out


def by_ns(result: cap.Capture) -> dict[str, Obj]:
    return {c["namespace"]: c for c in result.lab["lab_controllers"]}


def test_the_puzzle_controllers_are_captured_with_the_values_that_make_it(captured: cap.Capture) -> None:
    ctl = by_ns(captured)
    assert set(ctl) == {"one", "two", "three", "edge"}
    assert {ctl[ns]["release"] for ns in ("one", "two", "three")} == {"ingress"}  # helm's instance label
    # one and three watch their namespace and may not list IngressClasses (no ClusterRole): namespaced RBAC.
    assert ctl["one"]["values"]["controller"]["scope"] == {"enabled": True} and ctl["one"]["values"]["rbac"] == {"scope": True}
    # two: cluster-wide, no --publish-service, its own class and controller value.
    two = ctl["two"]["values"]
    assert two["controller"]["publishService"] == {"enabled": False} and "scope" not in two["controller"]
    assert two["controller"]["ingressClassResource"] == {"controllerValue": "k8s.io/ingress-nginx-two", "name": "nginx-two"}
    assert "rbac" not in two


def test_every_captured_controller_renders_the_cluster_s_effective_args(captured: cap.Capture) -> None:
    state = cluster()
    workloads = {base.meta(w)["namespace"]: w for w in state.workloads if base.meta(w)["name"].startswith("ingress")}
    for ns, ctl in by_ns(captured).items():
        ctype = controller_type(ctl["type"])
        assert ctype.capture is not None
        live = base.container_argv(base.pod_template(workloads[ns])["containers"][0], ns)
        live = [a for a in live if "maxmind" not in a and a != "s3cr3t-licence"]
        rendered = ctype.install.effective_config(ctl["values"], ctl["release"], ns, None).args
        assert ctype.capture.effective_args(rendered, ns, None) == ctype.capture.effective_args(live, ns, None), ns
    assert all(r["differences"] == [] for r in captured.controllers)


def test_a_hand_written_controller_gets_the_release_its_names_come_from_and_its_secret_stays(captured: cap.Capture) -> None:
    edge = by_ns(captured)["edge"]
    assert edge["release"] == "ingress-nginx"  # chart names: ingress-nginx-controller, its Service and election id
    # Its publish Service is missing in the cluster: the lab's release creates none, and the flag stays.
    assert edge["values"]["controller"]["extraArgs"] == {"configmap": None, "v": "2",
                                                         "publish-service": "edge/ingress-nginx-controller"}
    assert edge["values"]["controller"]["service"] == {"enabled": False}
    assert any(f["kind"] == "publish_service_missing" for f in captured.lab["lab_expect"]["diagnose"]["findings"])
    text = cap.render(captured, "test")
    assert "s3cr3t" not in text and "maxmind" not in yaml.safe_dump(captured.lab["lab_controllers"])
    assert "controller edge/ingress-nginx-controller: --maxmind-license-key is a secret and stays in the cluster" in captured.unexpressed


def test_services_become_echo_stand_ins_and_ingresses_are_kept_whole(captured: cap.Capture) -> None:
    workloads = {(w["namespace"], w["name"]): w for w in captured.lab["lab_workloads"]}
    assert set(workloads) == {("one", "web"), ("two", "web"), ("three", "web"), ("shop", "web"), ("shop", "api"), ("edge", "legacy")}
    assert workloads[("one", "web")] == {"name": "web", "namespace": "one", "app": "echo", "replicas": 2, "ingress": {
        "name": "test", "rules": [{"paths": [{"path": "/", "path_type": "Prefix", "port": 80}]}],
        "annotations": {"kubernetes.io/ingress.class": "nginx"}}}
    # a Service the cluster lacks: its stand-in has the port the Ingress names
    assert workloads[("edge", "legacy")]["ports"] == [{"name": "port-8080", "port": 8080}]
    assert workloads[("shop", "api")]["ingress"] is False and workloads[("shop", "web")]["replicas"] == 0
    shop = lab_ingresses(captured.lab)[("shop", "storefront")]
    assert shop["workload"] == "web" and shop["class"] == "nginx-one"
    # both hosts, each to its own Service, TLS for the first host
    assert shop["rules"] == [{"host": HOSTS[0], "paths": [{"path": "/cart", "path_type": "Prefix", "port": 80}]},
                             {"host": HOSTS[1], "paths": [{"path": "/", "path_type": "Prefix", "service": "api", "port": 80}]}]
    assert shop["tls"] == [{"hosts": [HOSTS[0]]}]
    # the snippet stays in the cluster, and the rebuilt Ingress says so for the rehearsal
    assert shop["annotations"] == {"nginx.ingress.kubernetes.io/rewrite-target": "/", NOT_REBUILT_ANNOTATION:
                                   '["annotation nginx.ingress.kubernetes.io/configuration-snippet stays in the cluster (credentials or code)"]'}
    report = "\n".join(captured.unexpressed)
    for said in ("Ingress shop/storefront: TLS for shop.corp.internal is served with a self-signed certificate the lab makes",
                 "configuration-snippet may hold credentials or code",
                 "Service shop/api: its Service api does not exist in the cluster",
                 "Service edge/legacy: its Service legacy does not exist in the cluster",
                 "IngressClass kong: its controller ingress-controllers.konghq.com/kong is of no type the collection knows"):
        assert said in report


def test_lab_expect_holds_the_live_diagnosis(captured: cap.Capture) -> None:
    findings = captured.lab["lab_expect"]["diagnose"]["findings"]
    flaps = [f for f in findings if f["kind"] == "multiple_writers"]
    assert {f["ingress"] for f in flaps} >= {"^one/test$", "^three/test$"}
    assert all(f["culprit"] == "^two/\\S+$" for f in flaps if f["ingress"] in ("^one/test$", "^three/test$"))
    # The lab's controllers are named after its releases: the pattern matches the lab's culprit too.
    assert re.search(flaps[0]["culprit"], "two/ingress-ingress-nginx-controller")
    expect = captured.lab["lab_expect"]
    # The status it predicts: one and three flap, two sits on a node address (in no lab pool), nobody
    # serves the Ingress of the class whose controller cannot list classes, nor the one of kong.
    assert expect["status"]["failing"] == {"one/test": "change", "three/test": "change", "two/test": "outside",
                                           "shop/storefront": "empty", "edge/legacy": "empty"}
    assert expect["addresses"]["failing"] == {"shop/storefront": "no address", "edge/legacy": "no address"}
    assert expect["controllers"]["failing"] == {"edge/ingress-nginx": "CrashLoopBackOff"}
    assert expect["conflicts"]["expected"] == [{"ingresses": ["one/test", "three/test"]}, {"ingresses": ["one/test", "two/test"]},
                                               {"ingresses": ["three/test", "two/test"]}]


def test_the_capture_validates_as_a_lab_definition_and_its_file_reads_back(captured: cap.Capture) -> None:
    cap.check(captured.lab)
    text = cap.render(captured, "the API server at https://127.0.0.1:6443")
    assert text.startswith("---\n# Captured by kindlab.ingress.lab_capture from the API server")
    assert yaml.safe_load(text) == captured.lab
    assert "#   - Ingress shop/storefront: TLS for shop.corp.internal is served with a self-signed certificate" in text


def test_anonymize_replaces_every_name_consistently() -> None:
    plain = cap.capture(cluster(), "x")
    anon = cap.capture(cluster(), "x", anonymize=True)
    cap.check(anon.lab)
    text = cap.render(anon, "an anonymized cluster")
    words = set(re.findall(r"[A-Za-z0-9*][A-Za-z0-9.*-]*", text))
    for name in NAMES + HOSTS + ("storefront", "legacy", "test", "kong", "nginx-one", "corp"):
        assert name not in words, name
    assert not any(h in text for h in HOSTS)
    # Same shape, same verdicts: the controllers still render their args, the expectations name the lab's Ingresses.
    assert len(anon.lab["lab_controllers"]) == len(plain.lab["lab_controllers"])
    assert all(r["differences"] == [] for r in anon.controllers)
    ingresses = {"%s/%s" % key for key in lab_ingresses(anon.lab)}
    for f in anon.lab["lab_expect"]["diagnose"]["findings"]:
        assert "ingress" not in f or any(re.search(f["ingress"], i) for i in ingresses)
    # Deterministic: the same cluster gives the same file.
    assert cap.render(cap.capture(cluster(), "x", anonymize=True), "an anonymized cluster") == text


def test_the_default_names_of_the_types_are_kept_by_anonymize() -> None:
    anon = cap.capture(cluster(), "x", anonymize=True)
    annotations = [i.get("annotations", {}) for i in lab_ingresses(anon.lab).values()]
    assert {"kubernetes.io/ingress.class": "nginx"} in annotations
    assert by_ns(anon)["ns-1"]["release"] == "ingress-nginx"  # edge, the first namespace in sorted order


def test_a_traefik_is_captured_through_its_type() -> None:
    state = cluster()
    traefik = copy.deepcopy(nginx_workload("edge", []))
    traefik["metadata"]["name"] = "traefik"
    container = base.pod_template(traefik)["containers"][0]
    container.update(image="docker.io/traefik:v3.7.13", args=["--providers.kubernetesingress",
                                                              "--providers.kubernetesingress.ingressclass=traefik"])
    state.workloads.append(traefik)
    result = cap.capture(state, "x")
    ctl = next(c for c in result.lab["lab_controllers"] if c["type"] == "traefik")
    assert ctl["release"] == "traefik"
    assert ctl["values"]["providers"]["kubernetesIngress"] == {"publishedService": {"enabled": False}, "allowEmptyServices": False,
                                                               "ingressClass": "traefik"}
    cap.check(result.lab)


def test_a_capture_that_would_not_validate_is_refused_naming_the_field() -> None:
    lab = copy.deepcopy(cap.capture(cluster(), "x").lab)
    lab["lab_workloads"][0]["namespace"] = "elsewhere"
    with pytest.raises(cap.CaptureError, match=r"lab_workloads\[0\].namespace: 'elsewhere' is not in lab_namespaces"):
        cap.check(lab)


def test_what_a_short_watch_saw_joins_the_prediction() -> None:
    # two/test changed in the watch though the diagnosis predicts only node addresses; one/test did not
    # change though a flap is predicted (the watch may be shorter than the sync period): both said
    result = cap.capture(cluster(), "puzzle-captured", observed={"one/test": 0, "two/test": 3, "three/test": 5, "gone/x": 1})
    failing = result.lab["lab_expect"]["status"]["failing"]
    assert (failing["one/test"], failing["two/test"], failing["three/test"]) == ("change", "change", "change")
    notes = "\n".join(result.unexpressed)
    assert "Ingress two/test changed status 3 time(s) during the capture's watch, which the diagnosis did not predict" in notes
    assert "Ingress one/test: the diagnosis predicts a flap the capture's watch did not see" in notes
    assert "gone/x" not in notes
    assert "the status it predicts and the capture's watch saw" in notes


def test_the_watch_counts_changes_per_ingress(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status import run as status_run

    asked: list[Any] = []

    def run(client: Any, selection: Any, options: Any) -> Obj:
        asked.append((selection.namespaces, options.window, options.attribute, options.gateway_api))
        return {"ingresses": {"one/test": {"changes": 4}, "two/test": {"changes": 0}}}
    monkeypatch.setattr(status_run, "run", run)
    assert watch_status(object(), ["one", "two"], 30.0) == {"one/test": 4, "two/test": 0}
    assert asked == [(["one", "two"], 30.0, False, False)]


def team_cluster() -> base.ClusterState:
    """What a team builds by hand: two Ingresses on one host (ingress-nginx merges them), a regex path with a
    capture-group rewrite, TLS for two hosts, a Service on 8080 named by its port's name, a default backend,
    and an ExternalName Service behind one path."""
    state = base.ClusterState(namespaces=[{"metadata": {"name": "shop"}}])
    for name, ports in (("api", [{"name": "web", "port": 8080, "targetPort": 3000}]),
                        ("web", [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "admin", "port": 9000}])):
        svc, dep = backend("shop", name, 2)
        svc["spec"]["ports"] = ports
        state.services.append(svc)
        state.workloads.append(dep)
    state.services.append({"metadata": {"namespace": "shop", "name": "payments"},
                           "spec": {"type": "ExternalName", "externalName": "pay.partner.example"}})
    nginx = {"kubernetes.io/ingress.class": "nginx"}
    state.ingresses = [
        ingress("shop", "api", [rule("api", "shop.example.test", "/api(/|$)(.*)", "web")],
                dict(nginx, **{"nginx.ingress.kubernetes.io/rewrite-target": "/$2", "nginx.ingress.kubernetes.io/use-regex": "true"}),
                tls=[{"hosts": ["shop.example.test", "www.example.test"], "secretName": "shop-cert"}]),
        ingress("shop", "web", [rule("web", "shop.example.test", "/"), rule("web", "www.example.test", "/admin", 9000)], nginx,
                defaultBackend={"service": {"name": "web", "port": {"name": "http"}}}),
        ingress("shop", "pay", [rule("payments", "shop.example.test", "/pay", 443)], nginx),
    ]
    return state


def rebuilt(lab: Obj) -> base.ClusterState:
    """The cluster the lab builds from LAB's workloads (their rendered objects), as a capture reads it."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import render

    workloads = parse_workloads(lab["lab_workloads"])
    objs = [o for w in workloads for o in render(w, workloads)]
    return base.ClusterState(namespaces=[{"metadata": {"name": ns}} for ns in lab["lab_namespaces"]],
                             services=[o for o in objs if o["kind"] == "Service"],
                             workloads=[o for o in objs if o["kind"] == "Deployment"],
                             ingresses=[o for o in objs if o["kind"] == "Ingress"])


def test_a_team_s_ingresses_are_rebuilt_as_the_cluster_has_them_and_a_capture_of_the_rebuild_equals_the_first() -> None:
    first = cap.capture(team_cluster(), "team")
    cap.check(first.lab)
    lab = rebuilt(first.lab)
    by_name = {base.meta(i)["name"]: i["spec"] for i in lab.ingresses}
    original = {base.meta(i)["name"]: i["spec"] for i in team_cluster().ingresses}
    for name in ("api", "web"):  # rules, hosts, paths, backends by port number or name, the default backend: unchanged
        assert by_name[name]["rules"] == original[name]["rules"], name
    assert by_name["web"]["defaultBackend"] == original["web"]["defaultBackend"]
    assert by_name["api"]["tls"] == [{"hosts": ["shop.example.test", "www.example.test"], "secretName": "api-tls"}]
    # Services keep their port numbers and names (each reaching the stand-in's one container port)
    services = {base.meta(s)["name"]: [(p.get("name"), p["port"]) for p in s["spec"]["ports"]] for s in lab.services}
    assert services == {"api": [("web", 8080)], "web": [("http", 80), ("admin", 9000)], "payments": [("port-443", 443)]}
    # the ExternalName Service: a stand-in answers, and its Ingress says it is not comparable
    pay = next(i for i in lab.ingresses if base.meta(i)["name"] == "pay")
    assert json.loads(base.meta(pay)["annotations"][NOT_REBUILT_ANNOTATION]) == [
        "Service payments is ExternalName (a name outside the cluster)"]
    assert "pay.partner.example" not in cap.render(first, "x")
    # round trip: the rebuilt lab captured again is the same lab
    second = cap.capture(lab, "team")
    assert second.lab["lab_workloads"] == first.lab["lab_workloads"]


def test_the_round_trip_says_what_the_rebuild_routes_by_differently() -> None:
    first = cap.capture(team_cluster(), "team").lab
    second = cap.capture(rebuilt(first), "team").lab
    assert round_trip_differences(first, second, []) == []
    changed = copy.deepcopy(second)
    web = next(w for w in changed["lab_workloads"] if w["name"] == "web")
    web["ports"][1]["port"] = 9001
    web["httproute"] = {"name": "translated"}  # a rehearsal's own routes are not the captured cluster's
    changed["lab_workloads"] = [w for w in changed["lab_workloads"] if w["name"] != "payments"]
    assert round_trip_differences(first, changed, ["shop"]) == [
        "shop/payments: captured, not in the rebuild",
        'shop/web ports: captured [{"name": "http", "port": 80}, {"name": "admin", "port": 9000}], rebuilt '
        '[{"name": "http", "port": 80}, {"name": "admin", "port": 9001}]']
    assert round_trip_differences(first, changed, ["elsewhere"]) == []


def test_a_default_backend_only_ingress_is_rebuilt_without_a_rule_and_round_trips() -> None:
    """An Ingress with spec.defaultBackend and no rule (the catch-all a team keeps) gets no host-less / rule in the
    rebuild: that rule would serve every host's unmatched paths on Traefik, which the cluster does not do."""
    state = base.ClusterState(namespaces=[{"metadata": {"name": "shop"}}])
    svc, dep = backend("shop", "fallback", 1)
    state.services.append(svc)
    state.workloads.append(dep)
    state.ingresses = [ingress("shop", "catch-all", [], {"kubernetes.io/ingress.class": "nginx"},
                               defaultBackend={"service": {"name": "fallback", "port": {"number": 80}}})]
    state.ingresses[0]["spec"].pop("rules")
    first = cap.capture(state, "team")
    cap.check(first.lab)
    [spec] = [i["spec"] for i in rebuilt(first.lab).ingresses]
    assert "rules" not in spec and spec["defaultBackend"] == {"service": {"name": "fallback", "port": {"number": 80}}}
    assert round_trip_differences(first.lab, cap.capture(rebuilt(first.lab), "team").lab, []) == []


def test_basic_auth_is_rebuilt_by_the_secret_s_name_and_the_credentials_stay_in_the_cluster() -> None:
    """The annotations that ask for basic auth only name a Secret: the rebuild keeps them (the lab generates a Secret of
    that name with its own user), while another auth annotation (an auth-url's service) stays in the cluster."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import credential_secrets
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads

    n = "nginx.ingress.kubernetes.io/"
    state = base.ClusterState(namespaces=[{"metadata": {"name": "shop"}}])
    svc, dep = backend("shop", "web", 1)
    state.services.append(svc)
    state.workloads.append(dep)
    state.secrets = [{"metadata": {"namespace": "shop", "name": "admins"}, "data": {"auth": "dGVhbTp7U0hBfXh5eg=="}}]
    basic = {n + "auth-type": "basic", n + "auth-secret": "admins", n + "auth-realm": "Staff only"}
    state.ingresses = [ingress("shop", "admin", [rule("web", "admin.shop.test", "/admin")], dict(basic)),
                       ingress("shop", "sso", [rule("web", "sso.shop.test")], {n + "auth-url": "http://oauth.sso/verify"})]
    first = cap.capture(state, "team")
    cap.check(first.lab)
    ingresses = lab_ingresses(first.lab)
    assert ingresses[("shop", "admin")]["annotations"] == basic
    assert ingresses[("shop", "sso")]["annotations"][NOT_REBUILT_ANNOTATION].count("auth-url") == 1
    assert "dGVhbTp7U0hBfXh5eg==" not in cap.render(first, "x")
    asked = credential_secrets(parse_workloads(first.lab["lab_workloads"]))
    assert [(s.namespace, s.name, s.format) for s in asked] == [("shop", "admins", "auth-file")]
    assert round_trip_differences(first.lab, cap.capture(rebuilt(first.lab), "team").lab, []) == []
