# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab definition as a whole: validated once, before the first change.

Each part is validated by the module_utils that owns it (pools, controllers, workloads);
this module adds the checks that span parts (a workload in a namespace the lab does not
create, two releases with the same name in a namespace, two controllers claiming the
same IngressClass resource name, a pool inside a network the cluster will use, an
expectation naming an Ingress or controller the lab does not define) and prefixes every
error with the lab variable it came from.
"""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import (
    ControllerError,
    controller_type,
    installable,
    installable_names,
    parse_controllers,
)
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._helm import HelmError, chart_source
from ansible_collections.kindlab.ingress.plugins.module_utils._images import ImageError, parse_load
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.actions import ActionError, check_references, parse_actions, plan as action_plan
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import (
    GatewayError, Gateways, parse_gateway_api, parse_gateways, summary as gateways_summary,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import planned_networks
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import (
    ClusterNetworks, Pool, PoolError, cluster_overlaps, parse_pools,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError, render_kind_config
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import (
    EACH_INGRESS, VerifyError, controller_references, gateway_references, ingress_patterns, ingress_references, route_references,
    validate_expect,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import HTTPRouteSpec, Workload, WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import ingress_mappings, parse_namespaces, parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.summary import default_probes, summary
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import GATEWAY_API_VERSION

BACKENDS = ("auto", "kind", "twin")
_CLUSTER_KEYS = {"name", "workers", "node_image", "kind_config"}


class LabError(OptionError):
    """The lab definition is invalid; the message names the variable and field."""


def _prefixed(variable: str, exc: Exception) -> str:
    """Put the lab variable in front of a part's error ('[1].release: …' → 'lab_controllers[1].release: …')."""
    msg = str(exc)
    return variable + msg if msg.startswith("[") else "%s: %s" % (variable, msg)


def _cluster(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise LabError("lab_cluster: expected a mapping with name, workers, node_image, kind_config, got %r" % (raw,))
    unknown = sorted(set(raw) - _CLUSTER_KEYS)
    if unknown:
        raise LabError("lab_cluster: expected only the keys %s, got %s" % (", ".join(sorted(_CLUSTER_KEYS)), unknown))
    name = raw.get("name")
    # kind cluster names end up in container and context names: lower-case DNS labels.
    if not isinstance(name, str) or not is_dns1123_label(name) or len(name) > 50:
        raise LabError("lab_cluster.name: expected a lower-case DNS label of at most 50 characters, got %r" % (name,))
    workers = raw.get("workers", 0)
    if not isinstance(workers, int) or isinstance(workers, bool) or not 0 <= workers <= 10:
        raise LabError("lab_cluster.workers: expected an integer from 0 to 10, got %r" % (workers,))
    if not isinstance(raw.get("kind_config", {}), dict):
        raise LabError("lab_cluster.kind_config: expected a mapping (kind Cluster config), got %r" % (raw["kind_config"],))
    node_image = raw.get("node_image")
    if node_image is not None and (not isinstance(node_image, str) or " " in node_image):
        raise LabError("lab_cluster.node_image: expected an image reference such as kindest/node:v1.35.0, got %r" % (node_image,))
    return {"name": name, "workers": workers, "node_image": node_image or None, "kind_config": raw.get("kind_config", {})}


def _cluster_networks(cluster: dict[str, Any]) -> ClusterNetworks:
    """The networks the cluster will have (its kind config rendered as the kind_cluster role will)."""
    try:
        config = render_kind_config(cluster["workers"], cluster["node_image"], cluster["kind_config"])
    except ClusterError as exc:
        raise LabError("lab_cluster.%s" % exc) from None
    return planned_networks(config)


# Where each network comes from and what MetalLB would hand out inside it, by ClusterNetworks label.
_INSIDE = {
    "node network": "the subnet docker usually gives kind's network, and the twin's; MetalLB would hand out the "
                    "nodes' addresses",
    "pod CIDR": "kind's default, or networking.podSubnet of lab_cluster.kind_config; MetalLB would hand out pod addresses",
    "service CIDR": "kind's default, or networking.serviceSubnet of lab_cluster.kind_config; MetalLB would hand out "
                    "Service cluster IPs",
}


def _pools_outside_cluster(pools: list[Pool], networks: ClusterNetworks) -> None:
    """MetalLB must not hand out addresses the cluster already uses; the metallb role checks the
    node network the cluster really got, here the one it will most likely get is checked up front."""
    for i, j, label, net in cluster_overlaps(pools, networks):
        raise LabError("lab_metallb_pools[%d].addresses[%d]: expected addresses outside the %s %s (%s), got %r; "
                       "the lab's default pool is 100.64.0.0/16"
                       % (i, j, label, net, _INSIDE[label], str(pools[i].ranges[j])))


def _charts(raw: Any) -> dict[str, dict[str, Any]]:
    """lab_charts: controller type -> a local chart (directory or .tgz) that helm installs instead
    of the pinned repository chart."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LabError("lab_charts: expected a mapping of controller type to a chart directory or .tgz, got %r" % (raw,))
    out: dict[str, dict[str, Any]] = {}
    for name, path in raw.items():
        try:
            how = controller_type(name).installer()
        except ControllerError:
            raise LabError("lab_charts.%s: expected a controller type the lab installs, one of %s"
                           % (name, ", ".join(installable_names()))) from None
        if not isinstance(path, str) or not path:
            raise LabError("lab_charts.%s: expected the path of a chart directory or .tgz, got %r" % (name, path))
        try:
            source = chart_source(how.chart_name, how.chart_repo, how.chart_version, None, None, path)
        except HelmError as exc:
            raise LabError("lab_charts.%s: %s" % (name, exc)) from None
        out[name] = source.as_dict()
    return out


def _gateways(gateway_api: bool, gateways: Gateways, ns_list: list[str]) -> None:
    """lab_gateways needs the CRDs, and each Gateway a namespace the lab creates."""
    if (gateways.classes or gateways.gateways) and not gateway_api:
        raise LabError("lab_gateways: GatewayClasses and Gateways need the Gateway API CRDs: set lab_gateway_api: true "
                       "(got %d class(es), %d Gateway(s) with lab_gateway_api false)" % (len(gateways.classes), len(gateways.gateways)))
    for i, gw in enumerate(gateways.gateways):
        if gw.namespace not in ns_list:
            raise LabError("lab_gateways.gateways[%d].namespace: expected one of lab_namespaces %s, got %r" % (i, ns_list, gw.namespace))
    for i, tr in enumerate(gateways.translations):
        for j, ns in enumerate(tr.namespaces):
            if ns not in ns_list:
                raise LabError("lab_gateways.translations[%d].namespaces[%d]: expected one of lab_namespaces %s, got %r"
                               % (i, j, ns_list, ns))


def _routes(gateway_api: bool, gateways: Gateways, workloads: list[Workload]) -> None:
    """Each HTTPRoute's parents are Gateways of lab_gateways, and its section names their listeners."""
    for i, wl in enumerate(workloads):
        for k, route in enumerate(wl.httproutes):
            where = "lab_workloads[%d].httproute%s" % (i, "[%d]" % k if len(wl.httproutes) > 1 else "")
            _route_parents(gateway_api, gateways, route, where)


def _route_parents(gateway_api: bool, gateways: Gateways, route: HTTPRouteSpec, where: str) -> None:
    if not gateway_api:
        raise LabError("%s: an HTTPRoute needs the Gateway API CRDs: set lab_gateway_api: true" % where)
    refs = [g.ref for g in gateways.gateways]
    for j, parent in enumerate(route.parent_refs):
        gw = gateways.gateway(parent.gateway)
        if gw is None:
            raise LabError("%s.parent_refs[%d].gateway: expected a Gateway of lab_gateways.gateways (namespace/name), "
                           "one of %s, got %r" % (where, j, refs, parent.gateway))
        listeners = [item.name for item in gw.listeners]
        if parent.section_name is not None and parent.section_name not in listeners:
            raise LabError("%s.parent_refs[%d].section_name: expected a listener of Gateway %s, one of %s, got %r"
                           % (where, j, gw.ref, listeners, parent.section_name))


def validate(backend: Any, cluster: Any, pools: Any, namespaces: Any, controllers: Any, workloads: Any,
             expect: Any = None, images: Any = None, images_load: Any = None, charts: Any = None,
             time_scale: Any = None, actions: Any = None, gateway_api: Any = None, gateways: Any = None) -> dict[str, Any]:
    """Validate the whole lab; returns a normalised summary (and the Ingresses it declares)."""
    if backend not in BACKENDS:
        raise LabError("lab_backend: expected one of %s, got %r" % (", ".join(BACKENDS), backend))
    cluster_out = _cluster(cluster)
    try:  # the errors name lab_images.<key> and lab_images_load[i] already
        parsed_images = parse_images(images)
    except ImageError as exc:
        raise LabError(str(exc)) from None
    try:
        parsed_pools = parse_pools(pools)
    except PoolError as exc:
        raise LabError(_prefixed("lab_metallb_pools", exc)) from None
    _pools_outside_cluster(parsed_pools, _cluster_networks(cluster_out))
    try:
        ns_list, _labels = parse_namespaces(namespaces, {})
    except WorkloadError as exc:
        raise LabError("lab_namespaces: %s" % exc) from None
    try:
        parsed_gateway_api = parse_gateway_api(gateway_api)
        parsed_gateways = parse_gateways(gateways)
    except GatewayError as exc:
        raise LabError(str(exc)) from None
    _gateways(parsed_gateway_api, parsed_gateways, ns_list)
    try:
        parsed_controllers = parse_controllers(controllers, parsed_images, parsed_gateway_api)
    except ControllerError as exc:
        raise LabError(_prefixed("lab_controllers", exc)) from None
    for i, ctl in enumerate(parsed_controllers):
        if backend == "twin" and not controller_type(ctl["type"]).on_twin:
            # A real proxy in the machine's own namespace would reach pod IPs through the default
            # route; the twin has no namespace of its own yet, and no emulation of this type is written.
            raise LabError("lab_controllers[%d].type: %s runs on lab_backend kind only; the twin runs no real "
                           "proxy and emulates none of this type" % (i, ctl["type"]))
    parsed_charts = _charts(charts)
    if backend == "kind" and time_scale is not None:
        # On kind the time scale becomes the controllers' own period flags: check they take it.
        for i, ctl in enumerate(parsed_controllers):
            how = controller_type(ctl["type"]).installer()  # (parse_controllers took only installable types)
            try:
                how.with_time_scale(ctl["values"], time_scale)
            except how.value_errors as exc:
                raise LabError("lab_time_scale (lab_controllers[%d], kind): %s" % (i, exc)) from None
    try:
        parsed_workloads = parse_workloads(workloads, where="lab_workloads", default_image=parsed_images["test_app"],
                                           echo_image=parsed_images["echo"])
    except WorkloadError as exc:
        raise LabError(str(exc)) from None
    # `true` loads every image the lab runs: the controller images of the types it uses only, the
    # echo app's when a workload runs it.
    used_types = {ctl["type"] for ctl in parsed_controllers}
    unused = {key for name, how in installable().items() if name not in used_types for key in how.image_keys}
    if not any(w.app == "echo" for w in parsed_workloads):
        unused.add("echo")
    try:
        load = parse_load(images_load, {k: v for k, v in parsed_images.items() if k not in unused})
    except ImageError as exc:
        raise LabError(str(exc)) from None

    try:
        parsed_expect = validate_expect(expect if expect is not None else {})
    except VerifyError as exc:
        raise LabError(str(exc)) from None

    for i, ctl in enumerate(parsed_controllers):
        if ctl["namespace"] not in ns_list:
            raise LabError("lab_controllers[%d].namespace: expected one of lab_namespaces %s, got %r"
                           % (i, ns_list, ctl["namespace"]))
    for i, wl in enumerate(parsed_workloads):
        if wl.namespace not in ns_list:
            raise LabError("lab_workloads[%d].namespace: expected one of lab_namespaces %s, got %r"
                           % (i, ns_list, wl.namespace))
    _routes(parsed_gateway_api, parsed_gateways, parsed_workloads)

    ingresses = ["%s/%s" % (wl.namespace, ing.name) for wl in parsed_workloads for ing in wl.ingresses]
    if parsed_expect.get("reachability") == EACH_INGRESS:
        # The inventory's default follows the lab's own workloads, so that only what a user writes can name an
        # Ingress the lab does not create; those expected to get no address are not probed.
        silent = set((parsed_expect.get("addresses") or {}).get("failing") or {})
        probes = default_probes(parsed_workloads, parsed_images["test_app"])
        parsed_expect["reachability"] = [p for p in probes if p["ingress"] not in silent]
    releases = ["%s/%s" % (ctl["namespace"], ctl["release"]) for ctl in parsed_controllers]
    _expected_references(parsed_expect, ingresses, releases)
    _expected_gateway_references(parsed_expect, [g.ref for g in parsed_gateways.gateways],
                                 ["%s/%s" % (wl.namespace, r.name) for wl in parsed_workloads for r in wl.httproutes])
    try:
        parsed_actions = parse_actions(actions)
        types_by_namespace: dict[str, list[str]] = {}
        for ctl in parsed_controllers:
            types_by_namespace.setdefault(ctl["namespace"], []).append(ctl["type"])
        check_references(parsed_actions, ["%s/%s" % (wl.namespace, wl.name) for wl in parsed_workloads], types_by_namespace)
    except ActionError as exc:
        raise LabError(str(exc)) from None
    if backend == "twin" and parsed_actions:
        # The twin's pods run no server and its controllers no data plane: a rollout there moves no
        # traffic, and a frozen emulation proves nothing about the real controller's proxy.
        raise LabError("lab_actions: a scenario with timed actions runs on lab_backend kind only; the twin's emulated "
                       "controllers have no data plane for an action to disturb (got %d action(s))" % len(parsed_actions))
    no_address = set((parsed_expect.get("addresses") or {}).get("failing") or {})
    return {
        "backend": backend,
        "cluster": cluster_out,
        "pools": [p.summary() for p in parsed_pools],
        "namespaces": ns_list,
        "controllers": parsed_controllers,
        "workloads": [summary(wl) for wl in parsed_workloads],
        "ingresses": ingresses,
        # The build waits for an address on these only: the others are expected to get none.
        "addressed_ingresses": [i for i in ingresses if i not in no_address],
        "expect": parsed_expect,
        # Every image the lab runs (the pins unless lab_images overrides them), and what the kind
        # provider loads into the nodes (lab_images_load).
        "images": parsed_images,
        "images_load": load,
        # Local charts helm installs instead of the pinned repository charts (lab_charts), by type.
        "charts": parsed_charts,
        # The timed actions verify performs during its window, in the order they start.
        "actions": action_plan(parsed_actions),
        # Gateway API: whether the lab applies its CRDs (lab_gateway_api), its GatewayClasses and
        # Gateways (lab_gateways), and the workloads' HTTPRoutes (namespace/name).
        "gateway_api": parsed_gateway_api,
        "gateway_api_version": GATEWAY_API_VERSION if parsed_gateway_api else None,
        "gateways": gateways_summary(parsed_gateways),
        "httproutes": ["%s/%s" % (wl.namespace, r.name) for wl in parsed_workloads for r in wl.httproutes],
    }


def _ingress_text(namespace: str, ingress: dict[str, Any]) -> str:
    """`Ingress ns/name (class nginx-one, host a.example, paths /, /api)` for the plan."""
    claim = ("class %s" % ingress["class"] if ingress.get("class")
             else "annotation ingress.class=%s" % ingress["annotations"][CLASS_ANNOTATION]
             if CLASS_ANNOTATION in (ingress.get("annotations") or {}) else "no class")
    hosts = [r["host"] for r in ingress["rules"] if r["host"]]
    host = ", host%s %s" % ("s" if len(hosts) > 1 else "", ", ".join(hosts)) if hosts else ""
    paths = ", ".join(p["path"] for r in ingress["rules"] for p in r["paths"])
    return "Ingress %s/%s (%s%s, paths %s)" % (namespace, ingress["name"], claim, host, paths or "/")


def _route_text(namespace: str, route: dict[str, Any]) -> str:
    """`HTTPRoute ns/name (parents one/web#web, hosts a.example, paths PathPrefix /)` for the plan."""
    parents = ", ".join(p["gateway"] + ("#" + p["section_name"] if p["section_name"] else "") for p in route["parent_refs"])
    hosts = ", hosts %s" % ", ".join(route["hostnames"]) if route["hostnames"] else ""
    matches = route["paths"] if "paths" in route else [m for rule in route["rules"] for m in rule["matches"]]
    paths = ", ".join("%s %s" % (p["path_type"], p["path"]) for p in matches)
    rules = ", %d rules" % len(route["rules"]) if len(route.get("rules") or []) > 1 else ""
    return "HTTPRoute %s/%s (parents %s%s, paths %s%s)" % (namespace, route["name"], parents, hosts, paths, rules)


def plan(lab: dict[str, Any]) -> list[str]:
    """What playbooks/lab.yml builds from a validated lab (validate()'s result), one line per
    step, in its order: what check mode shows on a machine where the cluster does not exist yet."""
    cluster = lab["cluster"]
    nodes = "1 control-plane node" + (", %d worker(s)" % cluster["workers"] if cluster["workers"] else "")
    image = ", node image %s" % cluster["node_image"] if cluster["node_image"] else ""
    lines = ["cluster %s (backend %s): %s%s" % (cluster["name"], lab["backend"], nodes, image)]
    if lab["images_load"]:
        lines.append("images to load into the nodes (kind): %s" % ", ".join(lab["images_load"]))
    pools = ["%s %s (%d address%s%s)" % (p["name"], ", ".join(p["addresses"]), p["size"],
                                         "" if p["size"] == 1 else "es", "" if p["auto_assign"] else ", not auto-assigned")
             for p in lab["pools"]]
    lines.append("MetalLB (controller %s, speaker %s) with address pools: %s"
                 % (lab["images"]["metallb_controller"], lab["images"]["metallb_speaker"], "; ".join(pools) or "none"))
    lines.append("namespaces: %s" % (", ".join(lab["namespaces"]) or "none"))
    if lab.get("gateway_api"):
        lines.append("Gateway API %s CRDs (standard channel), before the controllers" % lab["gateway_api_version"])
    for ctl in lab["controllers"]:
        lines.append("controller %s/%s (%s, %s-scoped): %s"
                     % (ctl["namespace"], ctl["release"], ctl["type"], ctl["rbac_scope"], " ".join(ctl["args"])))
    gateways = lab.get("gateways") or {}
    for cls in gateways.get("classes") or []:
        lines.append("GatewayClass %s (controller %s)" % (cls["name"], cls["controller_name"]))
    for gw in gateways.get("gateways") or []:
        listeners = ", ".join("%s %s:%d%s, routes from %s" % (
            item["name"], item["protocol"], item["port"], " " + item["hostname"] if item["hostname"] else "",
            item["allowed_routes"]["namespaces"]) for item in gw["listeners"])
        lines.append("Gateway %s/%s (class %s): %s" % (gw["namespace"], gw["name"], gw["class"], listeners))
    for wl in lab["workloads"]:
        ingress = "".join(", " + _ingress_text(wl["namespace"], i) for i in ingress_mappings(wl.get("ingress")))
        route = "".join(", " + _route_text(wl["namespace"], r) for r in ingress_mappings(wl.get("httproute")))
        lines.append("workload %s/%s: %s x%d%s%s" % (wl["namespace"], wl["name"], wl["image"], wl["replicas"], ingress, route))
    if lab["addressed_ingresses"]:
        lines.append("then wait for a status address on: %s" % ", ".join(lab["addressed_ingresses"]))
    for action in lab.get("actions") or []:
        lines.append("during verify, at %gs: %s%s" % (action["at"], action["name"], " (test machinery)" if action["machinery"] else ""))
    return lines


def _expected_references(expect: dict[str, Any], ingresses: list[str], releases: list[str]) -> None:
    """Every controller and Ingress lab_expect names must be one the lab defines, or verify could
    never meet the expectation (and an expected failure would mask a typo)."""
    for where, ref in controller_references(expect):
        if ref not in releases:
            raise LabError("%s: expected a controller of lab_controllers (namespace/release), one of %s, got %r"
                           % (where, releases, ref))
    for where, ref in ingress_references(expect):
        if ref not in ingresses:
            raise LabError("%s: expected an Ingress of lab_workloads (namespace/name), one of %s, got %r"
                           % (where, ingresses, ref))
    for where, pattern in ingress_patterns(expect):
        # A finding without an Ingress is matched against '', so a pattern matching '' names none.
        if not any(re.search(pattern, text) for text in ingresses + [""]):
            raise LabError("%s: expected a regular expression matching an Ingress of lab_workloads (namespace/name), "
                           "one of %s, got %r" % (where, ingresses, pattern))


def _expected_gateway_references(expect: dict[str, Any], gateways: list[str], routes: list[str]) -> None:
    """Every Gateway and HTTPRoute lab_expect names must be one the lab defines."""
    for where, ref in gateway_references(expect):
        if ref not in gateways:
            raise LabError("%s: expected a Gateway of lab_gateways.gateways (namespace/name), one of %s, got %r" % (where, gateways, ref))
    for where, ref in route_references(expect):
        if ref not in routes:
            raise LabError("%s: expected an HTTPRoute of lab_workloads' httproute (namespace/name), one of %s, got %r"
                           % (where, routes, ref))
