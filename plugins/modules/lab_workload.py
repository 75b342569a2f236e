#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_workload
short_description: Test web apps for the ingress lab (Deployment, Service, Ingress and HTTPRoute each)
description:
  - Creates any number of test apps in one call, each from a compact spec, as a Deployment,
    a ClusterIP Service and, unless disabled, an Ingress routing to it.
  - Every spec is validated before anything is sent to the cluster; an error names the field
    (for example C(workloads[1].ingress.paths[0].path_type)) and what was expected.
  - Objects are applied server-side with the field manager C(kindlab.ingress); a second run
    with the same specs reports no change.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  workloads:
    description:
      - The test apps. Names must be unique within a namespace.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Name of the Deployment, Service and (by default) Ingress.
        type: str
        required: true
      namespace:
        description: Namespace; it must exist (the lab role creates the lab's namespaces first).
        type: str
        default: default
      app:
        description:
          - What the pods run. C(web) is the image's own server (O(default_image) unless O(workloads[].image) is set).
          - C(echo) is the Gateway API conformance suite's echo server (O(echo_image)), listening on
            O(workloads[].port). It answers every request with JSON naming the path, host, method and headers
            that arrived and its namespace, Service and pod, which the migration rehearsal
            (M(kindlab.ingress.ingress_migration)) compares.
        type: str
        choices: [web, echo]
        default: web
      image:
        description: Container image. The default is O(default_image), or O(echo_image) for C(app=echo).
        type: str
      replicas:
        description: Number of pods; C(0) gives a Service with no endpoints.
        type: int
        default: 1
      port:
        description: Port the container listens on; every port of the Service (O(workloads[].ports)) targets it.
        type: int
        default: 80
      ports:
        description:
          - The Service's ports, each with C(port) and C(name) (a name is needed when there are several), all targeting
            the container's port. Omitted, port 80 named C(http). A captured Service keeps its port numbers and names
            this way, so an Ingress that names a port by number or by name finds it.
        type: list
        elements: dict
        version_added: 0.1.0
      labels:
        description: Extra labels for every object and the pods.
        type: dict
      ingress:
        description:
          - The Ingresses for this app. C(false) creates none; C(true) or omitted creates one for any host on C(/); a
            mapping creates one (named after the workload by default); a list of mappings creates each (each with its
            C(name)).
          - Keys are C(name), C(class) (C(spec.ingressClassName); omit to use the C(kubernetes.io/ingress.class)
            annotation or no class), C(host) (DNS name, C(*.) wildcard allowed), C(paths) (list of C(path) strings or
            mappings with C(path) and C(path_type) Prefix, Exact or ImplementationSpecific; default C(/) Prefix),
            C(annotations), and C(tls) (C(true) adds C(spec.tls) for the host with a self-signed certificate generated
            once into Secret C(<name>-tls); no key material in diffs).
          - Instead of C(host) and C(paths), C(rules) is the whole spec, as a captured Ingress has it, each rule with
            C(host) and C(paths); a path there may name its backend with C(service) (another workload of the
            namespace; default this one) and C(port) (a number or a name of that Service's O(workloads[].ports);
            default its first). C(default_backend) (C(service), C(port)) is C(spec.defaultBackend); C(tls) may be a
            list of C(hosts) lists, each with a certificate the lab makes for those names (Secret C(<name>-tls),
            C(<name>-tls-1), ...).
          - An Ingress with ingress-nginx basic auth (annotations C(auth-type) C(basic) and C(auth-secret)) gets that
            Secret generated once by the lab, with a user and password of its own (the password in the Secret's
            annotation C(kindlab.ingress/password); none in results or diffs); a Secret the lab did not make is left
            alone, and only the lab's own are deleted with O(state=absent).
        type: raw
      httproute:
        description:
          - A Gateway API HTTPRoute for this app, beside its Ingress or instead of it (with O(workloads[].ingress=false));
            omitted or C(false) creates none. The Gateway API CRDs must be installed (M(kindlab.ingress.gateway_api)).
          - Keys are C(name) (default the workload name), C(parent_refs) (required, the Gateways it attaches to, each a
            C(namespace/name) string, a name in the workload's namespace, or a mapping with C(gateway) and
            C(section_name), a listener's name), C(hostnames) (DNS names, C(*.) wildcard allowed), C(paths) (list of
            C(path) strings or mappings with C(path) and C(path_type) PathPrefix or Exact; default C(/) PathPrefix) and
            C(backend_refs) (each C(name), a Service in the namespace, default the workload's; C(port), default C(80);
            optional C(weight) 0-1000000; default the workload's Service alone).
          - Instead of C(paths) and C(backend_refs) (the short form of one rule), C(rules) gives the route's rules
            whole, each with C(matches) (C(path) and C(path_type) as above, C(headers) and C(query_params), mappings
            of names to the values they must equal, and C(method); default C(/) PathPrefix), C(filters) (Gateway API's
            own filter objects of type RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect or URLRewrite)
            and C(backend_refs) as above (C([]) for none, as a redirect rule has).
          - A list of such mappings makes several HTTPRoutes (named after the workload, then C(<name>-2), ...).
        type: raw
        version_added: 0.1.0
      rollout:
        description:
          - How the app's pods take part in a rolling update (U(https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination)).
        type: dict
        suboptions:
          readiness_probe:
            description:
              - An HTTP readiness probe on C(/) every 2 s. Without one a new pod is a ready endpoint before its server listens.
            type: bool
            default: true
          pre_stop_sleep:
            description:
              - Seconds a terminating pod sleeps (a preStop C(sleep) in its container) before its server gets SIGTERM,
                so that every controller has dropped it from its endpoints before it stops answering. C(0) for none.
            type: int
            default: 0
          grace_period:
            description:
              - C(terminationGracePeriodSeconds); must exceed O(workloads[].rollout.pre_stop_sleep). Omitted, Kubernetes' 30 s.
            type: int
  state:
    description: C(present) creates or updates the apps; C(absent) deletes their objects.
    type: str
    choices: [present, absent]
    default: present
  default_image:
    description:
      - The image of every workload without C(image). Defaults to the pinned nginx image, which answers with the
        nginx welcome page; C(playbooks/lab.yml) passes C(lab_images.test_app).
    type: str
  echo_image:
    description:
      - The image of every workload with C(app=echo) and no C(image). Defaults to the pinned echo-basic image of the
        Gateway API conformance suite; C(playbooks/lab.yml) passes C(lab_images.echo).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
  - kindlab.ingress.cluster.wait
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - Waiting means every Deployment with replicas above zero has all its pods ready.
"""

EXAMPLES = r"""
- name: One nginx app with an Ingress claimed by the annotation, in each lab namespace
  kindlab.ingress.lab_workload:
    kubeconfig: "{{ lab_kubeconfig }}"
    workloads:
      - name: test
        namespace: one
        ingress:
          annotations:
            kubernetes.io/ingress.class: nginx
      - name: test
        namespace: two
        ingress:
          annotations:
            kubernetes.io/ingress.class: nginx

- name: Two teams publishing the same host and path
  kindlab.ingress.lab_workload:
    workloads:
      - name: login
        namespace: team-a
        ingress:
          class: nginx
          host: app.example.test
          paths: [{path: /login, path_type: Prefix}]
      - name: login
        namespace: team-b
        ingress:
          class: nginx
          host: app.example.test
          paths: [/login]
"""

RETURN = r"""
workloads:
  description: The validated specs with defaults filled in.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "test", "namespace": "one", "image": "nginx:1.29.3", "replicas": 1,
            "ingress": {"name": "test", "class": null, "host": null, "paths": [{"path": "/", "path_type": "Prefix"}],
                        "annotations": {"kubernetes.io/ingress.class": "nginx"}}}]
objects:
  description: Each object and what was (or in check mode would be) done to it.
  returned: always
  type: list
  elements: dict
  sample: [{"object": "Deployment one/test", "action": "created"}]
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, WAIT_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.runner import run_lab_workload


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            WAIT_ARGS,
            workloads={"type": "list", "elements": "dict", "required": True, "options": {
                "name": {"type": "str", "required": True},
                "namespace": {"type": "str", "default": "default"},
                "app": {"type": "str", "choices": ["web", "echo"], "default": "web"},
                "image": {"type": "str"},
                "replicas": {"type": "int", "default": 1},
                "port": {"type": "int", "default": 80},
                "ports": {"type": "list", "elements": "dict"},
                "labels": {"type": "dict"},
                "ingress": {"type": "raw"},
                "httproute": {"type": "raw"},
                "rollout": {"type": "dict", "options": {
                    "readiness_probe": {"type": "bool", "default": True},
                    "pre_stop_sleep": {"type": "int", "default": 0},
                    "grace_period": {"type": "int"},
                }},
            }},
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
            default_image={"type": "str"},
            echo_image={"type": "str"},
        ),
    ).run(run_lab_workload)


if __name__ == "__main__":
    main()
