# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsed workloads applied to the cluster (or deleted): their rendered objects (render.py), the TLS
certificates and credential Secrets their Ingresses ask for, and the lab's namespaces; waiting for the
Deployments when asked."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CredentialSecret
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import API_VERSION as GATEWAY_API_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.credentials import ensure_credentials, read_credentials, secrets_asked
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import ensure_certificates
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import Obj, Workload, WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import PART_OF, PART_OF_LABEL, render


def ensure(client: Any, workloads: list[Workload], state: str, check_mode: bool,
           wait: bool, wait_timeout: int) -> Obj:
    """Apply (or delete) every workload's objects; wait for their Deployments when asked.

    `client` is a k8s.client.Client. Returns changed, per-object actions and diffs.
    """
    # Imported here, not at the top, so that importing this file does not import the client's modules.
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult, delete_all, summarize
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of

    objs = [obj for wl in workloads for obj in render(wl, workloads)]
    asked = credential_secrets(workloads)
    if state == "absent":
        secrets = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}}
                   for ns, name, _host in tls_secrets(workloads)]
        secrets += [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": s.name, "namespace": s.namespace}}
                    for s in asked if read_credentials(client, s) is not None]  # only those the lab made
        return delete_all(client, objs + secrets, check_mode)

    namespaces = sorted({wl.namespace for wl in workloads})
    missing = [ns for ns in namespaces if client.get("v1", "Namespace", ns) is None]
    if missing and not check_mode:
        raise WorkloadError("namespace(s) %s do not exist: create them first (the lab's namespaces list)" % ", ".join(missing))
    routes_unserved = check_mode and any(o["kind"] == "HTTPRoute" for o in objs) and not _serves_httproutes(client)
    # In check mode the Gateway API CRDs may be ones an earlier task would have applied: the
    # server cannot dry-run an HTTPRoute before then, so it is reported as created.
    unserved = [o for o in objs if routes_unserved and o["kind"] == "HTTPRoute"]
    result = summarize(client.apply_all([o for o in objs if o["metadata"]["namespace"] not in missing and o not in unserved],
                                        check_mode)
                       + ensure_certificates(client, tls_secrets(workloads), missing, check_mode)
                       + ensure_credentials(client, asked, missing, check_mode, {PART_OF_LABEL: PART_OF}))
    for obj in unserved:
        if obj["metadata"]["namespace"] not in missing:
            result["objects"].append({"object": ref_of(obj), "action": "created"})
            result["diff"].append(ApplyResult(changed=True, before=None, after=obj).diff)
            result["changed"] = True
    # In check mode a namespace may be one an earlier task would have created: its objects
    # would all be created, and the server cannot dry-run them, so report them as such.
    for obj in objs:
        if obj["metadata"]["namespace"] in missing:
            result["objects"].append({"object": ref_of(obj), "action": "created"})
            result["diff"].append(ApplyResult(changed=True, before=None, after=obj).diff)
            result["changed"] = True
    if wait and not check_mode:
        for wl in workloads:
            if wl.replicas > 0:
                _wait_ready(client, wl, wait_timeout)
    return result


def tls_secrets(workloads: list[Workload]) -> list[tuple[str, str, str | list[str]]]:
    """(namespace, Secret, hosts) of every tls entry of every Ingress: its certificate, generated once."""
    return [(wl.namespace, ing.tls_secret(i), hosts) for wl in workloads for ing in wl.ingresses for i, hosts in enumerate(ing.tls)]


def credential_secrets(workloads: list[Workload]) -> list[CredentialSecret]:
    """The credential Secrets the Ingresses ask for (a basic-auth Ingress's), which the lab generates."""
    return secrets_asked([(wl.namespace, ing.annotations) for wl in workloads for ing in wl.ingresses])


def _serves_httproutes(client: Any) -> bool:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError

    try:
        client.resource(GATEWAY_API_VERSION, "HTTPRoute")
    except K8sError:
        return False
    return True


def _wait_ready(client: Any, wl: Workload, timeout: int) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_for_workload

    wait_for_workload(client, "Deployment", wl.namespace, wl.name, timeout)


def ensure_namespaces(client: Any, names: list[str], labels: dict[str, str], state: str, check_mode: bool) -> Obj:
    """Apply (or delete) one Namespace per name."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import delete_all, summarize

    objs = [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": n, "labels": {PART_OF_LABEL: PART_OF, **labels}}} for n in names]
    if state == "absent":
        return delete_all(client, objs, check_mode)
    return summarize(client.apply_all(objs, check_mode=check_mode))
