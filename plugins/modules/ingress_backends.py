#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_backends
short_description: Check that every backend of the selected Ingresses has ready endpoints
description:
  - For every Service backend of the selected Ingresses (C(rules[].http.paths[].backend.service)
    and C(spec.defaultBackend)), checks that the Service exists, that the port exists (by number or
    by name), and that its EndpointSlices (label C(kubernetes.io/service-name)) hold ready endpoints
    for that port. An endpoint is ready unless C(conditions.ready) is false (unset means ready, as
    the API documents). Existence is not enough, since a backend scaled to 0 still has its Service.
  - Resource backends and ExternalName Services are reported as not checked.
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  fail_on_violation:
    description: Fail the task when a backend has a problem; with C(false) the result is returned for collection.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: Every lab backend has ready endpoints
  kindlab.ingress.ingress_backends:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [one, two, three]

- name: Collect instead of failing (the verify role)
  kindlab.ingress.ingress_backends:
    kubeconfig: "{{ lab_kubeconfig }}"
    fail_on_violation: false
  register: backends
"""

RETURN = r"""
passed:
  description: Whether every checked backend has ready endpoints.
  returned: success
  type: bool
failures:
  description: One sentence per backend problem.
  returned: success
  type: list
  elements: str
  sample: ["two/test: backend test:http has 0 ready endpoints (Service exists, 0 of 0 pods ready)"]
ingresses:
  description:
    - C(namespace/name) to C(backends) and C(passed). Each backend has C(service), C(port), C(used_by),
      C(exists), C(port_found), C(ready_endpoints), C(endpoints) (ready addresses), C(checked) and C(problem).
  returned: success
  type: dict
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_backends


def main() -> None:
    KindlabModule(
        argument_spec=with_args(CLUSTER_ARGS, SELECTION_ARGS, fail_on_violation={"type": "bool", "default": True}),
    ).run(run_ingress_backends)


if __name__ == "__main__":
    main()
