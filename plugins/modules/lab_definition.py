#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_definition
short_description: Validate a whole ingress lab definition before anything is changed
description:
  - Checks every part of a lab (backend, cluster, MetalLB pools, namespaces, ingress controllers
    and their chart values, workloads) and the links between them, without contacting any cluster.
  - "The first error names the lab variable and the field, and says what was expected, for example
    C(lab_workloads[2].ingress.paths[0].path_type: expected one of Prefix, Exact, ImplementationSpecific, got 'Regex')."
  - C(playbooks/lab.yml) runs it first, so a bad definition stops the lab before a cluster exists.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  backend:
    description: The lab backend, C(auto), C(kind) or C(twin).
    type: str
    required: true
  cluster:
    description: The cluster (C(name), C(workers), C(node_image), C(kind_config)).
    type: dict
    required: true
  metallb_pools:
    description: MetalLB pools, each C(name), C(addresses) and optional C(auto_assign).
    type: list
    elements: raw
    required: true
  namespaces:
    description: The namespaces the lab creates.
    type: list
    elements: raw
    required: true
  controllers:
    description: Ingress controllers, each C(namespace), C(type), C(release) and C(values).
    type: list
    elements: raw
    required: true
  workloads:
    description: Test apps, as in M(kindlab.ingress.lab_workload).
    type: list
    elements: raw
    required: true
  expect:
    description: What verification must find (C(lab_expect)), as in M(kindlab.ingress.verify_report).
    type: dict
    default: {}
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
"""

EXAMPLES = r"""
- name: Validate the lab defined in the inventory
  kindlab.ingress.lab_definition:
    backend: "{{ lab_backend }}"
    cluster: "{{ lab_cluster }}"
    metallb_pools: "{{ lab_metallb_pools }}"
    namespaces: "{{ lab_namespaces }}"
    controllers: "{{ lab_controllers }}"
    workloads: "{{ lab_workloads }}"
    expect: "{{ lab_expect | default({}) }}"
  register: lab_definition
"""

RETURN = r"""
cluster:
  description: The cluster settings with defaults filled in.
  returned: success
  type: dict
pools:
  description: The parsed pools with their ranges and sizes.
  returned: success
  type: list
  elements: dict
controllers:
  description: Each controller with its effective arguments, RBAC scope, publish source and notes.
  returned: success
  type: list
  elements: dict
workloads:
  description: The workload specs with defaults filled in.
  returned: success
  type: list
  elements: dict
ingresses:
  description: C(namespace/name) of every Ingress the lab declares.
  returned: success
  type: list
  elements: str
  sample: [one/test, two/test, three/test]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kindlab.ingress.plugins.module_utils._lab import LabError, validate


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "backend": {"type": "str", "required": True},
            "cluster": {"type": "dict", "required": True},
            "metallb_pools": {"type": "list", "elements": "raw", "required": True},
            "namespaces": {"type": "list", "elements": "raw", "required": True},
            "controllers": {"type": "list", "elements": "raw", "required": True},
            "workloads": {"type": "list", "elements": "raw", "required": True},
            "expect": {"type": "dict", "default": {}},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        result = validate(p["backend"], p["cluster"], p["metallb_pools"], p["namespaces"], p["controllers"], p["workloads"],
                          p["expect"])
    except LabError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
