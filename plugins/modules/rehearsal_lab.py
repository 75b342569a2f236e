#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: rehearsal_lab
short_description: Make a captured cluster's lab definition into a migration rehearsal off ingress-nginx
description:
  - Reads a lab definition written by M(kindlab.ingress.lab_capture) and writes the lab that rehearses the captured
    cluster's move off ingress-nginx, for C(playbooks/lab.yml) to build on kind (C(playbooks/rehearse.yml) runs the
    whole chain).
  - The capture is kept as it is. Its ingress-nginx that claims most of the rehearsed Ingresses is the baseline.
  - One Traefik per target is added, each in a namespace of its own and writing no Ingress status.
    C(traefik-nginx-provider) reads the Ingresses through ingress-nginx's rules (Traefik's kubernetesIngressNGINX
    provider). C(traefik-ingress-provider) uses Traefik's own Ingress provider, which is what changing only the class
    gives. C(gateway-api) serves what ingress2gateway translates the Ingresses to (M(kindlab.ingress.gateway_translation)),
    with its notes kept beside the requests; ingress2gateway makes a Gateway per namespace, all served by the target's one
    Traefik at one address.
  - C(own-routes) serves the HTTPRoutes the cluster already has (a team's own Gateway API routes, captured whole) instead
    of a translation, through the one captured Gateway the rehearsed namespaces' routes attach to, its GatewayClass served by
    the rehearsal's Traefik (its controllerName replaced when another implementation's) and its listeners moved to the
    ports Traefik's entry points serve (8000, HTTPS 8443); both are said in RV(notes). Each difference then names the
    rule of those routes that took the request, as Gateway API's precedence chooses it.
  - Each Gateway target's Traefik serves only the GatewayClass labelled C(kindlab.ingress/rehearsal-target=<target>),
    so two of them do not serve each other's Gateways; a captured Traefik that serves every Traefik GatewayClass is
    refused with a Gateway target, for it would serve the target's Gateway too.
  - C(lab_expect.migration) replays the generated requests through the baseline and each target
    (M(kindlab.ingress.ingress_migration)) and reports every difference with its cause (C(report_only)). Requests of an
    Ingress the capture could not rebuild whole are not compared.
  - The file is written only when its content changes; check mode writes nothing.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  src:
    description:
      - The captured lab definition (M(kindlab.ingress.lab_capture)'s O(kindlab.ingress.lab_capture#module:dest)).
      - When omitted, the module only checks the options against the cluster before anything is captured (each target,
        the cluster name, each of O(namespaces) a namespace of the captured cluster, the pool clear of every announced
        address) and returns RV(pool) and RV(held); nothing is written.
    type: path
  dest:
    description:
      - Where the rehearsal's lab definition is written (YAML, for C(ansible-playbook playbooks/lab.yml -e @dest)).
      - Required with O(src).
    type: path
  targets:
    description: The targets, each once.
    type: list
    elements: str
    choices: [traefik-nginx-provider, traefik-ingress-provider, gateway-api, own-routes]
    default: [traefik-nginx-provider, gateway-api]
  namespaces:
    description: The namespaces whose captured Ingresses are rehearsed; every namespace with one when empty.
    type: list
    elements: str
    default: []
  cluster_name:
    description:
      - The kind cluster the rehearsal is built in (C(lab_cluster.name)), and deletes after.
      - Without O(src) (the options checked), refused when a kind cluster of that name exists already (one a
        rehearsal kept with C(rehearse_keep), or another lab's), unless O(kind_clusters) is false. Building into it
        would mix its objects with the rehearsal's, and the rehearsal's teardown would delete it.
    type: str
    default: rehearsal
  ingress2gateway:
    description:
      - The ingress2gateway binary (a path, or a name on PATH). With the C(gateway-api) target it translates the
        rehearsal's Ingresses once here, before any cluster exists, so that a translation that fails stops the
        rehearsal with its error and nothing is built on kind.
    type: str
    default: ingress2gateway
  pool:
    description:
      - The rehearsal cluster's MetalLB pool (C(lab_metallb_pools)), a CIDR or an a-b range. Refused when it overlaps an
        address the captured cluster or another kind cluster announces (see O(kind_clusters)).
      - When omitted, the first C(/16) of C(100.64.0.0/10) that none of them announces is chosen, and said in RV(notes)
        and RV(pool). Beside a cluster on the same kind network, the rehearsal's Services would otherwise get
        addresses that cluster already answers on, and the replay would measure that cluster.
    type: str
  allow:
    description:
      - The behaviours the move may change (a CI gate's list), each a mapping of regular expressions over C(target),
        C(ingress), C(kind), C(request), C(field) and C(cause), as M(kindlab.ingress.ingress_migration)'s C(expected);
        written as C(lab_expect.migration.allowed). An allowance no difference matches is fine.
    type: list
    elements: dict
    default: []
    version_added: 0.1.0
  baseline_class:
    description:
      - The IngressClass of the captured ingress-nginx whose move is rehearsed. By default the one that claims most of
        the rehearsed Ingresses; the Ingresses another ingress-nginx claims are named in RV(notes), to rehearse in a run
        of their own with this option.
    type: str
    version_added: 0.1.0
  fail_on_change:
    description:
      - Make a difference that O(allow) does not match fail the rehearsal (C(lab_expect.migration.report_only) false),
        for a CI gate; by default every difference is reported and none fails it.
    type: bool
    default: false
    version_added: 0.1.0
  fix:
    description:
      - Prove a fix for each behaviour that changes, in the rehearsal cluster (C(lab_expect.migration.fix), as
        O(kindlab.ingress.ingress_migration#module:fix) of M(kindlab.ingress.ingress_migration) does). Each target's
        migrated manifests are written beside the report, under C(migrated/<target>/).
    type: bool
    default: false
    version_added: 0.1.0
  kind_clusters:
    description:
      - Read the addresses every other kind cluster on the engine announces (C(kind get clusters), then each one's
        LoadBalancer Services, Ingress statuses and MetalLB pools), besides the captured cluster's (O(kubeconfig)),
        and keep the rehearsal's pool clear of them. A cluster that cannot be read is warned about.
    type: bool
    default: true
  kind_binary:
    description: The kind binary that lists the other clusters (a path, or a name on PATH).
    type: str
    default: kind
notes:
  - O(kubeconfig) and O(context) name the captured cluster, which is only read (its announced addresses).
extends_documentation_fragment:
  - kindlab.ingress.cluster
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Capture the cluster, read-only
  kindlab.ingress.lab_capture:
    kubeconfig: ~/.kube/prod
    namespaces: [shop]
    dest: /tmp/shop-captured.yml

- name: Check the options against the cluster before capturing anything
  kindlab.ingress.rehearsal_lab:
    kubeconfig: ~/.kube/prod
    namespaces: [shop]
    targets: [traefik-nginx-provider, gateway-api]

- name: Rehearse its move to Traefik and to Gateway API
  kindlab.ingress.rehearsal_lab:
    src: /tmp/shop-captured.yml
    dest: /tmp/shop-rehearsal.yml
    targets: [traefik-nginx-provider, gateway-api]
"""

RETURN = r"""
dest:
  description: The file written (or that would be, in check mode).
  returned: with src
  type: str
lab:
  description: The rehearsal's lab definition (the lab_* variables).
  returned: with src
  type: dict
baseline:
  description: The baseline of the rehearsal, C(name) and C(namespace) (the captured ingress-nginx's).
  returned: with src
  type: dict
translated:
  description: How many Gateway API objects the pre-flight translation made (C(0) without the C(gateway-api) target).
  returned: with src
  type: int
notes:
  description:
    - The pool it took and what it kept clear of, then what the rehearsal changed of the captured objects to serve a
      target (also written as comments in O(dest)).
  returned: success
  type: list
  elements: str
pool:
  description: The rehearsal's MetalLB pool, as asked (O(pool)) or chosen clear of every announced address.
  returned: success
  type: str
  sample: 100.66.0.0/16
held:
  description: What was read of the clusters the pool keeps clear of, by where (address, CIDR or range -> what holds it).
  returned: success
  type: dict
targets:
  description: The targets as C(lab_expect.migration.targets) names them.
  returned: with src
  type: list
  elements: dict
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.rehearsal_lab import DEFAULT_TARGETS, TARGETS
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.runner import run_rehearsal_lab


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            src={"type": "path"},
            dest={"type": "path"},
            targets={"type": "list", "elements": "str", "default": list(DEFAULT_TARGETS), "choices": list(TARGETS)},
            namespaces={"type": "list", "elements": "str", "default": []},
            cluster_name={"type": "str", "default": "rehearsal"},
            ingress2gateway={"type": "str", "default": "ingress2gateway"},
            pool={"type": "str"},
            kind_clusters={"type": "bool", "default": True},
            kind_binary={"type": "str", "default": "kind"},
            allow={"type": "list", "elements": "dict", "default": []},
            fail_on_change={"type": "bool", "default": False},
            fix={"type": "bool", "default": False},
            baseline_class={"type": "str"},
        ),
        requires=("PyYAML",),
        required_by={"src": "dest"},
    ).run(run_rehearsal_lab)


if __name__ == "__main__":
    main()
