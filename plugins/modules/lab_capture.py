#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_capture
short_description: Capture a live cluster's ingress setup as a lab definition that reproduces it
description:
  - Reads a cluster, read-only, the way M(kindlab.ingress.ingress_diagnose) reads it, and writes a lab definition (a
    scenario file for C(playbooks/lab.yml)) that reproduces its ingress setup.
  - "Controllers: every Deployment or DaemonSet whose container a registered controller type recognises (ingress-nginx,
    Traefik), installed with helm or not. Each becomes a C(lab_controllers) entry with its type, namespace, replicas
    and kind, a release whose chart names its workload as the cluster does (helm's C(app.kubernetes.io/instance) label,
    else a prefix of the workload's name, else the name), and chart values that render the same effective args (the
    binary's defaults filled in, C($(POD_NAMESPACE)) resolved). What no chart value expresses goes to the chart's
    extra-args value (ingress-nginx C(controller.extraArgs), Traefik C(additionalArguments)) and is reported."
  - "Also from the cluster: the RBAC the controller's ServiceAccount has (namespaced ingress-nginx RBAC that cannot list
    IngressClasses becomes C(rbac.scope)), the IngressClass of its controller value (one per release), its Service's
    type; the lab's rule that no release runs an admission webhook applies and is reported."
  - "Services: each Service an Ingress or HTTPRoute names becomes a C(lab_workloads) stand-in of the same name running
    the echo app (it says which Service answered and what path arrived), with the Service's port numbers and names and
    the replicas of the workload behind it."
  - "Ingresses: each is kept whole on the stand-in of its first backend: its name, class, every rule, host and path
    with its backend Service and port (by number or by name), its default backend, its TLS hosts (the lab makes a
    self-signed certificate for them; no key is read), and the annotations that decide claiming and routing
    (C(kubernetes.io/ingress.class), C(nginx.ingress.kubernetes.io/*), C(traefik.ingress.kubernetes.io/*)). Several
    Ingresses on one host stay several, so the lab's ingress-nginx merges them as the cluster's does."
  - "What cannot be rebuilt is said, and the rebuilt Ingress lists it in the annotation C(kindlab.ingress/not-rebuilt),
    so that M(kindlab.ingress.ingress_migration) does not compare its requests: annotations that may hold credentials
    or code (snippets, auth, secrets, tokens), which stay in the cluster, and ExternalName Services (a stand-in
    answers instead). ingress-nginx basic auth (C(auth-type) C(basic) and the annotations naming its Secret) is kept,
    since it only names the Secret, which the lab generates with its own user (the cluster's users stay there)."
  - "With O(manifests), YAML files are read instead of a cluster (a team's manifests, C(helm template) or
    C(kustomize build) output): the same capture of their objects; when they hold no ingress-nginx, the chart's own is
    added for the class they name (the rehearsal's baseline)."
  - C(lab_expect) holds the error findings the diagnosis makes now, the controllers that cannot start
    (C(controllers.failing)), the Ingresses nobody gives an address (C(addresses.failing)), the status the diagnosis
    predicts and, with O(watch), what a short watch of the status saw.
  - "Gateway API: GatewayClasses and Gateways (HTTP and HTTPS listeners) become C(lab_gateways), each HTTPRoute an
    C(httproute) of the stand-in of its first backend Service, every rule kept (path, exact header and query, and
    method matches; RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect and URLRewrite filters; Service
    backends with ports and weights); other protocols, a listener's certificate, regular-expression matches, other
    filters and backends outside the route's namespace are reported, not reproduced."
  - Everything the definition cannot express is returned in RV(unexpressed) and written into the file, as comments and
    as C(lab_capture_report).
  - Secrets and ConfigMaps are never read; tokens and licence keys in args (a type's secret flags) are dropped; images
    are not copied (the lab runs its own pins, C(lab_images)).
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  dest:
    description:
      - The file to write the lab definition to (YAML). Written only when its content changes.
    type: path
    required: true
  namespaces:
    description:
      - The namespaces whose Ingresses are captured; all when empty. Controllers are captured in every namespace
        (one elsewhere may write these Ingresses' status).
    type: list
    elements: str
    default: []
  anonymize:
    description:
      - Replace namespaces, Ingress, Service, IngressClass, workload and release names and hosts by neutral ones
        (C(ns-1), C(ingress-1), C(host-1.example), ...), consistently everywhere in the file, so it can go into a
        public issue. The names controller types give by default (C(nginx), C(ingress-nginx), C(traefik)) are kept.
    type: bool
    default: false
  scenario:
    description: The scenario name written as C(lab_scenario).
    type: str
    default: captured
  watch:
    description:
      - Seconds to watch the Ingresses' status (read-only, M(kindlab.ingress.ingress_status)'s watch) before writing;
        C(0), the default, watches nothing. An Ingress whose status changed is expected to change in the lab
        (C(status.failing), C(change)) even where the diagnosis predicted no flap; a predicted flap the watch did not
        see stays expected, and both are said in RV(unexpressed).
    type: float
    default: 0
  manifests:
    description:
      - "A YAML file, or a directory of them, to capture instead of a cluster (O(kubeconfig) and O(context) are then
        not used). Every document is an object (the items of a C(List) too); Secrets are never kept. Refused, naming
        the file and object, when they hold no Ingress, when an Ingress's backend is a Service they do not define, or
        when a document is not a Kubernetes object."
    type: path
    version_added: 0.1.0
  compare_with:
    description:
      - A lab definition an earlier capture wrote. When this cluster is the lab rebuilt from it (a round trip, as
        C(playbooks/rehearse.yml) makes), RV(round_trip) says whether this capture says the same of the Services and
        Ingresses of O(namespaces) (of every namespace of that definition when empty). HTTPRoutes and controllers are
        left out.
    type: path
    version_added: 0.1.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
attributes:
  check_mode:
    support: full
    details: Reads the cluster and reports whether the file would change, without writing it.
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Capture the cluster of the current context into a scenario
  kindlab.ingress.lab_capture:
    dest: scenarios/my-incident.yml

- name: Capture a production cluster's Ingresses of two namespaces, anonymized for a public issue
  kindlab.ingress.lab_capture:
    kubeconfig: ~/.kube/prod
    context: prod-eu
    namespaces: [shop, payments]
    anonymize: true
    dest: /tmp/incident.yml
  register: captured

- name: Capture a team's manifests (helm template output) instead of a cluster
  kindlab.ingress.lab_capture:
    manifests: rendered/shop.yaml
    dest: /tmp/shop-captured.yml

- name: Say what the reproduction will not have
  ansible.builtin.debug:
    var: captured.unexpressed
"""

RETURN = r"""
round_trip:
  description:
    - With O(compare_with), C(equal) (whether this capture says the same of the Services and Ingresses as that
      definition) and C(differences), one sentence each (namespace/name, the key, both values).
  returned: when O(compare_with) is set
  type: dict
dest:
  description: The file written (or that would be, in check mode).
  returned: success
  type: str
lab:
  description: The lab definition written, the variables C(lab_scenario), C(lab_namespaces), C(lab_controllers),
    C(lab_workloads), C(lab_expect) and C(lab_capture_report).
  returned: success
  type: dict
unexpressed:
  description: What the definition does not reproduce, one sentence each, naming the cluster's object.
  returned: success
  type: list
  elements: str
controllers:
  description:
    - One entry per captured controller, C(workload) (the cluster's namespace/name), C(kind), C(type), C(release)
      (namespace/release in the lab), C(differences) (flags whose effective value differs between the cluster and
      the lab, for example the admission webhook labs do not run) and C(problems) (what the diagnosis found).
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.runner import run_lab_capture
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            dest={"type": "path", "required": True},
            namespaces={"type": "list", "elements": "str", "default": []},
            anonymize={"type": "bool", "default": False},
            scenario={"type": "str", "default": "captured"},
            watch={"type": "float", "default": 0},
            compare_with={"type": "path"},
            manifests={"type": "path"},
        ),
        requires=("PyYAML",),
    ).run(run_lab_capture)


if __name__ == "__main__":
    main()
