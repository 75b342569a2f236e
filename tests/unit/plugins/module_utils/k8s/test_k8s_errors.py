# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors a person can act on: the client layer against an API server that is not there, answers
401, presents a certificate the kubeconfig does not trust, or a kubeconfig that names no cluster.
The client's urllib3 connection runs against loopback servers on 127.0.0.1; every failure
is one line naming the server URL, the kubeconfig context and file, and what to do."""
from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import socket
import ssl
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import (
    ApiRejected, ApiUnreachable, K8sError, KubeconfigError, export_hint, one_line, transport_cause,
)
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_watch import (
    Server,
    assert_no_urllib3_text,
    client_for,
    closed_port_url,
    respond,
    serve,
)

pytest.importorskip("kubernetes")

Obj = dict[str, Any]
CONTEXT = "kind-ingress-lab"
HINT = "is the cluster running? (kindlab-twin get clusters / kind get clusters)"
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}

__all__ = ["serve"]  # the loopback server fixture of test_watch, imported to be used here


def write_kubeconfig(path: Path, url: str, ca_pem: bytes | None = None, current: str | None = CONTEXT,
                     contexts: tuple[str, ...] = (CONTEXT,)) -> str:
    cluster: Obj = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    doc: Obj = {"apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": name, "cluster": cluster} for name in contexts],
                "contexts": [{"name": name, "context": {"cluster": name, "user": "u"}} for name in contexts],
                "users": [{"name": "u", "user": {"token": "t"}}]}
    if current is not None:
        doc["current-context"] = current
    path.write_text(json.dumps(doc))
    return str(path)


def assert_one_line(text: str, *parts: str) -> None:
    assert "\n" not in text and text == text.strip()
    for part in parts:
        assert part in text, (part, text)
    assert_no_urllib3_text(text)


def built_client(url: str, path: str) -> Client:
    """A client as if built while its server answered, whose discovery has read Ingresses: what a
    module holds when the server goes away under it."""
    return client_for(url, path)  # named as its kubeconfig's context, CONTEXT


def fails(path: str | None, context: str | None = None) -> K8sError:
    """The error of building a client and making one request (the request matters when the
    constructor's discovery came from a cache)."""
    with pytest.raises(K8sError) as exc:
        Client(path, context).list("v1", "Namespace")
    return exc.value


# ---------------------------------------------------------------- a server that does not answer


def test_a_refused_connection_names_the_server_the_context_and_the_kubeconfig(tmp_path: Path) -> None:
    url = closed_port_url()
    path = write_kubeconfig(tmp_path / "config", url)
    exc = fails(path)
    assert isinstance(exc, ApiUnreachable)
    assert str(exc) == "the API server at %s (context %s, kubeconfig %s) did not answer: connection refused; %s" % (
        url, CONTEXT, path, HINT)
    assert_one_line(str(exc))


def test_every_request_of_a_built_client_fails_in_the_same_line(tmp_path: Path) -> None:
    """A client built while the server answered, whose server then went away (a deleted cluster)."""
    url = closed_port_url()
    path = write_kubeconfig(tmp_path / "config", url)
    client = built_client(url, path)
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"namespace": "one", "name": "test"}}
    calls: list[Callable[[], Any]] = [
        lambda: client.get("networking.k8s.io/v1", "Ingress", "test", "one"),
        lambda: client.list("networking.k8s.io/v1", "Ingress"),
        lambda: client.apply(ingress),
        lambda: client.delete("networking.k8s.io/v1", "Ingress", "test", "one"),
        lambda: client.pod_log("one", "test"),
    ]
    for call in calls:
        with pytest.raises(ApiUnreachable) as exc:
            call()
        assert str(exc.value) == "the API server at %s (context %s, kubeconfig %s) did not answer: connection refused; %s" % (
            url, CONTEXT, path, HINT)


# ---------------------------------------------------------------- a server that refuses us


def test_401_says_the_credentials_are_refused_and_how_to_renew_them(serve: Callable[..., Server], tmp_path: Path) -> None:
    server = serve(*[respond(401, UNAUTHORIZED)] * 8)
    path = write_kubeconfig(tmp_path / "config", server.url)
    exc = fails(path)
    assert isinstance(exc, ApiRejected)
    assert str(exc) == (
        "the API server at %s (context %s, kubeconfig %s) refused the credentials of the context (401 Unauthorized: its "
        "client certificate or token is invalid or has expired, or the cluster was recreated since the kubeconfig was "
        "written); write its kubeconfig again: kind export kubeconfig --name ingress-lab --kubeconfig %s (the twin: "
        "kindlab-twin export kubeconfig --name ingress-lab --kubeconfig %s)" % (server.url, CONTEXT, path, path, path))
    assert_one_line(str(exc))


def test_401_on_a_request_of_a_built_client(serve: Callable[..., Server], tmp_path: Path) -> None:
    server = serve(respond(401, UNAUTHORIZED))
    path = write_kubeconfig(tmp_path / "config", server.url)
    with pytest.raises(ApiRejected) as exc:
        built_client(server.url, path).get("networking.k8s.io/v1", "Ingress", "test", "one")
    assert_one_line(str(exc.value), server.url, "context %s" % CONTEXT, path, "401 Unauthorized", "kind export kubeconfig")


def _pem_pair(name: str) -> tuple[bytes, bytes, bytes]:
    """(CA certificate, a serving certificate for 127.0.0.1 it signed, that certificate's key) in PEM."""
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return (ca.public_bytes(serialization.Encoding.PEM), leaf.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[str]:
    """An https URL on 127.0.0.1 whose server presents a certificate of a CA of its own (a
    recreated cluster's), answering nothing: the handshake is as far as a client gets."""
    _ca, leaf, key = _pem_pair("the new cluster's CA")
    (tmp_path / "tls.crt").write_bytes(leaf)
    (tmp_path / "tls.key").write_bytes(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()

    def serve_tls() -> None:
        while not stop.is_set():
            try:
                conn, _addr = sock.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1024)
            except (OSError, ssl.SSLError):
                conn.close()

    threading.Thread(target=serve_tls, daemon=True).start()
    yield "https://127.0.0.1:%d" % sock.getsockname()[1]
    stop.set()
    sock.close()


def test_a_certificate_the_kubeconfig_does_not_trust(tls_server: str, tmp_path: Path) -> None:
    old_ca, _leaf, _key = _pem_pair("the old cluster's CA")
    path = write_kubeconfig(tmp_path / "config", tls_server, ca_pem=old_ca)
    exc = fails(path)
    assert isinstance(exc, ApiRejected)
    assert str(exc) == (
        "the API server at %s (context %s, kubeconfig %s) presented a certificate the kubeconfig does not trust (TLS "
        "handshake failed: certificate verify failed: unable to get local issuer certificate): the cluster was probably "
        "recreated since the kubeconfig was written; write its kubeconfig again: kind export kubeconfig --name ingress-lab "
        "--kubeconfig %s (the twin: kindlab-twin export kubeconfig --name ingress-lab --kubeconfig %s)"
        % (tls_server, CONTEXT, path, path, path))
    assert_one_line(str(exc))


@pytest.fixture
def plain_http_server() -> Iterator[str]:
    """An https URL on 127.0.0.1 whose server speaks plain HTTP: it answers a TLS hello with 400."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)

    def answer() -> None:
        while True:
            try:
                conn, _addr = sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield "https://127.0.0.1:%d" % sock.getsockname()[1]
    sock.close()


def test_https_to_a_plain_http_server(plain_http_server: str, tmp_path: Path) -> None:
    url = plain_http_server
    path = write_kubeconfig(tmp_path / "config", url)
    exc = fails(path)
    assert isinstance(exc, ApiRejected)
    assert_one_line(str(exc), "the API server at %s (context %s, kubeconfig %s): TLS handshake failed" % (url, CONTEXT, path),
                    "check the server URL (https) and the certificates in the kubeconfig")


# ---------------------------------------------------------------- a kubeconfig that names no cluster


def test_a_kubeconfig_that_does_not_exist(tmp_path: Path) -> None:
    path = str(tmp_path / "nowhere" / "kubeconfig")
    exc = fails(path, CONTEXT)
    assert isinstance(exc, KubeconfigError)
    assert str(exc) == ("cannot use kubeconfig %s (context %s): the file does not exist; create the cluster first "
                        "(ansible-playbook playbooks/lab.yml), or set kubeconfig and context to those of a running cluster"
                        % (path, CONTEXT))


def test_the_default_kubeconfig_is_named_when_none_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", "%s:%s" % (tmp_path / "a", tmp_path / "b"))
    exc = fails(None)
    assert str(exc).startswith("cannot use kubeconfig %s:%s (context (current)): none of these files exists; create the "
                               "cluster first" % (tmp_path / "a", tmp_path / "b"))


def test_a_kubeconfig_without_a_current_context(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", "http://127.0.0.1:1", current="", contexts=("kind-a", "kind-b"))
    exc = fails(path)
    assert isinstance(exc, KubeconfigError)
    assert str(exc) == ("cannot use kubeconfig %s (context (current)): it names no current context and none was given; "
                        "set context to one of kind-a, kind-b (or run kubectl --kubeconfig %s config use-context NAME)"
                        % (path, path))


def test_the_context_of_a_deleted_cluster(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", "http://127.0.0.1:1", contexts=("kind-other",), current="kind-other")
    exc = fails(path, CONTEXT)
    assert str(exc) == ("cannot use kubeconfig %s (context %s): it has no context %s (it has kind-other): the cluster was "
                        "deleted, or the context is misspelt; create the cluster first (ansible-playbook playbooks/lab.yml), "
                        "or set kubeconfig and context to those of a running cluster" % (path, CONTEXT, CONTEXT))
    emptied = write_kubeconfig(tmp_path / "emptied", "http://127.0.0.1:1", contexts=(), current="")
    assert "it has no contexts (a deleted cluster's context is removed from it); create the cluster first" in str(fails(emptied))


def test_a_kubeconfig_that_is_not_one(tmp_path: Path) -> None:
    bad = tmp_path / "config"
    bad.write_text("clusters: [\n  - {name: x\n")
    exc = fails(str(bad))
    assert isinstance(exc, KubeconfigError)
    assert_one_line(str(exc), "cannot use kubeconfig %s (context (current)): %s cannot be read as YAML" % (bad, bad))
    bad.write_text("- just\n- a list\n")
    assert "is not a kubeconfig (expected a mapping with clusters, contexts and users)" in str(fails(str(bad)))


def test_what_the_loader_refuses_is_one_line_too(tmp_path: Path) -> None:
    path = tmp_path / "config"
    doc = json.loads(Path(write_kubeconfig(path, "https://127.0.0.1:1")).read_text())
    doc["users"] = [{"name": "u", "user": {"client-certificate": str(tmp_path / "gone.crt"), "client-key": str(tmp_path / "gone.key")}}]
    path.write_text(json.dumps(doc))
    exc = fails(str(path))
    assert isinstance(exc, KubeconfigError)
    assert_one_line(str(exc), "cannot use kubeconfig %s (context (current)): " % path, "gone.crt",
                    "fix the file or set kubeconfig and context to those of a running cluster")


# ---------------------------------------------------------------- the pieces


def test_export_hint_names_the_kind_cluster_of_the_context() -> None:
    assert export_hint("kind-lab", None) == (
        "write its kubeconfig again: kind export kubeconfig --name lab (the twin: kindlab-twin export kubeconfig --name lab)")
    assert export_hint("prod", "/k") == "write the cluster's current credentials into that kubeconfig again"


def test_tls_causes_keep_openssls_reason() -> None:
    verify = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    verify.verify_message = "self-signed certificate"
    assert transport_cause(verify) == ("TLS handshake failed: certificate verify failed: self-signed certificate", False)
    version = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    version.reason = "WRONG_VERSION_NUMBER"
    assert transport_cause(version) == ("TLS handshake failed: wrong version number", False)


def test_one_line() -> None:
    assert one_line('while parsing\n  in "x", line 1\n') == 'while parsing in "x", line 1'
