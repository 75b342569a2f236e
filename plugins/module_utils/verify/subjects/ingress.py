# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An Ingress as a status subject: one subject, its status.loadBalancer addresses."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import INGRESS_SURFACE, Obj, SubjectKind, Surface


def _read(_kind: SubjectKind, obj: Obj) -> list[Surface]:
    return [Surface(key_of(obj), key_of(obj), status_addresses(obj), [])]


KIND = SubjectKind("Ingress", "networking.k8s.io/v1", "ingresses", _read, addressed=True, surface=INGRESS_SURFACE, bare=True,
                   empty_reason="status was empty")
