# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of ingress_migration, rehearsal_lab and gateway_translation: each reads
its module's options, calls the rehearsal's files (ingress_migration.py, rehearsal_lab.py, translate.py) with plain
arguments, and shapes the module's result."""
from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._files import write_if_changed
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import INGRESS2GATEWAY_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import apply_order
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj, key_of, ref_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import list_ingresses, parse_selection
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.ingress_migration import rehearse
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.rehearsal_lab import (
    RehearsalError,
    check_targets_and_name,
    choose_pool,
    compose,
    preflight_translation,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.translate import (
    TranslationError,
    find_binary,
    input_objects,
    retarget,
    run_translator,
)

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


def failure_message(result: Obj) -> str:
    v = result["verdict"]
    parts = []
    if v["baseline_idle"]:
        parts.append("the baseline served none of the %d requests: nothing was compared (is it the baseline's address?)"
                     % len(result["corpus"]))
    for d in v["unexpected"][:10]:
        parts.append("unexpected: %s %s %s %s: %r vs %r (%s)" % (d["target"], d["ingress"], d["request"], d["field"],
                                                                 d["baseline"], d["answer"], d["cause"]))
    for e in v["unseen"]:
        parts.append("expected difference not seen: %s" % e)
    for e in v["unseen_same"]:
        parts.append("expected same answer not seen: %s" % e)
    return "ingress_migration: " + "; ".join(parts)


def run_ingress_migration(params: Params, module: Module) -> Obj:
    if params.get("fix") and module.check_mode:
        params = dict(params, fix=False)  # proving a fix edits the cluster: not in check mode
    result = rehearse(module.client(), params)
    if params["fail_on_difference"] and not result["passed"]:
        raise CheckFailed(failure_message(result), **result)
    return result


def kind_clusters(params: Params, module: Module) -> list[str] | None:
    """The kind clusters on the engine (`kind get clusters`); None when they are not to be read (kind_clusters false)
    or cannot be (said in a warning: the rehearsal's pool then keeps clear of the captured cluster's addresses only)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import KindProvider
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError

    if not params.get("kind_clusters", True):
        return None
    try:
        return KindProvider(module.run_command, module.which, {"kind": params.get("kind_binary") or "kind"}).list_clusters()
    except ClusterError as exc:
        module.warn("the other kind clusters were not read (%s): the rehearsal's pool keeps clear of the captured "
                    "cluster's addresses only" % exc)
        return None


def held_addresses(params: Params, module: Module, listed: list[str] | None) -> dict[str, dict[str, list[str]]]:
    """What the captured cluster (the module's kubeconfig and context) and every other kind cluster on the engine
    (LISTED: kind_clusters) announce (discovery.announced), by where it was read. A kind cluster whose API does not
    answer is said in its entry ("(not read: why)"): its addresses cannot be kept clear of, and the replay's proof of
    origin is the guard left."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import KindProvider
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError, context_name
    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.announced import announced
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

    held: dict[str, dict[str, list[str]]] = {}
    if params.get("kubeconfig"):
        held["the captured cluster"] = announced(module.client(params["kubeconfig"], params.get("context")))
    if listed is None:
        return held
    provider = KindProvider(module.run_command, module.which, {"kind": params.get("kind_binary") or "kind"})
    for name in [n for n in listed if n != params["cluster_name"]]:
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".kubeconfig") as handle:
                handle.write(provider.kubeconfig(name))
                handle.flush()
                held["kind cluster %s" % name] = announced(module.client(handle.name, context_name(name)))
        except (ClusterError, K8sError) as exc:
            module.warn("kind cluster %s: its addresses were not read (%s); the rehearsal's pool may overlap them"
                        % (name, str(exc).splitlines()[0]))
    return held


def check_options(params: Params, module: Module) -> Obj:
    """The rehearsal's options against the cluster, before anything is captured: each target once and known, the
    cluster name, each namespace one the captured cluster has (read with the module's kubeconfig), and the pool
    clear of every announced address. The pool it would take, and what was read."""
    check_targets_and_name(params["targets"], params["cluster_name"])
    if params["namespaces"] and params.get("kubeconfig"):
        have = sorted(str((n.get("metadata") or {}).get("name")) for n in
                      module.client(params["kubeconfig"], params.get("context")).list("v1", "Namespace"))
        missing = [ns for ns in params["namespaces"] if ns not in have]
        if missing:
            raise RehearsalError("namespaces: %s not in the captured cluster (its namespaces: %s)"
                                 % (" and ".join(missing) + (" is" if len(missing) == 1 else " are"), ", ".join(have)))
    listed = kind_clusters(params, module)
    if params["cluster_name"] in (listed or []):
        # building into it would mix its objects with the rehearsal's (seen: its HTTPRoutes in the verdicts), and the
        # rehearsal's teardown would delete it
        raise RehearsalError("cluster_name: a kind cluster named %s exists already (one a rehearsal kept with "
                             "rehearse_keep, or another lab's); the rehearsal builds a cluster of its own and deletes it "
                             "after: delete that one (kind delete cluster --name %s) or give another name "
                             "(-e rehearse_cluster_name=NAME)" % (params["cluster_name"], params["cluster_name"]))
    held = held_addresses(params, module, listed)
    pool, said = choose_pool(held, params["pool"] or "")
    return {"changed": False, "pool": pool, "held": held, "notes": [said]}


def run_rehearsal_lab(params: Params, module: Module) -> Obj:
    """The rehearsal_lab module: read the capture, compose the rehearsal, write it when it changed; without src,
    only check the options against the cluster (check_options)."""
    src, dest = params["src"], params["dest"]
    if not src:
        return check_options(params, module)
    try:
        with open(src, encoding="utf-8") as handle:
            captured = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise RehearsalError("src: cannot read the captured lab definition %s (%s)" % (src, exc)) from None
    if not isinstance(captured, dict) or "lab_workloads" not in captured:
        raise RehearsalError("src: %s is not a lab definition written by lab_capture (no lab_workloads)" % src)
    held = held_addresses(params, module, kind_clusters(params, module))
    pool, said_pool = choose_pool(held, params["pool"] or "")
    notes: list[str] = [said_pool]
    lab = compose(captured, params["targets"], params["namespaces"], params["cluster_name"], notes, pool,
                  params.get("allow") or [], bool(params.get("fail_on_change")), params.get("baseline_class") or "",
                  bool(params.get("fix")))
    translated = preflight_translation(lab, params["ingress2gateway"], module.run_command) if "gateway-api" in params["targets"] else 0
    said = "".join("# %s\n" % n for n in notes)
    text = "---\n# A migration rehearsal of %s (kindlab.ingress.rehearsal_lab); build it: playbooks/rehearse.yml\n%s%s" % (
        src, said, yaml.safe_dump(lab, default_flow_style=False, sort_keys=False, width=120))
    changed, before = write_if_changed(dest, text, module.check_mode)
    return {"changed": changed, "dest": dest, "lab": lab, "baseline": lab["lab_expect"]["migration"]["baseline"],
            "pool": pool, "held": held,
            "translated": translated, "notes": notes,
            "targets": lab["lab_expect"]["migration"]["targets"], "diff": {"before": before, "after": text}}


def run_gateway_translation(params: Params, module: Module) -> Obj:
    """The gateway_translation module: every option checked, the Ingresses read and translated (both
    read-only), then the Gateway API objects applied (server-side, dry-run in check mode)."""
    gateway_class = params["gateway_class"]
    if not is_dns1123_subdomain(gateway_class):
        raise OptionError("gateway_class: expected a GatewayClass name (a DNS subdomain), got %r" % gateway_class)
    port, tls_port = params["listener_port"], params["tls_listener_port"]
    for option, value in (("listener_port", port), ("tls_listener_port", tls_port)):
        if not 1 <= value <= 65535:
            raise OptionError("%s: expected a port from 1 to 65535, got %r" % (option, value))
    binary = find_binary(params["binary"])
    selection = parse_selection(params["namespaces"], params["names"], params["label_selector"])
    client = module.client()
    ingresses = list_ingresses(client, selection)
    if not ingresses:
        raise KindlabError("namespaces: no Ingress selected in %s: nothing to translate"
                           % (", ".join(selection.namespaces) or "any namespace"))
    namespaces = sorted({str(i["metadata"]["namespace"]) for i in ingresses})
    services = [s for ns in namespaces for s in client.list("v1", "Service", namespace=ns)]
    classes = client.list("networking.k8s.io/v1", "IngressClass")
    produced, notes = run_translator(binary, input_objects(ingresses, services, classes), params["ingress_class"],
                                     module.run_command)
    if not produced:
        raise TranslationError("ingress2gateway translated none of the %d Ingresses of %s (is their class %s? see "
                               "ingress_class)" % (len(ingresses), ", ".join(namespaces), params["ingress_class"]),
                               notes=[n.as_dict() for n in notes])
    objects = retarget(produced, notes, gateway_class, port, "ingress2gateway " + INGRESS2GATEWAY_VERSION, tls_port)
    ordered = sorted(objects, key=apply_order)  # Gateways before their routes, as apply_all applies them
    results = client.apply_all(ordered, check_mode=module.check_mode)
    applied = [{"ref": ref_of(obj), "changed": res.changed} for obj, res in zip(ordered, results)]
    return {
        "changed": any(a["changed"] for a in applied),
        "ingresses": [key_of(i) for i in ingresses],
        "objects": applied,
        "gateways": ["%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "Gateway"],
        "notes": [n.as_dict() for n in notes],
        "diff": [r.diff for r in results if r.changed and r.diff],
    }
