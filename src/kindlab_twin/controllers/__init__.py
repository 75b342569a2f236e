"""The twin's emulations of what cannot run here, each a client of the real API server.
all_controllers() returns fresh instances in start order: the kubelets' container side first
(pods become Running), then MetalLB, the ingress controllers, and last the data plane that
exposes what they produce."""
from __future__ import annotations

from kindlab_twin.contract import Controller


def all_controllers() -> list[Controller]:
    from kindlab_twin.dataplane import DataPlane

    from .ingress_nginx import IngressNginxController
    from .kubelet import Kubelet
    from .metallb import MetalLBController

    return [Kubelet(), MetalLBController(), IngressNginxController(), DataPlane()]
