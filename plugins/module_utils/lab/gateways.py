# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gateway API in the lab: the CRDs at the pinned version (lab_gateway_api), and the lab's
GatewayClasses and Gateways (lab_gateways) from a compact spec.

Every spec is validated before anything is sent to the cluster; an error names the field and
what was expected. The CRDs come from the release manifest (GATEWAY_API_MANIFEST_URL) online, a
mirror or a local copy (manifest_url, file:// allowed), or the kindlab cache's copy that
`kindlab-twin build binaries gateway-api-crds` assembles from the Go module (the twin, offline).
Workloads' HTTPRoutes are rendered with the workloads (lab/workloads/render.py).
"""
from __future__ import annotations

import ipaddress
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import (
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    is_dns1123_label,
    is_dns1123_subdomain,
)
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    GATEWAY_API_MANIFEST_URL,
    GATEWAY_API_OFFLINE_CRDS,
    GATEWAY_API_VERSION,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import default_gateway_controller_name
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import API_VERSION, GROUP
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import PART_OF, PART_OF_LABEL

Obj = dict[str, Any]

# The default class controller of lab_gateways: the first registered type's that implements Gateway API (Traefik).
DEFAULT_CONTROLLER_NAME = default_gateway_controller_name()
# Listener protocols built here: HTTPS terminates TLS with a certificate the lab generates (a
# self-signed one per listener, in a Secret beside the Gateway); TLS passthrough is not built.
PROTOCOLS = ("HTTP", "HTTPS")
# The name a listener's certificate gets when it has no hostname (the probes do not verify it).
NO_HOSTNAME_CERT_NAME = "gateway.kindlab.invalid"
FROM_NAMESPACES = ("Same", "All", "Selector")
# Gateway API's hostname (a DNS name, one leading wildcard label allowed) and controllerName
# (a domain-prefixed path), as the CRDs' OpenAPI patterns give them.
HOSTNAME_RE = re.compile(r"(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CONTROLLER_NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")
CACHE_ENV = "KINDLAB_CACHE"


class GatewayError(OptionError):
    """A Gateway API spec is invalid, or its CRDs cannot be read; the message names the field."""


def _require(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise GatewayError("%s: expected %s, got %r" % (where, expected, got))


def _only(raw: Any, where: str, known: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    _require(isinstance(raw, dict), where, "a mapping with the keys " + ", ".join(sorted(known)), raw)
    out: dict[str, Any] = {key: val for key, val in raw.items() if val is not None}
    unknown = sorted(set(out) - known)
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), unknown)
    for key in required:
        _require(key in out, "%s.%s" % (where, key), "a value (required)", None)
    return out


def _str_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    _require(isinstance(value, dict) and all(isinstance(k, str) and k for k in value)
             and all(isinstance(v, str) for v in value.values()), where, "a mapping of label names to strings", value)
    return dict(value)


def _port(value: Any, where: str) -> int:
    _require(isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535, where,
             "a port number from 1 to 65535", value)
    return int(value)


def valid_hostname(value: Any) -> bool:
    """Gateway API's Hostname: a DNS name (one leading '*.' label allowed), never an IP address."""
    if not isinstance(value, str) or len(value) > 253 or not HOSTNAME_RE.fullmatch(value):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return True
    return False


HOSTNAME = "a DNS name, optionally starting with '*.'; no IP addresses or ports"


# ---------------------------------------------------------------- the spec


@dataclass
class GatewayClassSpec:
    name: str
    controller_name: str = DEFAULT_CONTROLLER_NAME
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class ListenerSpec:
    name: str
    port: int
    protocol: str = "HTTP"
    hostname: str | None = None
    from_namespaces: str = "Same"
    selector: dict[str, str] = field(default_factory=dict)  # matchLabels, with from Selector
    tls_secret: str | None = None  # HTTPS: the Secret (in the Gateway's namespace) holding its generated certificate


@dataclass
class GatewaySpec:
    namespace: str
    name: str
    gateway_class: str
    listeners: list[ListenerSpec]
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return "%s/%s" % (self.namespace, self.name)


@dataclass
class TranslationSpec:
    """The lab's Ingresses of `namespaces` translated by ingress2gateway (migration/translate.py) onto a
    GatewayClass of the lab, after the workloads: a rehearsal's Gateway API target."""

    namespaces: list[str]
    gateway_class: str
    listener_port: int
    ingress_class: str
    tls_listener_port: int = 8443


# Where a translated Gateway's listeners listen: Traefik's `web` entry point (chart 41: :8000), the port
# Traefik's Gateway provider serves HTTP listeners on, and `websecure` (:8443) for HTTPS ones.
TRANSLATION_LISTENER_PORT = 8000
TRANSLATION_TLS_LISTENER_PORT = 8443


@dataclass
class Gateways:
    classes: list[GatewayClassSpec] = field(default_factory=list)
    gateways: list[GatewaySpec] = field(default_factory=list)
    translations: list[TranslationSpec] = field(default_factory=list)

    def gateway(self, ref: str) -> GatewaySpec | None:
        return next((g for g in self.gateways if g.ref == ref), None)


def parse_gateway_api(raw: Any, where: str = "lab_gateway_api") -> bool:
    """lab_gateway_api: true or false (off by default)."""
    if raw is None:
        return False
    _require(isinstance(raw, bool), where, "true or false", raw)
    return bool(raw)


def _parse_class(raw: Any, where: str) -> GatewayClassSpec:
    raw = _only(raw, where, {"name", "controller_name", "labels"}, ("name",))
    name = raw["name"]
    _require(is_dns1123_subdomain(name), where + ".name", DNS1123_SUBDOMAIN, name)
    controller = raw.get("controller_name", DEFAULT_CONTROLLER_NAME)
    _require(isinstance(controller, str) and len(controller) <= 253 and bool(CONTROLLER_NAME_RE.fullmatch(controller)),
             where + ".controller_name", "a domain-prefixed path such as %s" % DEFAULT_CONTROLLER_NAME, controller)
    return GatewayClassSpec(name=name, controller_name=controller, labels=_str_map(raw.get("labels"), where + ".labels"))


def _parse_allowed(raw: Any, where: str) -> tuple[str, dict[str, str]]:
    if raw is None:
        return "Same", {}
    if isinstance(raw, str):
        raw = {"namespaces": raw}
    raw = _only(raw, where, {"namespaces", "selector"})
    source = raw.get("namespaces", "Same")
    _require(source in FROM_NAMESPACES, where + ".namespaces", "one of " + ", ".join(FROM_NAMESPACES), source)
    selector = _str_map(raw.get("selector"), where + ".selector")
    if source == "Selector":
        _require(bool(selector), where + ".selector", "the namespace labels to match (matchLabels) with namespaces: Selector",
                 raw.get("selector"))
    else:
        _require(not selector, where + ".selector", "no selector unless namespaces is Selector (it is %s)" % source, selector)
    return source, selector


def _parse_listener(raw: Any, where: str) -> ListenerSpec:
    raw = _only(raw, where, {"name", "port", "protocol", "hostname", "allowed_routes"}, ("name", "port"))
    name = raw["name"]
    _require(is_dns1123_label(name), where + ".name", DNS1123_LABEL, name)
    port = _port(raw["port"], where + ".port")
    protocol = raw.get("protocol", "HTTP")
    _require(protocol in PROTOCOLS, where + ".protocol",
             "HTTP or HTTPS (TLS passthrough listeners are not built by the lab yet)", protocol)
    hostname = raw.get("hostname") or None
    if hostname is not None:
        _require(valid_hostname(hostname), where + ".hostname", HOSTNAME, hostname)
    source, selector = _parse_allowed(raw.get("allowed_routes"), where + ".allowed_routes")
    return ListenerSpec(name=name, port=port, protocol=protocol, hostname=hostname, from_namespaces=source, selector=selector)


def _parse_gateway(raw: Any, where: str) -> GatewaySpec:
    raw = _only(raw, where, {"namespace", "name", "class", "listeners", "labels"}, ("namespace", "name", "class", "listeners"))
    namespace, name, gateway_class = raw["namespace"], raw["name"], raw["class"]
    _require(is_dns1123_label(namespace), where + ".namespace", DNS1123_LABEL, namespace)
    _require(is_dns1123_subdomain(name), where + ".name", DNS1123_SUBDOMAIN, name)
    _require(is_dns1123_subdomain(gateway_class), where + ".class", "a GatewayClass name (%s)" % DNS1123_SUBDOMAIN, gateway_class)
    raw_listeners = raw["listeners"]
    _require(isinstance(raw_listeners, list) and 1 <= len(raw_listeners) <= 64, where + ".listeners",
             "a list of 1 to 64 listeners", raw_listeners)
    listeners = [_parse_listener(item, "%s.listeners[%d]" % (where, i)) for i, item in enumerate(raw_listeners)]
    names: dict[str, int] = {}
    bindings: dict[tuple[int, str | None], int] = {}
    for i, listener in enumerate(listeners):
        _require(listener.name not in names, "%s.listeners[%d].name" % (where, i),
                 "a name unique within the Gateway (also used by listeners[%d])" % names.get(listener.name, -1), listener.name)
        names[listener.name] = i
        # Gateway API: listeners on one port must differ by hostname, or they are Conflicted.
        key = (listener.port, listener.hostname)
        _require(key not in bindings, "%s.listeners[%d].hostname" % (where, i),
                 "a hostname other than that of listeners[%d] on port %d (two listeners with the same port and hostname "
                 "are Conflicted)" % (bindings.get(key, -1), listener.port), listener.hostname)
        bindings[key] = i
        if listener.protocol == "HTTPS":
            listener.tls_secret = "%s-%s-tls" % (name, listener.name)
            _require(is_dns1123_subdomain(listener.tls_secret), "%s.listeners[%d].name" % (where, i),
                     "a name that with the Gateway's makes a Secret name %s-<listener>-tls (%s)" % (name, DNS1123_SUBDOMAIN),
                     listener.name)
    return GatewaySpec(namespace=namespace, name=name, gateway_class=gateway_class, listeners=listeners,
                       labels=_str_map(raw.get("labels"), where + ".labels"))


def parse_gateways(raw: Any, where: str = "lab_gateways") -> Gateways:
    """lab_gateways: `classes` (GatewayClasses) and `gateways`; each Gateway's class must be one
    of the classes, names unique."""
    if raw is None or raw == {}:
        return Gateways()
    # translations run after the lab's workloads, so only the lab's variable has them (not the module's option)
    raw = _only(raw, where or "gateways", {"classes", "gateways", "translations"} if where else {"classes", "gateways"})
    at = "%s." % where if where else ""  # the module's own options carry no prefix
    raw_classes, raw_gateways = raw.get("classes", []), raw.get("gateways", [])
    _require(isinstance(raw_classes, list), at + "classes", "a list of GatewayClasses", raw_classes)
    _require(isinstance(raw_gateways, list), at + "gateways", "a list of Gateways", raw_gateways)
    classes = [_parse_class(item, "%sclasses[%d]" % (at, i)) for i, item in enumerate(raw_classes)]
    seen: dict[str, int] = {}
    for i, cls in enumerate(classes):
        _require(cls.name not in seen, "%sclasses[%d].name" % (at, i),
                 "a name unique among the classes (also used by classes[%d])" % seen.get(cls.name, -1), cls.name)
        seen[cls.name] = i
    gateways = [_parse_gateway(item, "%sgateways[%d]" % (at, i)) for i, item in enumerate(raw_gateways)]
    refs: dict[str, int] = {}
    for i, gw in enumerate(gateways):
        _require(gw.gateway_class in seen, "%sgateways[%d].class" % (at, i),
                 "one of the GatewayClasses of %sclasses %s" % (at, sorted(seen)), gw.gateway_class)
        _require(gw.ref not in refs, "%sgateways[%d].name" % (at, i),
                 "a name unique within its namespace (also used by gateways[%d])" % refs.get(gw.ref, -1), gw.name)
        refs[gw.ref] = i
    raw_translations = raw.get("translations", [])
    _require(isinstance(raw_translations, list), at + "translations", "a list of translations", raw_translations)
    translations = [_parse_translation(item, "%stranslations[%d]" % (at, i), sorted(seen))
                    for i, item in enumerate(raw_translations)]
    return Gateways(classes=classes, gateways=gateways, translations=translations)


def _parse_translation(raw: Any, where: str, classes: list[str]) -> TranslationSpec:
    raw = _only(raw, where, {"namespaces", "class", "listener_port", "tls_listener_port", "ingress_class"}, ("namespaces", "class"))
    namespaces = raw["namespaces"]
    _require(isinstance(namespaces, list) and bool(namespaces) and all(isinstance(n, str) and n for n in namespaces),
             where + ".namespaces", "a non-empty list of namespaces whose Ingresses are translated", namespaces)
    _require(raw["class"] in classes, where + ".class", "one of the GatewayClasses of classes %s" % classes, raw["class"])
    ingress_class = raw.get("ingress_class", "nginx")
    _require(isinstance(ingress_class, str) and bool(ingress_class), where + ".ingress_class",
             "the IngressClass whose Ingresses are translated (ingress2gateway's --ingress-nginx-ingress-class)", ingress_class)
    return TranslationSpec(namespaces=list(namespaces), gateway_class=str(raw["class"]),
                           listener_port=_port(raw.get("listener_port", TRANSLATION_LISTENER_PORT), where + ".listener_port"),
                           ingress_class=ingress_class,
                           tls_listener_port=_port(raw.get("tls_listener_port", TRANSLATION_TLS_LISTENER_PORT),
                                                   where + ".tls_listener_port"))


# ---------------------------------------------------------------- objects


def _labels(extra: dict[str, str]) -> dict[str, str]:
    return {PART_OF_LABEL: PART_OF, **extra}


def render_class(cls: GatewayClassSpec) -> Obj:
    return {"apiVersion": API_VERSION, "kind": "GatewayClass",
            "metadata": {"name": cls.name, "labels": _labels(cls.labels)},
            "spec": {"controllerName": cls.controller_name}}


def _render_listener(listener: ListenerSpec) -> Obj:
    namespaces: Obj = {"from": listener.from_namespaces}
    if listener.from_namespaces == "Selector":
        namespaces["selector"] = {"matchLabels": dict(listener.selector)}
    out: Obj = {"name": listener.name, "port": listener.port, "protocol": listener.protocol,
                "allowedRoutes": {"namespaces": namespaces}}
    if listener.hostname:
        out["hostname"] = listener.hostname
    if listener.tls_secret:
        out["tls"] = {"mode": "Terminate", "certificateRefs": [{"group": "", "kind": "Secret", "name": listener.tls_secret}]}
    return out


def certificate_secrets(gateways: Gateways) -> list[tuple[str, str, str]]:
    """(namespace, Secret name, certificate name) of every HTTPS listener's generated certificate."""
    return [(gw.namespace, ln.tls_secret, ln.hostname or NO_HOSTNAME_CERT_NAME)
            for gw in gateways.gateways for ln in gw.listeners if ln.tls_secret]


def tls_secret(namespace: str, name: str, cert_pem: str, key_pem: str) -> Obj:
    import base64

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": name, "namespace": namespace, "labels": _labels({})},
            "data": {"tls.crt": b64(cert_pem), "tls.key": b64(key_pem)}}


def self_signed(name: str, *more: str, days: int = 365) -> tuple[str, str]:
    """A self-signed certificate for NAME (its subject and SAN; a wildcard too) and MORE names (SANs)
    and its key, PEM. An EC P-256 key: quick to make, and every proxy the lab runs takes it."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name), x509.NameAttribute(NameOID.ORGANIZATION_NAME, PART_OF)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in (name, *more)]), critical=False)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode()


def render_gateway(gw: GatewaySpec) -> Obj:
    return {"apiVersion": API_VERSION, "kind": "Gateway",
            "metadata": {"name": gw.name, "namespace": gw.namespace, "labels": _labels(gw.labels)},
            "spec": {"gatewayClassName": gw.gateway_class, "listeners": [_render_listener(item) for item in gw.listeners]}}


def render(gateways: Gateways) -> list[Obj]:
    """The lab's GatewayClasses, then its Gateways."""
    return [render_class(c) for c in gateways.classes] + [render_gateway(g) for g in gateways.gateways]


def summary(gateways: Gateways) -> Obj:
    """What lab_definition and the gateway_api module return."""
    return {
        "classes": [{"name": c.name, "controller_name": c.controller_name, "labels": c.labels} for c in gateways.classes],
        "gateways": [{"namespace": g.namespace, "name": g.name, "class": g.gateway_class, "labels": g.labels,
                      "listeners": [{"name": item.name, "port": item.port, "protocol": item.protocol, "hostname": item.hostname,
                                     "allowed_routes": {"namespaces": item.from_namespaces, "selector": item.selector}}
                                    for item in g.listeners]}
                     for g in gateways.gateways],
        "translations": [{"namespaces": t.namespaces, "class": t.gateway_class, "listener_port": t.listener_port,
                          "tls_listener_port": t.tls_listener_port, "ingress_class": t.ingress_class}
                         for t in gateways.translations],
    }


# ---------------------------------------------------------------- the CRDs


def cache_root() -> Path:
    """The kindlab cache (KINDLAB_CACHE, else ~/.cache/kindlab), as kindlab-twin's builder uses it."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "kindlab"


def offline_crds_path() -> Path:
    return cache_root() / GATEWAY_API_OFFLINE_CRDS


def crds_source(manifest_url: str | None, source: str) -> str:
    """Where the CRDs come from: manifest_url when given; else the release manifest (upstream) or
    the kindlab cache's copy (cache, the twin's)."""
    if source not in ("upstream", "cache"):
        raise GatewayError("source: expected upstream or cache, got %r" % (source,))
    if manifest_url:
        return manifest_url
    if source == "upstream":
        return GATEWAY_API_MANIFEST_URL
    path = offline_crds_path()
    if not path.is_file():
        raise GatewayError("source: the Gateway API %s CRDs are not in the kindlab cache (%s); build them with "
                           "`kindlab-twin build binaries gateway-api-crds`, or give manifest_url (lab_gateway_api_manifest_url)"
                           % (GATEWAY_API_VERSION, path))
    return path.as_uri()


def parse_crds(text: str, url: str) -> list[Obj]:
    """The manifest's objects: Gateway API's CRDs (and the release's ValidatingAdmissionPolicy with its binding)."""
    import yaml  # the modules' own dependency (PyYAML ships with ansible-core)

    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError as exc:
        raise GatewayError("manifest_url: %s is not valid YAML: %s" % (url, exc)) from None
    bad = [d for d in docs if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d]
    crds = [d for d in docs if not bad and d["kind"] == "CustomResourceDefinition"]
    if bad or not any(((d.get("spec") or {}).get("group")) == GROUP and (d.get("spec") or {}).get("names", {}).get("kind") == "Gateway"
                      for d in crds):
        raise GatewayError("manifest_url: %s is not Gateway API's standard-install.yaml (expected Kubernetes objects with the "
                           "%s CustomResourceDefinitions, Gateway among them)" % (url, GROUP))
    return docs


def fetch_crds(url: str, open_url: Callable[..., Any], timeout: int = 30) -> list[Obj]:
    try:
        resp = open_url(url, timeout=timeout)
        text = resp.read().decode("utf-8")
    except Exception as exc:  # open_url raises urllib/HTTP/SSL errors alike
        raise GatewayError("manifest_url: cannot read the Gateway API CRDs from %s: %s (offline? give a file:// copy, "
                           "such as the one `kindlab-twin build binaries gateway-api-crds` assembles)" % (url, exc)) from None
    return parse_crds(text, url)


def _established(crd: Obj | None) -> bool:
    conditions = ((crd or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def wait_established(client: Any, names: list[str], timeout: float, sleep: Callable[[float], None] = time.sleep,
                     clock: Callable[[], float] = time.monotonic) -> None:
    """Until every CRD named is Established (its kinds served), or GatewayError."""
    deadline = clock() + timeout
    while True:
        pending = [n for n in names if not _established(client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", n))]
        if not pending:
            return
        if clock() >= deadline:
            raise GatewayError("wait_timeout: the Gateway API CRDs %s were not Established within %ss" % (", ".join(pending), timeout))
        sleep(1.0)


def _served(client: Any) -> bool:
    """Whether the cluster serves Gateways (their CRD is there); check mode asks before a dry run."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

    try:
        client.resource(API_VERSION, "Gateway")
    except K8sError:
        return False
    return True


def ensure(client: Any, crds: list[Obj], gateways: Gateways, check_mode: bool, wait_timeout: float,
           sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> Obj:
    """Apply the CRDs (when given), wait until they are served, then the GatewayClasses and Gateways."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult, summarize

    results = client.apply_all(crds, check_mode=check_mode) if crds else []
    crd_names = [d["metadata"]["name"] for d in crds if d["kind"] == "CustomResourceDefinition"]
    crds_new = any(r.changed and r.before is None and r.after.get("kind") == "CustomResourceDefinition" for r in results)
    objs = render(gateways)
    if objs and check_mode and (crds_new or not _served(client)):
        # The CRDs are not there yet, so the server cannot dry-run these: they would be created.
        results += ensure_certificates(client, certificate_secrets(gateways), [], check_mode)
        results += [ApplyResult(changed=True, before=None, after=obj) for obj in objs]
    elif objs:
        if crd_names and not check_mode:
            wait_established(client, crd_names, wait_timeout, sleep=sleep, clock=clock)
        missing = sorted({g.namespace for g in gateways.gateways if client.get("v1", "Namespace", g.namespace) is None})
        if missing and not check_mode:
            raise GatewayError("gateways: namespace(s) %s do not exist: create them first (the lab's namespaces list)"
                               % ", ".join(missing))
        present = [o for o in objs if o["metadata"].get("namespace") not in missing]
        results += ensure_certificates(client, certificate_secrets(gateways), missing, check_mode)
        results += client.apply_all(present, check_mode=check_mode)
        results += [ApplyResult(changed=True, before=None, after=o) for o in objs if o not in present]
    out = summarize(results)
    # A CRD's diff is thousands of lines of OpenAPI schema: the objects list names it instead.
    out["diff"] = [r.diff for r in results if r.diff and r.after.get("kind") != "CustomResourceDefinition"]
    return out


def ensure_certificates(client: Any, secrets: Sequence[tuple[str, str, str | list[str]]], missing: list[str],
                        check_mode: bool) -> list[Any]:
    """Each (namespace, Secret, certificate name or names) of SECRETS (an HTTPS listener's, an Ingress's TLS):
    generated once, and kept as it is once it exists (a rerun changes nothing). The results carry no
    key material: a diff shows the Secret's name only. MISSING: namespaces that do not exist yet."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult

    out = []
    for namespace, name, cert_names in secrets:
        names = [cert_names] if isinstance(cert_names, str) else list(cert_names)
        redacted = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
                    "type": "kubernetes.io/tls", "data": {"tls.crt": "(generated, for %s)" % ", ".join(names), "tls.key": "(generated)"}}
        if namespace not in missing and client.get("v1", "Secret", name, namespace) is not None:
            out.append(ApplyResult(changed=False, before=redacted, after=redacted))
            continue
        if not check_mode:
            client.apply_all([tls_secret(namespace, name, *self_signed(*names))], check_mode=False)
        out.append(ApplyResult(changed=True, before=None, after=redacted))
    return out
