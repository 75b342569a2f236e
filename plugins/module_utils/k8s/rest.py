# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The client's HTTP side on urllib3: a kubeconfig context as a connection (server URL, TLS,
credentials), requests whose error answers raise ApiError, and discovery of a kind's resource.

Why not the kubernetes package: importing its config loader and dynamic client costs about
0.27 CPU-s (pydantic, requests-oauthlib, kubernetes-validate), once in every module run, about
1,600 of them in `make test`, on a machine whose CI is CPU-bound. It is still imported where it
is needed: an exec (its websocket stream) and a kubeconfig whose user gets credentials from a
plugin (`exec`, `auth-provider`), which its loader runs."""
from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Tuple, Union
from urllib.parse import urlencode

# Guarded like every third-party import of module_utils: client.py reports it (K8S_IMPORT_ERROR).
URLLIB3_IMPORT_ERROR: str | None
try:
    import urllib3
except ImportError:
    urllib3 = None  # type: ignore[assignment]
    URLLIB3_IMPORT_ERROR = traceback.format_exc()
else:
    URLLIB3_IMPORT_ERROR = None

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, one_line
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.kubeconfig import LOADER_HINT, Kubeconfig
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj

USER_AGENT = "kindlab.ingress"
# Threads of one module (the status watches, the pollers) share the pool: as many kept-alive
# connections as the kubernetes client kept (5 per core on 2 cores), beyond that one per request.
POOL_SIZE = 10
# A connect or read timeout: seconds, or (connect, read) as the kubernetes client's _request_timeout.
Timeout = Union[float, Tuple[float, float], None]


class ApiError(K8sError):
    """The API server answered with an error status (not 2xx); `body` is its text (a Status).
    The client turns it into a line for the user (or an answer: 404 is None for a get)."""

    def __init__(self, status: int, reason: str, body: str) -> None:
        super().__init__("(%s) %s: %s" % (status, reason, body[:300]))
        self.status, self.reason, self.body = status, reason, body


@dataclass(frozen=True)
class ApiResource:
    """A kind as the server serves it: its group/version, resource (plural) name and scope."""

    api_version: str
    kind: str
    name: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of the collection (name None) or of one object; a namespace is ignored for a
        cluster-scoped kind, and a namespaced kind without one is listed across namespaces."""
        parts = ["/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version]
        if self.namespaced and namespace:
            parts.append("namespaces/" + namespace)
        parts += [self.name] + ([name] if name else []) + ([subresource] if subresource else [])
        return "/".join(parts)


@dataclass
class Settings:
    """What a request needs from the kubeconfig: the server, the TLS context, the auth headers."""

    host: str
    context: str | None
    ssl_context: ssl.SSLContext | None = None
    server_hostname: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    proxy: str | None = None


def _file_or_data(entry: Obj, key: str, base: str) -> bytes | None:
    """A kubeconfig's `KEY-data` (base64) or `KEY` (a file, relative to the kubeconfig's directory)."""
    data = entry.get(key + "-data")
    if data:
        return base64.b64decode(data)
    path = entry.get(key)
    if not path:
        return None
    with open(os.path.join(base, os.path.expanduser(str(path))), "rb") as handle:
        return handle.read()


def _load_cert_chain(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """ssl reads a client certificate and key only from files: a private directory, gone after."""
    with tempfile.TemporaryDirectory(prefix="kindlab-tls-") as tmp:
        paths = []
        for name, data in (("tls.crt", cert), ("tls.key", key)):
            path = os.path.join(tmp, name)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
                handle.write(data)
            paths.append(path)
        context.load_cert_chain(paths[0], paths[1])


def settings_from_kubeconfig(config: Kubeconfig) -> Settings:
    """The connection of the context read_kubeconfig() chose. A broken entry (a missing
    certificate file, no server) is a KubeconfigError naming it."""
    try:
        ctx = config.entry("contexts", config.context)[0]
        cluster, cluster_base = config.entry("clusters", ctx.get("cluster"))
        user, user_base = config.entry("users", ctx.get("user"))
        if not cluster.get("server"):
            raise ValueError("context %s names cluster %s, which has no server" % (config.context, ctx.get("cluster")))
        if user.get("exec") or user.get("auth-provider"):
            return _plugin_settings(config.paths, config.context)
        settings = Settings(host=str(cluster["server"]).rstrip("/"), context=config.context,
                            server_hostname=cluster.get("tls-server-name"), proxy=cluster.get("proxy-url"))
        if settings.host.startswith("https:"):
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ca = _file_or_data(cluster, "certificate-authority", cluster_base)
            if cluster.get("insecure-skip-tls-verify"):
                tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
            elif ca:  # the cluster's CA alone, as kubectl trusts it
                tls.load_verify_locations(cadata=ca.decode("ascii"))
            else:
                tls.load_default_certs()
            cert, key = _file_or_data(user, "client-certificate", user_base), _file_or_data(user, "client-key", user_base)
            if cert and key:
                _load_cert_chain(tls, cert, key)
            settings.ssl_context = tls
        token = user.get("token")
        if not token and user.get("tokenFile"):
            with open(os.path.join(user_base, str(user["tokenFile"])), encoding="utf-8") as handle:
                token = handle.read().strip()
        if token:
            settings.headers["Authorization"] = "Bearer %s" % token
        elif user.get("username"):
            basic = base64.b64encode(("%s:%s" % (user["username"], user.get("password") or "")).encode()).decode()
            settings.headers["Authorization"] = "Basic %s" % basic
        return settings
    except (OSError, ValueError, ssl.SSLError, TypeError) as exc:
        raise config.unusable("%s; %s" % (one_line(exc), LOADER_HINT)) from exc


def _plugin_settings(paths: list[str], context: str) -> Settings:
    """A user whose credentials a plugin gives (`exec`, `auth-provider`): the kubernetes loader runs
    it, once per client (a module run outlives no token such plugins hand out)."""
    from kubernetes import config as k8s_config
    from kubernetes.client import Configuration

    configuration = Configuration()
    k8s_config.load_kube_config(config_file=os.pathsep.join(paths), context=context, client_configuration=configuration)
    if configuration.refresh_api_key_hook is not None:
        configuration.refresh_api_key_hook(configuration)
    tls = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if not configuration.verify_ssl:
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    if configuration.cert_file and configuration.key_file:
        tls.load_cert_chain(configuration.cert_file, configuration.key_file)
    settings = Settings(host=str(configuration.host).rstrip("/"), context=context, ssl_context=tls,
                        server_hostname=configuration.tls_server_name or None, proxy=configuration.proxy)
    auth = configuration.get_api_key_with_prefix("authorization") or configuration.get_api_key_with_prefix("BearerToken")
    if auth:
        settings.headers["Authorization"] = auth
    return settings


class Connection:
    """Requests to one API server on a urllib3 pool shared by the module's threads."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        kwargs: dict[str, Any] = {"num_pools": 4, "maxsize": POOL_SIZE}
        if settings.ssl_context is not None:
            kwargs["ssl_context"] = settings.ssl_context
            if settings.ssl_context.verify_mode == ssl.CERT_NONE:
                kwargs.update(cert_reqs=ssl.CERT_NONE, assert_hostname=False)
        if settings.server_hostname:
            kwargs["server_hostname"] = settings.server_hostname
        self._pool: urllib3.PoolManager = (urllib3.ProxyManager(settings.proxy, **kwargs) if settings.proxy
                                           else urllib3.PoolManager(**kwargs))

    @property
    def host(self) -> str:
        return self.settings.host

    @classmethod
    def to(cls, host: str) -> "Connection":
        """A connection without credentials (a plain-http server, in tests)."""
        return cls(Settings(host=host.rstrip("/"), context=None))

    def request(self, method: str, path: str, query: Iterable[tuple[str, Any]] = (), body: Any = None,
                content_type: str = "application/json", headers: Mapping[str, str] | None = None,
                timeout: Timeout = None, stream: bool = False, retries: bool = True) -> Any:
        """One request; the urllib3 response (unread when `stream`). An answer that is not 2xx
        raises ApiError; a server that does not answer raises what urllib3 raises (TRANSPORT_ERRORS).
        `retries` False: no urllib3 retries (the caller retries within its own time)."""
        pairs = [(k, _query_value(v)) for k, v in query if v is not None]
        url = self.host + path + ("?" + urlencode(pairs) if pairs else "")
        sent = {"Accept": "application/json", "User-Agent": USER_AGENT, **self.settings.headers, **dict(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = content_type
        if isinstance(timeout, tuple):
            limit: Any = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            limit = urllib3.Timeout(total=timeout) if timeout else None
        resp = self._pool.request(method.upper(), url, body=data, headers=sent, timeout=limit, preload_content=not stream,
                                  retries=None if retries else False, redirect=False)
        if not 200 <= resp.status <= 299:
            text = resp.data.decode("utf-8", "replace") if resp.data else ""
            if stream:
                resp.release_conn()
            raise ApiError(int(resp.status), str(resp.reason or ""), text)
        return resp

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        """request() and its body as JSON."""
        return json.loads(self.request(method, path, **kwargs).data or b"null")


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class Discovery:
    """Which resource serves a kind, asked of the server once per group/version per client."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._served: dict[str, dict[str, ApiResource] | None] = {}

    def find(self, api_version: str, kind: str) -> ApiResource | None:
        """The kind's resource; None when the server does not serve it. Asked again once when
        missing: a CRD applied moments ago is not in what was read before."""
        for fresh in (False, True):
            if fresh or api_version not in self._served:
                self._served[api_version] = self._read(api_version)
            found = (self._served[api_version] or {}).get(kind)
            if found is not None:
                return found
        return None

    def _read(self, api_version: str) -> dict[str, ApiResource] | None:
        path = "/api/v1" if api_version == "v1" else "/apis/" + api_version
        try:
            listing = self._connection.json("GET", path)
        except ApiError as exc:
            if exc.status == 404:  # the group/version is not served
                return None
            raise
        return {str(r["kind"]): ApiResource(api_version, str(r["kind"]), str(r["name"]), bool(r.get("namespaced")))
                for r in (listing or {}).get("resources") or [] if "/" not in str(r.get("name", ""))}
