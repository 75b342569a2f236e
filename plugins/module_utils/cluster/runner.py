# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of kind_cluster, cluster_provider, metallb and host_network: each reads
its module's options, calls the cluster functions (providers.py, metallb.py, hostnet.py) with plain arguments, and
shapes the module's result."""
from __future__ import annotations

import platform
from typing import TYPE_CHECKING, Any

from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._images import EXPECTED as IMAGE_EXPECTED
from ansible_collections.kindlab.ingress.plugins.module_utils._images import ImageError, parse_load, valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    KIND_NODE_IMAGE,
    METALLB_CONTROLLER_IMAGE,
    METALLB_MANIFEST_URL,
    METALLB_SPEAKER_IMAGE,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.hostnet import inspect_host
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.metallb import (
    ensure_metallb,
    fetch_manifest,
    plan,
    render_native,
    use_images,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import (
    default_kubeconfig_path,
    ensure_cluster,
    get_provider,
    provider_class,
    provider_names,
    render_kind_config,
    resolve_backend,
)

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


def _binaries(params: Params) -> dict[str, str | None]:
    return {"kind": params["kind_binary"], "docker": params["docker_binary"], "twin": params.get("twin_binary"),
            "helm": params["helm_binary"]}


def run_kind_cluster(params: Params, module: Module) -> dict[str, Any]:
    """The kind_cluster module: validate, pick the provider (auto: detect it), ensure the cluster.
    The providers must be registered first (the module imports them)."""
    binaries = _binaries(params)
    image = params["node_image"] or KIND_NODE_IMAGE
    config = render_kind_config(params["workers"], image, params["kind_config"])
    load = parse_load(params["load_images"], {}, "load_images")
    time_scale = params["time_scale"]
    if time_scale is not None and time_scale <= 0:
        raise OptionError("time_scale: expected a number greater than 0, got %s" % time_scale)
    backend = resolve_backend(params["provider"], module.run_command, module.which, binaries)
    scales_time = provider_class(backend.name).capabilities.scales_time
    if time_scale is not None and not scales_time:
        # With auto the provider is not known in advance, and 1 changes nothing: ignore.
        if params["provider"] != "auto" and time_scale != 1:
            takers = [n for n in provider_names() if provider_class(n).capabilities.scales_time]
            raise OptionError("time_scale: only the %s provider takes it (the provider is %s)"
                              % (" or ".join(takers), backend.name))
        if time_scale != 1:
            module.warn("time_scale %s ignored: the %s provider runs real controllers" % (time_scale, backend.name))
    options = {"time_scale": time_scale} if scales_time else {}
    provider = get_provider(backend.name, module.run_command, module.which, binaries, **options)
    result = ensure_cluster(
        provider, params["name"], params["state"], config, params["kubeconfig"] or default_kubeconfig_path(), image,
        params["wait"], params["wait_timeout"], module.check_mode, module.client, load, params["nodes_ready"],
    )
    return dict(result, provider_reason=backend.reason)


def run_cluster_provider(params: Params, module: Module) -> dict[str, Any]:
    """The cluster_provider module: the provider a lab would use (auto: detected) and its capabilities,
    without touching any cluster."""
    backend = resolve_backend(params["provider"], module.run_command, module.which, _binaries(params))
    return {"changed": False, "provider": backend.name, "provider_reason": backend.reason,
            "capabilities": provider_class(backend.name).capabilities.as_dict()}


def run_metallb(params: Params, module: Module) -> dict[str, Any]:
    """The metallb module: check every pool before the cluster is touched, then install and configure."""
    the_plan = plan(dict(params))
    cluster = params["cluster"] or {}
    client = module.client(params["kubeconfig"] or cluster.get("kubeconfig"), params["context"] or cluster.get("context"))
    controller_image = params["controller_image"] or METALLB_CONTROLLER_IMAGE
    speaker_image = params["speaker_image"] or METALLB_SPEAKER_IMAGE
    for option, image in (("controller_image", controller_image), ("speaker_image", speaker_image)):
        if not valid_image(image):
            raise ImageError("%s: expected %s, got %r" % (option, IMAGE_EXPECTED, image))
    if params["source"] == "upstream":
        objects, image_warnings = use_images(fetch_manifest(params["manifest_url"] or METALLB_MANIFEST_URL, open_url),
                                             controller_image, speaker_image)
        the_plan.warnings.extend(image_warnings)
    else:
        objects = render_native(controller_image, speaker_image)
    result = ensure_metallb(client, the_plan, params["source"], objects, params["l2_advertisement"] or None,
                            params["wait"], params["wait_timeout"], module.check_mode)
    # result["diff"] is one diff per changed object, the list form Ansible's callback takes.
    result["declared_pools"] = [pool.summary() for pool in the_plan.declared]
    return result


def run_host_network(params: Params, module: Module) -> dict[str, Any]:
    """The host_network module: inspect this host, change nothing."""
    return inspect_host(params, module.run_command, module.which, platform.system())
