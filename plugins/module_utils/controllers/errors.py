# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller layer's one error, below base.py and dataplane_reader.py so that both can raise it (base.py
declares each type's data-plane reader, so it imports dataplane_reader.py, never the other way round)."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError


class ControllerError(KindlabError):
    """The request cannot be carried out; the message is for the user."""
