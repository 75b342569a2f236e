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

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_ingress_address
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            ingresses={"type": "list", "elements": "raw", "required": True},
            timeout={"type": "int", "default": 180},
        ),
    ).run(run_ingress_address)


if __name__ == "__main__":
    main()
