from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.conflicts import (
    claim_of, find_conflicts, host_overlap, path_overlap, same_controller,
)


@pytest.mark.parametrize("a, ta, b, tb, example", [
    # Exact
    ("/foo", "Exact", "/foo", "Exact", "/foo"),
    ("/foo", "Exact", "/foo/", "Exact", None),  # Exact does not ignore the trailing slash
    ("/foo", "Exact", "/bar", "Exact", None),
    # Prefix by element
    ("/foo", "Prefix", "/foo/bar", "Prefix", "/foo/bar"),
    ("/foo/bar", "Prefix", "/foo", "Prefix", "/foo/bar"),
    ("/foo", "Prefix", "/foobar", "Prefix", None),
    ("/foo/", "Prefix", "/foo", "Prefix", "/foo"),  # trailing slash ignored for Prefix
    ("/", "Prefix", "/anything/deep", "Prefix", "/anything/deep"),
    ("/aaa/bbb", "Prefix", "/aaa/bbbxyz", "Prefix", None),
    ("/aaa/bbb", "Prefix", "/aaa/ccc", "Prefix", None),
    # Exact vs Prefix
    ("/foo/bar", "Exact", "/foo", "Prefix", "/foo/bar"),
    ("/foobar", "Exact", "/foo", "Prefix", None),
    ("/foo/", "Exact", "/foo", "Prefix", "/foo/"),
    ("/foo", "Exact", "/foo/", "Prefix", "/foo"),
    ("/foo", "Prefix", "/foo", "Exact", "/foo"),
    ("/foo", "Exact", "/foo/bar", "Prefix", None),
    # ImplementationSpecific is Prefix (ingress-nginx)
    ("/foo", "ImplementationSpecific", "/foo/x", "Exact", "/foo/x"),
    ("/foo", "ImplementationSpecific", "/foobar", "Prefix", None),
])
def test_path_overlap_table(a: str, ta: str, b: str, tb: str, example: str | None) -> None:
    assert path_overlap(a, ta, b, tb) == example
    assert (path_overlap(b, tb, a, ta) is None) == (example is None)  # symmetric


@pytest.mark.parametrize("a, b, example", [
    ("a.example.com", "a.example.com", "a.example.com"),
    ("A.Example.com", "a.example.com", "a.example.com"),
    ("a.example.com", "b.example.com", None),
    ("*.example.com", "a.example.com", "a.example.com"),
    ("a.example.com", "*.example.com", "a.example.com"),
    ("*.example.com", "example.com", None),  # the wildcard needs one label
    ("*.example.com", "a.b.example.com", None),  # and only one
    ("*.example.com", "*.example.com", "x.example.com"),
    ("*.example.com", "*.b.example.com", None),
    ("", "a.example.com", "a.example.com"),  # empty host = any host
    ("*.example.com", "", "x.example.com"),
    ("", "", ""),
    (None, "a.example.com", "a.example.com"),
])
def test_host_overlap_table(a: str | None, b: str | None, example: str | None) -> None:
    assert host_overlap(a, b) == example
    assert host_overlap(b, a) == example


def ingress(ns: str, name: str, rules: list[tuple[str, str, str]], created: str = "2026-01-01T00:00:00Z",
            class_name: str | None = None, annotation: str | None = None, service: str = "web") -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": ns, "name": name, "creationTimestamp": created}
    if annotation:
        meta["annotations"] = {"kubernetes.io/ingress.class": annotation}
    spec: dict[str, Any] = {"rules": [{"host": host, "http": {"paths": [
        {"path": path, "pathType": ptype, "backend": {"service": {"name": service, "port": {"number": 80}}}}]}}
        for host, path, ptype in rules]}
    if class_name:
        spec["ingressClassName"] = class_name
    return {"metadata": meta, "spec": spec}


def ingress_class(name: str, controller: str, default: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"ingressclass.kubernetes.io/is-default-class": "true"}
    return {"metadata": meta, "spec": {"controller": controller}}


CLASSES = [ingress_class("nginx", "k8s.io/ingress-nginx"), ingress_class("traefik", "traefik.io/ingress-controller"),
           ingress_class("nginx-b", "k8s.io/ingress-nginx-b")]


def test_identical_host_path_same_nginx_controller_names_the_oldest() -> None:
    a = ingress("one", "app", [("shop.example.com", "/api", "Prefix")], created="2026-01-02T00:00:00Z", class_name="nginx")
    b = ingress("two", "app", [("shop.example.com", "/api", "Prefix")], created="2026-01-01T00:00:00Z", class_name="nginx")
    result = find_conflicts([a, b], CLASSES)
    assert not result["passed"]
    [conflict] = result["conflicts"]
    assert conflict["ingresses"] == ["one/app", "two/app"]
    assert (conflict["host"], conflict["path"]) == ("shop.example.com", "/api")
    assert conflict["path_types"] == ["Prefix", "Prefix"]
    assert conflict["same_controller"] == "yes"
    assert conflict["controller"] == "ingress_nginx"
    assert "oldest Ingress wins" in conflict["behaviour"] and "two/app" in conflict["behaviour"]


def test_trailing_slash_variant_is_identical_by_spec_but_undefined_for_nginx() -> None:
    a = ingress("one", "app", [("shop.example.com", "/api", "Prefix")], class_name="nginx")
    b = ingress("two", "app", [("shop.example.com", "/api/", "Prefix")], class_name="nginx")
    [conflict] = find_conflicts([a, b], CLASSES)["conflicts"]
    assert conflict["identical"] and conflict["path"] == "/api"
    assert conflict["behaviour"].startswith("ingress-nginx: undefined; it compares path strings (/api vs /api/)")


def test_nginx_same_second_tie_goes_to_later_name() -> None:
    a = ingress("aaa", "x", [("h.example", "/", "Prefix")], class_name="nginx")
    b = ingress("bbb", "x", [("h.example", "/", "Prefix")], class_name="nginx")
    [conflict] = find_conflicts([a, b], CLASSES)["conflicts"]
    assert "bbb/x" in conflict["behaviour"] and "same second" in conflict["behaviour"]


def test_traefik_duplicate_winner_is_undefined() -> None:
    # Prefix and ImplementationSpecific both become PathPrefix("/"): the same rule, the same priority.
    a = ingress("team-a", "web", [("app.example.com", "/", "Prefix")], class_name="traefik", service="a")
    b = ingress("team-b", "web", [("app.example.com", "/", "ImplementationSpecific")], class_name="traefik", service="b")
    [conflict] = find_conflicts([a, b], CLASSES)["conflicts"]
    assert conflict["controller"] == "traefik" and conflict["ambiguous"]
    assert conflict["behaviour"].startswith("Traefik: undefined") and "a:80 and b:80" in conflict["behaviour"]


def test_precedence_resolved_overlap_is_not_a_conflict() -> None:
    a = ingress("one", "root", [("shop.example.com", "/", "Prefix")], class_name="nginx")
    b = ingress("two", "api", [("shop.example.com", "/api", "Prefix")], class_name="nginx")
    result = find_conflicts([a, b], CLASSES)
    assert result["passed"] and result["conflicts"] == []
    [overlap] = result["overlaps"]
    assert not overlap["ambiguous"]
    assert overlap["behaviour"].endswith("for shop.example.com/api, two/api's rule (shop.example.com /api Prefix) "
                                         "is chosen over one/root's (shop.example.com / Prefix)")


def test_overlap_across_different_controllers_is_a_conflict() -> None:
    a = ingress("one", "root", [("shop.example.com", "/", "Prefix")], class_name="nginx")
    b = ingress("two", "api", [("*.example.com", "/api", "Exact")], class_name="nginx-b")
    [conflict] = find_conflicts([a, b], CLASSES)["conflicts"]
    assert conflict["same_controller"] == "no"
    assert (conflict["host"], conflict["path"]) == ("shop.example.com", "/api")
    assert conflict["path_types"] == ["Prefix", "Exact"]
    assert conflict["behaviour"].startswith("the name shop.example.com can point at both Ingresses' addresses")


def test_no_overlap_no_conflict() -> None:
    a = ingress("one", "a", [("a.example.com", "/foo", "Prefix")], class_name="nginx")
    b = ingress("two", "b", [("a.example.com", "/foobar", "Prefix"), ("b.example.com", "/foo", "Prefix")], class_name="nginx")
    nginx = {"class": "IngressClass nginx (controller k8s.io/ingress-nginx)", "controller": "ingress_nginx", "served_by": []}
    expected = {"conflicts": [], "overlaps": [], "passed": True, "claims": {"one/a": nginx, "two/b": nginx}}
    assert find_conflicts([a, b], CLASSES) == expected


def test_paths_within_one_ingress_are_not_compared() -> None:
    a = ingress("one", "a", [("a.example.com", "/", "Prefix"), ("a.example.com", "/", "Prefix")])
    assert find_conflicts([a], CLASSES)["overlaps"] == []


def test_selected_only_reports_pairs_involving_the_selection() -> None:
    a = ingress("one", "a", [("h", "/", "Prefix")], class_name="nginx")
    b = ingress("two", "b", [("h", "/", "Prefix")], class_name="nginx")
    c = ingress("three", "c", [("h", "/", "Prefix")], class_name="nginx")
    result = find_conflicts([a, b, c], CLASSES, selected={"three/c"})
    assert sorted(tuple(x["ingresses"]) for x in result["conflicts"]) == [("one/a", "three/c"), ("two/b", "three/c")]
    assert list(result["claims"]) == ["three/c"]


@pytest.mark.parametrize("kwargs, key, kind", [
    ({"class_name": "nginx"}, "controller:k8s.io/ingress-nginx", "ingress_nginx"),
    ({"class_name": "missing"}, None, "unknown"),
    ({"annotation": "traefik"}, "annotation:traefik", "traefik"),
    ({}, None, "unknown"),
])
def test_claims(kwargs: dict[str, Any], key: str | None, kind: str) -> None:
    claim = claim_of(ingress("n", "i", [], **kwargs), {c["metadata"]["name"]: c for c in CLASSES})
    assert (claim.key, claim.type) == (key, kind)


def test_classless_ingress_takes_the_default_class() -> None:
    classes = {"nginx": ingress_class("nginx", "k8s.io/ingress-nginx", default=True)}
    assert claim_of(ingress("n", "i", []), classes).key == "controller:k8s.io/ingress-nginx"


def test_same_annotation_is_unknown_across_namespaces() -> None:
    classes: dict[str, Any] = {}
    a = claim_of(ingress("one", "i", [], annotation="nginx"), classes)
    b = claim_of(ingress("two", "i", [], annotation="nginx"), classes)
    c = claim_of(ingress("two", "i", [], annotation="traefik"), classes)
    assert same_controller(a, b, same_namespace=False) == "unknown"
    assert same_controller(a, b, same_namespace=True) == "yes"
    assert same_controller(a, c, same_namespace=False) == "no"


def test_unknown_claims_with_identical_routes_are_conflicts() -> None:
    # The seed's incident: two teams, class-less Ingresses, same host and path.
    a = ingress("team-a", "web", [("app.example.com", "/", "Prefix")])
    b = ingress("team-b", "web", [("app.example.com", "/", "Prefix")])
    [conflict] = find_conflicts([a, b], [])["conflicts"]
    assert conflict["same_controller"] == "unknown"
    assert conflict["behaviour"].endswith("if one controller serves both: undefined (controller type unknown)")
    assert conflict["reason"].startswith("team-a/web and team-b/web both match app.example.com/ (Prefix vs Prefix")


def test_hostless_rules_of_separate_or_unknown_controllers_are_not_conflicts() -> None:
    # The default lab: each namespace's controller serves its own `test` Ingress by address.
    one = ingress("one", "test", [("", "/", "Prefix")], annotation="nginx")
    two = ingress("two", "test", [("", "/", "Prefix")], annotation="nginx")
    result = find_conflicts([one, two], [])
    assert result["passed"] and result["conflicts"] == []
    [overlap] = result["overlaps"]
    assert overlap["identical"] and overlap["same_controller"] == "unknown"
    assert "a conflict only if one controller serves both: ingress-nginx: the oldest Ingress wins" in overlap["behaviour"]


def test_hostless_identical_rules_of_one_controller_are_a_conflict() -> None:
    a = ingress("one", "a", [("", "/", "Prefix")], class_name="nginx")
    b = ingress("two", "b", [("", "/", "Prefix")], class_name="nginx")
    [conflict] = find_conflicts([a, b], CLASSES)["conflicts"]
    assert conflict["host"] == "" and "any host /" in conflict["message"]


def test_named_host_overlap_with_unknown_controllers_is_a_conflict_even_without_a_tie() -> None:
    a = ingress("one", "root", [("app.example.com", "/", "Prefix")])
    b = ingress("two", "api", [("app.example.com", "/api", "Prefix")])
    [conflict] = find_conflicts([a, b], [])["conflicts"]
    assert not conflict["identical"] and "resolved by precedence" in conflict["behaviour"]


def test_controllers_found_in_the_cluster_decide_who_serves_what() -> None:
    # The puzzle: host-less "/" Ingresses with the same annotation in three namespaces. By class
    # alone nobody can tell; from the controllers, two serves all three, so its nginx holds three
    # identical rules (oldest wins), while one and three each hold only their own.
    ings = [ingress(ns, "test", [("", "/", "Prefix")], annotation="nginx") for ns in ("one", "two", "three")]
    served = {"one/test": ["one/c", "two/c"], "two/test": ["two/c"], "three/test": ["three/c", "two/c"]}
    result = find_conflicts(ings, CLASSES, served_by=served)
    pairs = sorted(tuple(sorted(c["ingresses"])) for c in result["conflicts"])
    assert pairs == [("one/test", "three/test"), ("one/test", "two/test"), ("three/test", "two/test")]
    assert all(c["same_controller"] == "yes" for c in result["conflicts"])
    healthy = {"one/test": ["one/c"], "two/test": ["two/c"], "three/test": ["three/c"]}
    assert find_conflicts(ings, CLASSES, served_by=healthy)["conflicts"] == []


def test_the_controller_found_serving_both_decides_over_the_class() -> None:
    # Class nginx, but what serves both is Traefik's ingress-nginx provider (nginx-to-traefik on kind).
    a = ingress("one", "test", [("", "/", "Prefix")], class_name="nginx")
    b = ingress("two", "test", [("", "/", "Prefix")], class_name="nginx")
    served = {"one/test": ["one/c", "traefik/traefik@kubernetesingressnginx"],
              "two/test": ["two/c", "traefik/traefik@kubernetesingressnginx"]}
    types = {"one/c": "ingress_nginx", "two/c": "ingress_nginx", "traefik/traefik@kubernetesingressnginx": "traefik"}
    [conflict] = find_conflicts([a, b], CLASSES, served_by=served, server_types=types)["conflicts"]
    assert conflict["controller"] == "traefik" and conflict["behaviour"].startswith("Traefik: undefined")


@pytest.mark.parametrize("a, b, overlap", [
    (("/foo", "ImplementationSpecific", True), ("/foobar", "Prefix", False), "/foobar"),
    (("/foo", "ImplementationSpecific", True), ("/foox", "Exact", False), "/foox"),
    (("/foo/b", "ImplementationSpecific", True), ("/foo", "Prefix", False), "/foo/b"),
    (("/foo", "ImplementationSpecific", True), ("/fo", "ImplementationSpecific", True), "/foo"),
    (("/foo", "ImplementationSpecific", True), ("/bar", "Prefix", False), None),
    (("/foo", "ImplementationSpecific", False), ("/foobar", "Prefix", False), None),  # by path element
    (("/foobar", "Exact", False), ("/foo", "ImplementationSpecific", True), "/foobar"),
])
def test_a_string_prefix_path_overlaps_what_it_prefixes(a: tuple[str, str, bool], b: tuple[str, str, bool], overlap: str | None) -> None:
    assert path_overlap(a[0], a[1], b[0], b[1], a[2], b[2]) == overlap


def test_implementation_specific_is_a_string_prefix_for_ingress_nginx_only() -> None:
    """binary.select_route (the twin's routing too): ingress-nginx writes an ImplementationSpecific
    path as `location /foo`, which also answers /foobar; conflicts now agrees with it."""
    for annotation, found in (("nginx", ["/foobar"]), ("traefik", [])):
        ings = [ingress("one", "a", [("app.example.test", "/foo", "ImplementationSpecific")], annotation=annotation),
                ingress("one", "b", [("app.example.test", "/foobar", "Prefix")], annotation=annotation)]
        assert [o["path"] for o in find_conflicts(ings, [])["overlaps"]] == found, annotation


def test_an_ingress_nginx_canary_beside_its_main_ingress_is_no_conflict() -> None:
    main = ingress("shop", "checkout", [("checkout.example.com", "/pay", "Prefix")], class_name="nginx")
    canary = ingress("shop", "checkout-canary", [("checkout.example.com", "/pay", "Prefix")], class_name="nginx")
    canary["metadata"]["annotations"] = {"nginx.ingress.kubernetes.io/canary": "true"}
    result = find_conflicts([main, canary], CLASSES)
    assert result["passed"] and result["conflicts"] == []
    [overlap] = result["overlaps"]
    assert "shop/checkout-canary is a canary of shop/checkout" in overlap["behaviour"]
    # two canaries on one host+path are rivals as usual
    other = ingress("shop", "other-canary", [("checkout.example.com", "/pay", "Prefix")], class_name="nginx")
    other["metadata"]["annotations"] = {"nginx.ingress.kubernetes.io/canary": "true"}
    pairs = [c["ingresses"] for c in find_conflicts([main, canary, other], CLASSES)["conflicts"]]
    assert pairs == [["shop/checkout-canary", "shop/other-canary"]]
