#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_namespaces
short_description: Create or delete the lab's namespaces
description:
  - Applies one Namespace per name (server-side, field manager C(kindlab.ingress)), labelled
    C(app.kubernetes.io/part-of=kindlab-ingress) so the lab's own namespaces can be told apart.
  - With O(state=absent), deletes them; Kubernetes then removes every object inside.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  names:
    description: Namespace names (DNS-1123 labels).
    type: list
    elements: str
    required: true
  labels:
    description: Extra labels for every namespace.
    type: dict
    default: {}
  state:
    description: Whether the namespaces exist.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: The seed's three namespaces
  kindlab.ingress.lab_namespaces:
    kubeconfig: "{{ lab_kubeconfig }}"
    names: [one, two, three]
"""

RETURN = r"""
objects:
  description: Each namespace and what was (or in check mode would be) done to it.
  returned: always
  type: list
  elements: dict
  sample: [{"object": "Namespace one", "action": "created"}]
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._k8s import K8S_IMPORT_ERROR, Client, K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils._workloads import (
    WorkloadError, ensure_namespaces, parse_namespaces,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            names={"type": "list", "elements": "str", "required": True},
            labels={"type": "dict", "default": {}},
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
        ),
        supports_check_mode=True,
    )
    try:
        names, labels = parse_namespaces(module.params["names"], module.params["labels"])
    except WorkloadError as exc:
        module.fail_json(msg=str(exc))
    if K8S_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    try:
        client = Client(module.params["kubeconfig"], module.params["context"])
        result = ensure_namespaces(client, names, labels, module.params["state"], module.check_mode)
    except K8sError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
