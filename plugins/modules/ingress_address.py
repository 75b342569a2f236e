#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_address
short_description: Wait until Ingresses have a status address, and return the addresses
description:
  - Polls the given Ingresses until each has at least one address (IP or hostname) in
    C(status.loadBalancer.ingress), then returns them.
  - A first check that the lab's controllers publish something; whether the addresses are the
    right ones and stay put is the job of the verification modules.
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  ingresses:
    description: The Ingresses, each as C(namespace/name) or a mapping with C(namespace) and C(name).
    type: list
    elements: raw
    required: true
  timeout:
    description: Seconds to wait; the error then lists every Ingress still without an address.
    type: int
    default: 180
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
"""

EXAMPLES = r"""
- name: Every lab Ingress has an address within three minutes
  kindlab.ingress.ingress_address:
    kubeconfig: "{{ lab_kubeconfig }}"
    ingresses: [one/test, two/test, three/test]
    timeout: 180
  register: published
"""

RETURN = r"""
addresses:
  description: C(namespace/name) of each Ingress to its status addresses, in status order.
  returned: success
  type: dict
  sample: {"one/test": ["100.64.0.0"], "two/test": ["172.18.0.2"]}
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._ingresses import parse_refs, wait_for_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils._k8s import K8S_IMPORT_ERROR, Client, K8sError


def main() -> None:
    module = AnsibleModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            ingresses={"type": "list", "elements": "raw", "required": True},
            timeout={"type": "int", "default": 180},
        ),
        supports_check_mode=True,
    )
    try:
        refs = parse_refs(module.params["ingresses"])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    if module.params["timeout"] < 0:
        module.fail_json(msg="timeout: expected a number of seconds >= 0, got %d" % module.params["timeout"])
    if K8S_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    try:
        client = Client(module.params["kubeconfig"], module.params["context"])
        addresses = wait_for_addresses(client, refs, module.params["timeout"])
    except K8sError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, addresses=addresses)


if __name__ == "__main__":
    main()
