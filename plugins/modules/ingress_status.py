#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_status
short_description: Watch Ingress status addresses for a window and judge whether they are stable
description:
  - Lists the selected Ingresses, then watches them from that list's resourceVersion (namespaced when one
    namespace is selected, with a field selector when one name is) and records every change of
    C(status.loadBalancer.ingress) for C(window) seconds, with its time, the old and new addresses, and the
    writer (the manager and operation of the newest C(managedFields) entry on the C(status) subresource).
  - The watch survives the API server. Each stream asks the server to end it within 10 s and every request has
    a read timeout, so the task ends within the window plus about 20 s whatever the server does. A lost stream
    (connection refused or reset, or no answer) is re-opened after 0.5 s, doubling up to 5 s, from the last
    resourceVersion seen (bookmarks included). When the server answers C(410 Gone), the Ingresses are listed
    again and the differences from what the watch knew are recorded as changes.
  - Every stretch without a watch is returned in C(blind_intervals), and each Ingress gets a C(note) that says
    whether a change may have been missed. A window blind for more than half of its length fails with that
    reason. An API server that never answers fails the task with one line naming the server, the kubeconfig
    context and file.
  - With C(attribute), each change gets its writer from evidence, never from the nearest log line alone. The
    evidence is the field manager of the status write, the addresses each controller publishes (read as
    M(kindlab.ingress.ingress_diagnose) reads them, when the window starts and again at its end, and returned in
    C(publishers)), and the status log lines of the controller pods (read while the window runs and at its end).
    A log line that contradicts the address evidence is ignored. Where the evidence leaves more than one pod,
    the change names them in C(candidates) and its C(pod) stays null. C(attributed_by) says which evidence
    decided.
  - An Ingress passes when it changed at most C(max_changes) times, its status was never empty (unless
    C(allow_empty)), and every address seen lies inside C(expected_pools) (when given).
  - Where the cluster serves Gateway API (discovery finds each C(gateway.networking.k8s.io/v1) kind of the status
    subjects - Gateway, HTTPRoute, GRPCRoute) and C(gateway_api) is true, those kinds are watched too, the same way, each with one list and
    one watch of its own running side by side with the Ingress watch (selected by C(namespaces) and
    C(label_selector); C(names) names Ingresses only). A Gateway is one subject - its C(status.addresses), its
    conditions and each listener's (with C(attachedRoutes)). A route (HTTPRoute, GRPCRoute) has one subject per C(status.parents)
    entry, keyed by its C(parentRef) and C(controllerName). Their changes are in C(timeline) beside the Ingresses'
    and attributed the same way, against what each Gateway API implementation writes (its Gateway address and
    controllerName, read per controller type; Traefik logs no line for these writes, so the field manager and the
    address decide). Without the CRDs nothing more is asked and nothing more is returned.
  - A Gateway passes like an Ingress - at most C(max_changes) changes (of its addresses or conditions), an address
    (unless C(allow_empty)), inside C(expected_pools). A route passes when every parent its spec names has a
    status entry, and every entry has C(Accepted=True) and C(ResolvedRefs=True) and at most C(max_changes) changes.
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  window:
    description: Seconds to watch (> 0). Controllers re-sync status every 60 s, so a window shorter than that can
      miss a flap (on the twin, divide by its time scale).
    type: float
    default: 60
  max_changes:
    description: Status changes allowed per Ingress during the window.
    type: int
    default: 0
  allow_empty:
    description: Accept an Ingress whose status is (or becomes) empty.
    type: bool
    default: false
  expected_pools:
    description: CIDRs (C(100.64.0.0/16)), ranges (C(100.64.0.10-100.64.0.20)) or addresses every status address must
      lie in; empty means no pool check. Checked before any request.
    type: list
    elements: str
    default: []
  stop_on_violation:
    description: End the window at the first violation.
    type: bool
    default: false
  attribute:
    description: Name the controller pod behind each change (from the field managers, the published addresses
      and the controllers' logs).
    type: bool
    default: true
  gateway_api:
    description: Also watch Gateways and HTTPRoutes where the cluster serves Gateway API (found by discovery; without
      the CRDs this changes nothing).
    type: bool
    default: true
  fail_on_violation:
    description: Fail when an Ingress, Gateway or HTTPRoute fails (the result is returned either way).
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: The lab's Ingress addresses stay put for two status syncs
  kindlab.ingress.ingress_status:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one, two, three]
    window: 130
    expected_pools: [100.64.0.0/16]
    fail_on_violation: false
  register: stability
"""

RETURN = r"""
timeline:
  description:
    - Every status change, in order. C(seen_after_blind) marks a change found by a re-list after a
      blind interval (its time is when it was seen).
    - C(manager) and C(operation) are those of the newest C(managedFields) entry on the C(status) subresource;
      C(managers), present only when several status entries share that (whole-second) time, lists every manager
      that may have made the change.
    - C(pod) is the controller pod that wrote it, or null when the evidence does not single one out; then
      C(candidates) lists the pods that may have (sorted; empty when no known controller pod could have).
    - C(attributed_by) says how. C(log) - a status log line of that pod names this Ingress and exactly the new
      addresses (the line nearest this change among the changes to that value), or, for a line that does not
      carry the addresses (Traefik's), that pod alone logged a status write of this Ingress within 15 s, and the
      other remaining pods' logs were read past the change and show status writes (a pod whose log level hides
      the line proves nothing by its silence). C(address) - of the pods with the field manager,
      only this pod's controller publishes the new addresses (its publish Service's LoadBalancer address, its
      pods' node addresses without one, or its fixed status address; see C(publishers)). C(manager) - it is the
      only controller pod that writes with that field manager. C(candidates) - nothing decides between
      C(candidates). C(none) - no known controller pod could have written it (a field manager no controller type
      uses). C(deleted) - the Ingress was deleted, not a status write. Null when attribution did not run
      (C(attribute=false), or the window ended blind).
    - A Gateway API change has no C(ingress); it has C(kind) (C(Gateway), C(HTTPRoute), C(GRPCRoute)), C(subject) (C(Gateway ns/name),
      C(HTTPRoute ns/name parent <parentRef> by <controllerName>)), C(object) (ns/name), C(conditions_old) and
      C(conditions_new) (each C(Type=Status), with C((Reason)) where the reason is not the type; a Gateway's listeners'
      prefixed C(listener <name>:)), and for a route C(parent) and C(controller). C(old) and C(new) are a Gateway's
      addresses (a route's are empty).
    - A log line is never taken against the address evidence - a pod whose controllers do not publish the new
      addresses is not their writer, whatever it logged.
  returned: success
  type: list
  elements: dict
  sample: [{"time": "2026-11-21T23:41:00.123Z", "t": 3.2, "ingress": "one/test", "event": "MODIFIED",
            "old": ["100.64.0.0"], "new": ["172.18.0.2"], "manager": "nginx-ingress-controller",
            "operation": "Update", "pod": "two/ingress-ingress-nginx-controller-5d9c-abcde",
            "attributed_by": "log", "candidates": []}]
publishers:
  description: With C(attribute), every ingress controller (one per status writer, Traefik one per provider)
    with its workload, type, field manager, pods, and the addresses it publishes (C(source) - C(service),
    C(node-addresses), C(status-address) or C(none)), merged over the reads at the window's start and end.
    C(addresses) is null when it writes no address. C(publishers_error) says why they could not be read.
  returned: when attribute is true
  type: list
  elements: dict
  sample: [{"controller": "two/ingress-ingress-nginx-controller", "workload": "two/ingress-ingress-nginx-controller",
            "type": "ingress_nginx", "field_manager": "nginx-ingress-controller",
            "pods": ["two/ingress-ingress-nginx-controller-5d9c-abcde"], "addresses": ["172.18.0.2"],
            "source": "node-addresses"}]
ingresses:
  description: C(namespace/name) to addresses_seen (distinct address lists, in order), writers (managers, pods),
    changes, passed, reason, and note (null without blind intervals; otherwise whether a change may have been
    missed in them).
  returned: success
  type: dict
gateways:
  description: Where Gateway API is watched, C(namespace/name) of each Gateway to addresses_seen, conditions (its
    own, then each listener's, at the end of the window), writers, changes, passed, reason and note, as C(ingresses).
  returned: when the cluster serves Gateway API and gateway_api is true
  type: dict
  sample: {"traefik-a/traefik-gateway": {"addresses_seen": [["100.64.0.1"]], "changes": 0, "deleted": false,
            "conditions": ["Accepted=True", "Programmed=True", "listener web: Accepted=True", "listener web: Programmed=True",
                           "listener web: attachedRoutes=1"],
            "writers": {"managers": ["traefik"], "pods": []}, "passed": true, "reason": "stable", "note": null}}
routes:
  description: Where Gateway API is watched, C(namespace/name) of each HTTPRoute to named_parents (the parents its spec
    names), parents (each status entry, C(<parent> by <controllerName>), to its conditions, controller, writers,
    changes, passed and reason), changes, passed, reason and note.
  returned: when the cluster serves Gateway API and gateway_api is true
  type: dict
  sample: {"apps/app": {"named_parents": ["traefik-a/traefik-gateway"], "changes": 0, "passed": false, "note": null,
            "reason": "parent traefik-a/traefik-gateway by traefik.io/gateway-controller: not Accepted: Accepted=False
              (NotAllowedByListeners), written by traefik",
            "parents": {"traefik-a/traefik-gateway by traefik.io/gateway-controller": {
              "conditions": ["Accepted=False (NotAllowedByListeners)", "ResolvedRefs=True"],
              "controller": "traefik.io/gateway-controller", "changes": 0, "passed": false, "deleted": false,
              "reason": "not Accepted: Accepted=False (NotAllowedByListeners)", "writers": {"managers": ["traefik"], "pods": []}}}}}
grpcroutes:
  description: Where Gateway API is watched, each GRPCRoute as C(routes) gives each HTTPRoute.
  returned: when the cluster serves GRPCRoute and gateway_api is true
  type: dict
watches:
  description: Where Gateway API is watched, per kind (C(Ingress), C(Gateway), C(HTTPRoute), C(GRPCRoute)) the watch streams it opened
    and the bookmarks it received; each kind is listed once and watched by its own stream.
  returned: when the cluster serves Gateway API and gateway_api is true
  type: dict
  sample: {"Ingress": {"streams": 1, "bookmarks": 0}, "Gateway": {"streams": 1, "bookmarks": 0},
           "HTTPRoute": {"streams": 1, "bookmarks": 0}}
failures:
  description: One line per failing Ingress (C(ns/name)), Gateway (C(Gateway ns/name)) and reason of a failing route
    (C(HTTPRoute ns/name), C(GRPCRoute ns/name)).
  returned: success
  type: list
  elements: str
  sample: ["one/test: 5 changes in 10s (max 0): 100.64.0.0 ↔ 172.18.0.2, written by nginx-ingress-controller (pods two/x, one/y)"]
passed:
  description: Whether every selected Ingress (and Gateway and route, where watched) passed.
  returned: success
  type: bool
window_started:
  description: When the window began (ISO-8601 UTC); report.html places the actions, probes and data-plane reads on its axis from it.
  returned: success
  type: str
unserved:
  description: The Gateway API kinds the cluster does not serve (no CRDs), each watched only where it is served.
  returned: success
  type: list
  elements: str
watch_streams:
  description: Watch streams opened (one per 10 s of window and kind, more after reconnects).
  returned: success
  type: int
events:
  description: Watch events processed.
  returned: success
  type: int
bookmarks:
  description: Bookmark events received (they move the resourceVersion a lost stream resumes from).
  returned: success
  type: int
blind_intervals:
  description: Each stretch of the window without a watch (a Gateway API kind's marked with its C(kind)), from when the stream broke (after silence, its
    last sign of life) until a stream was open again, with the reason. C(missed) is true when a change made
    in it may be missing (it was bridged by a re-list after C(410 Gone), or the window ended in it). Otherwise
    the watch resumed from its resourceVersion and nothing was missed.
  returned: success
  type: list
  elements: dict
  sample: [{"from": "2026-11-21T23:40:04.000Z", "to": "2026-11-21T23:40:05.500Z", "t_from": 4.0, "t_to": 5.5,
            "seconds": 1.5, "why": "connection reset; then connection refused", "missed": false}]
blind_seconds:
  description: Seconds of the window spent blind (the longest of the kinds' watches, which run side by side).
  returned: success
  type: float
mostly_blind:
  description: Whether the window was blind for more than half of its length. If so, the status could not
    be judged, and the first failure says why.
  returned: success
  type: bool
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_status


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS, SELECTION_ARGS,
            window={"type": "float", "default": 60},
            max_changes={"type": "int", "default": 0},
            allow_empty={"type": "bool", "default": False},
            expected_pools={"type": "list", "elements": "str", "default": []},
            stop_on_violation={"type": "bool", "default": False},
            attribute={"type": "bool", "default": True},
            gateway_api={"type": "bool", "default": True},
            fail_on_violation={"type": "bool", "default": True},
        ),
    ).run(run_ingress_status)


if __name__ == "__main__":
    main()
