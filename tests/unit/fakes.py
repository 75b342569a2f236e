# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An in-memory stand-in for k8s.client.Client, shared by unit tests of code that applies objects."""
from __future__ import annotations

import copy
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed


class FakeClient:
    """Stores applied objects by (kind, namespace, name); Deployments become ready on apply
    unless `never_ready` is set, so the waiter's success and timeout can both be tested. Kinds in
    `not_served` are answered as a cluster without their CRD answers (KindNotServed)."""

    def __init__(self, namespaces: list[str], never_ready: bool = False) -> None:
        self.objects: dict[tuple[str, str | None, str], dict[str, Any]] = {
            ("Namespace", None, ns): {"kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces
        }
        self.never_ready = never_ready
        self.writes = 0
        self.logs: dict[tuple[str, str], str] = {}
        self.not_served: set[str] = set()

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return copy.deepcopy(self.objects.get((kind, namespace, name)))

    def apply_all(self, objs: list[dict[str, Any]], check_mode: bool = False) -> list[ApplyResult]:
        results = []
        for obj in objs:
            key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
            before = self.objects.get(key)
            after = copy.deepcopy(obj)
            if obj["kind"] == "Deployment" and not self.never_ready:
                n = obj["spec"]["replicas"]
                after["status"] = {"readyReplicas": n, "updatedReplicas": n, "availableReplicas": n}
            changed = before is None or {k: v for k, v in before.items() if k != "status"} != obj
            if changed and not check_mode:
                self.objects[key] = after
                self.writes += 1
            results.append(ApplyResult(changed=changed, before=before, after=after))
        return results

    def resource(self, api_version: str, kind: str) -> Any:
        """A Gateway API kind is served only once a stored CRD defines it (the real client asks discovery)."""
        from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

        if api_version.startswith("gateway.networking.k8s.io/") and not any(
                k == "CustomResourceDefinition" and obj.get("spec", {}).get("names", {}).get("kind") == kind
                for (k, _ns, _name), obj in self.objects.items()):
            raise K8sError("the cluster does not serve %s %s" % (api_version, kind))
        return {"kind": kind}

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        """Stored objects of a kind (pods only when a test stores them), matched by equality selectors."""
        if kind in self.not_served:
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        wanted = dict(req.split("=", 1) for req in (label_selector or "").split(",") if req)
        return [copy.deepcopy(obj) for (k, ns, _name), obj in self.objects.items()
                if k == kind and namespace in (None, ns)
                and all((obj["metadata"].get("labels") or {}).get(key) == val for key, val in wanted.items())]

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        return str(self.logs.get((namespace, name), ""))

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool:
        key = (kind, namespace, name)
        if key not in self.objects:
            return False
        if not check_mode:
            del self.objects[key]
        return True


class Exit(Exception):
    """What a module's exit_json/fail_json raise in tests: the result and whether it failed."""

    def __init__(self, kwargs: dict[str, Any], failed: bool) -> None:
        super().__init__(kwargs.get("msg"))
        self.result = kwargs
        self.failed = failed


def exit_json(self: Any, **kwargs: Any) -> None:
    """Stand-in for AnsibleModule.exit_json (monkeypatched in)."""
    raise Exit(kwargs, False)


def fail_json(self: Any, **kwargs: Any) -> None:
    """Stand-in for AnsibleModule.fail_json (monkeypatched in)."""
    raise Exit(kwargs, True)


def use_fake_exits(monkeypatch: Any, client: Any = None) -> None:
    """Make AnsibleModule exit through Exit, and give modules CLIENT as their Kubernetes client."""
    from ansible.module_utils import basic

    from ansible_collections.kindlab.ingress.plugins.module_utils import _module

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    if client is not None:
        monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: client)


def run_module(main: Callable[[], None], args: dict[str, Any]) -> Exit:
    """Run a module's main() with ARGS as its task arguments; its exit or failure as an Exit
    (use_fake_exits must be in place)."""
    import pytest
    from ansible.module_utils.testing import patch_module_args

    with patch_module_args(args):
        with pytest.raises(Exit) as exc:
            main()
    return exc.value
