from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import (
    SelectionError, label_selector_matches, list_ingresses, parse_selection, validate_label_selector,
)


@pytest.mark.parametrize("selector", [
    "app=web", "app==web", "app!=web", "tier in (a, b),app", "!legacy", "example.com/team notin (x)", "a=",
])
def test_valid_label_selectors(selector: str) -> None:
    assert validate_label_selector(selector) == selector.strip()


@pytest.mark.parametrize("selector", [
    "app=we b", "=web", "app in a,b", "!app=web", "app in (a", "Bad Key=1", "-app=x", "app=web=x",
])
def test_invalid_label_selectors_name_the_option(selector: str) -> None:
    with pytest.raises(SelectionError, match="^label_selector: "):
        validate_label_selector(selector)


def test_empty_selector_means_everything() -> None:
    assert validate_label_selector("  ") is None
    assert validate_label_selector(None) is None


@pytest.mark.parametrize("namespaces, names, message", [
    (["One"], None, "^namespaces: "),
    ("one", None, "^namespaces: "),
    (None, ["a/b/c"], "^names: "),
    (None, [""], "^names: "),
    (None, ["Web"], "^names: "),
])
def test_bad_selection_options(namespaces: Any, names: Any, message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        parse_selection(namespaces, names, None)


def ing(ns: str, name: str) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name}}


class Lister:
    def __init__(self) -> None:
        self.calls: list[tuple[str | None, str | None]] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[dict[str, Any]]:
        self.calls.append((namespace, label_selector))
        every = [ing("two", "test"), ing("one", "test"), ing("one", "web")]
        return [i for i in every if namespace in (None, i["metadata"]["namespace"])]


def test_list_applies_namespaces_and_names_sorted() -> None:
    lister = Lister()
    got = list_ingresses(lister, parse_selection(["one", "two"], ["test"], "app=x"))
    assert [i["metadata"]["namespace"] + "/" + i["metadata"]["name"] for i in got] == ["one/test", "two/test"]
    assert lister.calls == [("one", "app=x"), ("two", "app=x")]


def test_names_accept_namespace_slash_name_and_no_namespaces_lists_once() -> None:
    lister = Lister()
    got = list_ingresses(lister, parse_selection(None, ["one/web"], None))
    assert [i["metadata"]["name"] for i in got] == ["web"] and lister.calls == [(None, None)]


@pytest.mark.parametrize("selector, matches", [
    ("team=a", True), ("team==a", True), ("team!=a", False), ("team in (a, b),env", True),
    ("team notin (a,b)", False), ("!legacy", True), ("env,!team", False), ("team=b", False), ("zone", False),
])
def test_label_selector_matches_a_namespaces_labels(selector: str, matches: bool) -> None:
    assert label_selector_matches(selector, {"team": "a", "env": "lab"}) is matches
