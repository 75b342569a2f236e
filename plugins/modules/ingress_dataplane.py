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
  - With O(window), the same reading every O(interval) seconds for that many seconds (each round lists the
    controllers, their pods and the EndpointSlices again, and reads every Running controller pod once). A pod that
    appears during the window, a restarted controller, is read from then on; one that disappears ends its rows. It
    returns a C(timeline) of the divergences, each row's C(lag) and C(converged_after); the findings and the verdict
    are those of the last round.
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
  window:
    description:
      - Seconds to read again and again; C(0) reads once.
      - Addresses seen ready in the EndpointSlices during the window extend O(last_ready), so a later C(stale)
        finding says when its address was last seen ready.
    type: float
    default: 0
  interval:
    description: Seconds from the start of one round to the start of the next (a slower round starts the next at once).
    type: float
    default: 1
  until_converged:
    description:
      - Stop before the end of O(window) at the first round where every pod matches the EndpointSlices after a
        divergence was seen (a restarted controller catching up); C(converged_after) says when.
    type: bool
    default: false
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

- name: After a controller restart, how long its data plane takes to route to the ready endpoints again
  kindlab.ingress.ingress_dataplane:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one]
    window: 120
    interval: 1
    until_converged: true
  register: converging

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
      (when the address was last seen ready, from O(last_ready) and the window's rounds, else null); C(missing) adds C(endpoint_pod).
    - C(unread) adds C(reason), C(fix) and C(ingresses); an Ingress that no controller serves is one with an empty C(pod).
  returned: success
  type: list
  elements: dict
window_started:
  description: When the first round began (ISO-8601 UTC); every C(offset) counts from it.
  returned: success
  type: str
rounds:
  description: How many times every pod was read (1 without O(window)).
  returned: success
  type: int
duration:
  description: Seconds from the first round's start to the last round's start.
  returned: success
  type: float
timeline:
  description:
    - One event per change of a row (a pod's backend of an Ingress), in order, each with C(time) (ISO-8601 UTC),
      C(offset) (seconds from the start), C(pod), C(controller), C(ingress), C(backend), C(finding) and C(addresses).
    - C(finding) C(stale), C(missing) or C(unread) (with C(reason)) when that divergence appears or its addresses
      change (with no addresses when it ended while another remains); C(converged) when a row that diverged matches again
      (C(addresses) then what it routes to).
  returned: success
  type: list
  elements: dict
  sample: [{"time": "2024-07-08T19:30:01.002Z", "offset": 0.0, "pod": "one/ingress-ingress-nginx-controller-5d9c",
            "controller": "one/ingress-ingress-nginx-controller", "ingress": "one/test", "backend": "test:80",
            "finding": "stale", "addresses": ["10.244.0.12:8080"]}]
lag:
  description:
    - Per row, C(lag) the longest time one divergence lasted in seconds (to the round's precision), C(open) whether
      one was still open at the end, C(divergences) how many began, C(from_start) whether the first was there in the
      first round, C(gone) the offset its pod was first missed (or null), C(seen) the offset of the round that first
      read it (a pod that came during the window).
  returned: success
  type: list
  elements: dict
converged_after:
  description:
    - Seconds from the start to the round from which every pod matched to the end of the window, after a divergence
      was seen; null when none was seen or one remains.
  returned: success
  type: float
last_ready:
  description: O(last_ready) with every address seen ready during the reading, at the time it was last seen so.
  returned: success
  type: dict
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

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane import KINDS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_dataplane


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS, SELECTION_ARGS,
            fail_on={"type": "list", "elements": "str", "choices": list(KINDS), "default": list(KINDS)},
            timeout={"type": "int", "default": 10},
            last_ready={"type": "dict", "default": {}},
            window={"type": "float", "default": 0},
            interval={"type": "float", "default": 1},
            until_converged={"type": "bool", "default": False},
        ),
    ).run(run_ingress_dataplane)


if __name__ == "__main__":
    main()
