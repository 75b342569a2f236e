# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Markdown as the reports write it (verify's summary.md, the migration rehearsal's part of it)."""
from __future__ import annotations

from typing import Any


def cell(text: Any) -> str:
    """TEXT (any value, as str() gives it) in one cell of a Markdown table."""
    return str(text).replace("|", "\\|").replace("\n", " ")
