#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_conflicts
short_description: Find host/path overlaps between Ingresses across namespaces and classes
description:
  - Compares every rule path of the selected Ingresses with those of every other Ingress in the
    cluster, using the Ingress spec's matching rules. C(Exact) matches the path string; C(Prefix)
    matches by path element (C(/foo) covers C(/foo/bar), not C(/foobar)) and ignores a trailing
    slash; C(ImplementationSpecific) is what the controller serving the Ingress makes of it - a plain
    string prefix for ingress-nginx without its use-regex annotation (C(/foo) covers C(/foobar)), else
    treated as C(Prefix). A wildcard host C(*.example.com) matches exactly one label; an empty
    host matches any host.
  - A I(conflict) is an ambiguous overlap. When one controller serves both Ingresses, that is an
    identical host and path (same path type); the spec's precedence (precise host before wildcard
    before any host, longer path first, Exact before Prefix) settles other overlaps. When different
    controllers serve them, or the class cannot tell, it is any overlap on a named host, because
    that name's DNS (external-dns publishes every Ingress's status) can carry both addresses;
    host-less rules are reached through each controller's own address and are not conflicts then.
  - Each conflict names both Ingresses, an example host/path both match, both path types, whether
    the same controller serves both, and what happens (ingress-nginx, the oldest Ingress wins, named;
    Traefik, alternates between the backends; otherwise undefined). Every overlap, conflict or not,
    is returned in C(overlaps).
  - Which controller serves an Ingress comes from its class alone (C(spec.ingressClassName) and the
    IngressClass's C(spec.controller), or the C(kubernetes.io/ingress.class) annotation);
    C(same_controller) is C(unknown) when the class cannot tell. M(kindlab.ingress.ingress_diagnose)
    reads the controllers' flags and scope.
  - "Where the cluster serves Gateway API, HTTPRoutes too (C(route_conflicts)): two routes attached to one Gateway
    listener whose matches tie on every criterion of Gateway API's precedence (path type and value, method, header and
    query matches) for a host both take. The spec names the winner - the older route by creationTimestamp, then the
    first by namespace/name - and the loser's rule serves nothing for those requests. A longer prefix, an Exact path
    or a method match is precedence working, not a conflict. Routes of the selected namespaces only."
  - Fails on a conflict by default, like the other verification modules; set I(fail_on_violation=false)
    to collect the result instead.
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  fail_on_violation:
    description: Fail the task when there is a conflict; with C(false) the result is returned for collection.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: No two teams route the same host and path
  kindlab.ingress.ingress_conflicts:
    kubeconfig: "{{ lab_kubeconfig }}"

- name: Collect the conflicts of the lab namespaces (the verify role)
  kindlab.ingress.ingress_conflicts:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one, two, three]
    fail_on_violation: false
  register: conflicts
"""

RETURN = r"""
passed:
  description: Whether there is no conflict.
  returned: success
  type: bool
conflicts:
  description:
    - The ambiguous overlaps. Each has C(ingresses) (both), C(host) and C(path) (an example both match;
      an empty host means any host), C(path_types), C(rules) (each side's host, path, pathType, backend,
      class, creation time), C(identical), C(same_controller) (yes, no or unknown), C(controller),
      C(behaviour), C(message) and C(reason) (message and behaviour in one sentence).
  returned: success
  type: list
  elements: dict
overlaps:
  description: Every overlap found, conflicts included, with C(ambiguous) telling which are conflicts.
  returned: success
  type: list
  elements: dict
route_conflicts:
  description:
    - HTTPRoute ties (Gateway API served only), each with C(routes) (winner first), C(winner), C(gateway), C(listener),
      C(host), C(path), C(why) (which precedence rule chose) and C(message). Each fails the check like a conflict.
  returned: success
  type: list
  elements: dict
claims:
  description: C(namespace/name) of each selected Ingress to its C(class) and C(controller) type.
  returned: success
  type: dict
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_conflicts


def main() -> None:
    KindlabModule(
        argument_spec=with_args(CLUSTER_ARGS, SELECTION_ARGS, fail_on_violation={"type": "bool", "default": True}),
    ).run(run_ingress_conflicts)


if __name__ == "__main__":
    main()
