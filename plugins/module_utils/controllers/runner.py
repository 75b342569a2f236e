# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of ingress_controller and controller_health: each reads its module's
options, calls install.py with plain arguments (the request, the tools it needs, the client), and shapes the
module's result."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import find_binary
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import (
    HealthError,
    Request,
    health,
    parse_controllers,
    run,
)

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


def run_ingress_controller(params: Params, module: Module) -> dict[str, Any]:
    """The ingress_controller module: the request from its options, the tools it needs, then run()."""
    req = Request(**{k: params[k] for k in Request.__dataclass_fields__})
    if req.method == "manifest" or (req.state == "present" and req.wait and not module.check_mode):
        module.require("kubernetes")
    helm = None
    if req.method == "helm":
        helm = find_binary(req.helm_binary, module.which)
        if helm is None:
            raise OptionError("helm_binary: %r was not found (or is not executable); install helm v3/v4 or set "
                              "helm_binary to its path" % req.helm_binary)
    return run(req, module.check_mode, client_factory=lambda: module.client(req.kubeconfig, req.context),
               run_command=module.run_command, helm=helm)


def run_controller_health(params: Params, module: Module) -> dict[str, Any]:
    """The controller_health module: validate every option, then one reading of each controller."""
    try:
        parsed = parse_controllers(params["controllers"])
    except ControllerError as exc:
        msg = str(exc)
        raise OptionError("controllers" + msg if msg.startswith("[") else "controllers: " + msg) from None
    log_lines = params["log_lines"]
    if log_lines < 0:
        raise OptionError("log_lines: expected a number of lines >= 0, got %d" % log_lines)
    if params["settle_timeout"] < 0:
        raise OptionError("settle_timeout: expected seconds >= 0, got %s" % params["settle_timeout"])
    result = health(module.client(), parsed, log_lines, float(params["settle_timeout"]))
    if params["fail_on_violation"] and not result["passed"]:
        raise HealthError("controllers not started: %s" % "; ".join(result["failures"]), **result)
    return result
