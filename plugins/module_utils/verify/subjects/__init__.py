# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status subjects the status watch follows: one table of kinds (KINDS), each kind's rules in
a file of its own beside this one, its record in kind.py. status, writers, timeline, report,
report_html and compare iterate the table and read a kind's fields; none tests which kind it has.
Adding a kind is one entry here and its own file.

Each kind has a watch of its own (one list, then one watch stream at a time). The bare kind
(Ingress) must be served; the others are watched only where the cluster serves them. Pure.
"""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import gateway, grpcroute, httproute, ingress
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind

INGRESS = ingress.KIND
GATEWAY = gateway.KIND
HTTPROUTE = httproute.KIND
KINDS: tuple[SubjectKind, ...] = (INGRESS, GATEWAY, HTTPROUTE, grpcroute.KIND)
# The kinds watched beside the Ingresses (where the cluster serves them), in the table's order.
WATCHED = tuple(k for k in KINDS if not k.bare)
# Their result keys, which are also the report's checks: gateways, routes, grpcroutes.
WATCHED_KEYS = tuple(k.result_key for k in WATCHED)


def kind_named(name: str) -> SubjectKind | None:
    """The table's kind of that name (a timeline entry's `kind`), None for one it does not hold."""
    return next((k for k in KINDS if k.kind == name), None)
