# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of lab_namespaces and lab_workload: each validates its options
(parse.py), then applies (apply.py) and says what it did."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ansible_collections.kindlab.ingress.plugins.module_utils._images import EXPECTED as IMAGE_EXPECTED
from ansible_collections.kindlab.ingress.plugins.module_utils._images import valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import ECHO_APP_IMAGE, TEST_APP_IMAGE
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
