"""ObjectStore: the contract.Store behaviour controllers and the API rely on."""
from __future__ import annotations

import threading
import time

import pytest

from kindlab_twin.contract import Conflict, Invalid, NotFound
from kindlab_twin.patching import ApplyConflict
from kindlab_twin.store import AlreadyExists, Forbidden, Gone, ObjectStore, UnknownKind, parse_label_selector

DEPLOY = ("apps/v1", "Deployment")
RS = ("apps/v1", "ReplicaSet")
CM = ("v1", "ConfigMap")


def deployment(name: str = "web", ns: str = "default", replicas: int = 1) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def cm(name: str, ns: str = "default", labels: dict | None = None, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "data": data}


@pytest.fixture
def store() -> ObjectStore:
    return ObjectStore()


def test_default_namespaces(store: ObjectStore) -> None:
    names = [n["metadata"]["name"] for n in store.list(("v1", "Namespace"))]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert store.get(("v1", "Namespace"), None, "default")["status"]["phase"] == "Active"


def test_create_fills_metadata_and_copies(store: ObjectStore) -> None:
    src = deployment()
    out = store.create(src, "test")
    meta = out["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert "uid" not in src["metadata"]  # input untouched
    mf = meta["managedFields"][0]
    assert mf["manager"] == "test" and mf["operation"] == "Update" and mf["fieldsType"] == "FieldsV1"
    assert "f:replicas" in mf["fieldsV1"]["f:spec"]
    out["spec"]["replicas"] = 99  # output is a copy
    assert store.get(DEPLOY, "default", "web")["spec"]["replicas"] == 1
    with pytest.raises(AlreadyExists):
        store.create(deployment(), "test")


def test_resource_versions_increase_globally(store: ObjectStore) -> None:
    a = store.create(cm("a"), "t")
    b = store.create(cm("b"), "t")
    c = store.update(dict(a, data={"x": "1"}), "t")
    assert int(a["metadata"]["resourceVersion"]) < int(b["metadata"]["resourceVersion"]) < int(c["metadata"]["resourceVersion"])


def test_update_stale_resource_version_conflicts(store: ObjectStore) -> None:
    a = store.create(cm("a"), "t")
    store.update(dict(a, data={"x": "1"}), "t")
    with pytest.raises(Conflict):
        store.update(dict(a, data={"x": "2"}), "t")
    with pytest.raises(NotFound):
        store.update(cm("missing"), "t")


def test_generation_only_on_spec_changes(store: ObjectStore) -> None:
    d = store.create(deployment(), "t")
    d["metadata"]["labels"]["extra"] = "1"
    d = store.update(d, "t")
    assert d["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 3
    d = store.update(d, "t")
    assert d["metadata"]["generation"] == 2


def test_status_subresource_separation(store: ObjectStore) -> None:
    d = store.create(dict(deployment(), status={"replicas": 5}), "t")
    assert "status" not in d  # create drops status, as the API server does
    d["status"] = {"replicas": 1}
    d["spec"]["replicas"] = 7  # ignored on the status subresource
    s = store.update(d, "ctrl", subresource="status")
    assert s["status"] == {"replicas": 1} and s["spec"]["replicas"] == 1
    assert s["metadata"]["managedFields"][-1]["subresource"] == "status"
    assert s["metadata"]["managedFields"][-1]["manager"] == "ctrl"
    s["status"] = {"replicas": 9}
    s["spec"]["replicas"] = 2
    m = store.update(s, "t")  # main resource write ignores status
    assert m["status"] == {"replicas": 1} and m["spec"]["replicas"] == 2


def test_noop_update_keeps_resource_version(store: ObjectStore) -> None:
    a = store.create(cm("a", x="1"), "t")
    b = store.update(a, "t")
    assert b["metadata"]["resourceVersion"] == a["metadata"]["resourceVersion"]


def test_apply_creates_updates_and_conflicts(store: ObjectStore) -> None:
    out = store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
                       "data": {"k": "1", "j": "2"}}, "mgr-a")
    assert out["data"] == {"k": "1", "j": "2"}
    assert out["metadata"]["managedFields"][0]["operation"] == "Apply"
    with pytest.raises(ApplyConflict) as e:
        store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
                     "data": {"k": "other"}}, "mgr-b", force=False)
    assert 'conflict with "mgr-a"' in str(e.value) and ".data.k" in str(e.value)
    # same value: shared ownership, no conflict
    store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
                 "data": {"k": "1"}}, "mgr-b", force=False)
    # mgr-a drops "j" from its config: the field goes; "k" stays (co-owned)
    out = store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
                       "data": {}}, "mgr-a")
    assert out["data"] == {"k": "1"}
    forced = store.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
                          "data": {"k": "2"}}, "mgr-c", force=True)
    assert forced["data"]["k"] == "2"
    owners = {e["manager"] for e in forced["metadata"]["managedFields"] if "f:k" in e["fieldsV1"].get("f:data", {})}
    assert owners == {"mgr-c"}


def test_apply_status_subresource(store: ObjectStore) -> None:
    store.create(deployment(), "t")
    out = store.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                       "status": {"readyReplicas": 1}}, "ctrl", subresource="status")
    assert out["status"] == {"readyReplicas": 1}
    entry = [e for e in out["metadata"]["managedFields"] if e["manager"] == "ctrl"][0]
    assert entry["subresource"] == "status" and entry["operation"] == "Apply"


def test_list_namespaces_and_selectors(store: ObjectStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "one"}}, "t")
    store.create(cm("a", labels={"app": "x", "tier": "web"}), "t")
    store.create(cm("b", ns="one", labels={"app": "y"}), "t")
    assert [o["metadata"]["name"] for o in store.list(CM)] == ["a", "b"]
    assert [o["metadata"]["name"] for o in store.list(CM, "one")] == ["b"]
    assert [o["metadata"]["name"] for o in store.list(CM, label_selector={"app": "x"})] == ["a"]
    assert [o["metadata"]["name"] for o in store.list_selector(CM, None, "app in (x,y),!tier")] == ["b"]


@pytest.mark.parametrize("sel,expect", [
    ("a=1", True), ("a==1", True), ("a!=1", False), ("a in (1,2)", True), ("a notin (1,2)", False),
    ("b", True), ("!b", False), ("c", False), ("!c", True), ("a=1,b=2", True), ("", True),
])
def test_label_selector(sel: str, expect: bool) -> None:
    assert parse_label_selector(sel)({"a": "1", "b": "2"}) is expect


def test_validation_errors(store: ObjectStore) -> None:
    with pytest.raises(UnknownKind, match='no matches for kind "Widget"'):
        store.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}, "t")
    with pytest.raises(NotFound, match='namespaces "nope" not found'):
        store.create(cm("a", ns="nope"), "t")
    with pytest.raises(Invalid, match="RFC 1123"):
        store.create(cm("Not_Valid"), "t")
    with pytest.raises(Invalid, match="name or generateName is required"):
        store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}, "t")
    bad = deployment()
    bad["spec"]["replicas"] = "two"
    with pytest.raises(Invalid, match="spec.replicas"):
        store.create(bad, "t")
    gen = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-", "namespace": "default"}}, "t")
    assert gen["metadata"]["name"].startswith("x-") and len(gen["metadata"]["name"]) == 7


def test_owner_reference_garbage_collection(store: ObjectStore) -> None:
    d = store.create(deployment(), "t")
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d["metadata"]["uid"], "controller": True}
    rs = deployment("web-1")
    rs["kind"] = "ReplicaSet"
    rs["metadata"]["ownerReferences"] = [ref]
    rs = store.create(rs, "t")
    child = cm("pod-ish")
    child["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                             "uid": rs["metadata"]["uid"]}]
    store.create(child, "t")
    store.delete(DEPLOY, "default", "web")
    assert store.list(RS) == [] and store.get(CM, "default", "pod-ish") is None
    with pytest.raises(NotFound):
        store.delete(DEPLOY, "default", "web")


def test_finalizers_delay_deletion(store: ObjectStore) -> None:
    a = cm("a")
    a["metadata"]["finalizers"] = ["example.com/hold"]
    store.create(a, "t")
    store.delete(CM, "default", "a")
    held = store.get(CM, "default", "a")
    assert held["metadata"]["deletionTimestamp"]
    held["metadata"]["finalizers"] = []
    store.update(held, "t")
    assert store.get(CM, "default", "a") is None


def test_namespace_deletion_removes_contents(store: ObjectStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "one"}}, "t")
    store.create(cm("a", ns="one"), "t")
    store.delete(("v1", "Namespace"), None, "one")
    assert store.list(CM, "one") == [] and store.get(("v1", "Namespace"), None, "one") is None


def test_namespace_termination_is_asynchronous_with_grace() -> None:
    s = ObjectStore(namespace_grace=0.2)
    s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "one"}}, "t")
    s.create(cm("a", ns="one"), "t")
    s.delete(("v1", "Namespace"), None, "one")
    assert s.get(("v1", "Namespace"), None, "one")["status"]["phase"] == "Terminating"
    with pytest.raises(Forbidden, match="being terminated"):
        s.create(cm("b", ns="one"), "t")
    deadline = time.time() + 3
    while s.get(("v1", "Namespace"), None, "one") is not None and time.time() < deadline:
        time.sleep(0.02)
    assert s.get(("v1", "Namespace"), None, "one") is None and s.list(CM, "one") == []


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "ipaddresspools.metallb.io"},
    "spec": {"group": "metallb.io", "scope": "Namespaced",
             "names": {"plural": "ipaddresspools", "singular": "ipaddresspool", "kind": "IPAddressPool", "listKind": "IPAddressPoolList"},
             "versions": [{"name": "v1beta1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "addresses": {"type": "array", "items": {"type": "string"}},
                                   "autoAssign": {"type": "boolean"}}},
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}


def test_crd_registers_resource(store: ObjectStore) -> None:
    crd = store.create(CRD, "t")
    assert {c["type"] for c in crd["status"]["conditions"]} == {"Established", "NamesAccepted"}
    pool = {"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"addresses": ["100.64.0.0/16"]}}
    assert store.create(pool, "t")["spec"]["addresses"] == ["100.64.0.0/16"]
    bad = dict(pool, metadata={"name": "q", "namespace": "default"}, spec={"autoAssign": "yes"})
    with pytest.raises(Invalid, match="spec.autoAssign"):
        store.create(bad, "t")
    rt = store.resolve(("metallb.io/v1beta1", "IPAddressPool"))
    assert rt.namespaced and rt.has_status and rt.plural == "ipaddresspools"
    store.delete(("apiextensions.k8s.io/v1", "CustomResourceDefinition"), None, "ipaddresspools.metallb.io")
    with pytest.raises(UnknownKind):
        store.list(("metallb.io/v1beta1", "IPAddressPool"))


def test_listeners_run_outside_the_lock(store: ObjectStore) -> None:
    seen: list[tuple[str, str]] = []

    def listener(etype: str, obj: dict) -> None:
        seen.append((etype, obj["metadata"]["name"]))
        # a listener may write (controllers do): must not deadlock, runs after commit
        if obj["metadata"]["name"] == "a" and etype == "ADDED":
            t = threading.Thread(target=lambda: store.create(cm("from-thread"), "t"))
            t.start()
            t.join(2)
            assert not t.is_alive()
            store.create(cm("b"), "listener")

    unsubscribe = store.subscribe(listener)
    store.create(cm("a"), "t")
    store.delete(CM, "default", "a")
    unsubscribe()
    store.create(cm("c"), "t")
    assert seen == [("ADDED", "a"), ("ADDED", "from-thread"), ("ADDED", "b"), ("DELETED", "a")]


def test_event_history_and_gone() -> None:
    s = ObjectStore(history=10)
    start = int(s.resource_version)
    for i in range(5):
        s.create(cm(f"x{i}"), "t")
    events = s.events_after(start, 0)
    assert [e.obj["metadata"]["name"] for e in events] == [f"x{i}" for i in range(5)]
    assert s.events_after(int(s.resource_version), 0.01) == []
    for i in range(20):
        s.create(cm(f"y{i}"), "t")
    with pytest.raises(Gone):
        s.events_after(start, 0)


def test_concurrent_writers_get_unique_versions(store: ObjectStore) -> None:
    def work(k: int) -> None:
        for i in range(50):
            store.create(cm(f"w{k}-{i}"), "t")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rvs = [o["metadata"]["resourceVersion"] for o in store.list(CM)]
    assert len(rvs) == 200 == len(set(rvs))
