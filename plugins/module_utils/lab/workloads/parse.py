# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab author's workload spec validated into the model (model.py): every workload, its Ingresses,
HTTPRoutes, Service ports and rollout, and the lab's namespaces. Validation names the field and what was
expected, for every workload, before anything is sent to the cluster."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._names import DNS1123_LABEL, is_dns1123_label, is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import ECHO_APP_IMAGE, TEST_APP_IMAGE
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import HOSTNAME, valid_hostname
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import (
    APPS, DEFAULT_PORTS, PATH_TYPES, ROUTE_FILTERS, ROUTE_METHODS, ROUTE_PATH_TYPES, WORKLOAD_KEYS, BackendRef, HTTPRouteSpec,
    IngressPath, IngressRule, IngressSpec, Obj, ParentRef, Rollout, RouteMatch, RouteRule, ServicePort, Workload, WorkloadError,
)

# Ingress hosts: a DNS name, optionally with one leading wildcard label (networking/v1 rules).
_INGRESS_HOST = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+\-.^_`|~]{1,256}$")


def _require(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise WorkloadError("%s: expected %s, got %r" % (where, expected, got))


def _dns_label(value: Any, where: str) -> str:
    _require(is_dns1123_label(value), where, DNS1123_LABEL, value)
    return str(value)


def _str_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    _require(isinstance(value, dict) and all(isinstance(k, str) for k in value), where,
             "a mapping of string keys to string values", value)
    out = {}
    for key, val in value.items():
        _require(isinstance(val, (str, int, float, bool)), "%s.%s" % (where, key), "a string", val)
        out[key] = val if isinstance(val, str) else str(val).lower() if isinstance(val, bool) else str(val)
    return out


def _int_in(value: Any, where: str, low: int, high: int) -> int:
    _require(isinstance(value, int) and not isinstance(value, bool) and low <= value <= high, where,
             "an integer from %d to %d" % (low, high), value)
    return int(value)


def _parse_path(raw: Any, where: str, types: tuple[str, ...] = PATH_TYPES, max_length: int | None = None) -> IngressPath:
    """An Ingress path (TYPES: its pathTypes, the first the default), or an HTTPRoute's
    (ROUTE_PATH_TYPES, at most 1024 characters as the CRD says)."""
    if isinstance(raw, str):
        raw = {"path": raw}
    _require(isinstance(raw, dict), where, "a path string or a mapping with path and path_type", raw)
    unknown = set(raw) - {"path", "path_type"}
    _require(not unknown, where, "only the keys path and path_type", sorted(unknown))
    path = raw.get("path", "/")
    _require(isinstance(path, str) and path.startswith("/") and (max_length is None or len(path) <= max_length), where + ".path",
             "an absolute path starting with '/'" + (" (at most %d characters)" % max_length if max_length else ""), path)
    path_type = raw.get("path_type", types[0])
    _require(path_type in types, where + ".path_type", "one of " + ", ".join(types), path_type)
    return IngressPath(path=path, path_type=path_type)


def _parse_backend_of(raw: Any, where: str) -> tuple[str | None, int | str | None]:
    """An Ingress backend's service and port keys (either omitted: the workload's own Service, its first port)."""
    service = raw.get("service")
    if service is not None:
        _dns_label(service, where + ".service")
    port = raw.get("port")
    if port is not None:
        _require((isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535)
                 or (isinstance(port, str) and is_dns1123_label(port) and len(port) <= 15), where + ".port",
                 "a Service port number (1-65535) or name", port)
    return service, port


def _parse_ingress_path(raw: Any, where: str) -> IngressPath:
    if isinstance(raw, dict):
        raw = {key: val for key, val in raw.items() if val is not None}
        unknown = set(raw) - {"path", "path_type", "service", "port"}
        _require(not unknown, where, "only the keys path, path_type, service and port", sorted(unknown))
        service, port = _parse_backend_of(raw, where)
        path = _parse_path({k: v for k, v in raw.items() if k in ("path", "path_type")}, where)
        path.service, path.port = service, port
        return path
    return _parse_path(raw, where)


def _parse_host(host: Any, where: str) -> str | None:
    if not host:
        return None
    _require(isinstance(host, str) and bool(_INGRESS_HOST.match(host)), where,
             "a DNS name, optionally starting with '*.'; no IP addresses or ports", host)
    return str(host)


def _parse_paths(raw_paths: Any, where: str) -> list[IngressPath]:
    _require(isinstance(raw_paths, list) and len(raw_paths) > 0, where, "a non-empty list", raw_paths)
    return [_parse_ingress_path(p, "%s[%d]" % (where, i)) for i, p in enumerate(raw_paths)]


def _parse_tls(raw: Any, rules: list[IngressRule], where: str) -> list[list[str]]:
    """`true` (the host of the short form) or a list of {hosts}, as spec.tls; the lab makes each entry's certificate."""
    if raw is False or raw is None:
        return []
    if raw is True:
        host = rules[0].host if len(rules) == 1 else None
        _require(host is not None and not host.startswith("*."), where,
                 "a host without a wildcard beside it (the certificate is made for that name)", host)
        return [[str(host)]]
    _require(isinstance(raw, list) and len(raw) > 0, where, "true, false or a list of mappings with hosts", raw)
    out = []
    for i, entry in enumerate(raw):
        at = "%s[%d]" % (where, i)
        _require(isinstance(entry, dict) and set(entry) == {"hosts"}, at, "a mapping with hosts (and only hosts)", entry)
        hosts = entry["hosts"]
        _require(isinstance(hosts, list) and len(hosts) > 0, at + ".hosts", "a non-empty list of hosts", hosts)
        out.append([str(_parse_host(h, "%s.hosts[%d]" % (at, j))) for j, h in enumerate(hosts)])
    return out


def _parse_ingress(raw: Any, default_name: str | None, where: str) -> IngressSpec:
    """One Ingress: the short form (host and paths: one rule) or the whole one (rules, each path naming its
    Service and port), with annotations, tls and default_backend."""
    if raw is True:
        raw = {}
    _require(isinstance(raw, dict), where, "a mapping, true or false", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    known = {"name", "class", "host", "paths", "rules", "annotations", "tls", "default_backend"}
    unknown = set(raw) - known
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), sorted(unknown))
    _require(default_name is not None or "name" in raw, where + ".name", "a name (every Ingress of a list names itself)", None)
    name = _dns_label(raw.get("name", default_name), where + ".name")
    ingress_class = raw.get("class")
    if ingress_class is not None:
        _require(is_dns1123_subdomain(ingress_class), where + ".class",
                 "an IngressClass name (DNS-1123 subdomain) or null", ingress_class)
    if "rules" in raw:
        _require("host" not in raw and "paths" not in raw, where + ".rules",
                 "rules alone (host and paths are its short form: give one or the other)", sorted({"host", "paths"} & set(raw)))
        raw_rules = raw["rules"]
        _require(isinstance(raw_rules, list), where + ".rules", "a list of rules, each with host and paths", raw_rules)
        rules = []
        for i, rule in enumerate(raw_rules):
            at = "%s.rules[%d]" % (where, i)
            _require(isinstance(rule, dict) and not set(rule) - {"host", "paths"}, at, "a mapping with host and paths", rule)
            rules.append(IngressRule(_parse_host(rule.get("host"), at + ".host"), _parse_paths(rule.get("paths"), at + ".paths")))
    else:
        paths = _parse_paths(raw.get("paths", [{"path": "/", "path_type": "Prefix"}]), where + ".paths")
        rules = [IngressRule(_parse_host(raw.get("host"), where + ".host"), paths)]
    default_backend = None
    if "default_backend" in raw:
        dflt = raw["default_backend"]
        _require(isinstance(dflt, dict) and not set(dflt) - {"service", "port"}, where + ".default_backend",
                 "a mapping with service and port", dflt)
        service, port = _parse_backend_of(dflt, where + ".default_backend")
        default_backend = IngressPath("/", "Prefix", service, port)
    _require(bool(rules) or default_backend is not None, where + ".rules", "at least one rule, or a default_backend", raw.get("rules"))
    annotations = _str_map(raw.get("annotations"), where + ".annotations")
    tls = _parse_tls(raw.get("tls", False), rules, where + ".tls")
    return IngressSpec(name=name, ingress_class=ingress_class, rules=rules, annotations=annotations, tls=tls,
                       default_backend=default_backend, short_form="rules" not in raw)


def ingress_mappings(value: Any) -> list[Obj]:
    """The Ingress mappings a workload's `ingress` value writes out (a mapping, a list of them, or none: false,
    or true for the default one, which has no mapping): what a capture, its anonymization and a rehearsal read.
    A workload's `httproute` value has the same shapes."""
    if isinstance(value, list):
        return [i for i in value if isinstance(i, dict)]
    return [value] if isinstance(value, dict) else []


def _parse_ingresses(raw: Any, default_name: str, where: str) -> list[IngressSpec]:
    """A workload's Ingresses: none (false), one (true or a mapping; named after the workload by default), or a list."""
    if raw is None or raw is False:
        return []
    if isinstance(raw, list):
        return [_parse_ingress(item, None, "%s[%d]" % (where, i)) for i, item in enumerate(raw)]
    return [_parse_ingress(raw, default_name, where)]


def _parse_ports(raw: Any, where: str) -> list[ServicePort]:
    """The workload's Service ports, each targeting the container's port (a captured Service's port numbers and names)."""
    if raw is None:
        return list(DEFAULT_PORTS)
    _require(isinstance(raw, list) and 1 <= len(raw) <= 16, where, "a list of 1 to 16 ports, each with port and name", raw)
    out = []
    for i, item in enumerate(raw):
        at = "%s[%d]" % (where, i)
        _require(isinstance(item, dict) and not set(k for k, v in item.items() if v is not None) - {"name", "port"}, at,
                 "a mapping with port and name", item)
        name = item.get("name")
        _require(name is not None or len(raw) == 1, at + ".name", "a name (a Service with several ports names each)", name)
        if name is not None:
            _require(isinstance(name, str) and is_dns1123_label(name) and len(name) <= 15, at + ".name",
                     "a port name (lowercase letters, digits and '-', at most 15 characters)", name)
        out.append(ServicePort(name, _int_in(item.get("port"), at + ".port", 1, 65535)))
    for attr in ("name", "port"):
        values = [getattr(p, attr) for p in out if getattr(p, attr) is not None]
        _require(len(values) == len(set(values)), where, "ports with distinct %ss" % attr, raw)
    return out


def _parse_parent(raw: Any, namespace: str, where: str) -> ParentRef:
    if isinstance(raw, str):
        raw = {"gateway": raw}
    _require(isinstance(raw, dict), where, "a Gateway (namespace/name, or a name in the workload's namespace) or a "
             "mapping with gateway and section_name", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"gateway", "section_name"}
    _require(not unknown, where, "only the keys gateway and section_name", sorted(unknown))
    gateway = raw.get("gateway")
    ns, sep, name = gateway.rpartition("/") if isinstance(gateway, str) else ("", "", "")
    ns = ns if sep else namespace
    _require(is_dns1123_label(ns) and is_dns1123_subdomain(name), where + ".gateway",
             "a Gateway as namespace/name, or its name in the workload's namespace", gateway)
    section = raw.get("section_name")
    if section is not None:
        _require(is_dns1123_label(section), where + ".section_name", "a listener name (%s)" % DNS1123_LABEL, section)
    return ParentRef(namespace=ns, name=name, section_name=section)


def _parse_backend(raw: Any, default_name: str, where: str) -> BackendRef:
    _require(isinstance(raw, dict), where, "a mapping with name, port and weight", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"name", "port", "weight"}
    _require(not unknown, where, "only the keys name, port and weight", sorted(unknown))
    name = raw.get("name", default_name)
    _require(is_dns1123_label(name), where + ".name", "a Service name in the workload's namespace (%s)" % DNS1123_LABEL, name)
    port = _int_in(raw.get("port", 80), where + ".port", 1, 65535)
    weight = raw.get("weight")
    if weight is not None:
        weight = _int_in(weight, where + ".weight", 0, 1000000)
    return BackendRef(name=name, port=port, weight=weight)


def _parse_route_match(raw: Any, where: str) -> RouteMatch:
    """One match of a rule written whole: its path (PathPrefix / by default), Exact header and query
    matches, and method."""
    raw = {} if raw is None else raw
    _require(isinstance(raw, dict), where, "a mapping with path, path_type, headers, query_params, method", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    known = {"path", "path_type", "headers", "query_params", "method"}
    _require(not set(raw) - known, where, "only the keys " + ", ".join(sorted(known)), sorted(set(raw) - known))
    path = _parse_path({k: v for k, v in raw.items() if k in ("path", "path_type")}, where, ROUTE_PATH_TYPES, 1024)
    headers = _str_map(raw.get("headers"), where + ".headers")
    for name in headers:
        _require(bool(_HEADER_NAME.match(name)), "%s.headers" % where, "HTTP header names", name)
    query = _str_map(raw.get("query_params"), where + ".query_params")
    method = raw.get("method")
    if method is not None:
        _require(method in ROUTE_METHODS, where + ".method", "one of " + ", ".join(ROUTE_METHODS), method)
    return RouteMatch(path=path, headers=headers, query_params=query, method=method)


def _parse_filter(raw: Any, where: str) -> Obj:
    """A rule's filter, as Gateway API writes it: its type and that type's own field."""
    _require(isinstance(raw, dict) and raw.get("type") in ROUTE_FILTERS, where + ".type",
             "one of " + ", ".join(ROUTE_FILTERS), raw.get("type") if isinstance(raw, dict) else raw)
    own = ROUTE_FILTERS[raw["type"]]
    _require(set(raw) == {"type", own} and isinstance(raw[own], dict), where,
             "the keys type and %s (a mapping), as Gateway API writes a %s filter" % (own, raw["type"]), sorted(raw))
    return {"type": raw["type"], own: raw[own]}


def _parse_route_rule(raw: Any, wl_name: str, where: str) -> RouteRule:
    _require(isinstance(raw, dict), where, "a mapping with matches, filters and backend_refs", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    known = {"matches", "filters", "backend_refs"}
    _require(not set(raw) - known, where, "only the keys " + ", ".join(sorted(known)), sorted(set(raw) - known))
    raw_matches = raw.get("matches", [{}])
    _require(isinstance(raw_matches, list) and 1 <= len(raw_matches) <= 64, where + ".matches", "a list of 1 to 64 matches",
             raw_matches)
    raw_filters = raw.get("filters", [])
    _require(isinstance(raw_filters, list) and len(raw_filters) <= 16, where + ".filters", "a list of at most 16 filters",
             raw_filters)
    raw_backends = raw.get("backend_refs", [{}])
    _require(isinstance(raw_backends, list) and len(raw_backends) <= 16, where + ".backend_refs",
             "a list of at most 16 backends (the workload's Service on port 80 when omitted; [] for none)", raw_backends)
    return RouteRule(matches=[_parse_route_match(m, "%s.matches[%d]" % (where, i)) for i, m in enumerate(raw_matches)],
                     filters=[_parse_filter(f, "%s.filters[%d]" % (where, i)) for i, f in enumerate(raw_filters)],
                     backend_refs=[_parse_backend(b, wl_name, "%s.backend_refs[%d]" % (where, i))
                                   for i, b in enumerate(raw_backends)])


def _parse_httproute(raw: Any, wl_name: str, namespace: str, where: str, default_name: str) -> HTTPRouteSpec:
    """A workload's HTTPRoute (Gateway API), beside or instead of its Ingress: its parents (the
    Gateways and listeners it attaches to), hostnames, and either the short form (path matches and
    backends: one rule) or its rules written whole (matches, filters, backends)."""
    known = {"name", "parent_refs", "hostnames", "paths", "backend_refs", "rules"}
    _require(isinstance(raw, dict), where, "a mapping with " + ", ".join(sorted(known)), raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - known
    _require(not unknown, where, "only the keys " + ", ".join(sorted(known)), sorted(unknown))
    name = _dns_label(raw.get("name", default_name), where + ".name")
    raw_parents = raw.get("parent_refs")
    _require(isinstance(raw_parents, list) and 1 <= len(raw_parents) <= 32, where + ".parent_refs",
             "a list of 1 to 32 Gateways the route attaches to (namespace/name, or mappings with gateway and section_name)",
             raw_parents)
    parents = [_parse_parent(p, namespace, "%s.parent_refs[%d]" % (where, i)) for i, p in enumerate(raw_parents)]
    seen: dict[tuple[str, str | None], int] = {}
    for i, parent in enumerate(parents):
        key = (parent.gateway, parent.section_name)
        _require(key not in seen, "%s.parent_refs[%d]" % (where, i),
                 "a parent not already named by parent_refs[%d]" % seen.get(key, -1), raw_parents[i])
        seen[key] = i
    hostnames = raw.get("hostnames", [])
    _require(isinstance(hostnames, list) and len(hostnames) <= 16, where + ".hostnames", "a list of at most 16 hostnames",
             hostnames)
    for i, host in enumerate(hostnames):
        _require(valid_hostname(host), "%s.hostnames[%d]" % (where, i), HOSTNAME, host)
    if "rules" in raw:
        both = sorted({"paths", "backend_refs"} & set(raw))
        _require(not both, where + ".rules", "rules alone (paths and backend_refs are the short form of one rule)", both)
        _require(isinstance(raw["rules"], list) and 1 <= len(raw["rules"]) <= 16, where + ".rules", "a list of 1 to 16 rules",
                 raw["rules"])
        rules = [_parse_route_rule(r, wl_name, "%s.rules[%d]" % (where, i)) for i, r in enumerate(raw["rules"])]
        return HTTPRouteSpec(name=name, parent_refs=parents, hostnames=list(hostnames), rules=rules, short_form=False)
    raw_paths = raw.get("paths", [{"path": "/", "path_type": "PathPrefix"}])
    _require(isinstance(raw_paths, list) and 1 <= len(raw_paths) <= 64, where + ".paths", "a list of 1 to 64 paths", raw_paths)
    paths = [_parse_path(p, "%s.paths[%d]" % (where, i), ROUTE_PATH_TYPES, 1024) for i, p in enumerate(raw_paths)]
    raw_backends = raw.get("backend_refs", [{}])
    _require(isinstance(raw_backends, list) and 1 <= len(raw_backends) <= 16, where + ".backend_refs",
             "a list of 1 to 16 backends (the workload's Service on port 80 when omitted)", raw_backends)
    backends = [_parse_backend(b, wl_name, "%s.backend_refs[%d]" % (where, i)) for i, b in enumerate(raw_backends)]
    return HTTPRouteSpec(name=name, parent_refs=parents, hostnames=list(hostnames),
                         rules=[RouteRule(matches=[RouteMatch(path=p) for p in paths], backend_refs=backends)])


def _parse_httproutes(raw: Any, wl_name: str, namespace: str, where: str) -> list[HTTPRouteSpec]:
    """A workload's HTTPRoutes: none (omitted or false), one mapping, or a list of them (named after the
    workload, then NAME-2, NAME-3..., unless named)."""
    if raw is None or raw is False:
        return []
    if isinstance(raw, dict):
        return [_parse_httproute(raw, wl_name, namespace, where, wl_name)]
    _require(isinstance(raw, list) and 1 <= len(raw) <= 16, where, "an HTTPRoute (a mapping), a list of 1 to 16, or false", raw)
    routes = [_parse_httproute(r, wl_name, namespace, "%s[%d]" % (where, i), wl_name if i == 0 else "%s-%d" % (wl_name, i + 1))
              for i, r in enumerate(raw)]
    names = [r.name for r in routes]
    for i, name in enumerate(names):
        _require(name not in names[:i], "%s[%d].name" % (where, i), "a name no other HTTPRoute of the workload has", name)
    return routes


def _parse_rollout(raw: Any, where: str) -> Rollout:
    if raw is None:
        return Rollout()
    _require(isinstance(raw, dict), where, "a mapping with readiness_probe, pre_stop_sleep, grace_period", raw)
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - {"readiness_probe", "pre_stop_sleep", "grace_period"}
    _require(not unknown, where, "only the keys grace_period, pre_stop_sleep, readiness_probe", sorted(unknown))
    probe = raw.get("readiness_probe", True)
    _require(isinstance(probe, bool), where + ".readiness_probe", "true or false", probe)
    sleep = _int_in(raw.get("pre_stop_sleep", 0), where + ".pre_stop_sleep", 0, 600)
    grace = raw.get("grace_period")
    if grace is not None:
        grace = _int_in(grace, where + ".grace_period", 0, 3600)
        # The kubelet kills the container when the grace period ends, preStop or not.
        _require(grace > sleep, where + ".grace_period", "more seconds than pre_stop_sleep (%d)" % sleep, grace)
    return Rollout(readiness_probe=probe, pre_stop_sleep=sleep, grace_period=grace)


def parse_workload(raw: Any, where: str, default_image: str = TEST_APP_IMAGE, echo_image: str = ECHO_APP_IMAGE) -> Workload:
    """Validate one workload spec; `where` prefixes error messages (e.g. workloads[0]). A
    workload without `image` runs `default_image` (the lab's lab_images.test_app), or with
    `app: echo` `echo_image` (lab_images.echo)."""
    _require(isinstance(raw, dict), where, "a mapping", raw)
    # Ansible's argument spec fills unset suboptions with None: treat them as unset.
    raw = {key: val for key, val in raw.items() if val is not None}
    unknown = set(raw) - WORKLOAD_KEYS
    _require(not unknown, where, "only the keys " + ", ".join(sorted(WORKLOAD_KEYS)), sorted(unknown))
    name = _dns_label(raw.get("name"), where + ".name")
    namespace = _dns_label(raw.get("namespace", "default"), where + ".namespace")
    app = raw.get("app", "web")
    _require(app in APPS, where + ".app", "one of " + ", ".join(APPS), app)
    image = raw.get("image", echo_image if app == "echo" else default_image)
    _require(isinstance(image, str) and image.strip() != "" and " " not in image, where + ".image",
             "a container image reference", image)
    replicas = _int_in(raw.get("replicas", 1), where + ".replicas", 0, 100)
    port = _int_in(raw.get("port", 80), where + ".port", 1, 65535)
    labels = _str_map(raw.get("labels"), where + ".labels")
    ingresses = _parse_ingresses(raw.get("ingress", True), name, where + ".ingress")
    rollout = _parse_rollout(raw.get("rollout"), where + ".rollout")
    httproutes = _parse_httproutes(raw.get("httproute"), name, namespace, where + ".httproute")
    ports = _parse_ports(raw.get("ports"), where + ".ports")
    return Workload(name=name, namespace=namespace, image=image, replicas=replicas, port=port, labels=labels,
                    ingresses=ingresses, rollout=rollout, httproutes=httproutes, app=app, ports=ports)


def parse_workloads(raw: Any, where: str = "workloads", default_image: str = TEST_APP_IMAGE,
                    echo_image: str = ECHO_APP_IMAGE) -> list[Workload]:
    """Validate every workload, and that no two share a namespace/name."""
    _require(isinstance(raw, list), where, "a list of workloads", raw)
    parsed = [parse_workload(item, "%s[%d]" % (where, i), default_image, echo_image) for i, item in enumerate(raw)]
    seen: dict[tuple[str, str], int] = {}
    for i, wl in enumerate(parsed):
        key = (wl.namespace, wl.name)
        _require(key not in seen, "%s[%d].name" % (where, i),
                 "a name unique within its namespace (also used by %s[%d])" % (where, seen.get(key, -1)), wl.name)
        seen[key] = i
    _check_ingresses(parsed, where)
    return parsed


def _check_ingresses(parsed: list[Workload], where: str) -> None:
    """Ingress names unique within a namespace; each backend a workload's Service and one of its ports."""
    services = {(wl.namespace, wl.name): wl for wl in parsed}
    named: dict[tuple[str, str], str] = {}
    for i, wl in enumerate(parsed):
        many = len(wl.ingresses) > 1
        for j, ing in enumerate(wl.ingresses):
            at = "%s[%d].ingress%s" % (where, i, "[%d]" % j if many else "")
            _require((wl.namespace, ing.name) not in named, at + ".name",
                     "an Ingress name unique within its namespace (also used by %s)" % named.get((wl.namespace, ing.name)), ing.name)
            named[(wl.namespace, ing.name)] = at
            for field_at, path in ing.backends():
                target = services.get((wl.namespace, path.service or wl.name))
                if target is None:
                    raise WorkloadError("%s.service: expected the name of a workload in namespace %s (its Service), got %r"
                                        % (at + field_at, wl.namespace, path.service))
                numbers = [p.port for p in target.ports]
                names = [p.name for p in target.ports if p.name]
                _require(path.port is None or path.port in (numbers if isinstance(path.port, int) else names), at + field_at + ".port",
                         "a port of Service %s (%s)" % (target.name, ", ".join(str(p.name or p.port) for p in target.ports)),
                         path.port)


def parse_namespaces(names: Any, labels: Any) -> tuple[list[str], dict[str, str]]:
    """Validate namespace names (unique DNS-1123 labels) and their extra labels."""
    _require(isinstance(names, list), "names", "a list of namespace names", names)
    parsed = [_dns_label(name, "names[%d]" % i) for i, name in enumerate(names)]
    dupes = sorted({n for n in parsed if parsed.count(n) > 1})
    _require(not dupes, "names", "unique names", dupes)
    return parsed, _str_map(labels, "labels")
