# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Objects as dicts: the one label-selector matcher (both forms, and what an empty selector
means in each) and a LabelSelector as a query string."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of, selector_string, selects

LABELS = {"app": "web", "tier": "front"}


def test_an_empty_label_selector_matches_everything() -> None:
    assert selects({}, LABELS, form="LabelSelector")
    assert selects({}, {}, form="LabelSelector") and selects({}, None, form="LabelSelector")
    assert selects({"matchLabels": {}, "matchExpressions": []}, LABELS, form="LabelSelector")


def test_a_null_label_selector_matches_nothing() -> None:
    assert not selects(None, LABELS, form="LabelSelector")
    assert not selects(None, {}, form="LabelSelector")


def test_match_labels_must_all_be_equal() -> None:
    assert selects({"matchLabels": {"app": "web"}}, LABELS, form="LabelSelector")
    assert selects({"matchLabels": dict(LABELS)}, LABELS, form="LabelSelector")
    assert not selects({"matchLabels": {"app": "web", "tier": "back"}}, LABELS, form="LabelSelector")
    assert not selects({"matchLabels": {"zone": "a"}}, LABELS, form="LabelSelector")
    assert not selects({"matchLabels": {"app": "web"}}, None, form="LabelSelector")


@pytest.mark.parametrize("expr, matches", [
    ({"key": "app", "operator": "In", "values": ["web", "api"]}, True),
    ({"key": "app", "operator": "In", "values": ["api"]}, False),
    ({"key": "zone", "operator": "In", "values": ["a"]}, False),  # absent: not in any set
    ({"key": "app", "operator": "NotIn", "values": ["api"]}, True),
    ({"key": "app", "operator": "NotIn", "values": ["web"]}, False),
    ({"key": "zone", "operator": "NotIn", "values": ["a"]}, True),  # absent: in none of them
    ({"key": "tier", "operator": "Exists"}, True),
    ({"key": "zone", "operator": "Exists"}, False),
    ({"key": "zone", "operator": "DoesNotExist"}, True),
    ({"key": "tier", "operator": "DoesNotExist"}, False),
    ({"key": "app", "operator": "Sometimes", "values": ["web"]}, False),  # the API server refuses it
])
def test_match_expressions(expr: dict[str, Any], matches: bool) -> None:
    assert selects({"matchExpressions": [expr]}, LABELS, form="LabelSelector") is matches


def test_every_requirement_must_hold() -> None:
    both = {"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["front"]}, {"key": "legacy", "operator": "DoesNotExist"}]}
    assert selects(both, LABELS, form="LabelSelector")
    assert not selects(both, dict(LABELS, legacy="yes"), form="LabelSelector")
    assert not selects(both, {"app": "web", "tier": "back"}, form="LabelSelector")


def test_a_service_selector_map() -> None:
    assert selects({"app": "web"}, LABELS, form="Service")
    assert selects(dict(LABELS), LABELS, form="Service")
    assert not selects({"app": "web", "tier": "back"}, LABELS, form="Service")
    assert not selects({"app": "web"}, None, form="Service")


def test_an_empty_or_absent_service_selector_selects_no_pods() -> None:
    assert not selects({}, LABELS, form="Service")
    assert not selects(None, LABELS, form="Service")
    assert not selects({}, {}, form="Service")


def test_selector_string_covers_match_expressions() -> None:
    sel = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "t", "operator": "In", "values": ["x", "y"]}, {"key": "u", "operator": "NotIn", "values": ["z"]},
        {"key": "v", "operator": "Exists"}, {"key": "w", "operator": "DoesNotExist"}]}
    assert selector_string(sel) == "a=1,b=2,t in (x,y),u notin (z),v,!w"


def test_ref_of() -> None:
    assert ref_of({"kind": "Ingress", "metadata": {"namespace": "one", "name": "web"}}) == "Ingress one/web"
    assert ref_of({"kind": "IngressClass", "metadata": {"name": "nginx"}}) == "IngressClass nginx"
