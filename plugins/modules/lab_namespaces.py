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

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.runner import run_lab_namespaces


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            names={"type": "list", "elements": "str", "required": True},
            labels={"type": "dict", "default": {}},
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
        ),
    ).run(run_lab_namespaces)


if __name__ == "__main__":
    main()
