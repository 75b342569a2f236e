#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: metallb
short_description: MetalLB (L2) with address pools for the ingress lab
description:
  - Installs MetalLB, waits for its controller, then applies one C(IPAddressPool) per pool and
    an C(L2Advertisement) for all of them (C(metallb.io/v1beta1)).
  - Pools are validated before anything is sent to the cluster. Each entry is a CIDR
    (C(100.64.0.0/16)), a range (C(100.64.0.10-100.64.0.20)) or a single address (a /32 or
    /128); IPv4 and IPv6 are accepted. Pools must not overlap each other, nor (unless
    O(allow_overlap_with_cluster_networks)) the node network, pod CIDR or service CIDR.
  - The pool apply is retried with backoff while MetalLB's validating webhook does not answer
    yet (C(failed calling webhook)), as MetalLB's docs advise, until O(wait_timeout).
  - Every object is applied server-side with the field manager C(kindlab.ingress); a second
    run reports no change. Check mode and diff mode are supported.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  source:
    description:
      - C(upstream) downloads the pinned C(metallb-native.yaml) (O(manifest_url)) and applies
        each document.
      - C(rendered) applies objects the module renders itself, for clusters without network
        access (the twin). These are the namespace with its pod-security labels, the
        IPAddressPool and L2Advertisement CRDs, the service accounts, the C(controller)
        Deployment and the C(speaker) DaemonSet with the upstream images and arguments. It has no
        webhook and no RBAC objects.
    type: str
    choices: [upstream, rendered]
    default: upstream
  manifest_url:
    description:
      - URL of the native manifest for O(source=upstream). Defaults to the pinned release's.
      - A mirror, or a C(file://) URL of a copy on the host the module runs on.
    type: str
  controller_image:
    description:
      - The image of MetalLB's C(controller) (a private mirror, or an image loaded into the nodes). Defaults to the
        pinned release's. With O(source=upstream) it replaces the pinned image in the downloaded manifest.
    type: str
  speaker_image:
    description: The image of MetalLB's C(speaker), like O(controller_image).
    type: str
  pools:
    description: The address pools.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Name of the IPAddressPool.
        type: str
        required: true
      addresses:
        description: CIDRs, C(first-last) ranges or single addresses.
        type: list
        elements: str
        required: true
      auto_assign:
        description: Whether MetalLB hands out addresses of this pool without being asked for one.
        type: bool
        default: true
  l2_advertisement:
    description:
      - Name of the L2Advertisement announcing every pool. An empty string applies none.
    type: str
    default: kindlab
  cluster:
    description:
      - The registered result of M(kindlab.ingress.kind_cluster). Supplies the node, pod and
        service subnets (and kubeconfig and context when those options are not set).
    type: dict
  node_subnets:
    description: CIDRs of the node network (overrides the one from O(cluster)).
    type: list
    elements: str
    aliases: [node_networks]
  pod_subnets:
    description: Pod CIDRs (overrides the ones from O(cluster)). A comma-separated string works too.
    type: list
    elements: str
    aliases: [pod_subnet]
  service_subnets:
    description: Service CIDRs (overrides the ones from O(cluster)). A comma-separated string works too.
    type: list
    elements: str
    aliases: [service_subnet]
  allow_overlap_with_cluster_networks:
    description:
      - Accept pools that overlap the node network, pod CIDR or service CIDR (reported as
        warnings). kind's own MetalLB guide carves pools out of the docker network; this lab
        keeps them apart by default.
    type: bool
    default: false
  host_access:
    description:
      - Reserve, in each pool's link network (the smallest CIDR holding the pool), the address the
        host puts on the kind bridge to reach LoadBalancer IPs (role C(kindlab.ingress.host_access)).
        It is the highest usable address (IPv4 broadcast minus one, e.g. C(100.64.255.254/16)).
        That address and, for IPv4, the network and broadcast addresses are removed from the pools
        MetalLB gets. Pools inside the node network need no reservation.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
  - kindlab.ingress.cluster.wait
notes:
  - Stale pools from earlier runs are not deleted.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: MetalLB from the upstream manifest, one pool outside the cluster networks
  kindlab.ingress.metallb:
    cluster: "{{ cluster }}"          # registered from kindlab.ingress.kind_cluster
    pools:
      - name: lab
        addresses: [100.64.0.0/16]
    host_access: true
  register: metallb

- name: The same on the twin (no network access)
  kindlab.ingress.metallb:
    source: rendered
    cluster: "{{ cluster }}"
    pools:
      - name: lab
        addresses: [100.64.0.0/16]
      - name: reserved
        addresses: [100.65.0.10-100.65.0.20, 100.65.1.1]
        auto_assign: false
"""

RETURN = r"""
pools:
  description: The pools as applied (addresses in MetalLB's notation, sizes counted).
  returned: always
  type: list
  elements: dict
  sample: [{"name": "lab", "addresses": ["100.64.0.1-100.64.255.253"], "auto_assign": true, "size": 65533,
            "ranges": [{"first": "100.64.0.1", "last": "100.64.255.253", "size": 65533}]}]
declared_pools:
  description: The pools as given, parsed (before host access reservations).
  returned: always
  type: list
  elements: dict
host_access:
  description: Addresses reserved for the host (empty unless O(host_access)).
  returned: always
  type: list
  elements: dict
  sample: [{"address": "100.64.255.254", "prefix": 16, "cidr": "100.64.255.254/16", "network": "100.64.0.0/16", "pools": ["lab"]}]
objects:
  description: Every object applied, with whether it changed.
  returned: always
  type: list
  elements: dict
  sample: [{"ref": "IPAddressPool metallb-system/lab", "changed": true}]
source:
  description: Where the installation came from.
  returned: always
  type: str
"""


from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, WAIT_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.runner import run_metallb
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            WAIT_ARGS,
            source={"type": "str", "choices": ["upstream", "rendered"], "default": "upstream"},
            manifest_url={"type": "str"},
            controller_image={"type": "str"},
            speaker_image={"type": "str"},
            pools={"type": "list", "elements": "dict", "required": True, "options": {
                "name": {"type": "str", "required": True},
                "addresses": {"type": "list", "elements": "str", "required": True},
                "auto_assign": {"type": "bool", "default": True},
            }},
            l2_advertisement={"type": "str", "default": "kindlab"},
            cluster={"type": "dict"},
            node_subnets={"type": "list", "elements": "str", "aliases": ["node_networks"]},
            pod_subnets={"type": "list", "elements": "str", "aliases": ["pod_subnet"]},
            service_subnets={"type": "list", "elements": "str", "aliases": ["service_subnet"]},
            allow_overlap_with_cluster_networks={"type": "bool", "default": False},
            host_access={"type": "bool", "default": False},
        ),
        requires=("PyYAML",),
    ).run(run_metallb)


if __name__ == "__main__":
    main()
