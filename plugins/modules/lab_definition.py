#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_definition
short_description: Validate a whole ingress lab definition before anything is changed
description:
  - Checks every part of a lab (backend, cluster, MetalLB pools, namespaces, ingress controllers
    and their chart values, workloads) and the links between them, without contacting any cluster.
  - "The first error names the lab variable and the field, and says what was expected, for example
    C(lab_workloads[2].ingress.paths[0].path_type: expected one of Prefix, Exact, ImplementationSpecific, got 'Regex')."
  - C(playbooks/lab.yml) runs it first, so a bad definition stops the lab before a cluster exists.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  backend:
    description: The lab backend, C(auto), C(kind) or C(twin).
    type: str
    required: true
  cluster:
    description: The cluster (C(name), C(workers), C(node_image), C(kind_config)).
    type: dict
    required: true
  metallb_pools:
    description:
      - MetalLB pools, each C(name), C(addresses) and optional C(auto_assign).
      - A pool entry inside the cluster's own networks is refused, since MetalLB would hand out addresses the cluster
        already uses. These are the node network docker usually gives kind's network (C(172.18.0.0/16), the twin's
        too) and the pod and service subnets of O(cluster)'s C(kind_config), kind's C(10.244.0.0/16) and
        C(10.96.0.0/16) unless it sets others.
    type: list
    elements: raw
    required: true
  namespaces:
    description: The namespaces the lab creates.
    type: list
    elements: raw
    required: true
  controllers:
    description:
      - Ingress controllers, each C(namespace), C(type), C(release) and C(values), and optionally the convenience
        options C(scope), C(publish_service) and C(ingress_class) of M(kindlab.ingress.ingress_controller), and
        C(method) (C(helm) or C(manifest), else the installer's default - helm on kind, manifest on the twin). With
        C(method=manifest), values the manifest method cannot render are refused here, before anything is created.
      - The convenience options are folded into the values (an option and an explicit value for the same key must
        agree); the C(values) of each entry of RV(controllers) are what the lab installs.
      - C(release) must be a name helm takes (lower-case letters, digits, C(-) and C(.), starting and ending with a
        letter or digit, at most 53 characters) that also gives the controller's objects names Kubernetes takes (its
        Service name is a DNS-1035 label, so no C(.) and a letter first).
      - C(type=traefik) runs on O(backend=kind) only; the twin refuses it (it runs no real proxy, and Traefik is
        not emulated).
    type: list
    elements: raw
    required: true
  workloads:
    description: Test apps, as in M(kindlab.ingress.lab_workload).
    type: list
    elements: raw
    required: true
  expect:
    description:
      - What verification must find (C(lab_expect)), as in M(kindlab.ingress.verify_report).
      - C(controllers.failing) names controllers (C(namespace/release)) expected not to start and C(addresses.failing)
        Ingresses (C(namespace/name)) expected to get no address. C(lab.yml) lets the build go on past them and
        verification asserts them.
      - Every controller and Ingress it names must be one the lab defines. This covers the C(failing) subjects of
        C(controllers), C(addresses), C(status) and C(backends), both Ingresses of each C(conflicts.expected) entry,
        each C(reachability) probe's C(ingress), and each C(diagnose.findings) C(ingress) regex, which must match one
        of the lab's Ingresses.
    type: dict
    default: {}
  images:
    description:
      - The images the lab runs (C(lab_images)), by key, C(metallb_controller), C(metallb_speaker),
        C(ingress_nginx_controller), C(traefik), C(test_app) and C(echo); each defaults to the collection's pin.
      - Point them at a private mirror, or at images already on the machine. The MetalLB images go into MetalLB's
        manifest, C(traefik) into Traefik's chart values (C(image.registry), C(repository), C(tag)), the controller
        image into the ingress-nginx chart values (C(controller.image.repository),
        C(tag) and C(digest); a controller whose values choose an image itself is an error unless this is the pin),
        C(test_app) is the image of every workload without C(image), and C(echo) of every workload with C(app=echo)
        (the Gateway API conformance echo server).
    type: dict
    default: {}
  images_load:
    description:
      - Images the kind provider loads into the nodes with C(kind load docker-image) (C(lab_images_load)) once the
        cluster exists. C(true) loads every image of O(images) the lab runs (a controller type's image only when a
        controller of that type is in O(controllers)), a list names image references, C(false) or C([]) loads none. The twin loads nothing (it says so).
    type: raw
    default: []
  charts:
    description:
      - Local charts (C(lab_charts)) that C(helm) installs instead of the pinned repository charts, by controller
        type (for example C(ingress_nginx) to C(/srv/charts/ingress-nginx-4.15.1.tgz)), each a chart directory or a
        packaged C(.tgz), for networks that cannot reach the chart repository. Each is read here (its C(Chart.yaml) must
        name the type's chart) before anything changes.
    type: dict
    default: {}
    version_added: 0.1.0
  time_scale:
    description:
      - The lab's time scale (C(lab_time_scale)). With O(backend=kind) it becomes each controller's own period
        flag (ingress-nginx C(--status-update-interval=60/time_scale)); checked here that every controller takes it.
    type: float
    version_added: 0.1.0
  actions:
    description:
      - The scenario's timed actions (C(lab_actions)) that verify carries out during its window; see
        M(kindlab.ingress.lab_actions) for their keys. Checked here - each action, that C(rollout) and C(scale) name a
        workload of O(workloads), that controller actions name a namespace with controllers of O(controllers), that
        C(freeze_sync) names a type that can be frozen - and refused with O(backend=twin).
    type: list
    elements: dict
    default: []
  gateway_api:
    description:
      - Whether the lab applies the Gateway API CRDs (C(lab_gateway_api)), at the pinned version (v1.6.1, standard
        channel), before any controller is installed; off by default.
      - Required by O(gateways), by a workload's C(httproute), and by a controller whose values turn on its Gateway
        provider (Traefik's C(providers.kubernetesGateway.enabled), which only C(method=helm) installs and which the
        chart refuses with C(rbac.namespaced)). With it, such a Traefik gets beneath its own values
        C(gateway.enabled=false) and C(gatewayClass.enabled=false) (the lab creates its own classes and Gateways; a
        second release would collide on the chart's class C(traefik)) and
        C(providers.kubernetesGateway.statusAddress.service) naming the release's own Service, so its Gateways get
        its MetalLB address. Its explicit values win.
    type: bool
    default: false
    version_added: 0.1.0
  gateways:
    description:
      - The lab's GatewayClasses and Gateways (C(lab_gateways)), as in M(kindlab.ingress.gateway_api), C(classes) and
        C(gateways); needs O(gateway_api).
      - Each class has C(name), C(controller_name) (default C(traefik.io/gateway-controller)) and optional C(labels).
        Each Gateway has C(namespace) (one of O(namespaces)), C(name), C(class) (one of C(classes)) and C(listeners),
        each C(name) (unique in the Gateway), C(port) (1-65535; for Traefik an entrypoint's container port, such as
        C(8000) for C(web)), C(protocol) (C(HTTP); HTTPS and TLS listeners are not built yet), optional C(hostname),
        and C(allowed_routes) (C(namespaces) C(Same), C(All) or C(Selector) with C(selector) labels).
      - C(translations), the lab's own key (not M(kindlab.ingress.gateway_api)'s), each with C(namespaces) (of
        O(namespaces)), C(class) (one of C(classes)), optional C(listener_port) (default C(8000), Traefik's C(web)),
        C(tls_listener_port) (default C(8443), Traefik's C(websecure)) and
        C(ingress_class) (default C(nginx)); those namespaces' Ingresses are translated by ingress2gateway after the
        workloads (M(kindlab.ingress.gateway_translation)), the Gateway API target of a migration rehearsal.
      - A workload's C(httproute) C(parent_refs) must name Gateways defined here, and a C(section_name) one of its
        listeners.
    type: dict
    default: {}
    version_added: 0.1.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
"""

EXAMPLES = r"""
- name: Validate the lab defined in the inventory
  kindlab.ingress.lab_definition:
    backend: "{{ lab_backend }}"
    cluster: "{{ lab_cluster }}"
    metallb_pools: "{{ lab_metallb_pools }}"
    namespaces: "{{ lab_namespaces }}"
    controllers: "{{ lab_controllers }}"
    workloads: "{{ lab_workloads }}"
    expect: "{{ lab_expect | default({}) }}"
    images: "{{ lab_images | default({}) }}"
    images_load: "{{ lab_images_load | default([]) }}"
  register: lab_definition
"""

RETURN = r"""
cluster:
  description: The cluster settings with defaults filled in.
  returned: success
  type: dict
pools:
  description: The parsed pools with their ranges and sizes.
  returned: success
  type: list
  elements: dict
controllers:
  description:
    - Each controller as the lab installs it, C(type), C(namespace), C(release), C(values) (with the convenience options
      folded in), C(ingress_class_resource) (the IngressClass it creates, or null), C(deployment) (C(namespace/name)),
      and its effective C(args), C(rbac_scope), C(watch_namespace), C(publish) source and C(notes).
    - C(playbooks/lab.yml) hands this list, not the raw C(lab_controllers), to the C(ingress_controllers) role.
  returned: success
  type: list
  elements: dict
workloads:
  description: The workload specs with defaults filled in.
  returned: success
  type: list
  elements: dict
ingresses:
  description: C(namespace/name) of every Ingress the lab declares.
  returned: success
  type: list
  elements: str
  sample: [one/test, two/test, three/test]
addressed_ingresses:
  description: The Ingresses expected to get a status address, that is RV(ingresses) minus C(expect.addresses.failing).
  returned: success
  type: list
  elements: str
  sample: [one/test, three/test]
expect:
  description: The validated expectations.
  returned: success
  type: dict
images:
  description: Every image the lab runs, the pins with O(images) over them.
  returned: success
  type: dict
  sample: {"metallb_controller": "quay.io/metallb/controller:v0.16.1", "metallb_speaker": "quay.io/metallb/speaker:v0.16.1",
           "ingress_nginx_controller": "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:594c...",
           "test_app": "nginx:1.29.3"}
charts:
  description: The local charts by controller type (O(charts) read), each C(name), C(version) and C(path).
  returned: success
  type: dict
  version_added: 0.1.0
actions:
  description: The actions (O(actions) read), in the order they start, each C(name), C(kind), C(target), C(at), C(machinery).
  returned: success
  type: list
  elements: dict
gateway_api:
  description: Whether the lab applies the Gateway API CRDs (O(gateway_api)).
  returned: success
  type: bool
  version_added: 0.1.0
gateway_api_version:
  description: The Gateway API version whose CRDs the lab applies, or null without O(gateway_api).
  returned: success
  type: str
  sample: v1.6.1
  version_added: 0.1.0
gateways:
  description: The GatewayClasses (C(classes)), Gateways (C(gateways)) and C(translations) of O(gateways) with defaults filled in.
  returned: success
  type: dict
  version_added: 0.1.0
httproutes:
  description: C(namespace/name) of every HTTPRoute the lab's workloads declare.
  returned: success
  type: list
  elements: str
  sample: [one/test]
  version_added: 0.1.0
plan:
  description:
    - What C(playbooks/lab.yml) builds from this lab, one line per step in its order (the cluster, the MetalLB pools,
      the namespaces, each controller with its effective arguments, each workload with its Ingress). Check mode on a
      machine where the cluster does not exist yet prints it instead of running the steps that need the cluster.
  returned: success
  type: list
  elements: str
  sample: ["cluster ingress-lab (backend twin): 1 control-plane node", "namespaces: one, two, three"]
images_load:
  description: The image references to load into a kind cluster's nodes (O(images_load) resolved).
  returned: success
  type: list
  elements: str
  sample: ["registry.example.com/mirror/nginx:1.29.3"]
"""

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.runner import run_lab_definition
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec={
            "backend": {"type": "str", "required": True},
            "cluster": {"type": "dict", "required": True},
            "metallb_pools": {"type": "list", "elements": "raw", "required": True},
            "namespaces": {"type": "list", "elements": "raw", "required": True},
            "controllers": {"type": "list", "elements": "raw", "required": True},
            "workloads": {"type": "list", "elements": "raw", "required": True},
            "expect": {"type": "dict", "default": {}},
            "images": {"type": "dict", "default": {}},
            "images_load": {"type": "raw", "default": []},
            "charts": {"type": "dict", "default": {}},
            "time_scale": {"type": "float"},
            "actions": {"type": "list", "elements": "dict", "default": []},
            "gateway_api": {"type": "bool", "default": False},
            "gateways": {"type": "dict", "default": {}},
        },
    ).run(run_lab_definition)


if __name__ == "__main__":
    main()
