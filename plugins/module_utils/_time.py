# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Times in results and reports, in one format: ISO-8601 in UTC with milliseconds and a Z
(2024-07-08T19:29:48.123Z), so every row of a timeline sorts and reads alike; and the one reader
of the times Kubernetes and these results write (Z or an offset; a naive time is read as UTC).
"""
from __future__ import annotations

import datetime as dt
from typing import Any


def iso(when: dt.datetime | float) -> str:
    """WHEN (an aware datetime, or seconds since the epoch) as 2024-07-08T19:29:48.123Z."""
    if not isinstance(when, dt.datetime):
        when = dt.datetime.fromtimestamp(when, dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(value: Any) -> dt.datetime | None:
    """An aware datetime from an ISO-8601 string, or None for anything else (empty, not a time)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
