"""The twin's emulated controllers. all_controllers() returns fresh instances in start order:
nodes first (everything schedules onto them), then the API-side allocators, the workload
controllers, scheduler and kubelets, endpoints, MetalLB, the ingress controllers, and last
the data plane that exposes what they produce."""
from __future__ import annotations

from kindlab_twin.contract import Controller


def all_controllers() -> list[Controller]:
    from kindlab_twin.dataplane import DataPlane

    from .ingress_nginx import IngressNginxController
    from .kubelet import Kubelet
    from .metallb import MetalLBController
    from .nodes import NodeController
    from .scheduler import Scheduler
    from .services import EndpointSliceController, ServiceAllocator
    from .workloads import DaemonSetController, DeploymentController, ReplicaSetController

    return [
        NodeController(),
        ServiceAllocator(),
        DeploymentController(),
        ReplicaSetController(),
        DaemonSetController(),
        Scheduler(),
        Kubelet(),
        EndpointSliceController(),
        MetalLBController(),
        IngressNginxController(),
        DataPlane(),
    ]
