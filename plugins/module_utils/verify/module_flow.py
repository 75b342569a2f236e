# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow every read-only verification module shares: validate the Ingress selection and
the module's own options before any request, connect, run the check, and fail only when
the caller asked for it (the verify role collects verdicts instead)."""
from __future__ import annotations

from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed
from ansible_collections.kindlab.ingress.plugins.module_utils._module import Logic, Module, Params, Result
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection, parse_selection


def check_entry(
    check: Callable[[Any, Selection, Any], Result],
    failure_message: Callable[[Result], str],
    fail_option: str = "fail_on_violation",
    parse_options: Callable[[Params], Any] | None = None,
) -> Logic:
    """The module logic of a verification: `check(client, selection, options)`.

    Option errors from parsing (OptionError) fail before any request, naming the option; a
    result with `passed` false raises CheckFailed (carrying the result) only when the module's
    `fail_option` is set."""

    def logic(params: Params, module: Module) -> Result:
        selection = parse_selection(params["namespaces"], params["names"], params["label_selector"])
        options = parse_options(params) if parse_options else None
        result = check(module.client(), selection, options)
        if params[fail_option] and not result["passed"]:
            raise CheckFailed(failure_message(result), **dict(result, changed=False))
        return dict(result, changed=False)

    return logic
