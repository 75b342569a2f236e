#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_provider
short_description: Which cluster provider a lab uses, and what its clusters can do
description:
  - Resolves O(provider) the way M(kindlab.ingress.kind_cluster) does (C(auto) picks C(kind) when kind is installed,
    a Docker engine answers and helm is installed, else C(twin)) and returns the provider's RV(capabilities), the
    booleans playbooks and roles read instead of testing the provider's name.
  - Touches no cluster. With O(provider=auto) it runs C(docker info) to detect the engine; with C(kind) or C(twin)
    it runs nothing.
  - C(playbooks/lab.yml) runs it before anything is created (the host side of a kind lab is checked first), and
    C(playbooks/teardown.yml) before the cluster is deleted (the host address on the kind bridge goes first).
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  provider:
    description:
      - C(kind), C(twin), or C(auto) (detected as M(kindlab.ingress.kind_cluster) detects it).
    type: str
    choices: [auto, kind, twin]
    default: auto
  kind_binary:
    description: The kind binary (a name looked up on PATH, or a path), for O(provider=auto).
    type: str
    default: kind
  docker_binary:
    description: The docker binary (a name looked up on PATH, or a path), for O(provider=auto).
    type: str
    default: docker
  helm_binary:
    description: The helm binary (a name looked up on PATH, or a path), for O(provider=auto).
    type: str
    default: helm
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
"""

EXAMPLES = r"""
- name: Learn which provider auto picks and what its clusters can do
  kindlab.ingress.cluster_provider:
    provider: auto
  register: lab_provider

- name: Check the host side only where the nodes sit on a bridge of this host's engine
  ansible.builtin.include_role:
    name: kindlab.ingress.host_access
    tasks_from: preflight.yml
  when: lab_provider.capabilities.nodes_on_host_bridge
"""

RETURN = r"""
provider:
  description: The provider (C(kind) or C(twin)).
  returned: always
  type: str
  sample: twin
provider_reason:
  description: Why that provider (with O(provider=auto), why kind was or was not usable).
  returned: always
  type: str
  sample: "using the twin because the kind backend is unavailable: the Docker engine does not answer: ..."
capabilities:
  description:
    - What the provider's clusters can do. M(kindlab.ingress.kind_cluster) returns the same in its result.
    - C(runs_real_controllers) - the nodes run the controllers' real images, installed from their upstream packages
      (helm charts, MetalLB's native manifest); false, the cluster emulates them from the objects the collection
      renders (C(method=manifest), MetalLB C(source=rendered)).
    - C(scales_time) - the cluster divides its controllers' periods by the C(time_scale) it is created with; false,
      the lab's time scale reaches the controllers only through their own period flags.
    - C(nodes_on_host_bridge) - the nodes are containers on a bridge network of the container engine, and the host
      reaches the MetalLB pools through an address on that bridge (the C(host_access) role).
    - C(reached_through_connect_to) - the cluster's LoadBalancer and node addresses are routed nowhere and are
      reached only through the C(connect_to) mappings of M(kindlab.ingress.kind_cluster).
  returned: always
  type: dict
  sample: {"runs_real_controllers": false, "scales_time": true, "nodes_on_host_bridge": false,
           "reached_through_connect_to": true}
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import KindProvider
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.runner import run_cluster_provider
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.twin import TwinProvider

# Importing the providers registers them under their names.
PROVIDERS = (KindProvider, TwinProvider)


def main() -> None:
    KindlabModule(
        argument_spec={
            "provider": {"type": "str", "choices": ["auto", "kind", "twin"], "default": "auto"},
            "kind_binary": {"type": "str", "default": "kind"},
            "docker_binary": {"type": "str", "default": "docker"},
            "helm_binary": {"type": "str", "default": "helm"},
        },
    ).run(run_cluster_provider)


if __name__ == "__main__":
    main()
