# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixes for Traefik's own Ingress provider (what changing only the class gives): for now, what no setting of it can
keep (common.traefik_limits); its router annotations and Middlewares are not proposed yet."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import traefik_limits

NAME = "traefik-ingress-provider"


def propose(b: Behaviour, _objects: Objects) -> Fix | None:
    return traefik_limits(b, NAME)
