#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: gateway_translation
short_description: Translate Ingresses to Gateway API with ingress2gateway and apply them, the notes kept
description:
  - Reads the selected Ingresses, the Services of their namespaces and the IngressClasses, and runs ingress2gateway
    (its ingress-nginx provider, on a file of those objects; it never reads the cluster itself) to translate them into
    Gateway API objects, one Gateway per class and namespace with a listener per host, one HTTPRoute per host.
  - Applies them (server-side) with the Gateways' class set to O(gateway_class) and every listener's port to
    O(listener_port), where the rehearsal's Gateway implementation serves HTTP. Nothing is applied when the translator
    fails or translates nothing.
  - Keeps what ingress2gateway printed for a person (a rewrite with capture groups it could not convert,
    case-insensitive regex matches, URL normalisation, TLS it did not translate) as JSON in the annotation
    C(kindlab.ingress/translation-notes) of the object each note names (of every Gateway when it names none);
    M(kindlab.ingress.ingress_migration) reads them from a target given as a Gateway and sets them beside the requests.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  gateway_class:
    description: The GatewayClass the translated Gateways use (ingress2gateway names it after the IngressClass).
    type: str
    required: true
  listener_port:
    description:
      - The port of every translated HTTP listener (Traefik serves HTTP listeners on its C(web) entry point, 8000). A
        route's parentRef that names the translator's HTTP port (80) names this one instead.
    type: int
    default: 8000
  tls_listener_port:
    description:
      - The port of every translated HTTPS listener (Traefik's C(websecure) entry point, 8443); a parentRef naming the
        translator's HTTPS port (443) names this one instead.
    type: int
    default: 8443
  ingress_class:
    description: The IngressClass whose Ingresses are translated (ingress2gateway's C(--ingress-nginx-ingress-class)).
    type: str
    default: nginx
  binary:
    description: The ingress2gateway binary (a path, or a name on PATH); the lab builds v1.2.0 from its Go module.
    type: str
    default: ingress2gateway
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - Objects of earlier runs that the translation no longer produces are not deleted.
"""

EXAMPLES = r"""
- name: The shop's Ingresses as Gateway API objects on Traefik's class
  kindlab.ingress.gateway_translation:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [shop]
    gateway_class: traefik
    binary: "{{ lookup('env', 'HOME') }}/.cache/kindlab/bin/ingress2gateway-v1.2.0"
  register: translation
"""

RETURN = r"""
ingresses:
  description: The Ingresses translated (namespace/name).
  returned: success
  type: list
  elements: str
objects:
  description: Each object applied and whether it changed.
  returned: success
  type: list
  elements: dict
  sample: [{"ref": "HTTPRoute shop/api-quirks-example-test", "changed": true}]
gateways:
  description: The translated Gateways (namespace/name), the rehearsal's targets.
  returned: success
  type: list
  elements: str
notes:
  description: What ingress2gateway said, each with C(severity), C(message), C(source) and the C(object) it names.
  returned: success
  type: list
  elements: dict
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import TRANSLATION_LISTENER_PORT, TRANSLATION_TLS_LISTENER_PORT
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.runner import run_gateway_translation


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS, SELECTION_ARGS,
            gateway_class={"type": "str", "required": True},
            listener_port={"type": "int", "default": TRANSLATION_LISTENER_PORT},
            tls_listener_port={"type": "int", "default": TRANSLATION_TLS_LISTENER_PORT},
            ingress_class={"type": "str", "default": "nginx"},
            binary={"type": "str", "default": "ingress2gateway"},
        ),
        supports_check_mode=True,
        requires=("PyYAML",),
    ).run(run_gateway_translation)


if __name__ == "__main__":
    main()
