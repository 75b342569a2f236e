# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to change on a target so that a behaviour ingress-nginx had is kept: one table per target type.

A behaviour is a group of differences with one responsible and one cause (migration/summary.behaviours). Each
target type's table (a file beside this one, registered in TABLES) looks at a behaviour and at the target's
own objects (the Ingresses it serves, the HTTPRoutes and Gateways it routes by) and proposes a Fix: the objects
as they must be after it, with what it does in words; or says plainly that no setting of that target reproduces
the behaviour, and why; or has nothing to say (None). Tables only propose: migration/prove.py applies a fix in
the rehearsal cluster, replays, and keeps it only when every request of its behaviour answers as ingress-nginx
did and no other request changed.
"""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import (
    gateway_api, traefik_ingress_provider, traefik_nginx_provider)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Table

# Adding a target type's table is one file beside this one and one entry here.
TABLES: dict[str, Table] = {t.NAME: t.propose for t in (gateway_api, traefik_nginx_provider, traefik_ingress_provider)}
# The tables whose fixes make Traefik Middlewares (their target's Traefik runs its kubernetesCRD provider).
MAKES_MIDDLEWARES = {traefik_ingress_provider.NAME}
# The targets that read an Ingress's class by the class annotation only (migration/rehearsal_lab.py, _class_by_annotation):
# their migrated Ingresses keep naming it so, as they were proven.
CLASS_BY_ANNOTATION = {traefik_ingress_provider.NAME}


def table_for(target: str, gateway: bool) -> Table | None:
    """The table of a target named after its type (a rehearsal's targets are), else Gateway API's for any target
    that routes by a Gateway's HTTPRoutes (own-routes too); None when its type has none."""
    if target in TABLES:
        return TABLES[target]
    return TABLES[gateway_api.NAME] if gateway else None
