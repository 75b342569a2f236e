# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik: the effective configuration chart.py computes from chart values (TraefikConfig), in a module of
its own so that chart.py, notes.py and manifests.py all import it downward."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import trunc63
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import CONTROLLER_VALUE, INGRESS, NGINX

Values = dict[str, Any]


@dataclass
class TraefikConfig:
    release: str
    namespace: str
    values: Values
    user_values: Values
    fullname: str
    image: str
    args: list[str]  # the Ingress providers' args, then additionalArguments (the rest are the chart's own)
    flags: dict[str, str]
    ingress_class: str | None  # the IngressClass the chart creates (controller traefik.io/ingress-controller)
    default_class: bool
    rbac_scope: str  # cluster | namespace | none
    service_type: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def deployment(self) -> tuple[str, str]:
        return self.namespace, self.fullname

    @property
    def cluster_role_name(self) -> str:
        """rbac/clusterrole.yaml traefik.clusterRoleName: <fullname>-<namespace> (its binding too)."""
        return trunc63("%s-%s" % (self.fullname, self.namespace))

    def summary(self) -> dict[str, Any]:
        return {
            "args": list(self.args), "image": self.image, "rbac_scope": self.rbac_scope,
            "ingress_class": {"resource": ({"name": self.ingress_class, "controller_value": CONTROLLER_VALUE,
                                            "default": self.default_class} if self.ingress_class else None)},
            "names": {"fullname": self.fullname, "deployment": self.fullname,
                      "service": self.fullname if self.service_type else None},
            "watch_namespace": self.namespace if self.rbac_scope == "namespace" else None,
            "publish": {"source": "service" if INGRESS + ".ingressendpoint.publishedservice" in self.flags else "none",
                        "service": self.flags.get(INGRESS + ".ingressendpoint.publishedservice"),
                        "ingress_nginx_provider": self.flags.get(NGINX + ".publishservice")},
            "cluster_objects": ["%s %s" % (kind, self.cluster_role_name)
                                for kind in ("ClusterRole", "ClusterRoleBinding") if self.rbac_scope == "cluster"],
            "notes": list(self.notes),
        }
