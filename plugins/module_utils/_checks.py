# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow every read-only verification module shares: validate the Ingress selection and
the module's own options before any request, connect, run the check, and fail only when
the caller asked for it (the verify role collects verdicts instead)."""
from __future__ import annotations

from typing import Any, Callable

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kindlab.ingress.plugins.module_utils._k8s import K8S_IMPORT_ERROR, Client, K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils._select import Selection, parse_selection

Result = dict[str, Any]


def run_check(
    module: AnsibleModule,
    check: Callable[[Client, Selection, Any], Result],
    failure_message: Callable[[Result], str],
    fail_option: str = "fail_on_violation",
    parse_options: Callable[[dict[str, Any]], Any] | None = None,
) -> None:
    """Run `check(client, selection, options)` and exit the module with its result.

    ValueError from parsing (every option error type derives from it) becomes a failure
    naming the option; `result["passed"]` false fails only when `fail_option` is set."""
    params = module.params
    try:
        selection = parse_selection(params["namespaces"], params["names"], params["label_selector"])
        options = parse_options(params) if parse_options else None
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    if K8S_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    try:
        result = check(Client(params["kubeconfig"], params["context"]), selection, options)
    except K8sError as exc:
        module.fail_json(msg=str(exc))
    if params[fail_option] and not result["passed"]:
        module.fail_json(msg=failure_message(result), changed=False, **result)
    module.exit_json(changed=False, **result)
