#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_controller
short_description: Install, upgrade or remove an ingress controller, and explain what its settings do
version_added: "0.1.0"
description:
  - Installs an ingress controller into a namespace, either with its Helm chart (C(method=helm)) or by
    applying the objects that chart would create (C(method=manifest), server-side apply; for clusters
    that cannot reach the chart repository, such as the kindlab twin).
  - Both methods derive the controller's container args, RBAC, IngressClass and publish settings from the
    same mapping of chart values, and return it, with plain-language notes on surprising settings
    (for example a C(pathOverride) that is ignored, or namespace-scoped RBAC that cannot read IngressClasses).
  - All values are validated before anything changes; a value of the wrong type fails naming its key path.
  - C(type=ingress_nginx) installs chart ingress-nginx 4.15.1 (controller v1.15.1); C(type=traefik) installs
    Traefik's chart 41.6.0 (Traefik v3.7.13), and returns the args of its two Ingress providers
    (C(kubernetesIngress) and C(kubernetesIngressNGINX)) with notes on who writes which Ingress's status, and those
    of its Gateway API provider (C(providers.kubernetesGateway.enabled) - C(--providers.kubernetesgateway), the status
    address it copies to Gateways, by default its own Service, its namespaces and label selector).
  - Traefik's Gateway API provider needs the Gateway API CRDs in the cluster before the install
    (M(kindlab.ingress.gateway_api)) and the chart's ClusterRole, so values that turn it on with C(rbac.namespaced)
    (O(scope=true)) are refused, as the chart refuses them, and V(manifest) does not render it (helm only).
options:
  type:
    description:
      - The controller type. For V(traefik), O(scope) is C(rbac.namespaced), O(publish_service) is
        C(providers.kubernetesIngress.publishedService.enabled), and O(ingress_class) names the chart's
        IngressClass (C(ingressClass.name)) and the class the Ingress provider serves
        (C(providers.kubernetesIngress.ingressClass)).
    type: str
    choices: [ingress_nginx, traefik]
    default: ingress_nginx
  namespace:
    description: Namespace of the release (and of the controller's namespaced objects).
    type: str
    required: true
  release:
    description:
      - Helm release name. The chart names its objects C(<release>-ingress-nginx-...) (C(<release>-traefik)
        for Traefik), or C(<release>-...) when the release name already contains the chart's name.
    type: str
    default: ingress
  values:
    description:
      - Chart values, exactly as for C(helm --values). Passed to helm untouched (with the convenience
        options folded in); keys the collection does not model are reported in RV(not_modelled).
    type: dict
    default: {}
  scope:
    description:
      - Convenience for C(controller.scope.enabled) and C(rbac.scope) together (namespace-scoped controller
        and RBAC when true, cluster-wide when false).
      - When C(values) sets the same key, both must agree; a disagreement is an error (neither silently wins).
    type: bool
  publish_service:
    description:
      - Convenience for C(controller.publishService.enabled). Same agreement rule as O(scope).
    type: bool
  ingress_class:
    description:
      - Convenience that names the class consistently, the way the chart uses it -
        C(controller.ingressClassResource.name) (the IngressClass object), C(controller.ingressClass)
        (C(--ingress-class), the C(kubernetes.io/ingress.class) annotation value) and
        C(controller.ingressClassResource.controllerValue) (C(--controller-class)), which is
        C(k8s.io/ingress-nginx) for C(nginx) and C(k8s.io/ingress-nginx-<name>) for any other name.
      - Same agreement rule as O(scope).
    type: str
  method:
    description:
      - V(helm) runs C(helm upgrade --install) with the pinned chart. V(manifest) applies the rendered objects.
      - V(manifest) refuses values it cannot render faithfully, naming them. For ingress-nginx - admission
        webhooks, default backend, internal Service, autoscaling, TCP/UDP services, DaemonSet. For Traefik it
        renders an Ingress-only Traefik without the chart's CRDs - C(providers.kubernetesCRD.enabled) must be
        false, and it refuses any value outside its providers, RBAC, Service type, IngressClass, image,
        replicas, C(global) and C(log.level).
    type: str
    choices: [helm, manifest]
    default: helm
  state:
    description: V(absent) uninstalls the release (helm) or deletes the rendered objects (manifest); the namespace stays.
    type: str
    choices: [present, absent]
    default: present
  helm_binary:
    description: The helm executable, a name looked up on C(PATH) or a path.
    type: str
    default: helm
  chart_version:
    description: Chart version; defaults to the collection's pin.
    type: str
  chart_repo:
    description: Chart repository URL; defaults to the collection's pin. Not with O(chart_path).
    type: str
  chart_path:
    description:
      - A local chart to install instead of one from a repository, for clusters and CI runners without access to
        the chart repository (air-gapped installs) - a chart directory or a packaged C(.tgz), as C(helm) takes them.
      - Its C(Chart.yaml) must name the type's chart (C(ingress-nginx)); its version is the chart version (the
        args are modelled for charts 4.15.1 and 4.11.0), and O(chart_version), if given, must equal it.
      - O(method=helm) only.
    type: path
    version_added: 0.1.0
  charts:
    description:
      - Controller type to a local chart (directory or C(.tgz)), as C(lab_charts) gives them
        (M(kindlab.ingress.lab_definition)'s O(kindlab.ingress.lab_definition#module:charts)). The entry of O(type)
        is installed as O(chart_path) is, unless O(chart_path) is given; the other entries are ignored.
      - O(method=manifest) renders the objects itself and ignores it.
    type: dict
    default: {}
    version_added: 0.1.0
  time_scale:
    description:
      - Shorten the controller's own periods by this factor, with the controller's own flags (ingress-nginx
        C(--status-update-interval=60/time_scale) in C(controller.extraArgs), unless the values set it). 60 divided
        by it must be whole seconds, at least 5 (1, 2, 3, 4, 5, 6, 10, 12).
      - The lab sets it on kind from C(lab_time_scale), so a status sync happens as often as on the twin.
    type: float
    version_added: 0.1.0
  create_namespace:
    description: Create the namespace if it does not exist.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
  - kindlab.ingress.cluster.wait
attributes:
  check_mode:
    support: full
    details: V(manifest) uses a server-side dry-run apply; V(helm) compares the chart version and the release's
      user-supplied values (C(helm get values)) and never runs an upgrade.
  diff_mode:
    support: full
    details: V(manifest) returns one diff per changed object; V(helm) the user-supplied values before and after.
  platform:
    platforms: posix
notes:
  - Waiting means the controller Deployment has all replicas updated, ready and available.
  - With V(manifest), cluster-scoped objects (IngressClass, ClusterRole, ClusterRoleBinding) are annotated
    with their release; applying one that belongs to another release fails, as helm would.
requirements:
  - helm (v3 or v4) for O(method=helm)
author: kindlab.ingress developers (@kindlab)
"""

EXAMPLES = r"""
- name: The puzzle's controller two - cluster-wide, publishing node addresses
  kindlab.ingress.ingress_controller:
    namespace: two
    values:
      controller:
        publishService: {enabled: false, pathOverride: two/svc}
        scope: {enabled: false}
        admissionWebhooks: {enabled: false}
        ingressClassResource: {name: nginx-two, controllerValue: k8s.io/ingress-nginx-two}

- name: A namespace-scoped controller rendered without helm (twin)
  kindlab.ingress.ingress_controller:
    namespace: one
    method: manifest
    scope: true
    publish_service: true
    values:
      controller:
        admissionWebhooks: {enabled: false}
        ingressClassResource: {name: nginx-one, controllerValue: k8s.io/ingress-nginx-one}
  register: one

- name: Show what the controller will do
  ansible.builtin.debug:
    var: one.notes

- name: Remove it
  kindlab.ingress.ingress_controller:
    namespace: one
    method: manifest
    state: absent
"""

RETURN = r"""
args:
  description: The controller container args, in the order the chart renders them (C($(POD_NAMESPACE)) unexpanded).
  returned: always
  type: list
  elements: str
  sample: ["/nginx-ingress-controller", "--election-id=ingress-ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx",
           "--ingress-class=nginx", "--configmap=$(POD_NAMESPACE)/ingress-ingress-nginx-controller"]
image:
  description: The controller image reference.
  returned: always
  type: str
rbac_scope:
  description: V(cluster) (ClusterRole), V(namespace) (Role only) or V(none) (C(rbac.create=false)).
  returned: always
  type: str
rbac:
  description: What the RBAC grants that matters for ingress status (IngressClasses, Nodes, ingresses/status).
  returned: always
  type: dict
watch_namespace:
  description: The namespace the controller watches, or null for every namespace.
  returned: always
  type: str
watch_namespace_selector:
  description: The namespace label selector when unscoped with C(scope.namespaceSelector).
  returned: always
  type: str
publish:
  description:
    - Where the controller's Ingress status address comes from - C(source) is V(status-address), V(service)
      (with C(service) as namespace/name) or V(node-addresses) (with C(node_address_type)).
  returned: always
  type: dict
  sample: {"source": "node-addresses", "service": null, "addresses": [], "node_address_type": "ExternalIP (InternalIP if the node has none)"}
ingress_class:
  description: The IngressClass object (or null), the annotation value, the controller class and whether C(spec.ingressClassName) is honoured.
  returned: always
  type: dict
names:
  description: Names the chart gives the controller's objects (fullname, deployment, service, service account, election id).
  returned: always
  type: dict
notes:
  description: Plain-language explanations of surprising settings.
  returned: always
  type: list
  elements: str
  sample: ["publishService.enabled=false: pathOverride 'two/svc' is ignored (no --publish-service flag)", "scope.enabled=false: watches every namespace"]
not_modelled:
  description: Dotted paths of the given values the collection does not model (passed to helm untouched).
  returned: always
  type: list
  elements: str
values:
  description: The chart values used (given values with the convenience options folded in).
  returned: always
  type: dict
objects:
  description: The rendered objects as C(Kind namespace/name) (V(manifest) only; empty for V(helm)).
  returned: always
  type: list
  elements: str
pruned:
  description:
    - Objects this release had rendered before but no longer renders, deleted (in check mode, that would be deleted),
      as C(helm upgrade) would; for example the ClusterRole of a controller that became namespace-scoped.
  returned: V(manifest) with O(state=present)
  type: list
  elements: str
  sample: ["ClusterRole ingress-ingress-nginx", "ClusterRoleBinding ingress-ingress-nginx"]
release:
  description: The helm release after the run (name, namespace, revision, status, chart, app_version), null if absent.
  returned: method=helm
  type: dict
reason:
  description: Why helm did or did not need to upgrade.
  returned: method=helm and state=present
  type: str
chart:
  description: The chart helm installs from (C(name), C(version), and C(repo) or C(path)).
  returned: method=helm and state=present
  type: dict
  version_added: 0.1.0
commands:
  description: The helm argv lists run.
  returned: method=helm
  type: list
  elements: list
deleted:
  description: Objects deleted (V(manifest), state=absent).
  returned: method=manifest and state=absent
  type: list
  elements: str
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, WAIT_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import DEFAULT_TYPE, installable_names
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.runner import run_ingress_controller
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule

ARGUMENT_SPEC = with_args(
    CLUSTER_ARGS,
    WAIT_ARGS,
    type={"type": "str", "default": DEFAULT_TYPE, "choices": installable_names()},
    namespace={"type": "str", "required": True},
    release={"type": "str", "default": "ingress"},
    values={"type": "dict", "default": {}},
    scope={"type": "bool"},
    publish_service={"type": "bool"},
    ingress_class={"type": "str"},
    method={"type": "str", "default": "helm", "choices": ["helm", "manifest"]},
    state={"type": "str", "default": "present", "choices": ["present", "absent"]},
    helm_binary={"type": "str", "default": "helm"},
    chart_version={"type": "str"},
    chart_repo={"type": "str"},
    chart_path={"type": "path"},
    charts={"type": "dict", "default": {}},
    time_scale={"type": "float"},
    create_namespace={"type": "bool", "default": True},
)


def main() -> None:
    KindlabModule(argument_spec=ARGUMENT_SPEC).run(run_ingress_controller)


if __name__ == "__main__":
    main()
