# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rehearsal_lab: a captured lab definition (lab_capture) made into a migration rehearsal.

The capture is kept as it is: its ingress-nginx (the baseline: the one that claims most of the
rehearsed Ingresses), its other controllers, its stand-ins and Ingresses, its expectations. Added: one
Traefik per chosen target, in a namespace of its own, reading the baseline's Ingresses (through
ingress-nginx's rules, through Traefik's own Ingress provider, or translated to Gateway API by
ingress2gateway), and lab_expect.migration, which replays the generated requests through the baseline
and each target and reports every difference (report_only: nobody has said yet what to expect).
Pure: the playbook reads the capture and writes the result (playbooks/rehearse.yml).
"""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import PoolError, entry_network, free_network
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import rehearsal_values
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import (
    DEFAULT_CONTROLLER_NAME, TRANSLATION_LISTENER_PORT, TRANSLATION_TLS_LISTENER_PORT)
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import ingress_mappings
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import parse_expected

Obj = dict[str, Any]

# Each target a rehearsal can add: (its namespace in the rehearsal cluster, the Traefik provider it runs).
TARGETS = {
    "traefik-nginx-provider": ("rehearse-traefik", "nginx"),
    "traefik-ingress-provider": ("rehearse-traefik-native", "ingress"),
    "gateway-api": ("rehearse-gateway", "gateway"),
    "own-routes": ("rehearse-own-routes", "gateway"),
}
# A Gateway target's Traefik serves only the GatewayClass labelled with its target's name.
TARGET_LABEL = "kindlab.ingress/rehearsal-target"
DEFAULT_TARGETS = ["traefik-nginx-provider", "gateway-api"]
GATEWAY_CLASS = "kindlab-rehearsal"  # the GatewayClass the translation's Gateways use (Traefik's controllerName)
# ingress-nginx chart defaults, where a captured release leaves them unset
_DEFAULT_CLASS, _DEFAULT_CONTROLLER_VALUE = "nginx", "k8s.io/ingress-nginx"


POOL_NAME = "rehearsal-pool"


class RehearsalError(OptionError):
    """The rehearsal cannot be composed as asked; the message names the option."""


def choose_pool(held: dict[str, dict[str, list[str]]], requested: str = "") -> tuple[str, str]:
    """The rehearsal's MetalLB pool, clear of every address HELD (where it was read, e.g. "kind cluster lab" ->
    announced(): network -> what holds it), and the line that says which it took. Beside a cluster whose addresses
    it shares, the rehearsal's Services would get addresses that cluster already answers on, and its requests would
    measure that cluster. REQUESTED (a CIDR or an a-b range): the user's pool, refused when it overlaps one."""
    taken = [(net, where, text, who) for where, found in held.items() for text, whos in found.items()
             for net in entry_network(text) for who in whos]
    clear = "clear of %s" % ("; ".join("%s: %d address(es) and pool(s)" % (where, len(found))
                                       for where, found in held.items()) or "nothing read")
    if requested:
        try:
            wanted = entry_network(requested)
        except PoolError:
            raise RehearsalError("pool: expected a CIDR (100.66.0.0/16) or a range (100.66.0.10-100.66.0.250), got %r"
                                 % requested) from None
        clash = list(dict.fromkeys((text, where, who) for net, where, text, who in taken
                                   if any(w.version == net.version and w.overlaps(net) for w in wanted)))
        if clash:
            net, where, who = clash[0]
            raise RehearsalError("pool: %s overlaps %s, held by %s in %s%s: the rehearsal's Services would get addresses "
                                 "that cluster answers on; choose another pool, or leave it unset to have one chosen"
                                 % (requested, net, who, where, " (and %d more)" % (len(clash) - 1) if len(clash) > 1 else ""))
        return requested, "pool %s (%s, as asked): %s" % (requested, POOL_NAME, clear)
    free = free_network(net for net, _where, _text, _who in taken)
    if free is None:
        raise RehearsalError("pool: every /16 of 100.64.0.0/10 holds an address a cluster announces; give pool")
    return str(free), "pool %s (%s, chosen): %s" % (free, POOL_NAME, clear)


def lab_ingresses(lab: Obj) -> list[tuple[str, Obj]]:
    """(namespace, Ingress) of every lab workload (an Ingress, a list of them, or none)."""
    return [(str(wl.get("namespace", "default")), ing) for wl in lab.get("lab_workloads") or []
            for ing in ingress_mappings(wl.get("ingress"))]


def _classes(controller: Obj) -> tuple[str, str, str]:
    """(IngressClass name, its controller value, the class annotation value) of a captured ingress-nginx."""
    values = controller.get("values") or {}
    return (str(get_path(values, "controller.ingressClassResource.name") or _DEFAULT_CLASS),
            str(get_path(values, "controller.ingressClassResource.controllerValue") or _DEFAULT_CONTROLLER_VALUE),
            str(get_path(values, "controller.ingressClass") or _DEFAULT_CLASS))


def _claims(controller: Obj, ingress: Obj) -> bool:
    name, _value, annotation = _classes(controller)
    if ingress.get("class"):
        return bool(ingress["class"] == name)
    return bool((ingress.get("annotations") or {}).get(CLASS_ANNOTATION) == annotation)


def _class_by_annotation(lab: Obj, class_name: str, annotation: str) -> tuple[Obj, list[str]]:
    """LAB with each Ingress of IngressClass CLASS_NAME naming its class by the class annotation (value ANNOTATION)
    instead, the name kept in CLASS_NAMED_ANNOTATION (the migrated manifests and the round trip give it back), and
    the Ingresses so changed. For the traefik-ingress-provider target: Traefik's own Ingress provider takes a
    spec.ingressClassName only when that IngressClass names its controller (traefik.io/ingress-controller; v3.7.13
    provider/kubernetes/ingress, shouldProcessIngress and GetIngressClasses), which the baseline's class cannot do,
    so it would serve none of them; it reads the annotation against its own ingressClass, and ingress-nginx,
    Traefik's ingress-nginx provider and ingress2gateway read the annotation as they read the class."""
    out, changed = copy.deepcopy(lab), []
    for wl in out.get("lab_workloads") or []:
        for ing in ingress_mappings(wl.get("ingress")):
            if ing.get("class") != class_name:
                continue
            annotations = dict(ing.get("annotations") or {})
            annotations.update({CLASS_ANNOTATION: annotation, CLASS_NAMED_ANNOTATION: class_name})
            ing["annotations"] = annotations
            del ing["class"]
            changed.append("%s/%s" % (wl.get("namespace", "default"), ing.get("name")))
    return out, changed


def _gateway_serving(controllers: list[Obj]) -> list[str]:
    """The captured Traefiks that serve every Traefik GatewayClass (their Gateway provider on, no labelSelector):
    they would serve a Gateway target's Gateways beside the target's own Traefik."""
    return ["%s/%s" % (c.get("namespace"), c.get("release")) for c in controllers if c.get("type") == "traefik"
            and get_path(c.get("values") or {}, "providers.kubernetesGateway.enabled")
            and not get_path(c.get("values") or {}, "providers.kubernetesGateway.labelSelector")]


def _own_routes_gateway(lab: Obj, namespaces: list[str], target: str) -> tuple[str, list[str]]:
    """The one captured Gateway the rehearsed namespaces' own HTTPRoutes attach to, made the TARGET's: its
    GatewayClass served by the rehearsal's Traefik (its controllerName and the target's label), its listeners on
    the ports Traefik's entry points serve. (namespace/name, what was changed, in words)."""
    gateways = dict(lab.get("lab_gateways") or {})
    by_ref = {"%s/%s" % (g.get("namespace"), g.get("name")): g for g in gateways.get("gateways") or []}
    attached = set()
    for wl in lab.get("lab_workloads") or []:
        ns = str(wl.get("namespace", "default"))
        for route in ingress_mappings(wl.get("httproute")) if ns in namespaces else []:
            for parent in route.get("parent_refs") or []:
                ref = str(parent.get("gateway") if isinstance(parent, dict) else parent)
                attached.add(ref if "/" in ref else "%s/%s" % (ns, ref))
    found = sorted(attached & set(by_ref))
    if len(found) != 1:
        raise RehearsalError("targets: own-routes replays through the one Gateway the HTTPRoutes of %s attach to, and "
                             "they attach to %s (captured Gateways: %s)"
                             % (", ".join(namespaces), " and ".join(found) or "none", ", ".join(sorted(by_ref)) or "none"))
    gateway = copy.deepcopy(by_ref[found[0]])
    said = []
    classes = [dict(c) for c in gateways.get("classes") or []]
    own = [c for c in classes if c.get("name") == gateway.get("class")] or [{"name": gateway.get("class")}]
    if own[0] not in classes:
        classes.append(own[0])
    if own[0].get("controller_name", DEFAULT_CONTROLLER_NAME) != DEFAULT_CONTROLLER_NAME:
        said.append("GatewayClass %s: served by the rehearsal's Traefik (controllerName %s, was %s)"
                    % (own[0]["name"], DEFAULT_CONTROLLER_NAME, own[0]["controller_name"]))
    own[0]["controller_name"] = DEFAULT_CONTROLLER_NAME
    own[0]["labels"] = dict(own[0].get("labels") or {}, **{TARGET_LABEL: target})
    for listener in gateway.get("listeners") or []:
        port = TRANSLATION_TLS_LISTENER_PORT if listener.get("protocol") == "HTTPS" else TRANSLATION_LISTENER_PORT
        if listener.get("port") != port:
            said.append("Gateway %s listener %s: on port %d, where Traefik's entry point listens (was %s)"
                        % (found[0], listener.get("name"), port, listener.get("port")))
            listener["port"] = port
    gateways["classes"] = classes
    gateways["gateways"] = [gateway if g is by_ref[found[0]] else g for g in gateways.get("gateways") or []]
    lab["lab_gateways"] = gateways
    return found[0], said


def check_targets_and_name(targets: list[str], cluster_name: str) -> None:
    """A RehearsalError naming the option: TARGETS not a non-empty list of known targets, each once; CLUSTER_NAME
    not a kind cluster name."""
    unknown = [t for t in targets if t not in TARGETS]
    if not targets or unknown:
        raise RehearsalError("targets: expected a non-empty list of %s, got %r" % (", ".join(TARGETS), unknown or targets))
    if len(set(targets)) < len(targets):
        raise RehearsalError("targets: expected each target once, got %r" % targets)
    if not is_dns1123_label(cluster_name):
        raise RehearsalError("cluster_name: expected a kind cluster name (a DNS label), got %r" % cluster_name)


def compose(lab: Obj, targets: list[str], namespaces: list[str], cluster_name: str, notes: list[str] | None = None,
            pool: str = "", allow: list[Obj] | None = None, fail_on_change: bool = False, baseline_class: str = "",
            fix: bool = False) -> Obj:
    """The rehearsal's lab definition from the captured LAB (see the module docstring); POOL: its MetalLB pool
    (choose_pool), else the inventory's. ALLOW: the behaviours it may change; FAIL_ON_CHANGE: any other fails it;
    FIX: a fix proven for each behaviour in the rehearsal cluster (lab_expect.migration.fix).
    BASELINE_CLASS: the IngressClass of the captured ingress-nginx to rehearse the move off (default: the one that
    claims most of the rehearsed Ingresses; the others' are named in NOTES, to rehearse in a run of their own)."""
    check_targets_and_name(targets, cluster_name)
    try:
        allowed = parse_expected(allow, "allow")
    except OptionError as exc:
        raise RehearsalError(str(exc)) from None
    ingresses = lab_ingresses(lab)
    captured_namespaces = sorted({ns for ns, _ing in ingresses})
    for ns in namespaces:
        if ns not in captured_namespaces:
            raise RehearsalError("namespaces: %s has no captured Ingress (namespaces with Ingresses: %s)"
                                 % (ns, ", ".join(captured_namespaces) or "none"))
    rehearsed = [(ns, ing) for ns, ing in ingresses if not namespaces or ns in namespaces]
    if not rehearsed:
        raise RehearsalError("src: the capture has no Ingress: nothing to rehearse")
    nginx = [c for c in lab.get("lab_controllers") or [] if c.get("type") == "ingress_nginx"]
    if not nginx:
        raise RehearsalError("src: the captured cluster runs no ingress-nginx: there is no move off it to rehearse")
    if baseline_class:
        chosen = [c for c in nginx if _classes(c)[0] == baseline_class]
        if not chosen:
            raise RehearsalError("baseline_class: no captured ingress-nginx has IngressClass %s (theirs: %s)"
                                 % (baseline_class, ", ".join(sorted(_classes(c)[0] for c in nginx))))
        baseline = chosen[0]
    else:
        baseline = max(nginx, key=lambda c: sum(1 for _ns, ing in rehearsed if _claims(c, ing)))  # the first of a tie
    for other in nginx:
        left = sorted("%s/%s" % (ns, ing.get("name")) for ns, ing in rehearsed if other is not baseline and _claims(other, ing))
        if left and notes is not None:
            notes.append("the Ingresses of class %s (ingress-nginx %s/%s: %s) are not rehearsed in this run; rehearse them in "
                         "one of their own (baseline_class %s, -e rehearse_class=%s)"
                         % (_classes(other)[0], other.get("namespace"), other.get("release"), ", ".join(left),
                            _classes(other)[0], _classes(other)[0]))
    class_name, controller_value, annotation = _classes(baseline)
    if "traefik-ingress-provider" in targets:
        lab, by_annotation = _class_by_annotation(lab, class_name, annotation)
        rehearsed = [(ns, ing) for ns, ing in lab_ingresses(lab) if not namespaces or ns in namespaces]
        if by_annotation and notes is not None:
            notes.append("the Ingresses of IngressClass %s name it by the annotation %s: %s instead (%s): Traefik's own "
                         "Ingress provider (traefik-ingress-provider) takes an IngressClass only when its controller is "
                         "Traefik's, and would serve none of them; every other controller reads both alike, and the "
                         "migrated manifests name the class as the capture did"
                         % (class_name, CLASS_ANNOTATION, annotation, ", ".join(by_annotation)))
    served_namespaces = sorted({ns for ns, ing in rehearsed if _claims(baseline, ing)})
    if not served_namespaces:
        raise RehearsalError("src: no rehearsed Ingress is of the class of any captured ingress-nginx (class %s or "
                             "annotation %s: %s)" % (class_name, CLASS_ANNOTATION, annotation))
    taken = set(lab.get("lab_namespaces") or [])
    out = copy.deepcopy(lab)
    out["lab_scenario"] = "%s-rehearsal" % lab.get("lab_scenario", "captured")
    out["lab_cluster"] = {"name": cluster_name, "workers": 0, "kind_config": {}}
    if pool:
        out["lab_metallb_pools"] = [{"name": POOL_NAME, "addresses": [pool]}]
    controllers, migration_targets = list(out.get("lab_controllers") or []), []
    for target in targets:
        namespace, provider = TARGETS[target]
        if namespace in taken:
            raise RehearsalError("targets: %s runs in namespace %s, which the captured cluster has too" % (target, namespace))
        out["lab_namespaces"] = list(out.get("lab_namespaces") or []) + [namespace]
        label = "%s=%s" % (TARGET_LABEL, target) if provider == "gateway" else ""
        # Both Traefik Ingress providers match their ingressClass against the class annotation, as ingress-nginx matches
        # its --ingress-class; the nginx one takes an IngressClass by its controller (v3.7.13 filterIngressClass)
        controllers.append({"namespace": namespace, "type": "traefik", "release": "traefik",
                            "values": rehearsal_values(provider, annotation, controller_value, label)})
        if provider != "gateway":
            migration_targets.append({"name": target, "namespace": namespace})
            continue
        serving = _gateway_serving(list(lab.get("lab_controllers") or []))
        if serving:
            raise RehearsalError("targets: %s serves its Gateway with a Traefik of its own, and the captured %s serve%s "
                                 "every Traefik GatewayClass (providers.kubernetesGateway without a labelSelector), so "
                                 "both would serve it" % (target, " and ".join(serving), "s" if len(serving) == 1 else ""))
        out["lab_gateway_api"] = True
        if target == "own-routes":
            gateway_ref, said = _own_routes_gateway(out, served_namespaces, target)
            (notes if notes is not None else []).extend(said)
            migration_targets.append({"name": target, "gateway": gateway_ref})
            continue
        # ingress2gateway makes a Gateway per namespace and class; the target's one Traefik writes its one address into
        # each (statusAddress), so the replay through the first reaches every namespace's routes (dataplanes._by_gateway)
        # ingress2gateway selects by the class an Ingress names (spec.ingressClassName, else the annotation): the
        # baseline claims both its IngressClass's name and its annotation's value, so each name is translated, one
        # Gateway each, all served by the target's one Traefik at one address
        named = sorted({ing.get("class") or (ing.get("annotations") or {}).get(CLASS_ANNOTATION, "")
                        for _ns, ing in rehearsed if _claims(baseline, ing)})
        gateways = dict(out.get("lab_gateways") or {})
        gateways["classes"] = list(gateways.get("classes") or []) + [{"name": GATEWAY_CLASS, "labels": {TARGET_LABEL: target}}]
        gateways["translations"] = list(gateways.get("translations") or []) + [
            {"namespaces": served_namespaces, "class": GATEWAY_CLASS, "ingress_class": name} for name in named]
        out["lab_gateways"] = gateways
        # ingress2gateway names the Gateway of each namespace after the class; the replay goes through the first, whose
        # address serves the others' routes too (dataplanes: every Gateway at that address)
        migration_targets.append({"name": target, "gateway": "%s/%s" % (served_namespaces[0], named[0])})
    out["lab_controllers"] = controllers
    expect = dict(out.get("lab_expect") or {})
    expect["migration"] = {"namespaces": served_namespaces, "report_only": not fail_on_change,
                           "baseline": {"name": "ingress-nginx", "namespace": baseline["namespace"]},
                           "targets": migration_targets}
    if allowed:
        expect["migration"]["allowed"] = allowed
    if fix:
        expect["migration"]["fix"] = True
    out["lab_expect"] = expect
    return out


def preflight_translation(lab: Obj, binary: str, run: Any) -> int:
    """ingress2gateway run on the rehearsal's own Ingresses and Services (the lab renders them from the capture)
    before any cluster exists, so that a translation that fails stops the rehearsal before kind is touched. RUN:
    the module's command runner. Returns how many objects it made; a TranslationError (its one-line error) when
    it fails or makes none."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import render
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.translate import (
        TranslationError, find_binary, input_objects, run_translator)

    translations = (lab.get("lab_gateways") or {}).get("translations") or []
    made = 0
    for item in translations:
        namespaces, ingress_class = set(item["namespaces"]), item["ingress_class"]
        workloads = parse_workloads([w for w in lab["lab_workloads"] if w.get("namespace") in namespaces], where="lab_workloads")
        objs = [o for w in workloads for o in render(w, workloads)]
        ingresses = [o for o in objs if o["kind"] == "Ingress"]
        baseline = next(c for c in lab["lab_controllers"] if c["namespace"] == lab["lab_expect"]["migration"]["baseline"]["namespace"])
        name, value, _annotation = _classes(baseline)
        classes = [{"metadata": {"name": name}, "spec": {"controller": value}}]
        produced, _notes = run_translator(find_binary(binary, "ingress2gateway"),
                                          input_objects(ingresses, [o for o in objs if o["kind"] == "Service"], classes),
                                          ingress_class, run)
        if not produced:
            raise TranslationError("ingress2gateway translated none of the %d Ingresses of %s (class %s): the gateway-api "
                                   "target would have nothing to serve" % (len(ingresses), ", ".join(sorted(namespaces)), ingress_class))
        made += len(produced)
    return made
