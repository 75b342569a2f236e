# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx, the collection's one module for it: its chart values and what the chart renders
(values.py, chart.py), what those values do that a reader might not expect (notes.py), the
objects the chart creates (manifests.py), and what the controller binary does with its args
(binary.py). TYPE is its registry entry (controllers/registry.py)."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    KIND_OFFLINE_INGRESS_NGINX_CHART,
    KIND_OFFLINE_INGRESS_NGINX_IMAGE,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CapturePart,
    ControllerType,
    IngressPart,
    InstallPart,
    OfflinePart,
    SyncFreeze,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import basic_auth, binary, chart, dataplane, inverse, manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    ANNOTATION_PREFIX,
    CHART_NAME,
    CHART_REPO,
    CHART_VERSION,
    DEFAULT_IMAGE,
    IMAGE_KEY,
    ValuesError,
)

TYPE = ControllerType(
    name="ingress_nginx",
    detect=binary.is_nginx,
    field_manager=binary.FIELD_MANAGER,
    on_twin=True,
    dataplane=dataplane.READER,
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
    ),
    ingress=IngressPart(
        analyse=lambda state, workload, container, pods: [binary.analyse_nginx(state, workload, container, pods)],
        status_log=binary.status_log,
        class_markers=("ingress-nginx", "nginx"),
        on_duplicate=binary.on_duplicate,
        companion=binary.companion,
        # Without use-regex it writes an ImplementationSpecific path as `location <path>` (binary.select_route).
        string_prefix_path_types=("ImplementationSpecific",),
        annotation_prefix=ANNOTATION_PREFIX,
        credential_secrets=basic_auth.credential_secrets,
    ),
    capture=CapturePart(inverse.args_to_values, inverse.effective_args, inverse.capture_values, inverse.SECRET_FLAGS),
    # The real controller v1.11.0 on Debian's nginx, and chart 4.11.0, both from the module the Go proxy serves.
    offline=OfflinePart({IMAGE_KEY: KIND_OFFLINE_INGRESS_NGINX_IMAGE}, KIND_OFFLINE_INGRESS_NGINX_CHART),
    # The Go controller (dumb-init's child) syncs; nginx, its child, serves from the backends the
    # controller last posted to its Lua balancer, so stopping the Go process freezes them.
    sync_freeze=SyncFreeze("/nginx-ingress-controller", ("controller.livenessProbe", "controller.readinessProbe")),
)
