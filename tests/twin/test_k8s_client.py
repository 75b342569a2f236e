"""The collection's Kubernetes client layer (plugins/module_utils/k8s/, over the `kubernetes`
collection's urllib3 connection, k8s/rest.py) against the twin's real API server: what every module relies on -
server-side apply with change detection by a dry run (idempotency, check mode, diffs), field
ownership, discovery of a CRD applied moments ago, list + watch without a gap, deletes, and
the workload wait that names a crash-looping container with its last log lines."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import summarize
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, KindNotServed, WorkloadFailed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_for_workload
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import FIELD_MANAGER
from kindlab_twin.cluster import TwinClusterHandle

from realcp import deployment, ingress_nginx_release, namespace, wait_for

CM = ("v1", "ConfigMap")
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer"}}}}}}}]},
}


def configmap(name: str, ns: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


def test_apply_check_mode_ownership_discovery_watch_and_delete(twin: TwinClusterHandle, twin_kubeconfig: str) -> None:
    client = Client(twin_kubeconfig)
    server = twin.store.client  # the twin's own client, as the admin: another writer, uncached reads

    # apply_all orders dependencies first: the Namespace before what lives in it
    objs = [deployment("web", "lab", "nginx:1.27"), configmap("settings", "lab", mode="a"), namespace("lab")]
    results = client.apply_all(objs)
    assert [(ref_of(r.after), r.changed, r.before) for r in results] == [
        ("Namespace lab", True, None), ("ConfigMap lab/settings", True, None), ("Deployment lab/web", True, None)]
    summary = summarize(results)
    assert summary["changed"] and [o["action"] for o in summary["objects"]] == ["created"] * 3
    stored = server.get(CM, "lab", "settings")
    assert stored is not None and stored["data"] == {"mode": "a"}
    assert [(m["manager"], m["operation"]) for m in stored["metadata"]["managedFields"]] == [(FIELD_MANAGER, "Apply")]

    # the same again changes nothing, though the controllers have written status and annotations meanwhile
    wait_for(lambda: (server.get(("apps/v1", "Deployment"), "lab", "web") or {}).get("status", {}).get("readyReplicas"),
             what="deployment lab/web ready")
    again = summarize(client.apply_all(objs))
    assert not again["changed"] and [o["action"] for o in again["objects"]] == ["unchanged"] * 3, again
    assert again["diff"] == []

    # check mode: the change and its diff are reported, nothing is written
    bigger = deployment("web", "lab", "nginx:1.27", replicas=3)
    preview = client.apply(bigger, check_mode=True)
    assert preview.changed and preview.after["spec"]["replicas"] == 3
    assert preview.diff["before"]["spec"]["replicas"] == 1 and preview.diff["after"]["spec"]["replicas"] == 3
    assert "status" not in preview.diff["before"] and "managedFields" not in preview.diff["after"]["metadata"]
    live = server.get(("apps/v1", "Deployment"), "lab", "web")
    assert live is not None and live["spec"]["replicas"] == 1
    planned = client.apply_all([namespace("planned"), configmap("c", "planned")], check_mode=True)
    assert [r.changed for r in planned] == [True, True]
    assert server.get(("v1", "Namespace"), None, "planned") is None

    # a field another manager owns: a conflict without force, taken over with it (the default)
    server.apply(configmap("settings", "lab", mode="b"), "someone-else", force=True)
    with pytest.raises(K8sError, match=r'conflict with "someone-else".*\.data\.mode'):
        client.apply(configmap("settings", "lab", mode="a"), force=False)
    taken = client.apply(configmap("settings", "lab", mode="a"))
    assert taken.changed and taken.before is not None and taken.before["data"] == {"mode": "b"}
    stored = server.get(CM, "lab", "settings")
    assert stored is not None and stored["data"] == {"mode": "a"}

    # a CRD applied now, its custom resource right after (discovery re-read once); before, a kind the
    # cluster does not serve is KindNotServed (diagnose reads no Gateway API where its CRDs are absent)
    with pytest.raises(KindNotServed, match="does not serve example.com/v1 Widget"):
        client.resource("example.com/v1", "Widget")
    client.apply(CRD)

    def established() -> bool:
        crd = client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com") or {}
        return any(c["type"] == "Established" and c["status"] == "True"
                   for c in (crd.get("status") or {}).get("conditions") or [])
    wait_for(established, what="the CRD Established")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "lab"},
              "spec": {"size": 3}}
    created = wait_for(lambda: client.apply(widget), timeout=10, what="the Widget applied")
    assert created.changed and created.after["spec"] == {"size": 3}
    assert not client.apply(widget).changed

    # list, then watch from the list's resourceVersion: the next change arrives, nothing older
    items, version = client.list_with_version("v1", "ConfigMap", "lab")
    assert "settings" in [i["metadata"]["name"] for i in items] and version

    def change() -> None:
        time.sleep(0.5)
        server.apply(configmap("settings", "lab", mode="watched"), FIELD_MANAGER)
    writer = threading.Thread(target=change)
    writer.start()
    seen = []
    for event, obj in client.watch("v1", "ConfigMap", "lab", resource_version=version, timeout=10):
        seen.append((event, obj["metadata"]["name"], (obj.get("data") or {}).get("mode")))
        if obj.get("data", {}).get("mode") == "watched":
            break
    writer.join()
    assert seen == [("MODIFIED", "settings", "watched")]

    # no such pod: an empty log, no error
    assert client.pod_log("lab", "no-such-pod") == ""

    # delete: check mode deletes nothing; then deleted; then absent
    assert client.delete("v1", "ConfigMap", "settings", "lab", check_mode=True) is True
    assert server.get(CM, "lab", "settings") is not None
    assert client.delete("v1", "ConfigMap", "settings", "lab") is True
    assert client.get("v1", "ConfigMap", "settings", "lab") is None
    assert client.delete("v1", "ConfigMap", "settings", "lab") is False


def test_wait_for_workload_ready_and_crash_looping(twin: TwinClusterHandle, twin_kubeconfig: str) -> None:
    client = Client(twin_kubeconfig)
    client.apply(deployment("web", "default", "nginx:1.27", replicas=2))
    detail = wait_for_workload(client, "Deployment", "default", "web", timeout=60, interval=0.2)
    assert detail == "2/2 ready, 2 updated, 2 available"

    # the ingress-nginx controller exits at start (its --publish-service names no Service):
    # the wait ends at once, naming the container, the kubelet's reason and the log lines kwok serves
    objs = [namespace("two")] + ingress_nginx_release("two", scope=False, publish_service=False,
                                                      extra_args=["--publish-service=two/svc"])
    client.apply_all(objs)
    started = time.monotonic()
    with pytest.raises(WorkloadFailed) as failed:
        wait_for_workload(client, "Deployment", "two", "ingress-ingress-nginx-controller", timeout=60,
                          interval=0.2)
    assert time.monotonic() - started < 30
    failure = failed.value.details["failure"]
    assert failure["pod"].startswith("two/ingress-ingress-nginx-controller-") and failure["container"] == "controller"
    assert failure["reason"] == "CrashLoopBackOff" and failure["exit_code"] == 255
    assert failure["terminated_reason"] == "Error"
    assert failure["log"] and failure["log"][-1].startswith("F") and "main.go:89]" in failure["log"][-1]
    assert failure["log"][-1].endswith('no service with name svc found in namespace two: services "svc" not found')
    message = str(failed.value)
    assert message.startswith("Deployment two/ingress-ingress-nginx-controller cannot start: pod two/")
    assert "CrashLoopBackOff" in message and "last exit code 255 (Error)" in message
