# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one wrapper every module of the collection goes through.

A module is an argument spec, its documentation and one line::

    KindlabModule(argument_spec=SPEC, requires=("PyYAML",)).run(run_metallb)

The wrapper checks the Python libraries the module declares (missing_required_lib when one is
absent), builds the Kubernetes client from the shared cluster options when the logic asks for
one, hands the logic its options in one way — `logic(params, module)`, the validated
parameters plus this object as the `Module` — catches the collection's root error once (its
message and details become fail_json), and returns `diff` only when the task runs with --diff.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NoReturn, Protocol

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import K8S_IMPORT_ERROR, Client
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAML_IMPORT_ERROR

Params = Mapping[str, Any]
Result = dict[str, Any]

# Python libraries a module may declare, by the name missing_required_lib shows, with the
# traceback of their failed import (None when they imported).
LIBRARIES: dict[str, str | None] = {
    "kubernetes": K8S_IMPORT_ERROR,
    "PyYAML": YAML_IMPORT_ERROR,
}


class Module(Protocol):
    """The module as its logic sees it: what the logic gets besides its options (KindlabModule
    is one; tests pass fakes)."""

    @property
    def check_mode(self) -> bool: ...

    def client(self, kubeconfig: str | None = None, context: str | None = None) -> Any: ...

    def require(self, *libraries: str) -> None: ...

    def run_command(self, argv: list[str], data: str | None = None) -> tuple[int, str, str]: ...

    def which(self, name: str) -> str | None: ...

    def warn(self, message: str) -> None: ...


Logic = Callable[[Params, Module], Result]


class KindlabModule:
    """AnsibleModule plus the collection's conventions (see the module docstring)."""

    def __init__(
        self,
        argument_spec: dict[str, Any],
        requires: tuple[str, ...] = (),
        supports_check_mode: bool = True,
        **kwargs: Any,
    ) -> None:
        self.module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=supports_check_mode, **kwargs)
        self.require(*requires)

    @property
    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = self.module.params
        return params

    @property
    def check_mode(self) -> bool:
        return bool(self.module.check_mode)

    @property
    def diff_mode(self) -> bool:
        return bool(self.module._diff)

    def require(self, *libraries: str) -> None:
        """Fail the module with missing_required_lib for the first absent library."""
        unknown = [name for name in libraries if name not in LIBRARIES]
        if unknown:  # a programming error in a module, not something a user can fix
            raise ValueError("unknown libraries %s (known: %s)" % (unknown, ", ".join(sorted(LIBRARIES))))
        for name in libraries:
            error = LIBRARIES[name]
            if error is not None:
                self.module.fail_json(msg=missing_required_lib(name), exception=error)

    def client(self, kubeconfig: str | None = None, context: str | None = None) -> Any:
        """A Kubernetes client; kubeconfig and context default to the module's cluster options."""
        self.require("kubernetes")
        params = self.params
        return Client(kubeconfig or params.get("kubeconfig"), context or params.get("context"))

    def run_command(self, argv: list[str], data: str | None = None) -> tuple[int, str, str]:
        rc, out, err = self.module.run_command(argv, data=data)
        return rc, out or "", err or ""

    def which(self, name: str) -> str | None:
        found: str | None = self.module.get_bin_path(name)
        return found

    def warn(self, message: str) -> None:
        self.module.warn(message)

    def run(self, logic: Logic) -> NoReturn:
        """Run the logic and exit the module: its result on success, fail_json with the
        error's message and details on a KindlabError."""
        try:
            result = logic(self.params, self)
        except KindlabError as exc:
            details = {k: v for k, v in exc.details.items() if k != "msg"}
            if not self.diff_mode:
                details.pop("diff", None)
            self.module.fail_json(msg=str(exc), **details)
        self.exit(result)

    def exit(self, result: Result) -> NoReturn:
        result = dict(result)
        for warning in result.pop("warnings", None) or []:
            self.warn(warning)
        if not self.diff_mode:
            result.pop("diff", None)
        result.setdefault("changed", False)
        self.module.exit_json(**result)
        raise AssertionError("unreachable: exit_json exits")  # for type checkers that see exit_json untyped
