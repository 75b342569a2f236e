# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pinned versions: the one place the collection names a version.

Roles and modules read their defaults from here (roles through the `lab_versions`
lookup in their defaults), so bumping a pin is a one-line change.
"""
from __future__ import annotations

# kind release and a node image it publishes, inside ingress-nginx v1.15's tested range.
# kind v0.32.0's release notes list v1.36.1 (its default), v1.35.5, v1.34.8 and v1.33.12;
# 1.36 is outside ingress-nginx's tested 1.31-1.35, so the newest 1.35 image, pinned by
# digest (kind supports a node image only with the release that built it).
KIND_VERSION = "v0.32.0"
KIND_NODE_IMAGE = "kindest/node:v1.35.5@sha256:ce977ae6d65918d0b58a5f8b5e940429c2ce42fa3a5619ec2bbc60b949c0ac95"

# MetalLB native (L2) manifest.
METALLB_VERSION = "v0.16.1"
METALLB_MANIFEST_URL = (
    "https://raw.githubusercontent.com/metallb/metallb/"
    + METALLB_VERSION
    + "/config/manifests/metallb-native.yaml"
)
# The images that manifest deploys (the twin's rendered MetalLB uses the same ones).
METALLB_CONTROLLER_IMAGE = "quay.io/metallb/controller:" + METALLB_VERSION
METALLB_SPEAKER_IMAGE = "quay.io/metallb/speaker:" + METALLB_VERSION

# ingress-nginx Helm chart and the controller it deploys.
INGRESS_NGINX_CHART_VERSION = "4.15.1"
INGRESS_NGINX_CONTROLLER_VERSION = "v1.15.1"
INGRESS_NGINX_CHART_REPO = "https://kubernetes.github.io/ingress-nginx"
INGRESS_NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:" + INGRESS_NGINX_CONTROLLER_VERSION
# The digest chart 4.15.1 pins for that tag (values.yaml controller.image.digest); the chart
# renders image refs as <registry>/<image>:<tag>@<digest>.
INGRESS_NGINX_CONTROLLER_DIGEST = "sha256:594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1"

# Test web app image (the seed's app: nginx's welcome page).
TEST_APP_IMAGE = "nginx:1.29.3"

# Kubernetes version whose OpenAPI schema every rendered object is validated against.
KUBERNETES_SCHEMA_VERSION = "1.35.0"

# The field manager for every server-side apply the collection makes.
FIELD_MANAGER = "kindlab.ingress"
