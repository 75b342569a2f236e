# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik, the collection's one module for it: its chart values and the Ingress providers' args
the chart renders, and its Gateway API provider's (values.py, chart.py), what those values do that a reader might not expect
(notes.py), the objects the chart creates for an Ingress-only Traefik (manifests.py: method=manifest,
without the chart's CRDs), what the proxy does with its args (binary.py), and what its Gateway API
provider claims, writes and serves (gateway.py). TYPE is its registry entry."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    KIND_OFFLINE_TRAEFIK_CHART,
    KIND_OFFLINE_TRAEFIK_IMAGE,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CapturePart,
    ControllerType,
    GatewayPart,
    IngressPart,
    InstallPart,
    OfflinePart,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import binary, chart, dataplane, gateway, inverse, manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import (
    CHART_NAME,
    CHART_REPO,
    CHART_VERSION,
    DEFAULT_IMAGE,
    GATEWAY_CONTROLLER_NAME,
    IMAGE_KEY,
    LAB_VALUES,
    ValuesError,
)

TYPE = ControllerType(
    name="traefik",
    detect=binary.is_traefik,
    field_manager=binary.FIELD_MANAGER,
    on_twin=False,
    dataplane=dataplane.READER,
    # forwardedheaders: X-Forwarded-Server is set to os.Hostname(), the pod's name
    proxy_marker="X-Forwarded-Server",
    install=InstallPart(
        chart_name=CHART_NAME,
        chart_repo=CHART_REPO,
        chart_version=CHART_VERSION,
        effective_config=chart.effective_config,
        render_manifests=manifests.render_manifests,
        apply_options=chart.apply_options,
        value_errors=(ValuesError,),
        rendered_kinds=manifests.RENDERED_KINDS,
        release_selector=manifests.release_selector,
        default_images={IMAGE_KEY: DEFAULT_IMAGE},
        with_images=lambda values, images: chart.with_image(values, images[IMAGE_KEY], DEFAULT_IMAGE),
        with_time_scale=chart.with_time_scale,
        lab_values=LAB_VALUES,
    ),
    ingress=IngressPart(
        analyse=binary.analyse,
        status_log=binary.status_log,
        class_markers=("traefik",),
        on_duplicate=binary.on_duplicate,
        # Its path matchers are not modelled here: its paths are compared by the Ingress spec's rules.
        string_prefix_path_types=(),
        annotation_prefix="traefik.ingress.kubernetes.io/",
    ),
    gateway=GatewayPart(gateway.analyse, chart.gateway_enabled, chart.gateway_lab_values, GATEWAY_CONTROLLER_NAME),
    capture=CapturePart(inverse.args_to_values, inverse.effective_args, inverse.capture_values, inverse.SECRET_FLAGS),
    # The release binary alone in an image, and the same chart from its Go module.
    offline=OfflinePart({IMAGE_KEY: KIND_OFFLINE_TRAEFIK_IMAGE}, KIND_OFFLINE_TRAEFIK_CHART),
    no_sync_freeze="Traefik's providers and its router are one process: stopping its syncing stops its proxy too",
)
