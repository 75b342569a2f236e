# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: the effective configuration chart.py computes from chart values (ControllerConfig, with
its RBAC, IngressClass and publishing), in a module of its own so that chart.py, notes.py and manifests.py
all import it downward."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Values = dict[str, Any]


# ---------------------------------------------------------------- result types


@dataclass(frozen=True)
class IngressClassInfo:
    name: str
    controller_value: str
    default: bool

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "controller_value": self.controller_value, "default": self.default}


@dataclass(frozen=True)
class RbacInfo:
    """What the chart's RBAC lets the controller do (None = rbac.create=false: unknown)."""

    scope: str  # "cluster" | "namespace" | "none"
    kinds: tuple[str, ...]
    can_list_ingress_classes: bool | None
    can_get_nodes: bool | None
    can_update_ingress_status: bool | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "kinds": list(self.kinds),
            "can_list_ingress_classes": self.can_list_ingress_classes,
            "can_get_nodes": self.can_get_nodes,
            "can_update_ingress_status": self.can_update_ingress_status,
        }


@dataclass(frozen=True)
class PublishInfo:
    """Where the controller's status address comes from (status.go runningAddresses)."""

    source: str  # "status-address" | "service" | "node-addresses" | "none"
    service: str | None = None  # namespace/name, $(POD_NAMESPACE) resolved
    addresses: tuple[str, ...] = ()
    node_address_type: str | None = None  # "ExternalIP (InternalIP if none)" | "InternalIP"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "service": self.service,
            "addresses": list(self.addresses),
            "node_address_type": self.node_address_type,
        }


@dataclass
class ControllerConfig:
    release: str
    namespace: str  # where the chart puts its namespaced objects (namespaceOverride applied)
    values: Values  # chart defaults with the user values merged over them
    user_values: Values
    name: str
    fullname: str
    controller_fullname: str
    service_account: str
    election_id: str
    image: str
    args: list[str]
    flags: dict[str, str]  # effective flag values: last occurrence wins, as in pflag
    rbac: RbacInfo
    watch_namespace: str | None  # None = every namespace
    watch_namespace_selector: str | None
    ingress_class: IngressClassInfo | None  # the IngressClass object the chart creates
    class_annotation: str  # --ingress-class value the binary uses
    controller_class: str
    watch_without_class: bool
    update_status: bool
    publish: PublishInfo
    service_name: str | None
    service_type: str | None
    replicas: int | None
    notes: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)

    @property
    def deployment(self) -> tuple[str, str]:
        """(namespace, name) of the controller Deployment."""
        return self.namespace, self.controller_fullname

    def summary(self) -> dict[str, Any]:
        """The module's return values."""
        return {
            "args": list(self.args),
            "image": self.image,
            "rbac_scope": self.rbac.scope,
            "rbac": self.rbac.as_dict(),
            "watch_namespace": self.watch_namespace,
            "watch_namespace_selector": self.watch_namespace_selector,
            "publish": self.publish.as_dict(),
            "ingress_class": {
                "resource": self.ingress_class.as_dict() if self.ingress_class else None,
                "annotation_value": self.class_annotation,
                "controller_class": self.controller_class,
                "watch_without_class": self.watch_without_class,
                "class_name_honoured": self.rbac.can_list_ingress_classes is not False,
            },
            "names": {
                "fullname": self.fullname,
                "deployment": self.controller_fullname,
                "service": self.service_name,
                "service_account": self.service_account,
                "election_id": self.election_id,
                "configmap": self.controller_fullname,
            },
            "notes": list(self.notes),
            "not_modelled": list(self.not_modelled),
            # What the release creates outside its namespace besides its IngressClass (one name per cluster).
            "cluster_objects": ["%s %s" % (kind, self.fullname) for kind in ("ClusterRole", "ClusterRoleBinding")
                                if kind in self.rbac.kinds],
        }
