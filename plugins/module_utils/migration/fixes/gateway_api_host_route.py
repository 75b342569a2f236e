# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host the Gateway API target's routes leave out altogether (a team's own HTTPRoutes that never named it, where its
Ingresses still do): a route of its own for it, made from the rules of the host's Ingresses as ingress-nginx serves
them. Its paths as ingress-nginx matches them (Exact; Prefix and a plain ImplementationSpecific path as a prefix; a
regex, case-insensitive and anchored at the start as ingress-nginx's `location ~*` is, where Go's regexp reads it as PCRE
does), each Service port by number (a named one resolved from its Service), and a canary's weight as backendRef weights.
It is attached where the host arrives: a host in spec.tls on an HTTPS listener naming it (one is added beside the
Gateway's HTTPS listener, with the Ingress's certificate, when none does), any other host on the plain-HTTP listeners
that take it. An Ingress that asks for credentials or allowed addresses gets no route: the route would serve it to
anyone."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import nginx_annotations, regex_hosts
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import (
    as_go_regexp,
    host_slug,
    ingress_paths,
    tls_listing,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.gateway_objects import (
    admits,
    plain_http_listeners,
    redirects,
    routes_of_host,
    spec,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.translate import with_port_numbers

Obj = dict[str, Any]
# The annotations by which ingress-nginx refuses some clients: a route without them would answer everyone.
_GUARDS = ("auth-type", "auth-url", "auth-secret", "whitelist-source-range", "denylist-source-range")
_PATH_TYPES = {"Exact": "Exact", "Prefix": "PathPrefix", "ImplementationSpecific": "PathPrefix"}


def _instance_of(name: str, host: str) -> bool:
    """Whether NAME is one of the names wildcard HOST stands for (one label before the rest, as ingress-nginx reads it)."""
    return host.startswith("*.") and name.endswith(host[1:]) and "." not in name[:-len(host) + 1]


def _ingresses_of(objects: Objects, host: str) -> tuple[list[Obj], list[Obj]]:
    """The host's main Ingresses and its canary Ingresses (canary: "true"), in name order."""
    mains: list[Obj] = []
    canaries: list[Obj] = []
    for _name, ing in sorted(objects.ingresses.items()):
        if any(h == host for h, _p in ingress_paths(ing)):
            (canaries if nginx_annotations(ing).get("canary", "").lower() == "true" else mains).append(ing)
    return mains, canaries


def _match(path: Obj, regex: bool) -> Obj | None:
    """PATH's match as ingress-nginx matches it; None for a regex Go's regexp reads otherwise."""
    value = str(path.get("path") or "/")
    if regex and path.get("pathType") != "Exact":  # (an Exact path stays `location =` on a regex host)
        pattern = as_go_regexp(value)
        return None if pattern is None else {"path": {"type": "RegularExpression", "value": "(?i)^" + pattern}}
    return {"path": {"type": _PATH_TYPES.get(str(path.get("pathType")), "PathPrefix"), "value": value}}


def _ref(path: Obj) -> Obj | None:
    """The backendRef of PATH's Service port by number; None when its port is still a name (no Service has it)."""
    service = (path.get("backend") or {}).get("service") or {}
    number = (service.get("port") or {}).get("number")
    return {"name": str(service.get("name")), "port": int(number)} if service.get("name") and number else None


def _weighted(main: Obj, host: str, path: Obj, canaries: list[Obj]) -> list[Obj]:
    """MAIN's backendRef, with beside it the canary of the same host and path by its weight (of canary-weight-total)."""
    for canary in canaries:
        ref = next((_ref(p) for h, p in ingress_paths(canary) if h == host and p.get("path") == path.get("path")), None)
        if ref is None:
            continue
        said = nginx_annotations(canary)
        weight, total = said.get("canary-weight") or "0", said.get("canary-weight-total") or "100"
        if not (weight.isdigit() and total.isdigit()) or int(weight) > int(total):
            continue  # (a weight ingress-nginx would not read either)
        return [dict(main, weight=int(total) - int(weight)), dict(ref, weight=int(weight))]
    return [main]


def _rules(ingress: Obj, host: str, regex: bool, canaries: list[Obj], unread: list[str]) -> list[Obj]:
    """The route's rules for INGRESS's paths of HOST; a regex path Go's regexp reads otherwise goes to UNREAD."""
    out: list[Obj] = []
    for h, path in ingress_paths(ingress):
        if h != host:
            continue
        match, ref = _match(path, regex), _ref(path)
        if match is None:
            unread.append(str(path.get("path")))
        elif ref is not None:
            out.append({"matches": [match], "backendRefs": _weighted(ref, host, path, canaries)})
    return out


def _https_parents(objects: Objects, ingress: Obj, host: str, secret: str, edited: dict[str, Obj]) -> list[Obj]:
    """The parentRefs of HTTPS listeners naming HOST that admit the Ingress's namespace, adding one (the Ingress's
    certificate SECRET, beside the Gateway's first HTTPS listener) to a Gateway of that namespace that has none."""
    namespace = str(ingress["metadata"].get("namespace") or "")
    parents: list[Obj] = []
    for name in sorted(objects.gateways):
        gateway = edited.get("Gateway " + name) or objects.gateways[name]
        listeners = [li for li in spec(gateway).get("listeners") or [] if li.get("protocol") == "HTTPS"]
        named = [li for li in listeners if li.get("hostname") == host and admits(li, gateway, namespace)]
        if not named and listeners and secret and str(gateway["metadata"].get("namespace")) == namespace:
            gateway = edited.setdefault("Gateway " + name, objects.edited("Gateway", name))
            named = [dict(listeners[0], name=host_slug(host) + "-https", hostname=host,
                          tls={"mode": "Terminate", "certificateRefs": [{"name": secret}]})]
            spec(gateway)["listeners"].append(named[0])
        parents += [_parent(gateway, li, namespace) for li in named]
    return parents


def _http_parents(objects: Objects, host: str, namespace: str) -> list[Obj]:
    """The parentRefs of the plain-HTTP listeners that take HOST and admit NAMESPACE."""
    return [_parent(g, li, namespace) for g, li in plain_http_listeners(objects, host) if admits(li, g, namespace)]


def _parent(gateway: Obj, listener: Obj, namespace: str) -> Obj:
    ref: Obj = {"name": gateway["metadata"]["name"], "sectionName": listener["name"]}
    if str(gateway["metadata"].get("namespace") or "") != namespace:
        ref["namespace"] = gateway["metadata"].get("namespace")
    return ref


def _serving(objects: Objects, host: str) -> list[Obj]:
    """The routes naming HOST that serve it: not those that only redirect it (a plain-HTTP redirect to HTTPS made for
    it, which leaves its HTTPS requests with no route; seen on kind: own-routes' ops and status, 'no fix known')."""
    return [r for r in routes_of_host(objects, host) if not all(redirects(x) for x in spec(r).get("rules") or [])]


def host_route(b: Behaviour, objects: Objects) -> Fix | None:
    if causes.NO_ROUTER_FOR_HOST not in b.kinds or not objects.gateways:
        return None
    hosts: dict[str, set[str]] = {}  # the rule's host (no route names it) -> the hosts its requests named
    for row, rule in zip(b.rows, b.rules):
        if rule is not None and not _serving(objects, rule.host):
            asked = hosts.setdefault(rule.host, set())
            if not _instance_of(str(row["host"]), rule.host):  # (a name of a wildcard host is not an alias of it)
                asked.add(str(row["host"]))
    edited: dict[str, Obj] = {}
    guarded: list[str] = []
    unread: list[str] = []  # the regex paths no route can match as ingress-nginx does
    regex = regex_hosts(objects.ingresses.values())
    for host, asked in sorted(hosts.items()):
        mains, canaries = _ingresses_of(objects, host)
        for ingress in mains:
            namespace = str(ingress["metadata"].get("namespace") or "")
            said = [a for a in _GUARDS if a in nginx_annotations(ingress)]
            if said:
                guarded.append("%s (%s)" % (key_of(ingress), ", ".join(said)))
                continue
            services = [s for k, s in sorted(objects.services.items()) if k.startswith(namespace + "/")]
            rules = _rules(with_port_numbers(ingress, services), host, host in regex,
                           [with_port_numbers(c, services) for c in canaries], unread)
            name = "%s-%s" % (ingress["metadata"]["name"], host_slug(host))
            if not rules or "%s/%s" % (namespace, name) in objects.routes:
                continue  # (before any listener is added for it)
            listing = tls_listing([ingress], host)  # (the host in its spec.tls, with the certificate)
            parents = (_https_parents(objects, ingress, host, listing[1], edited) if listing is not None
                       else _http_parents(objects, host, namespace))
            if not parents:
                continue
            edited["HTTPRoute %s/%s" % (namespace, name)] = {
                "apiVersion": next(iter(objects.gateways.values())).get("apiVersion"), "kind": "HTTPRoute",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"parentRefs": parents, "hostnames": [host] + sorted(asked - {host}), "rules": rules}}
    if edited:
        return Fix("add a route of its own for %s, from its Ingresses' rules (the target's routes leave the host out)%s"
                   % (", ".join(sorted(hosts)), "; not for %s, which would then answer anyone" % ", ".join(guarded) if guarded else ""),
                   tuple(edited.values()))
    if guarded:
        return Fix("none", impossible="a route of its own for %s would answer anyone where ingress-nginx asks %s for "
                                      "credentials or an allowed address: Gateway API's standard filters have neither "
                                      "(Traefik has them as Middlewares, outside the standard)"
                                      % (", ".join(sorted(hosts)), " and ".join(guarded)))
    if unread:
        return Fix("none", impossible="a route of its own for %s would have to match %s as ingress-nginx's PCRE does; "
                                      "Traefik compiles a RegularExpression path with Go's regexp (RE2), which reads it "
                                      "otherwise or not at all (lookaround, backreferences); write the paths that regex "
                                      "allows as rules of their own" % (", ".join(sorted(hosts)), ", ".join(sorted(set(unread)))))
    return None
