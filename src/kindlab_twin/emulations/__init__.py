"""The twin's emulations of what cannot run here, each a client of the real API server.
all_emulations() returns fresh instances in start order: the kubelets' container side first
(pods become Running), then MetalLB, the ingress controllers, and last the data plane that
exposes what they produce."""
from __future__ import annotations

from kindlab_twin.contract import Emulation


def all_emulations() -> list[Emulation]:
    from kindlab_twin.dataplane import DataPlane

    from .ingress_nginx import IngressNginxEmulation
    from .kubelet import Kubelet
    from .metallb import MetalLBEmulation

    return [Kubelet(), MetalLBEmulation(), IngressNginxEmulation(), DataPlane()]
