#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: kind_cluster
short_description: A kind cluster, or its emulated twin, for the ingress lab
description:
  - Creates or deletes a Kubernetes cluster with C(kind) (nodes are Docker containers) or with
    C(kindlab-twin) (an emulated kind cluster on loopback for machines without Docker).
  - An existing cluster with the same name is left alone (no change, nothing re-created); the
    module only writes its context into O(kubeconfig) when that file lacks it.
  - Returns what later steps need to check address pools against the cluster (the node
    network, pod and service subnets), the nodes with their InternalIPs, and (twin) the
    curl-style C(connect_to) mappings.
  - In check mode nothing is created or deleted. The result says what would happen and lists
    the nodes the cluster would get.
  - In check mode a backend that cannot be used on this machine (C(kind) or C(docker) missing, no Docker
    engine answering, no C(kindlab-twin)) does not fail a cluster to create (O(state=present)). The result
    says what would be created, RV(unavailable) says why a real run would fail, and a warning repeats it.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  name:
    description:
      - Cluster name. kind's rule applies (lowercase letters, digits, C(.) and C(-)).
      - The kubeconfig context is C(kind-<name>) with both providers.
    type: str
    default: kindlab
  state:
    description: Whether the cluster should exist.
    type: str
    choices: [present, absent]
    default: present
  provider:
    description:
      - C(kind) runs the kind and docker binaries; C(twin) runs C(kindlab-twin).
      - C(auto) picks C(kind) when kind is installed, a Docker engine answers and helm is installed (the kind
        path installs the ingress controllers with helm), else C(twin); the choice and the reason are returned in
        RV(provider) and RV(provider_reason).
    type: str
    choices: [auto, kind, twin]
    default: auto
  node_image:
    description:
      - Node image for every node (C(kind create cluster --image) and each node's C(image) in the
        config). Defaults to the collection's pinned image, a digest kind's pinned release lists.
    type: str
  workers:
    description:
      - Number of worker nodes besides the control-plane node. Defaults to 2.
      - Cannot be combined with O(kind_config) C(nodes).
    type: int
  kind_config:
    description:
      - A kind C(Cluster) config (C(kind.x-k8s.io/v1alpha4)) deep-merged over the generated one
        (mappings merge, lists replace). C(networking.podSubnet) and C(networking.serviceSubnet)
        from here are returned and used for address-pool overlap checks.
      - A C(nodes) list replaces the generated nodes; nodes without C(image) get O(node_image).
      - "When the Docker engine's host runs cgroup v1 (C(docker info) reports C(CgroupVersion) 1), the module adds
        C(failCgroupV1: false) to every node's C(kubeadmConfigPatches) as a C(KubeletConfiguration) patch, and
        warns that it did: Kubernetes 1.35's kubelet refuses to start on cgroup v1 otherwise."
    type: dict
  load_images:
    description:
      - Local images (in the Docker engine) to put into every node once the cluster exists, with
        C(kind load docker-image IMAGE... --name NAME), for clusters that cannot pull them.
      - kind loads an image only into the nodes that lack it (by image ID); the task reports a change only when kind
        says it loaded one. In check mode the result says which command would run.
      - The twin skips this, with a warning.
    type: list
    elements: str
    default: []
  nodes_ready:
    description:
      - With O(wait), whether a new cluster's nodes must be C(Ready) before the task returns (kind's C(--wait)).
      - With V(false) the task returns once every node has registered with an InternalIP, about 15 s sooner on a
        small machine. What the play creates next is accepted by the API server at once, and its pods are scheduled
        when the nodes become C(Ready). Use it when the next steps wait for their own workloads (C(playbooks/lab.yml)
        does).
    type: bool
    default: true
  kubeconfig:
    description:
      - Kubeconfig file the cluster's context is written into.
      - Defaults, as kind does, to the first C($KUBECONFIG) entry that is an existing file (the last entry
        when none exists), else C(~/.kube/config).
    type: path
  kind_binary:
    description: The kind binary (a name looked up on PATH, or a path).
    type: str
    default: kind
  docker_binary:
    description: The docker binary (a name looked up on PATH, or a path).
    type: str
    default: docker
  helm_binary:
    description:
      - The helm binary (a name looked up on PATH, or a path). Only O(provider=auto) uses it, to check that
        helm is there before it chooses kind.
    type: str
    default: helm
  twin_binary:
    description:
      - The kindlab-twin command. By default it is looked for beside the Python running the
        module (the venv ansible is installed in), then on PATH.
    type: str
  time_scale:
    description:
      - Twin only. Divides the emulated controllers' periods (e.g. 60 makes a 60 s status sync
        take 1 s).
      - With O(provider=kind) any value but 1 is an error; when O(provider=auto) picks kind it is
        ignored with a warning.
    type: float
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster.wait
notes:
  - Supports check mode. Diff mode shows whether the cluster exists before and after.
  - With O(wait), kind waits up to O(wait_timeout) for the control plane (C(--wait), unless O(nodes_ready=false)),
    and the module then waits for every node to report an InternalIP.
requirements:
  - kind and a Docker engine (provider C(kind)), or the kindlab-twin command (provider C(twin))
  - kubernetes >= 31 (Python package), to read the nodes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: A three-node kind cluster (or the twin when Docker is not available)
  kindlab.ingress.kind_cluster:
    name: lab
    workers: 2
  register: cluster

- name: The twin with controllers running 60 times faster
  kindlab.ingress.kind_cluster:
    name: lab
    provider: twin
    time_scale: 60
    kubeconfig: "{{ playbook_dir }}/artifacts/kubeconfig"

- name: Custom pod subnet and a port mapping on the control plane
  kindlab.ingress.kind_cluster:
    name: lab
    provider: kind
    kind_config:
      networking:
        podSubnet: 10.100.0.0/16
      nodes:
        - role: control-plane
          extraPortMappings:
            - containerPort: 30080
              hostPort: 8080
        - role: worker

- name: A kind cluster with local images loaded into its nodes (no registry needed for them)
  kindlab.ingress.kind_cluster:
    name: lab
    provider: kind
    load_images:
      - registry.example.com/mirror/nginx:1.29.3

- name: Remove it
  kindlab.ingress.kind_cluster:
    name: lab
    state: absent
"""

RETURN = r"""
provider:
  description: The provider used (C(kind) or C(twin)).
  returned: always
  type: str
  sample: twin
provider_reason:
  description: Why that provider was used (with O(provider=auto), why kind was or was not usable).
  returned: always
  type: str
  sample: "using the twin because the kind backend is unavailable: the Docker engine does not answer: ..."
capabilities:
  description:
    - What the provider's clusters can do, the booleans playbooks and roles read instead of testing RV(provider)
      (M(kindlab.ingress.cluster_provider) returns the same without touching a cluster, and documents each).
    - C(runs_real_controllers), C(scales_time), C(nodes_on_host_bridge), C(reached_through_connect_to).
  returned: always
  type: dict
  sample: {"runs_real_controllers": true, "scales_time": false, "nodes_on_host_bridge": true,
           "reached_through_connect_to": false}
kubeconfig:
  description: Path of the kubeconfig holding the cluster's context.
  returned: always
  type: str
context:
  description: Name of the cluster's kubeconfig context.
  returned: always
  type: str
  sample: kind-lab
exists:
  description: Whether the cluster existed when the task started (false when the backend could not be asked, see RV(unavailable)).
  returned: always
  type: bool
planned:
  description:
    - True in check mode when the cluster is still to be created (or its context still to be written into O(kubeconfig)),
      so the result is a plan and there is no cluster to read yet; C(playbooks/lab.yml) then prints its plan instead of
      running the steps that need the cluster.
  returned: state=present
  type: bool
unavailable:
  description: Check mode only, why the backend cannot be used on this machine (a real run would fail with this).
  returned: when the backend is unavailable in check mode
  type: str
  sample: "kind_binary: 'kind' was not found on PATH; install it or set kind_binary to its full path"
nodes:
  description: The nodes (in check mode, for a cluster still to create, the nodes it would get, without IPs).
  returned: state=present
  type: list
  elements: dict
  sample: [{"name": "lab-control-plane", "role": "control-plane", "internal_ip": "172.18.0.2"}]
node_subnets:
  description: CIDRs of the network the nodes are on (kind's docker network, IPv4 and IPv6 entries).
  returned: state=present
  type: list
  elements: str
  sample: ["172.18.0.0/16", "fc00:f853:ccd:e793::/64"]
pod_subnets:
  description: Pod CIDRs (the live cluster's when it already existed).
  returned: state=present
  type: list
  elements: str
  sample: ["10.244.0.0/16"]
service_subnets:
  description: Service CIDRs.
  returned: state=present
  type: list
  elements: str
  sample: ["10.96.0.0/16"]
connect_to:
  description: curl-style C(HOST:PORT:127.0.0.1:PORT) mappings (twin); empty for kind.
  returned: state=present
  type: list
  elements: str
  sample: ["100.64.0.1:80:127.0.0.1:41234"]
config:
  description: The kind config the cluster is (or would be) created with (with the cgroup v1 patch when it was needed).
  returned: state=present
  type: dict
images_loaded:
  description:
    - What O(load_images) did, C(command) (the argv), C(loaded) (images kind loaded), C(nodes) (where),
      C(present) (images every node had), C(skipped) (the twin) and C(msg).
  returned: state=present and O(load_images) is not empty
  type: dict
  sample: {"command": ["kind", "load", "docker-image", "nginx:1.29.3", "--name", "lab"], "loaded": ["nginx:1.29.3"],
           "nodes": ["lab-control-plane"], "present": [], "skipped": false, "changed": true,
           "msg": "loaded nginx:1.29.3 into lab-control-plane"}
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import WAIT_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.runner import run_kind_cluster
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import KindProvider
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.twin import TwinProvider

# Importing the providers registers them under their names.
PROVIDERS = (KindProvider, TwinProvider)


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            WAIT_ARGS,
            name={"type": "str", "default": "kindlab"},
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
            provider={"type": "str", "choices": ["auto", "kind", "twin"], "default": "auto"},
            node_image={"type": "str"},
            workers={"type": "int"},
            kind_config={"type": "dict"},
            kubeconfig={"type": "path"},
            kind_binary={"type": "str", "default": "kind"},
            docker_binary={"type": "str", "default": "docker"},
            helm_binary={"type": "str", "default": "helm"},
            twin_binary={"type": "str"},
            time_scale={"type": "float"},
            load_images={"type": "list", "elements": "str", "default": []},
            nodes_ready={"type": "bool", "default": True},
        ),
        requires=("PyYAML",),
    ).run(run_kind_cluster)


if __name__ == "__main__":
    main()
