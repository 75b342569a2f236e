# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An HTTPRoute as a status subject: one subject per status.parents entry; every parent its spec
names must have an entry that accepts it and resolves its backends. (Its precedence among routes
is route_conflicts.py's.)"""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import route_kind

# The verdict key and lab_expect check are `routes`: HTTPRoute was the first route kind watched.
KIND = route_kind("HTTPRoute", "routes")
