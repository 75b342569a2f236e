# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pinned versions: the one place the collection names a version.

Roles and modules read their defaults from here (roles through the `lab_versions`
lookup in their defaults), so bumping a pin is a one-line change.
"""
from __future__ import annotations

# kind release and a node image it publishes, inside ingress-nginx v1.15's tested range.
KIND_VERSION = "v0.32.0"
KIND_NODE_IMAGE = "kindest/node:v1.35.0"

# MetalLB native (L2) manifest.
METALLB_VERSION = "v0.16.1"
METALLB_MANIFEST_URL = (
    "https://raw.githubusercontent.com/metallb/metallb/"
    + METALLB_VERSION
    + "/config/manifests/metallb-native.yaml"
)

# ingress-nginx Helm chart and the controller it deploys.
INGRESS_NGINX_CHART_VERSION = "4.15.1"
INGRESS_NGINX_CONTROLLER_VERSION = "v1.15.1"
INGRESS_NGINX_CHART_REPO = "https://kubernetes.github.io/ingress-nginx"
INGRESS_NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:" + INGRESS_NGINX_CONTROLLER_VERSION

# Test web app image (the seed's app: nginx's welcome page).
TEST_APP_IMAGE = "nginx:1.29.3"

# Kubernetes version whose OpenAPI schema every rendered object is validated against.
KUBERNETES_SCHEMA_VERSION = "1.35.0"

# The field manager for every server-side apply the collection makes.
FIELD_MANAGER = "kindlab.ingress"
