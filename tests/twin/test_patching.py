"""Patch semantics driven by the OpenAPI list annotations."""
from __future__ import annotations

import pytest

from kindlab_twin import patching
from kindlab_twin.schema import Registry

REG = Registry()


def node(api_version: str, kind: str):  # noqa: ANN201
    rt = REG.by_ref(api_version, kind)
    assert rt is not None
    return rt.schema()


def test_json_patch_ops() -> None:
    doc = {"a": {"b": [1, 2]}, "c": 1}
    out = patching.json_patch(doc, [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "replace", "path": "/c", "value": 2},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e"},
        {"op": "remove", "path": "/a/b/0"},
        {"op": "test", "path": "/e", "value": 2},
        {"op": "add", "path": "/x~1y", "value": True},
    ])
    assert out == {"a": {"b": [2, 3]}, "c": 2, "e": 2, "x/y": True}
    assert doc == {"a": {"b": [1, 2]}, "c": 1}
    for bad in ([{"op": "test", "path": "/c", "value": 5}], [{"op": "remove", "path": "/zz"}], {"op": "add"},
                [{"op": "frob", "path": "/c"}]):
        with pytest.raises(patching.PatchError):
            patching.json_patch(doc, bad)


def test_merge_patch() -> None:
    assert patching.merge_patch({"a": 1, "b": {"c": 1, "d": 2}, "l": [1]}, {"a": None, "b": {"c": 3}, "l": [2]}) == \
        {"b": {"c": 3, "d": 2}, "l": [2]}


def test_strategic_merge_containers_by_name() -> None:
    pod = {"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}}
    n = node("v1", "Pod")
    out = patching.strategic_merge(pod, {"spec": {"containers": [{"name": "b", "image": "y:2"}]}}, n)
    assert out["spec"]["containers"] == [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}]
    out = patching.strategic_merge(pod, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, n)
    assert [c["name"] for c in out["spec"]["containers"]] == ["b"]
    # an atomic list (args) is replaced
    pod2 = {"spec": {"containers": [{"name": "a", "args": ["1", "2"]}]}}
    out = patching.strategic_merge(pod2, {"spec": {"containers": [{"name": "a", "args": ["3"]}]}}, n)
    assert out["spec"]["containers"][0]["args"] == ["3"]
    # $patch: replace on a map, null deletes
    out = patching.strategic_merge({"metadata": {"labels": {"a": "1", "b": "2"}}},
                                   {"metadata": {"labels": {"$patch": "replace", "c": "3"}}}, n)
    assert out["metadata"]["labels"] == {"c": "3"}
    out = patching.strategic_merge({"metadata": {"labels": {"a": "1"}}}, {"metadata": {"labels": {"a": None}}}, n)
    assert out["metadata"]["labels"] == {}


def test_strategic_merge_finalizers_primitive_merge() -> None:
    n = node("v1", "ConfigMap")
    out = patching.strategic_merge({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}}, n)
    assert out["metadata"]["finalizers"] == ["a", "b"]
    out = patching.strategic_merge({"metadata": {"finalizers": ["a", "b"]}},
                                   {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, n)
    assert out["metadata"]["finalizers"] == ["b"]


def test_fields_v1_round_trip_and_list_keys() -> None:
    n = node("apps/v1", "Deployment")
    obj = {"metadata": {"labels": {"app": "x"}},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [
               {"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}}}
    flat = patching.object_fields(obj, n, None)
    tree = patching.to_fields_v1(flat)
    c = tree["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert "." in c and 'k:{"containerPort":80,"protocol":"TCP"}' in c["f:ports"]  # defaulted key
    assert tree["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert patching.from_fields_v1(tree) >= set(flat)


def test_apply_merge_keeps_other_items() -> None:
    n = node("v1", "Service")
    live = {"spec": {"ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}, {"port": 443, "protocol": "TCP"}]}}
    out = patching.apply_merge(live, {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}}, n)
    assert out["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "nodePort": 30080, "targetPort": 8080},
                                    {"port": 443, "protocol": "TCP"}]
    path = ("f:spec", "f:ports", 'k:{"port":443,"protocol":"TCP"}')
    patching.remove_path(out, path)
    assert len(out["spec"]["ports"]) == 1
