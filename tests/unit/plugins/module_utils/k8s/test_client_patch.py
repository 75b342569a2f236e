# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The requests the client sends, with its urllib3 connection against a loopback server that records
each request and answers like kube-apiserver: Client.patch, a JSON merge patch (what `kubectl patch
--type merge` sends) under the collection's field manager; apply's dry run and server-side apply;
delete; and a list's items, which get the apiVersion and kind the server leaves out of them."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import FIELD_MANAGER, Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.rest import ApiResource, Connection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

pytest.importorskip("kubernetes")

Obj = dict[str, Any]


class Recorder(ThreadingHTTPServer):
    """Answers each request with the next (status, body) and records method, path, query, headers, body."""

    def __init__(self, answers: list[tuple[int, Obj]]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.answers = answers
        self.requests: list[Obj] = []


class Handler(BaseHTTPRequestHandler):
    server: Recorder

    def do_PATCH(self) -> None:  # pylint: disable=invalid-name
        length = int(self.headers.get("Content-Length") or 0)
        url = urlsplit(self.path)
        self.server.requests.append({"method": self.command, "path": url.path, "query": parse_qs(url.query),
                                     "content_type": self.headers.get("Content-Type"),
                                     "body": json.loads(self.rfile.read(length) or b"null")})
        status, body = self.server.answers.pop(0)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_DELETE = do_PATCH  # noqa: N815  # pylint: disable=invalid-name

    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        pass


@pytest.fixture
def server() -> Iterator[Recorder]:
    srv = Recorder([])
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def deployments_client(url: str) -> Client:
    """A Client on the collection's urllib3 connection, without discovery requests (Deployments only)."""
    client = Client.on(Connection.to(url))
    deployments = ApiResource("apps/v1", "Deployment", "deployments", namespaced=True)
    client.resource = lambda api_version, kind: deployments  # type: ignore[method-assign]
    return client


def test_patch_sends_a_merge_patch_of_the_fields_given_under_the_field_manager(server: Recorder) -> None:
    patched = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "one", "name": "shop", "generation": 2},
               "spec": {"replicas": 3}}
    server.answers.append((200, patched))
    url = "http://127.0.0.1:%d" % server.server_address[1]
    out = deployments_client(url).patch("apps/v1", "Deployment", "shop", "one", {"spec": {"replicas": 3}})
    assert out == patched
    (request,) = server.requests
    assert (request["method"], request["path"]) == ("PATCH", "/apis/apps/v1/namespaces/one/deployments/shop")
    assert request["content_type"] == "application/merge-patch+json"
    assert request["query"] == {"fieldManager": [FIELD_MANAGER]}
    assert request["body"] == {"spec": {"replicas": 3}}  # only the fields given, not a whole object


def test_a_refused_patch_is_a_k8s_error_naming_the_object(server: Recorder) -> None:
    server.answers.append((404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
                                 "message": 'deployments.apps "gone" not found'}))
    url = "http://127.0.0.1:%d" % server.server_address[1]
    with pytest.raises(K8sError, match=r'^patch Deployment gone failed: deployments\.apps "gone" not found$'):
        deployments_client(url).patch("apps/v1", "Deployment", "gone", "one", {"spec": {"replicas": 1}})


def test_list_items_carry_the_apiversion_and_kind_the_server_leaves_out(server: Recorder) -> None:
    server.answers.append((200, {"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {"resourceVersion": "7"},
                                 "items": [{"metadata": {"namespace": "one", "name": "shop"}}]}))
    url = "http://127.0.0.1:%d" % server.server_address[1]
    items = deployments_client(url).list("apps/v1", "Deployment", "one", label_selector="app=shop")
    assert items == [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "one", "name": "shop"}}]
    assert server.requests[0]["path"] == "/apis/apps/v1/namespaces/one/deployments"
    assert server.requests[0]["query"] == {"labelSelector": ["app=shop"]}


def test_apply_is_a_dry_run_then_a_server_side_apply_under_the_field_manager(server: Recorder) -> None:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "one", "name": "shop"}, "spec": {"replicas": 2}}
    stored = dict(obj, metadata=dict(obj["metadata"], uid="u1"))
    server.answers += [(404, {"kind": "Status", "code": 404, "message": "not found"}), (200, stored), (200, stored)]
    url = "http://127.0.0.1:%d" % server.server_address[1]
    result = deployments_client(url).apply(obj)
    assert result.changed and result.before is None and result.after == stored
    get, dry, real = server.requests
    assert (get["method"], get["path"]) == ("GET", "/apis/apps/v1/namespaces/one/deployments/shop")
    for request in (dry, real):
        assert (request["method"], request["path"]) == ("PATCH", "/apis/apps/v1/namespaces/one/deployments/shop")
        assert request["content_type"] == "application/apply-patch+yaml" and request["body"] == obj
    assert dry["query"] == {"fieldManager": [FIELD_MANAGER], "force": ["true"], "dryRun": ["All"]}
    assert real["query"] == {"fieldManager": [FIELD_MANAGER], "force": ["true"]}


def test_delete_asks_for_background_propagation(server: Recorder) -> None:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "one", "name": "shop"}}
    server.answers += [(200, obj), (200, {"kind": "Status", "status": "Success"})]
    url = "http://127.0.0.1:%d" % server.server_address[1]
    assert deployments_client(url).delete("apps/v1", "Deployment", "shop", "one")
    assert [(r["method"], r["path"]) for r in server.requests] == [
        ("GET", "/apis/apps/v1/namespaces/one/deployments/shop"), ("DELETE", "/apis/apps/v1/namespaces/one/deployments/shop")]
    assert server.requests[1]["query"] == {"propagationPolicy": ["Background"]}
