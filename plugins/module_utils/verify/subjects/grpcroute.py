# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A GRPCRoute as a status subject (gateway.networking.k8s.io/v1, in the standard channel the lab
pins): one subject per status.parents entry, judged as an HTTPRoute is: every parent its spec
names must have an entry that accepts it (Accepted=True) and resolves its backends
(ResolvedRefs=True). The spec gives a GRPCRoute no condition of its own beyond those."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import ROUTE_NEEDS, route_kind

KIND = route_kind("GRPCRoute", "grpcroutes", needs=ROUTE_NEEDS)
