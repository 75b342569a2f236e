# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik chart values: the part of chart 41.6.0's values.yaml the collection reads, and the
Helm/Go template semantics its templates apply to them."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    TRAEFIK_CHART_REPO,
    TRAEFIK_CHART_VERSION,
    TRAEFIK_IMAGE,
    TRAEFIK_VERSION,
)

Values = dict[str, Any]

CHART_NAME = "traefik"
CHART_REPO = TRAEFIK_CHART_REPO
CHART_VERSION = TRAEFIK_CHART_VERSION
APP_VERSION = TRAEFIK_VERSION
# The proxy's key in lab_images, and its pin (what the chart renders with its own values).
IMAGE_KEY = "traefik"
DEFAULT_IMAGE = TRAEFIK_IMAGE
# The IngressClass controller value the chart's IngressClass carries (ingressclass.yaml).
CONTROLLER_VALUE = "traefik.io/ingress-controller"
INGRESS = "providers.kubernetesingress"
NGINX = "providers.kubernetesingressnginx"
GATEWAY = "providers.kubernetesgateway"
# Traefik's Gateway controller name (fixed in its source: pkg/provider/kubernetes/gateway).
GATEWAY_CONTROLLER_NAME = "traefik.io/gateway-controller"

# The part of chart 41.6.0's values.yaml read here (same keys, same defaults).
CHART_DEFAULTS: Values = {
    "nameOverride": "",
    "fullnameOverride": "",
    "namespaceOverride": "",
    "image": {"registry": None, "repository": None, "tag": None, "digest": None},
    "deployment": {"kind": "Deployment", "replicas": 1},
    "ingressClass": {"enabled": True, "isDefaultClass": True, "name": ""},
    "rbac": {"enabled": True, "namespaced": False},
    "service": {"enabled": True, "spec": {"type": "LoadBalancer"}},
    "providers": {
        "kubernetesIngress": {
            "enabled": True, "allowExternalNameServices": False, "allowEmptyServices": True,
            "crossProviderNamespaces": [], "disableIngressClassLookup": False, "ingressClass": None,
            "labelSelector": None, "namespaces": [], "publishedService": {"enabled": True, "pathOverride": ""},
            "ingressEndpoint": {"hostname": "", "ip": ""}, "nativeLBByDefault": False, "strictPrefixMatching": False,
        },
        "kubernetesIngressNGINX": {
            "enabled": False, "controllerClass": "k8s.io/ingress-nginx", "ingressClass": "nginx",
            "ingressClassByName": False, "watchIngressWithoutClass": False, "watchNamespace": "",
            "watchNamespaceSelector": "", "publishService": {"enabled": False, "pathOverride": ""},
            "publishStatusAddress": "", "defaultBackendService": "", "disableSvcExternalName": False,
            "httpEntryPoint": "web", "httpsEntryPoint": "websecure",
        },
        "kubernetesGateway": {
            "enabled": False, "namespaces": [], "labelSelector": "",
            "statusAddress": {"ip": "", "hostname": "", "service": {"enabled": True, "name": "", "namespace": ""}},
        },
    },
    "additionalArguments": [],
    "gateway": {"enabled": True},
    "gatewayClass": {"enabled": True},
}


# What the lab gives every Traefik beneath its own values (ControllerType.lab_values): the API
# on the `traefik` entrypoint (chart 41.6.0 renders api.insecure as --api.insecure=true), which
# ingress_dataplane reads, GET /api/http/services through the API server's pod proxy on the
# pod's traefik port (ports.traefik.port, 8080). Without it that entrypoint answers 404 and
# every Traefik pod reads as `unread`. The Service does not expose the port (the chart's
# ports.traefik.expose stays false): only a client allowed get on pods/proxy reaches it.
LAB_VALUES: Values = {"api": {"insecure": True}}


class ValuesError(OptionError):
    """The values cannot be rendered; the message names the key path and the problem."""
