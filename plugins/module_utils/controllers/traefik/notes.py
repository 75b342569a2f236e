# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik: the surprising effects of chart values, said in words (the module's `notes`)."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import INGRESS, NGINX
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.config import TraefikConfig


def notes_for(cfg: TraefikConfig) -> list[str]:
    v = cfg.values
    f = cfg.flags
    notes: list[str] = []
    if INGRESS in f:
        if INGRESS + ".ingressendpoint.publishedservice" in f:
            notes.append("the Ingress provider publishes %s (publishedService.enabled is true by default): it writes that "
                         "Service's address into every Ingress it claims, on every event, from every replica"
                         % f[INGRESS + ".ingressendpoint.publishedservice"])
        elif not any(k.startswith(INGRESS + ".ingressendpoint.") for k in f):
            notes.append("the Ingress provider has no ingressEndpoint: it writes no Ingress status")
        if not truthy(get_path(v, "providers.kubernetesIngress.ingressClass")):
            notes.append("providers.kubernetesIngress.ingressClass is unset: it claims every Ingress with no class and no "
                         "annotation, the annotation traefik, and every IngressClass with controller traefik.io/ingress-controller")
        if cfg.rbac_scope == "namespace":
            notes.append("rbac.namespaced: it watches only %s, and with disableClusterScopeResources it looks up no "
                         "IngressClass, so it never claims an Ingress that sets spec.ingressClassName" % cfg.namespace)
    if cfg.ingress_class and cfg.default_class:
        notes.append("IngressClass %s is the cluster default (ingressClass.isDefaultClass is true by default): Ingresses "
                     "created without a class get it, so Traefik serves them and writes their status" % cfg.ingress_class)
    if NGINX in f:
        who = "%s / %s" % (f.get(NGINX + ".ingressclass", "nginx"), f.get(NGINX + ".controllerclass", "k8s.io/ingress-nginx"))
        if NGINX + ".publishstatusaddress" in f or NGINX + ".publishservice" in f:
            notes.append("the ingress-nginx provider claims the Ingresses of class %s and publishes %s: while ingress-nginx "
                         "runs and publishes too, each overwrites the other's status.loadBalancer.ingress (Traefik's "
                         "migration guide: publish nothing from Traefik until cut-over, or point ingress-nginx's "
                         "controller.publishService.pathOverride at Traefik's Service, or use a transitional class)"
                         % (who, f.get(NGINX + ".publishstatusaddress") or f.get(NGINX + ".publishservice")))
        else:
            notes.append("the ingress-nginx provider serves the Ingresses of class %s but writes no status "
                         "(publishService.enabled is false and no publishStatusAddress)" % who)
    replicas = get_path(v, "deployment.replicas")
    if isinstance(replicas, int) and replicas > 1:
        notes.append("deployment.replicas=%d: there is no leader election, every replica writes Ingress status" % replicas)
    return notes
