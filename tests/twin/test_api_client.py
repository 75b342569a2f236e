"""The HTTP API through the `kubernetes` Python client (and raw requests where needed)."""
from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections import deque
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def ns(name: str) -> client.V1Namespace:
    return client.V1Namespace(metadata=client.V1ObjectMeta(name=name))


def cm(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}}, "data": data}


def deployment(name: str = "web", replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}


def test_unauthenticated_requests_get_401(raw: Any, api: Any) -> None:
    for token in (None, "wrong"):
        code, body, _hdrs = raw(api, "GET", "/api/v1/namespaces", token=token)
        assert code == 401
        assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_binds_only_loopback(api: Any) -> None:
    assert api.server.httpd.server_address[0] == "127.0.0.1"
    addrs = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1", "127.0.1.1"}
    for addr in addrs:
        with pytest.raises(OSError):
            socket.create_connection((addr, api.server.port), timeout=1).close()


def test_version_and_discovery(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    assert client.VersionApi(k8s).get_code().git_version.startswith("v1.35")
    code, apis, _hdrs = raw(api, "GET", "/apis")
    assert code == 200 and apis["kind"] == "APIGroupList"
    apps = next(g for g in apis["groups"] if g["name"] == "apps")
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    _code, core, _hdrs = raw(api, "GET", "/api/v1")
    names = {r["name"]: r for r in core["resources"]}
    assert {"pods", "pods/log", "pods/status", "services", "namespaces"} <= set(names)
    assert names["pods"]["shortNames"] == ["po"] and "all" in names["pods"]["categories"]
    assert names["namespaces"]["namespaced"] is False
    dyn = DynamicClient(k8s)
    ing = dyn.resources.get(api_version="networking.k8s.io/v1", kind="Ingress")
    assert ing.name == "ingresses" and ing.namespaced and "ing" in ing.short_names
    assert dyn.resources.get(api_version="apps/v1", kind="Deployment").subresources["status"]


def test_crud_and_error_statuses(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespace(ns("one"))
    created = core.create_namespaced_config_map("one", cm("a", x="1"))
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("one", cm("a"))
    body = json.loads(e.value.body)
    assert e.value.status == 409 and body["reason"] == "AlreadyExists"
    assert body["details"] == {"name": "a", "group": "", "kind": "configmaps"}
    got = core.read_namespaced_config_map("a", "one")
    got.data = {"x": "2"}
    core.replace_namespaced_config_map("a", "one", got)
    got.data = {"x": "3"}  # stale resourceVersion now
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map("a", "one", got)
    assert e.value.status == 409 and json.loads(e.value.body)["reason"] == "Conflict"
    core.delete_namespaced_config_map("a", "one")
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("a", "one")
    body = json.loads(e.value.body)
    assert e.value.status == 404 and body["message"] == 'configmaps "a" not found' and body["status"] == "Failure"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("nope", cm("a"))
    assert e.value.status == 404 and json.loads(e.value.body)["message"] == 'namespaces "nope" not found'
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("one", cm("Bad_Name"))
    assert e.value.status == 422 and json.loads(e.value.body)["reason"] == "Invalid"
    bad = deployment()
    bad["spec"]["replicas"] = "three"
    code, out, _hdrs = raw(api, "POST", "/apis/apps/v1/namespaces/one/deployments", bad)  # the client would refuse it
    assert code == 422 and out["reason"] == "Invalid" and "spec.replicas" in out["message"]


def test_list_label_and_field_selectors(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    for name, labels in (("a", {"app": "x", "tier": "web"}), ("b", {"app": "y"}), ("c", {})):
        core.create_namespaced_config_map("default", cm(name, labels))

    def names(**kw: Any) -> list[str]:
        return [o.metadata.name for o in core.list_namespaced_config_map("default", **kw).items]

    assert names(label_selector="app=x") == ["a"]
    assert names(label_selector="app!=x") == ["b", "c"]
    assert names(label_selector="app in (x,y)") == ["a", "b"]
    assert names(label_selector="app notin (x)") == ["b", "c"]
    assert names(label_selector="tier") == ["a"]
    assert names(label_selector="!app") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.name!=b") == ["a", "c"]
    assert [o.metadata.name for o in core.list_config_map_for_all_namespaces(field_selector="metadata.namespace=default").items] == ["a", "b", "c"]
    for phase, node in (("Running", "n1"), ("Pending", "")):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{phase.lower()}"},
               "spec": {"nodeName": node or None, "containers": [{"name": "c", "image": "nginx"}]}}
        core.create_namespaced_pod("default", pod)
        api.store.update(dict(api.store.get(("v1", "Pod"), "default", f"p-{phase.lower()}"), status={"phase": phase}),
                         "kubelet", subresource="status")
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="status.phase=Running").items] == ["p-running"]
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="spec.nodeName=n1").items] == ["p-running"]
    code, body, _hdrs = raw(api, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=app+in+(x")
    assert code == 400 and body["reason"] == "BadRequest"


def test_watch_with_kubernetes_watch(api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_config_map("default", cm("before"))
    rv = core.list_namespaced_config_map("default").metadata.resource_version

    def writer() -> None:
        time.sleep(0.2)
        core.create_namespaced_config_map("default", cm("w", x="1"))
        core.patch_namespaced_config_map("w", "default", {"data": {"x": "2"}})
        core.delete_namespaced_config_map("w", "default")

    threading.Thread(target=writer).start()
    w = watch.Watch()
    events = []
    for ev in w.stream(core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=3,
                       allow_watch_bookmarks=True):
        events.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "DELETED":
            w.stop()
    assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    # no resourceVersion: current objects first, as synthetic ADDED events
    first = next(iter(watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1)))
    assert first["type"] == "ADDED" and first["object"].metadata.name == "before"


def test_watch_timeout_and_gone(raw: Any, api: Any) -> None:
    t0 = time.monotonic()
    code, body, headers = raw(api, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&resourceVersion="
                              + api.store.resource_version)
    assert code == 200 and body == "" and 0.9 < time.monotonic() - t0 < 3
    api.store._history = deque(api.store._history, maxlen=3)
    for i in range(6):
        api.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"g{i}", "namespace": "default"}}, "t")
    code, body, _hdrs = raw(api, "GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1&timeoutSeconds=2")
    assert code == 200 and body["type"] == "ERROR"
    assert body["object"]["code"] == 410 and body["object"]["reason"] == "Expired"


def test_patch_types(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    apps = client.AppsV1Api(k8s)
    d = deployment()
    d["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox:1"})
    apps.create_namespaced_deployment("default", d)
    base = "/apis/apps/v1/namespaces/default/deployments/web"
    code, out, _hdrs = raw(api, "PATCH", base, {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}}}},
                           "application/strategic-merge-patch+json")
    assert code == 200 and [c["image"] for c in out["spec"]["template"]["spec"]["containers"]] == ["nginx:1.27", "busybox:2"]
    code, out, _hdrs = raw(api, "PATCH", base, {"metadata": {"labels": {"app": None, "x": "1"}}}, "application/merge-patch+json")
    assert code == 200 and out["metadata"]["labels"] == {"x": "1"}
    code, out, _hdrs = raw(api, "PATCH", base, [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                           "application/json-patch+json")
    assert code == 200 and out["spec"]["replicas"] == 4 and out["metadata"]["generation"] == 3
    code, out, _hdrs = raw(api, "PATCH", base, [{"op": "test", "path": "/spec/replicas", "value": 9}], "application/json-patch+json")
    assert code == 422
    code, out, _hdrs = raw(api, "PATCH", base, {"spec": {}}, "text/plain")
    assert code == 415
    code, out, _hdrs = raw(api, "PATCH", base, {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 2}},
                           "application/merge-patch+json")
    assert code == 409
    code, out, _hdrs = raw(api, "PATCH", base + "x", {"spec": {}}, "application/merge-patch+json")
    assert code == 404


def test_server_side_apply_dynamic_client(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    dyn = DynamicClient(k8s)
    res = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    out = res.server_side_apply(body=deployment(replicas=2), namespace="default", field_manager="lab")
    assert out.spec.replicas == 2
    entry = [m for m in out.to_dict()["metadata"]["managedFields"] if m["manager"] == "lab"][0]
    assert entry["operation"] == "Apply" and "f:replicas" in entry["fieldsV1"]["f:spec"]
    with pytest.raises(ApiException) as e:
        res.server_side_apply(body=deployment(replicas=5), namespace="default", field_manager="other")
    body = json.loads(e.value.body)
    assert e.value.status == 409 and body["reason"] == "Conflict"
    assert 'conflict with "lab"' in body["message"] and body["details"]["causes"][0]["field"] == ".spec.replicas"
    out = res.server_side_apply(body=deployment(replicas=5), namespace="default", field_manager="other", force_conflicts=True)
    assert out.spec.replicas == 5
    code, body, _hdrs = raw(api, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web", deployment(),
                            "application/apply-patch+yaml")
    assert code == 400 and "fieldManager" in body["message"]
    code, body, _hdrs = raw(api, "PATCH", "/api/v1/namespaces/default/configmaps/y?fieldManager=m",
                            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n", "application/apply-patch+yaml")
    assert code == 200 and body["data"] == {"k": "v"}


def test_dry_run_stores_nothing(raw: Any, api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    out = core.create_namespaced_config_map("default", cm("dry", x="1"), dry_run="All")
    assert out.metadata.name == "dry"
    assert core.list_namespaced_config_map("default").items == []
    core.create_namespaced_config_map("default", cm("real"))
    core.delete_namespaced_config_map("real", "default", dry_run="All")
    core.patch_namespaced_config_map("real", "default", {"data": {"z": "1"}}, dry_run="All")
    assert not core.read_namespaced_config_map("real", "default").data
    code, body, _hdrs = raw(api, "PATCH", "/api/v1/namespaces/default/configmaps/real?dryRun=All&fieldManager=m",
                            cm("real", z="2"), "application/apply-patch+yaml")
    assert code == 200 and not core.read_namespaced_config_map("real", "default").data


def test_status_subresource(api: Any, k8s: client.ApiClient) -> None:
    apps = client.AppsV1Api(k8s)
    apps.create_namespaced_deployment("default", deployment())
    out = apps.patch_namespaced_deployment_status("web", "default", {"status": {"readyReplicas": 1}, "spec": {"replicas": 9}})
    assert out.status.ready_replicas == 1 and out.spec.replicas == 1
    assert out.metadata.managed_fields[-1].subresource == "status"
    out = apps.patch_namespaced_deployment("web", "default", {"status": {"readyReplicas": 7}})
    assert out.status.ready_replicas == 1


def test_field_validation_strict(raw: Any, api: Any) -> None:
    body = cm("s")
    body["spec"] = {"oops": 1}
    code, out, _hdrs = raw(api, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body)
    assert code == 400 and 'unknown field "spec"' in out["message"]
    code, out, headers = raw(api, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", body)
    assert code == 201 and "unknown field" in headers.get("Warning", "")


def test_delete_collection(api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    for n, lab in (("a", "x"), ("b", "x"), ("c", "y")):
        core.create_namespaced_config_map("default", cm(n, {"g": lab}))
    core.delete_collection_namespaced_config_map("default", label_selector="g=x")
    assert [o.metadata.name for o in core.list_namespaced_config_map("default").items] == ["c"]


def test_table_output(raw: Any, api: Any) -> None:
    ing = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"ingressClassName": "nginx", "rules": [{"host": "a.example.com"}]}}
    obj = api.store.create(ing, "t")
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "100.64.0.1"}]}}
    api.store.update(obj, "ctrl", subresource="status")
    code, t, _hdrs = raw(api, "GET", "/apis/networking.k8s.io/v1/ingresses", headers={"Accept": TABLE})
    assert code == 200 and t["kind"] == "Table"
    cols = [c["name"] for c in t["columnDefinitions"]]
    assert cols == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    assert t["rows"][0]["cells"][:5] == ["web", "nginx", "a.example.com", "100.64.0.1", "80"]
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    code, t, _hdrs = raw(api, "GET", "/api/v1/namespaces/default/configmaps?includeObject=Object", headers={"Accept": TABLE})
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Data", "Age"]
    code, t, _hdrs = raw(api, "GET", "/apis/coordination.k8s.io/v1/leases", headers={"Accept": TABLE})
    assert code == 200 and t["rows"] == []


def test_previous_pod_log_follows_last_state(api: Any, k8s: client.ApiClient) -> None:
    """previous=true serves lastState.terminated's run: for a container waiting to restart that is
    the run its current log shows; for a running one, the run before; without one, a 400."""
    core = client.CoreV1Api(k8s)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "crash"},
           "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
    core.create_namespaced_pod("default", pod)
    api.pod_logs.append("default", "crash", "run 0", container="main")
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod_log("crash", "default", container="main", previous=True)
    assert e.value.status == 400 and json.loads(e.value.body)["message"] == 'previous terminated container "main" in pod "crash" not found'
    api.pod_logs.restart("default", "crash", "main")
    api.pod_logs.append("default", "crash", "run 1", container="main")
    terminated = {"terminated": {"exitCode": 255, "reason": "Error"}}
    status = {"containerStatuses": [{"name": "main", "ready": False, "restartCount": 1, "image": "nginx", "imageID": "",
                                     "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": terminated}]}
    core.patch_namespaced_pod_status("crash", "default", {"status": status})
    assert core.read_namespaced_pod_log("crash", "default", container="main") == "run 1\n"
    assert core.read_namespaced_pod_log("crash", "default", container="main", previous=True) == "run 1\n"
    status["containerStatuses"][0].update(state={"running": {"startedAt": "2026-11-23T14:00:00Z"}}, ready=True)
    core.patch_namespaced_pod_status("crash", "default", {"status": status})
    assert core.read_namespaced_pod_log("crash", "default", container="main", previous=True) == "run 0\n"


def test_pod_logs(api: Any, k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "main", "image": "nginx"}, {"name": "side", "image": "busybox"}]}}
    core.create_namespaced_pod("default", pod)
    for i in range(5):
        api.pod_logs.append("default", "p", f"line {i}")
    api.pod_logs.append("default", "p", "side line", container="side")
    assert core.read_namespaced_pod_log("p", "default", container="main") == "".join(f"line {i}\n" for i in range(5))
    assert core.read_namespaced_pod_log("p", "default", container="main", tail_lines=2) == "line 3\nline 4\n"
    assert core.read_namespaced_pod_log("p", "default", container="side") == "side line\n"
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod_log("p", "default")
    assert e.value.status == 400 and "a container name must be specified" in json.loads(e.value.body)["message"]
    resp = core.read_namespaced_pod_log("p", "default", container="main", follow=True, tail_lines=1,
                                        _preload_content=False)
    threading.Timer(0.3, lambda: api.pod_logs.append("default", "p", "late line")).start()
    got = b""
    deadline = time.monotonic() + 5
    while b"late line" not in got and time.monotonic() < deadline:
        got += resp.read1(1024) if hasattr(resp, "read1") else resp.read(1)
    resp.release_conn()
    assert got.decode().startswith("line 4\n") and b"late line\n" in got


def test_malformed_requests_get_4xx(raw: Any, api: Any) -> None:
    cases = [
        ("POST", "/api/v1/namespaces/default/configmaps", b"{not json", "application/json", 400),
        ("POST", "/api/v1/namespaces/default/configmaps", b"[1, 2]", "application/json", 400),
        ("POST", "/api/v1/namespaces/default/configmaps", b"", "application/json", 400),
        ("GET", "/api/v1/nosuchthings", None, "application/json", 404),
        ("GET", "/apis/nosuch.group/v1", None, "application/json", 404),
        ("GET", "/api/v1/namespaces/default/configmaps/a/b/c/d", None, "application/json", 404),
        ("GET", "/api/v1/configmaps/kube-root", None, "application/json", 404),
        ("POST", "/api/v1/namespaces/default/configmaps/x", b"{}", "application/json", 405),
        ("OPTIONS", "/api/v1/namespaces", None, "application/json", 405),
        ("FROB", "/api/v1/namespaces", None, "application/json", 405),
        ("POST", "/api/v1/namespaces/default/configmaps", b"apiVersion: v1\nkind: [", "application/yaml", 400),
        ("GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=abc", None, "application/json", 200),
        ("POST", "/api/v1/namespaces/default/configmaps",
         json.dumps({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}), "application/json", 400),
        ("PUT", "/api/v1/namespaces/default/configmaps/missing", json.dumps(cm("missing")), "application/json", 404),
    ]
    for method, path, body, ctype, want in cases:
        code, out, _hdrs = raw(api, method, path, body, ctype)
        if want == 200:  # a bad watch parameter ends in an ERROR event or a 400, never a crash
            assert code in (200, 400), (method, path, code, out)
            continue
        assert code == want, (method, path, code, out)
        assert out["kind"] == "Status" and out["code"] == want
    with socket.create_connection(("127.0.0.1", api.server.port), timeout=5) as s:
        s.sendall(b"garbage\r\n\r\n")  # not even TLS
    ctx = ssl.create_default_context(cafile=api.ca_file)
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", api.server.port), timeout=5),
                         server_hostname="127.0.0.1") as s:
        s.sendall(b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + api.token.encode()
                  + b"\r\nContent-Length: -5\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400")
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", api.server.port), timeout=5),
                         server_hostname="127.0.0.1") as s:
        s.sendall(b"NOT A REQUEST LINE AT ALL\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400")
    code, _body, _hdrs = raw(api, "GET", "/version")
    assert code == 200


def test_openapi_v3_documents(raw: Any, api: Any) -> None:
    code, root, _hdrs = raw(api, "GET", "/openapi/v3")
    assert code == 200 and "apis/apps/v1" in root["paths"] and "api/v1" in root["paths"]
    code, doc, _hdrs = raw(api, "GET", root["paths"]["apis/networking.k8s.io/v1"]["serverRelativeURL"])
    assert code == 200 and "io.k8s.api.networking.v1.Ingress" in doc["components"]["schemas"]
    patch = doc["paths"]["/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses/{name}"]["patch"]
    assert any(p["name"] == "fieldValidation" for p in patch["parameters"])
    assert patch["x-kubernetes-group-version-kind"] == {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"}


def test_scale_subresource(api: Any, k8s: client.ApiClient) -> None:
    apps = client.AppsV1Api(k8s)
    apps.create_namespaced_deployment("default", deployment())
    scale = apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
    assert scale.spec.replicas == 3 and scale.status.selector == "app=web"
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 3


def test_watch_selector_transitions(raw: Any, api: Any) -> None:
    rv = api.store.resource_version
    obj = api.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t", "namespace": "default"}}, "t")
    obj["metadata"]["labels"] = {"watched": "yes"}
    obj = api.store.update(obj, "t")
    obj["data"] = {"a": "1"}
    obj = api.store.update(obj, "t")
    obj["metadata"]["labels"] = {}
    api.store.update(obj, "t")
    code, body, _hdrs = raw(api, "GET", f"/api/v1/namespaces/default/configmaps?watch=1&labelSelector=watched%3Dyes"
                                        f"&resourceVersion={rv}&timeoutSeconds=1")
    events = [json.loads(line)["type"] for line in body.splitlines()] if isinstance(body, str) else [body["type"]]
    assert events == ["ADDED", "MODIFIED", "DELETED"]


# `kubectl create namespace nsx` as kubectl 1.32 sends it (captured): runtime.Unknown in protobuf
NAMESPACE_PB = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121b0a130a036e737812001a0022002a00"
    "32003800420012001a020a001a002200"
)


def test_protobuf_bodies(raw: Any, api: Any) -> None:
    code, out, _hdrs = raw(api, "POST", "/api/v1/namespaces", NAMESPACE_PB, "application/vnd.kubernetes.protobuf")
    assert code == 201 and out["metadata"]["name"] == "nsx"
    # DeleteOptions{propagationPolicy: "Orphan"} wrapped the same way
    opts = b"\x22\x06Orphan"
    body = b"k8s\x00" + b"\x0a\x13\x0a\x02v1\x12\x0dDeleteOptions" + b"\x12" + bytes([len(opts)]) + opts
    code, out, _hdrs = raw(api, "DELETE", "/api/v1/namespaces/nsx", body, "application/vnd.kubernetes.protobuf")
    assert code == 200
    code, out, _hdrs = raw(api, "POST", "/apis/apps/v1/namespaces/default/deployments", b"k8s\x00\x0a\x00",
                           "application/vnd.kubernetes.protobuf")
    assert code == 415


def test_watch_list_initial_events_end_bookmark(raw: Any, api: Any) -> None:
    api.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}, "t")
    code, body, _hdrs = raw(api, "GET", "/api/v1/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                                        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
    events = [json.loads(line) for line in body.splitlines()]
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_dynamic_client_verbs_and_watch(api: Any, k8s: client.ApiClient) -> None:
    dyn = DynamicClient(k8s)
    ing = dyn.resources.get(api_version="networking.k8s.io/v1", kind="Ingress")
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "default", "labels": {"lab": "x"}},
            "spec": {"rules": [{"host": "a.example.com"}]}}
    ing.create(body=body, namespace="default")
    assert [i.metadata.name for i in ing.get(namespace="default", label_selector="lab=x").items] == ["web"]
    out = ing.patch(name="web", namespace="default", body={"metadata": {"annotations": {"a": "b"}}},
                    content_type="application/merge-patch+json")
    assert out.metadata.annotations.a == "b"
    rv = out.metadata.resourceVersion

    def flap() -> None:
        time.sleep(0.2)
        for ip in ("100.64.0.1", "172.18.0.2"):
            cur = api.store.get(("networking.k8s.io/v1", "Ingress"), "default", "web")
            cur["status"] = {"loadBalancer": {"ingress": [{"ip": ip}]}}
            api.store.update(cur, f"writer-{ip}", subresource="status")

    threading.Thread(target=flap).start()
    seen = []
    for ev in dyn.watch(ing, namespace="default", resource_version=rv, timeout=3):
        obj = ev["object"]
        status = [m for m in obj.metadata.managedFields if m.get("subresource") == "status"]
        seen.append((obj.status.loadBalancer.ingress[0].ip, status[-1]["manager"]))
        if len(seen) == 2:
            break
    assert seen == [("100.64.0.1", "writer-100.64.0.1"), ("172.18.0.2", "writer-172.18.0.2")]
    ing.delete(name="web", namespace="default")
    assert ing.get(namespace="default").items == []
