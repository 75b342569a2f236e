# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Gateway as a status subject: one subject, its status.addresses, its conditions and each
listener's (with attachedRoutes)."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import GATEWAY_SURFACE, Obj, SubjectKind, Surface


def _read(kind: SubjectKind, obj: Obj) -> list[Surface]:
    addresses, conditions = gateway_api.gateway_status(obj)
    return [Surface(kind.subject_of(key_of(obj)), key_of(obj), addresses, conditions)]


KIND = SubjectKind("Gateway", gateway_api.API_VERSION, "gateways", _read, addressed=True, surface=GATEWAY_SURFACE)
