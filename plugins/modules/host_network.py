#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: host_network
short_description: Can this host reach a kind lab's MetalLB pools directly, or must probes run inside a node?
description:
  - Reads, without changing anything, what decides whether the machine running the module reaches
    MetalLB addresses of a kind lab. The host's interfaces (C(ip -j link show)); the kind docker
    network and its Linux bridge (C(docker network inspect)); the bridge's addresses
    (C(ip -j addr show dev BRIDGE)); the engine (C(docker info)), which tells Docker Desktop and rootless
    Docker apart; and Tailscale.
  - "The host reaches the pools (RV(via=host)) only on Linux, with an engine whose networks are this
    host's (not Docker Desktop, not rootless Docker, not a remote C(DOCKER_HOST)), when the bridge holds
    the host address for every pool (what the C(host_access) role adds) and Tailscale does not drop the
    replies. Otherwise RV(via=node): probe from inside a kind node container (M(kindlab.ingress.http_probe)
    with C(via: node)). RV(reason) says which case applies."
  - Tailscale's netfilter rules (chain C(ts-input)) drop every packet from 100.64.0.0/10 that does not arrive
    on C(tailscale0). A pool inside that range is reported in RV(tailscale) (its C(message) says what to do) when a C(tailscale0)
    interface exists, tailscaled's socket (C(/run/tailscale/tailscaled.sock)) exists, or, when the module runs as root,
    the full listing C(iptables -S) or C(nft list chains) names the chain. C(iptables -S ts-input) cannot tell, because
    the nft-backed iptables 1.8.9 calls every chain that does not exist "incompatible".
  - Commands that are missing or fail are reported in RV(notes); the module itself fails only on invalid options or output it cannot read.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  pools:
    description:
      - The MetalLB pools, as the C(metallb) module takes them (C(name), C(addresses)). They give the host
        addresses looked for on the bridge and the Tailscale check. Empty checks only the network.
      - A string entry (a CIDR, an C(a-b) range or an address) is a pool of its own.
    type: list
    elements: raw
    default: []
  network:
    description:
      - The docker network of the kind nodes. Default C($KIND_EXPERIMENTAL_DOCKER_NETWORK) when set, else
        C(kind), as kind chooses it.
    type: str
  docker_binary:
    description: The docker CLI.
    type: str
    default: docker
  ip_binary:
    description: The iproute2 C(ip) binary.
    type: str
    default: ip
  iptables_binary:
    description: The iptables binary, for the C(ts-input) chain (readable as root only).
    type: str
    default: iptables
  nft_binary:
    description: The nft binary, for the C(ts-input) chain (readable as root only).
    type: str
    default: nft
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
"""

EXAMPLES = r"""
- name: Decide where reachability probes run from
  kindlab.ingress.host_network:
    pools: [{name: lab-pool, addresses: [100.64.0.0/16]}]
  register: host_net

- name: Probe from the host or from inside the control-plane node
  kindlab.ingress.http_probe:
    ingress: one/test
    via: "{{ host_net.via }}"
    context: kind-ingress-lab
"""

RETURN = r"""
host_reaches_pool:
  description: Whether HTTP to a pool address from this host can work.
  returned: always
  type: bool
via:
  description: C(host) when RV(host_reaches_pool), else C(node).
  returned: always
  type: str
  sample: node
reason:
  description: Why, in one sentence.
  returned: always
  type: str
  sample: "the engine is rootless Docker: its networks live in rootlesskit's network namespace, not on this host"
host_access_needed:
  description: Whether an address must be (or is) put on a bridge of this host for the pools, which needs root.
  returned: always
  type: bool
system:
  description: The host's system (C(Linux), C(Darwin), ...).
  returned: always
  type: str
engine:
  description: C(answered), C(desktop), C(rootless), C(operating_system) and C(error) of the Docker engine.
  returned: always
  type: dict
network:
  description: The kind docker network, C(name), C(found), C(id), C(bridge), C(subnets).
  returned: always
  type: dict
  sample: {"name": "kind", "found": true, "id": "5e3b1c9f0a7d...", "bridge": "br-5e3b1c9f0a7d", "subnets": ["172.18.0.0/16"]}
interfaces:
  description: The names of this host's interfaces (Linux).
  returned: always
  type: list
  elements: str
bridge_on_host:
  description: Whether the network's bridge is an interface of this host.
  returned: always
  type: bool
bridge_addresses:
  description: ADDRESS/PREFIX of every address on the bridge.
  returned: always
  type: list
  elements: str
host_cidrs:
  description: The host address for the pools (ADDRESS/PREFIX), as the C(metallb) module reserves it.
  returned: always
  type: list
  elements: str
  sample: ["100.64.255.254/16"]
present_cidrs:
  description: The RV(host_cidrs) already on the bridge.
  returned: always
  type: list
  elements: str
missing_cidrs:
  description: The RV(host_cidrs) not on the bridge.
  returned: always
  type: list
  elements: str
tailscale:
  description:
    - C(interface) (tailscale0 exists), C(chain) (ts-input found; null when it could not be read),
      C(socket) (tailscaled's socket, or null),
      C(pools) (the pools inside 100.64.0.0/10), C(running), C(blocks) and C(message) (what to do).
  returned: always
  type: dict
host_networks:
  description: This host's own networks (CIDR to interface; loopback and the kind bridge left out), from C(ip -j addr show).
  returned: always
  type: dict
  sample: {"192.0.2.0/24": "eth0"}
host_conflicts:
  description: Pools that overlap a network of this host (host_access would take that network's route); the preflight stops on them.
  returned: always
  type: list
  elements: str
  sample: ["pool lab-pool overlaps 192.0.2.0/24 on this host's eth0"]
suggested_pool:
  description: A pool that no network of this host overlaps (an RFC 5737 documentation block), for messages.
  returned: always
  type: str
  sample: 198.51.100.0/24
notes:
  description: Commands that were missing or failed.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.runner import run_host_network
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec={
            "pools": {"type": "list", "elements": "raw", "default": []},
            "network": {"type": "str"},
            "docker_binary": {"type": "str", "default": "docker"},
            "ip_binary": {"type": "str", "default": "ip"},
            "iptables_binary": {"type": "str", "default": "iptables"},
            "nft_binary": {"type": "str", "default": "nft"},
        },
    ).run(run_host_network)


if __name__ == "__main__":
    main()
