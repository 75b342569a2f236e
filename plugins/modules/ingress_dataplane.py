#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_dataplane
short_description: Compare what each controller replica routes to with the ready endpoints
description:
  - For every pod of every ingress controller that serves a selected Ingress (controllers found as
    M(kindlab.ingress.ingress_diagnose) finds them), reads what the pod's data plane routes each
    Service backend to, and compares it with the ready endpoints of the backend's EndpointSlices.
  - ingress-nginx is read by exec in its controller container, C(/dbg backends all) (the backends
    its Lua balancer uses, from the status port inside the pod). Traefik is read through the API
    server's pod proxy, C(GET /api/http/services) on its C(traefik) entrypoint, which needs
    C(api.insecure).
  - "Findings, per pod: C(stale) (it routes to an address:port that is not a ready endpoint),
    C(missing) (a ready endpoint it does not route to), C(unread) (the pod could not be read: the
    reason, for example exec or proxy refused by RBAC, no C(/dbg) in the image, Traefik's API off,
    the pod not Running, and how to fix it)."
  - A backend routed to the Service's ClusterIP (ingress-nginx C(service-upstream), Traefik
    C(nativeLB)) is reported with C(via_cluster_ip) and is neither stale nor missing.
  - Needs C(create) on C(pods/exec) (ingress-nginx) and C(get) on C(pods/proxy) (Traefik) in the
    controllers' namespaces, besides what M(kindlab.ingress.ingress_diagnose) reads.
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  fail_on:
    description:
      - The kinds of finding that fail the task; with an empty list the result is only returned.
      - C(passed) is false when a finding of one of these kinds is found.
    type: list
    elements: str
    choices: [stale, missing, unread]
    default: [stale, missing, unread]
  timeout:
    description: Seconds to wait for one pod's reading (the exec, or each page from the pod proxy).
    type: int
    default: 10
  last_ready:
    description:
      - An optional history, C(namespace/service) to C(address:port) to the time it was last seen ready,
        which C(stale) findings quote as C(since).
    type: dict
    default: {}
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: Every replica routes the lab's backends to their ready endpoints
  kindlab.ingress.ingress_dataplane:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one, two]

- name: Collect stale and missing endpoints, fail only when a pod could not be read
  kindlab.ingress.ingress_dataplane:
    kubeconfig: "{{ lab_kubeconfig }}"
    fail_on: [unread]
    timeout: 5
  register: dataplane
"""

RETURN = r"""
passed:
  description: Whether no finding of a kind in O(fail_on) was found.
  returned: success
  type: bool
failures:
  description: The message of each finding of a kind in O(fail_on).
  returned: success
  type: list
  elements: str
  sample: ["ingress-nginx/ingress-nginx-controller-5d9c (ingress_nginx) could not be read: exec refused by the API server (403): ..."]
counts:
  description: The number of findings of each kind (C(stale), C(missing), C(unread)), whatever O(fail_on) says.
  returned: success
  type: dict
  sample: {"stale": 2, "missing": 2, "unread": 0}
findings:
  description:
    - One per divergence, each with C(kind), C(pod) (C(namespace/name)), C(controller), C(type) and C(message).
    - C(stale) and C(missing) add C(ingress), C(backend) (C(service:port)), C(name) (the backend's name in the data plane)
      and C(address) (C(address:port)); C(stale) adds C(endpoint) (what the EndpointSlices say of it) and C(since)
      (from O(last_ready), else null); C(missing) adds C(endpoint_pod).
    - C(unread) adds C(reason), C(fix) and C(ingresses); an Ingress that no controller serves is one with an empty C(pod).
  returned: success
  type: list
  elements: dict
pods:
  description:
    - C(namespace/name) of each pod read to C(workload), C(type), C(phase), C(source) (what was read), C(unread)
      (why not, or null) and C(backends).
    - Each backend has C(ingress), C(controller), C(backend), C(names), C(ready), C(routed) (null when the data plane
      has no such backend or the type does not route it), C(stale), C(missing), C(via_cluster_ip), C(draining)
      (fenced servers that still serve) and C(note).
  returned: success
  type: dict
"""

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule, Params
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import check_entry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane import KINDS, run


def _options(params: Params) -> dict[str, Any]:
    if params["timeout"] <= 0:
        raise OptionError("timeout: expected a positive number of seconds, got %r" % params["timeout"])
    history = params["last_ready"] or {}
    for service, seen in history.items():
        if service.count("/") != 1 or not isinstance(seen, dict) or not all(isinstance(v, str) for v in seen.values()):
            raise OptionError("last_ready: expected namespace/service → {address:port: time}, got %r: %r" % (service, seen))
    return {"fail_on": tuple(params["fail_on"]), "timeout": float(params["timeout"]), "last_ready": history}


def _check(client: Any, selection: Any, options: dict[str, Any]) -> dict[str, Any]:
    return run(client, selection, options["fail_on"], options["timeout"], options["last_ready"])


def _failure(result: dict[str, Any]) -> str:
    return "ingress_dataplane: " + "; ".join(result["failures"])


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS, SELECTION_ARGS,
            fail_on={"type": "list", "elements": "str", "choices": list(KINDS), "default": list(KINDS)},
            timeout={"type": "int", "default": 10},
            last_ready={"type": "dict", "default": {}},
        ),
    ).run(check_entry(_check, _failure, fail_option="fail_on", parse_options=_options))


if __name__ == "__main__":
    main()
