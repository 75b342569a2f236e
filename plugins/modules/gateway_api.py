#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: gateway_api
short_description: Gateway API CRDs, GatewayClasses and Gateways for the ingress lab
description:
  - Applies the Gateway API CRDs at the pinned version (v1.6.1, standard channel, the release's
    C(standard-install.yaml)), waits until they are served, then the lab's GatewayClasses and Gateways.
  - The classes and Gateways are validated before anything is sent to the cluster; an error names the field
    (for example C(gateways[0].listeners[1].port)) and what was expected.
  - Helm charts that create Gateway API objects (Traefik's with C(providers.kubernetesGateway.enabled)) fail to
    install without the CRDs, so C(playbooks/lab.yml) runs this before the controllers (CRDs only), and again with
    the classes and Gateways once the lab's namespaces exist.
  - Every object is applied server-side with the field manager C(kindlab.ingress); a second run reports no change.
    Check mode and diff mode are supported (a CRD's diff is left out, the objects list names it).
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  crds:
    description: Whether to apply the CRDs first. C(false) applies only O(classes) and O(gateways) (the CRDs must be there).
    type: bool
    default: true
  source:
    description:
      - Where the CRDs come from when O(manifest_url) is empty. C(upstream) downloads the pinned release's
        C(standard-install.yaml). C(cache) reads the copy that C(kindlab-twin build binaries gateway-api-crds)
        assembles from the C(sigs.k8s.io/gateway-api) Go module under the kindlab cache (C(KINDLAB_CACHE), else
        C(~/.cache/kindlab)), the same objects; the twin uses it.
    type: str
    choices: [upstream, cache]
    default: upstream
  manifest_url:
    description:
      - URL of the CRDs' manifest (C(lab_gateway_api_manifest_url)); it wins over O(source). A mirror, or a
        C(file://) URL of a copy on the host the module runs on (the offline kind lab passes the cached copy).
    type: str
  classes:
    description:
      - GatewayClasses, each C(name) (a DNS-1123 subdomain), C(controller_name) (C(spec.controllerName), the controller
        that claims it; default C(traefik.io/gateway-controller), Traefik's, which is fixed) and optional C(labels)
        (Traefik's C(providers.kubernetesGateway.labelSelector) filters classes by them).
    type: list
    elements: raw
    default: []
  gateways:
    description:
      - Gateways, each C(namespace) (it must exist), C(name) (unique in the namespace), C(class)
        (C(spec.gatewayClassName), one of O(classes)), optional C(labels), and C(listeners) (1 to 64).
      - Each listener has C(name) (a DNS-1123 label, unique in the Gateway; a route's C(sectionName) names it),
        C(port) (1-65535), C(protocol) (C(HTTP) or C(HTTPS); TLS passthrough listeners are not built),
        optional C(hostname) (a DNS name, C(*.) wildcard allowed; any when omitted) and C(allowed_routes)
        (C(allowedRoutes.namespaces), as C(namespaces) C(Same), the default, C(All), or C(Selector) with C(selector),
        namespace labels to match; a string is taken as C(namespaces)). Two listeners on one port need different
        hostnames.
      - An C(HTTPS) listener terminates TLS (C(tls.mode=Terminate)) with a certificate this module generates once, a
        self-signed EC P-256 one for the listener's C(hostname) (else C(gateway.kindlab.invalid)), in the Secret
        C(<gateway>-<listener>-tls) beside the Gateway; an existing Secret is kept as it is, and no key material appears
        in the result or diff.
      - Traefik serves a listener only on one of its entrypoints' container ports (the chart's C(ports.web.port)
        C(8000), C(ports.websecure.port) C(8443)); another port is C(Accepted=False) (C(PortUnavailable)).
    type: list
    elements: raw
    default: []
  wait_timeout:
    description: Seconds to wait for the CRDs to be Established before the classes and Gateways are applied.
    type: int
    default: 60
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
notes:
  - Objects of earlier runs that are no longer listed are not deleted.
"""

EXAMPLES = r"""
- name: The CRDs from the release, before the controllers
  kindlab.ingress.gateway_api:
    kubeconfig: "{{ lab_kubeconfig }}"

- name: A Traefik class and a Gateway on its web entrypoint, the CRDs from a local copy
  kindlab.ingress.gateway_api:
    manifest_url: file:///srv/mirror/gateway-api/v1.6.1/standard-install.yaml
    classes:
      - name: traefik-one
    gateways:
      - namespace: one
        name: web
        class: traefik-one
        listeners:
          - name: web
            port: 8000
            hostname: "*.example.test"
            allowed_routes: All
"""

RETURN = r"""
version:
  description: The Gateway API version of the CRDs.
  returned: always
  type: str
  sample: v1.6.1
crds_url:
  description: Where the CRDs were read from, or null with O(crds=false).
  returned: always
  type: str
  sample: https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml
classes:
  description: The GatewayClasses with defaults filled in.
  returned: always
  type: list
  elements: dict
gateways:
  description: The Gateways with defaults filled in.
  returned: always
  type: list
  elements: dict
objects:
  description: Each object and what was (or in check mode would be) done to it.
  returned: always
  type: list
  elements: dict
  sample: [{"object": "Gateway one/web", "action": "created"}]
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.runner import run_gateway_api


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            crds={"type": "bool", "default": True},
            source={"type": "str", "choices": ["upstream", "cache"], "default": "upstream"},
            manifest_url={"type": "str"},
            classes={"type": "list", "elements": "raw", "default": []},
            gateways={"type": "list", "elements": "raw", "default": []},
            wait_timeout={"type": "int", "default": 60},
        ),
        requires=("PyYAML",),
    ).run(run_gateway_api)


if __name__ == "__main__":
    main()
