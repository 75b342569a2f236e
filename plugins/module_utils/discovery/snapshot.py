# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster snapshot every analysis reads (controllers/base.ClusterState), listed once.

diagnose, conflicts, the data plane check, the status writers, the capture and the rehearsal read the
cluster through read_state (and read_gateway_api where Gateway API matters), then work on the snapshot
alone.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection, list_ingresses


def read_state(client: Any, selection: Selection | None) -> ClusterState:
    """List everything the analysis needs, cluster-wide (controllers may live anywhere); with no
    selection, no Ingress (what the controllers publish does not depend on them)."""
    rbac = "rbac.authorization.k8s.io/v1"
    return ClusterState(
        workloads=client.list("apps/v1", "Deployment") + client.list("apps/v1", "DaemonSet"),
        pods=client.list("v1", "Pod"),
        services=client.list("v1", "Service"),
        nodes=client.list("v1", "Node"),
        namespaces=client.list("v1", "Namespace"),
        ingress_classes=client.list("networking.k8s.io/v1", "IngressClass"),
        cluster_roles=client.list(rbac, "ClusterRole"),
        cluster_role_bindings=client.list(rbac, "ClusterRoleBinding"),
        ingresses=list_ingresses(client, selection) if selection is not None else [],
    )


def read_gateway_api(client: Any, state: ClusterState) -> ClusterState:
    """Add every GatewayClass, Gateway and HTTPRoute, cluster-wide (a route's parent may sit in
    another namespace), where the cluster serves Gateway API; where its CRDs are not installed
    the state says so and holds none."""
    try:
        state.gateway_classes = client.list(gateway_api.API_VERSION, "GatewayClass")
    except KindNotServed:
        return state
    state.gateway_api = True
    state.gateways = client.list(gateway_api.API_VERSION, "Gateway")
    try:
        state.http_routes = client.list(gateway_api.API_VERSION, "HTTPRoute")
    except KindNotServed:
        state.http_routes = []  # Gateways without routes: a partial install is still diagnosed
    return state
