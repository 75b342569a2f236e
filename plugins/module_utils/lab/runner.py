# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of lab_definition, lab_namespaces, lab_workload, gateway_api and
lab_actions: each reads its module's options, calls the lab's files (definition.py, workloads/, gateways.py,
actions.py) with plain arguments, and shapes the module's result."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._images import EXPECTED as IMAGE_EXPECTED
from ansible_collections.kindlab.ingress.plugins.module_utils._images import valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import ECHO_APP_IMAGE, GATEWAY_API_VERSION, TEST_APP_IMAGE
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.actions import ActionFailed, parse_actions, run_actions
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.actions import plan as action_plan
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import plan, validate
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import GatewayError, crds_source, fetch_crds, parse_gateways
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import ensure as ensure_gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import summary as gateways_summary
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import ensure, ensure_namespaces
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import Obj, WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_namespaces, parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.summary import summary

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


def run_lab_namespaces(params: Params, module: Module) -> Obj:
    """The lab_namespaces module: validate the names and labels, then ensure the namespaces."""
    names, labels = parse_namespaces(params["names"], params["labels"])
    return ensure_namespaces(module.client(), names, labels, params["state"], module.check_mode)


def run_lab_workload(params: Params, module: Module) -> Obj:
    """The lab_workload module: validate every workload, then ensure (or delete) their objects."""
    default_image = params.get("default_image") or TEST_APP_IMAGE
    echo_image = params.get("echo_image") or ECHO_APP_IMAGE
    for option, image in (("default_image", default_image), ("echo_image", echo_image)):
        if not valid_image(image):
            raise WorkloadError("%s: expected %s, got %r" % (option, IMAGE_EXPECTED, image))
    workloads = parse_workloads(params["workloads"], default_image=default_image, echo_image=echo_image)
    result = ensure(module.client(), workloads, params["state"], module.check_mode, params["wait"], params["wait_timeout"])
    return dict(result, workloads=[summary(wl) for wl in workloads])


def run_lab_definition(params: Params, module: Module) -> dict[str, Any]:
    """The lab_definition module: validate the whole lab definition, change nothing."""
    result = validate(params["backend"], params["cluster"], params["metallb_pools"], params["namespaces"],
                      params["controllers"], params["workloads"], params["expect"], params["images"],
                      params["images_load"], params["charts"], params["time_scale"], params["actions"],
                      params["gateway_api"], params["gateways"])
    return dict(result, plan=plan(result), changed=False)


def run_gateway_api(params: Params, module: Module) -> Obj:
    """The gateway_api module: validate the classes and Gateways, read the CRDs, then apply them all."""
    gateways = parse_gateways({"classes": params["classes"], "gateways": params["gateways"]}, where="")
    if params["wait_timeout"] < 0:
        raise GatewayError("wait_timeout: expected seconds >= 0, got %s" % params["wait_timeout"])
    crds: list[Obj] = []
    url = None
    if params["crds"]:
        from ansible.module_utils.urls import open_url

        url = crds_source(params["manifest_url"], params["source"])
        crds = fetch_crds(url, open_url)
    result = ensure_gateway_api(module.client(), crds, gateways, module.check_mode, params["wait_timeout"])
    return dict(result, crds_url=url, version=GATEWAY_API_VERSION, **gateways_summary(gateways))


def run_lab_actions(params: Params, module: Module) -> Obj:
    """The lab_actions module."""
    actions = parse_actions(params["actions"])
    if module.check_mode:
        return {"changed": bool(actions), "actions": action_plan(actions), "failed_actions": 0}
    client = module.client(params.get("kubeconfig"), params.get("context"))
    results = run_actions(client, actions)
    failed = [r for r in results if not r["ok"]]
    out: Obj = {"changed": bool(results), "actions": results, "failed_actions": len(failed)}
    if failed and params["fail_on_error"]:
        raise ActionFailed("%d of %d action(s) failed: %s" % (
            len(failed), len(results), "; ".join("%s: %s" % (r["name"], r["error"]) for r in failed)), **out)
    return out
