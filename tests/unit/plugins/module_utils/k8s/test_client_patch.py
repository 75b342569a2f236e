# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Client.patch: a JSON merge patch (what `kubectl patch --type merge` sends) under the
collection's field manager, with the client's urllib3 connection against a loopback
server that records each request and answers like kube-apiserver."""
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
