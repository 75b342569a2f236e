#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_diagnose
short_description: Predict which controllers write each Ingress's and Gateway's status, before it flaps
description:
  - Finds the ingress controllers in the cluster (Deployments and DaemonSets, one per workload; ingress-nginx
    today, recognised by its image C(registry.k8s.io/ingress-nginx/controller) or its binary
    C(/nginx-ingress-controller)) and reads each the way its binary does; its container args with their
    defaults, its ServiceAccount's RBAC (may it list IngressClasses, get Nodes), the IngressClasses, its
    publish Service and the nodes under its Running and Ready pods.
  - From that it predicts, for every selected Ingress, which controllers will write its status and the
    address each writes, without waiting for a status sync.
  - Findings are C(multiple_writers) (error; more than one writer with different addresses, with the
    culprit, the reason in plain words, the fix as chart values and as args, and the period of the flap),
    C(publish_service_missing) and C(cannot_start) (error), C(unclaimed), C(empty_address) (its writers publish nothing, e.g.
    node addresses without RBAC to get Nodes), C(shared_leader) (writers with different addresses behind one leader Lease, so
    the status follows the Lease holder) and C(class_collision) (warning).
  - "Culprit rule: the controller in the Ingress's own namespace is presumed its intended owner, so the
    other writers are the culprits; without one there, the writers that do not publish a LoadBalancer
    address; if that singles nobody out, all writers."
  - Where the cluster serves Gateway API (its CRDs, C(gateway.networking.k8s.io/v1)), it also lists every
    GatewayClass, Gateway and HTTPRoute and asks the same of the controllers whose type implements it (Traefik
    with its C(kubernetesgateway) provider), read from their args - which GatewayClasses each claims (its
    controllerName and label selector), the namespaces it watches, the address it writes in a Gateway's
    C(status.addresses) (status address IP, hostname or a Service's LoadBalancer, none, or none at all when
    its sync stops) and the ports its entry points listen on - with the Gateway API spec's own rules for
    routes (a parentRef's sectionName and port, each listener's allowedRoutes namespaces and kinds, hostnames).
    Without the CRDs there are no Gateway findings, and that is not an error.
  - Gateway API findings are C(gateway_multiple_writers) (error when the writers' statuses differ, as in
    traefik#13743; the culprit, the fix as chart values and args, and the period), C(gateway_status_blocked) (error; a
    status Service it cannot get stops the controller's whole sync), C(gateway_listener_port) (error; a listener
    whose port no entry point of its controller serves is Accepted False, reason PortUnavailable, and its routes are
    dark), C(route_not_accepted) (error; with the spec's reason, e.g. NotAllowedByListeners), C(route_unwatched)
    (error; a route in a namespace its Gateway's controller does not watch), C(gateway_unclaimed),
    C(gateway_no_address), C(route_parent_missing) and C(route_parent_foreign) (warning; a route status entry
    written under a controllerName that does not own the parent Gateway's class, or for a Gateway that is gone),
    and C(gateway_class_claimed) and C(gateway_address) (info; who claims each class, and the address the one
    writer of a Gateway writes).
  - "Across the two APIs, C(host_on_two_apis) (warning) names a host served at once by an Ingress and by an accepted
    HTTPRoute on other addresses (a migration half done): the Ingress and its writer with its address, the route,
    its Gateway and that Gateway's writer with its address, and the cut-over that ends it as C(fix.cut_over)."
  - "Each route parent in C(gateway_api.routes) carries C(status_by), what each controller reading the route will
    write in its C(status.parents) entry (Accepted, or not and the reason: a route whose listeners its controller
    serves none of is not accepted, for Traefik with reason NotAllowedByListeners)."
  - Controllers are always discovered cluster-wide; the selection only chooses the Ingresses. Gateway API objects
    are read cluster-wide too (a route's parent Gateway may be in another namespace).
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  fail_on_findings:
    description: Fail when there is a finding of severity C(error) (the result is returned either way).
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: Predict the status writers of the lab's Ingresses
  kindlab.ingress.ingress_diagnose:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one, two, three]
  register: diagnosis

- name: Fail a pipeline when an Ingress would have two writers
  kindlab.ingress.ingress_diagnose:
    kubeconfig: "{{ lab_kubeconfig }}"
    fail_on_findings: true
"""

RETURN = r"""
controllers:
  description: Every controller found, with its settings, watch scope, publish source and the address it writes
    (null when it writes none).
  returned: success
  type: list
  elements: dict
  sample: [{"controller": "two/ingress-ingress-nginx-controller", "type": "ingress_nginx", "watch": "all namespaces",
            "publish_source": "node-addresses", "address": ["172.18.0.2"]}]
ingresses:
  description:
    - C(namespace/name) of each selected Ingress to its predicted writers and whether its status will flap.
    - C(writers_after_update) lists, for an Ingress nobody writes now, the controllers that take it up at its next
      update (an ingress-nginx that may not list IngressClasses skips the class check in its update handler).
  returned: success
  type: dict
  sample: {"one/test": {"writers": [{"controller": "one/ingress-ingress-nginx-controller", "address": ["100.64.0.0"]},
                                    {"controller": "two/ingress-ingress-nginx-controller", "address": ["172.18.0.2"]}],
                        "flapping": true, "writers_after_update": []}}
gateway_api:
  description:
    - The Gateway API part of the diagnosis. C(served) says whether the cluster serves Gateway API; without it
      the maps are empty.
    - C(controllers) lists each controller whose Gateway provider is on, with its C(controller_name), C(watch),
      C(address_source) (C(ip), C(hostname), C(service), C(none), or C(blocked) when its sync stops),
      C(address_detail), C(address) (null when it writes no status at all), C(entry_points) (name, address, port,
      http_tls) and type-specific C(settings).
    - C(gateway_classes) maps each GatewayClass to its C(controller_name) and C(claimed_by) (controller, why).
    - C(gateways) maps C(namespace/name) of each Gateway to its C(class), its C(writers) (controller, address,
      address_source, and C(listeners), listener name to the entry point that serves it or null), C(blocked)
      (claimers whose sync stops) and C(flapping) (its writers write different statuses).
    - C(routes) maps C(namespace/name) of each HTTPRoute to its C(parents), one per parentRef naming a Gateway
      (gateway, accepted, reason as the spec names it, listeners it attaches to, why, and C(served_by),
      controller to the listeners it serves the route through).
  returned: success
  type: dict
  sample: {"served": true, "controllers": [{"controller": "traefik/traefik@kubernetesgateway", "address_source": "service",
                                            "address": ["100.64.0.9"]}],
           "gateway_classes": {"traefik": {"controller_name": "traefik.io/gateway-controller",
                                           "claimed_by": [{"controller": "traefik/traefik@kubernetesgateway"}]}},
           "gateways": {"traefik/traefik-gateway": {"class": "traefik", "flapping": false, "blocked": [],
                                                    "writers": [{"controller": "traefik/traefik@kubernetesgateway",
                                                                 "address": ["100.64.0.9"], "listeners": {"web": "web"}}]}},
           "routes": {"apps/app": {"parents": [{"gateway": "traefik/traefik-gateway", "accepted": false,
                                                "reason": "NotAllowedByListeners", "listeners": []}]}}}
findings:
  description:
    - Each finding with kind, severity (C(error), C(warning), or C(info) for what a controller will do, never a
      fault), message, and where relevant ingress, gateway, route (C(namespace/name)), controllers, culprits, fix
      (C(chart_values) and C(args)) and period.
  returned: success
  type: list
  elements: dict
passed:
  description: Whether there is no finding of severity C(error).
  returned: success
  type: bool
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_diagnose


def main() -> None:
    KindlabModule(
        argument_spec=with_args(CLUSTER_ARGS, SELECTION_ARGS, fail_on_findings={"type": "bool", "default": False}),
    ).run(run_ingress_diagnose)


if __name__ == "__main__":
    main()
