# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed Kubernetes request becomes: the collection's K8sError and its kinds, and the one
line each carries for the user (the API server, its kubeconfig context and file, the cause in a few
words, what to do), read from the socket, http.client or urllib3 error underneath."""
from __future__ import annotations

import http.client
import socket
import ssl
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import WATCH_CONNECT_TIMEOUT

# What a request raises when the API server does not answer (refused, reset, silent): the
# socket's own errors, http.client's, and urllib3's (which the client's connection lets through).
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, http.client.HTTPException)
try:
    import urllib3.exceptions as _urllib3_errors
except ImportError:
    _urllib3_errors = None  # type: ignore[assignment]
else:
    TRANSPORT_ERRORS += (_urllib3_errors.HTTPError,)


class K8sError(KindlabError):
    """A Kubernetes API call failed; the message is meant for the user."""


class KindNotServed(K8sError):
    """The cluster does not serve an API version and kind (its CRD is not installed): for a reader
    to whom an absent kind means none of its objects (diagnose and Gateway API)."""


class WaitTimeout(K8sError):
    """A wait ran out of time."""


class WatchInterrupted(K8sError):
    """A watch or its list got no (whole) answer: the connection was refused, reset or broke,
    or the server stayed silent past the read timeout. `cause` says which in a few words (never
    urllib3's text), `timed_out` whether it was silence, `where` names the API server, its
    kubeconfig context and file."""

    def __init__(self, message: str, cause: str, timed_out: bool = False, where: str = "the API server") -> None:
        super().__init__(message)
        self.cause = cause
        self.timed_out = timed_out
        self.where = where


class WatchForbidden(K8sError):
    """403 Forbidden for a watch or its list. Permanent when the credentials never had the right;
    an API server that has just restarted also answers so until its authorizer has loaded RBAC."""


class WatchExpired(K8sError):
    """410 Gone: the resourceVersion a watch resumes from is older than the server keeps;
    list again and watch from the list's version."""


class ApiUnreachable(K8sError):
    """The API server did not answer at all; the message is one line naming the server, the
    kubeconfig context and file, the cause and what to check."""


class ApiRejected(K8sError):
    """The API server answered but the connection or our credentials were refused: the TLS
    handshake failed (its certificate is not one the kubeconfig trusts) or 401 Unauthorized (the
    client certificate or token is invalid or expired). One line naming the server, the
    kubeconfig context and file, and what to do."""


class KubeconfigError(K8sError):
    """The kubeconfig names no cluster to talk to: the file does not exist, is not a kubeconfig,
    names no current context, or lacks the context asked for (a deleted cluster's context is
    removed). One line naming the file, the context and what to do."""


class WorkloadFailed(K8sError):
    """The pods of a Deployment or DaemonSet cannot start; `details["failure"]` says why."""


UNREACHABLE_HINT = "is the cluster running? (kindlab-twin get clusters / kind get clusters)"


def api_server_description(host: str, context: str | None, kubeconfig: str | None) -> str:
    """`the API server at URL (context C, kubeconfig PATH)`: which cluster a failure is about."""
    return "the API server at %s (context %s, kubeconfig %s)" % (host, context or "(current)", kubeconfig or "(default)")


def unreachable_message(where: str, cause: str, seconds: float | None = None) -> str:
    """The one line for an API server that never answered."""
    during = " in %gs" % seconds if seconds is not None else ""
    return "%s did not answer%s: %s; %s" % (where, during, cause, UNREACHABLE_HINT)


def one_line(text: Any) -> str:
    """Text (an exception's, a tool's) as one line: whitespace runs, newlines included, become one space."""
    return " ".join(str(text).split())


def _kind_cluster_name(context: str | None) -> str | None:
    """The kind (or twin) cluster a `kind-NAME` context belongs to."""
    return context[len("kind-"):] if context and context.startswith("kind-") and len(context) > 5 else None


def export_hint(context: str | None, kubeconfig: str | None) -> str:
    """How to write a cluster's current credentials into the kubeconfig again."""
    name = _kind_cluster_name(context)
    if name is None:
        return "write the cluster's current credentials into that kubeconfig again"
    args = "--name %s" % name + (" --kubeconfig %s" % kubeconfig if kubeconfig else "")
    return "write its kubeconfig again: kind export kubeconfig %s (the twin: kindlab-twin export kubeconfig %s)" % (args, args)


def rejected_message(where: str, cause: str, context: str | None, kubeconfig: str | None) -> str:
    """The one line for an API server that answered but refused the connection or the credentials.
    `cause` is transport_cause()'s TLS text or `401 Unauthorized`."""
    if cause.startswith("401"):
        return ("%s refused the credentials of the context (%s: its client certificate or token is invalid or has "
                "expired, or the cluster was recreated since the kubeconfig was written); %s"
                % (where, cause, export_hint(context, kubeconfig)))
    if "certificate verify failed" in cause:
        return ("%s presented a certificate the kubeconfig does not trust (%s): the cluster was probably recreated "
                "since the kubeconfig was written; %s" % (where, cause, export_hint(context, kubeconfig)))
    return "%s: %s; check the server URL (https) and the certificates in the kubeconfig" % (where, cause)


def exception_chain(exc: BaseException) -> list[BaseException]:
    """exc and what it wraps: __cause__, __context__, urllib3's `reason`, exceptions in args."""
    out: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is seen for seen in out):
            continue
        out.append(e)
        todo += [x for x in (e.__cause__, e.__context__, getattr(e, "reason", None), *e.args) if isinstance(x, BaseException)]
    return out


def transport_cause(exc: BaseException, read_timeout: float | None = None) -> tuple[str, bool]:
    """(a few words on why a request got no answer, whether it was a timeout), from a socket,
    http.client or urllib3 exception and what it wraps."""
    chain = exception_chain(exc)

    def has(*types: type[BaseException]) -> bool:
        return any(isinstance(e, types) for e in chain)

    u3 = _urllib3_errors
    read = " within %gs" % read_timeout if read_timeout else ""
    if has(ConnectionRefusedError):
        return "connection refused", False
    if has(ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
        return "connection reset", False
    if has(socket.gaierror):
        return "cannot resolve the server's host name", False
    if u3 is not None and has(u3.ReadTimeoutError):
        return "no answer%s (read timeout)" % read, True
    if u3 is not None and any(isinstance(e, u3.ConnectTimeoutError) and not isinstance(e, u3.NewConnectionError) for e in chain):
        return "no answer to connect within %gs" % WATCH_CONNECT_TIMEOUT, True
    if has(TimeoutError):
        return "no answer%s (timeout)" % read, True
    if has(ssl.SSLError) or (u3 is not None and has(u3.SSLError)):
        return _tls_cause(chain), False
    if has(http.client.HTTPException) or (u3 is not None and has(u3.ProtocolError)):
        return "the connection broke mid-stream", False
    for e in chain:
        if isinstance(e, OSError) and e.strerror:
            return "cannot connect: " + e.strerror[:1].lower() + e.strerror[1:], False
    return "cannot connect (%s)" % type(exc).__name__, False


def _tls_cause(chain: list[BaseException]) -> str:
    """`TLS handshake failed`, with OpenSSL's reason when the chain has it (`certificate verify
    failed: unable to get local issuer certificate`, `wrong version number`)."""
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError) and e.verify_message:
            return "TLS handshake failed: certificate verify failed: %s" % e.verify_message
        if isinstance(e, ssl.SSLError) and e.reason:
            return "TLS handshake failed: %s" % str(e.reason).lower().replace("_", " ")
    return "TLS handshake failed"
