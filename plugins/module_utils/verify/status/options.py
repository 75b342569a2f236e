# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress_status's options (the window, how many changes a subject may make, empty statuses, the
expected pools, when to stop, attribution, Gateway API), validated before any request."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import Pool, PoolError, parse_entry


class StatusError(OptionError):
    """An option is invalid; the message names it."""


@dataclass(frozen=True)
class Options:
    window: float = 60.0
    max_changes: int = 0
    allow_empty: bool = False
    pools: Pool | None = None
    stop_on_violation: bool = False
    attribute: bool = True
    gateway_api: bool = True  # also watch the Gateway API kinds (subjects.WATCHED) where the cluster serves them


def parse_options(window: Any, max_changes: Any, allow_empty: bool, expected_pools: Any,
                  stop_on_violation: bool, attribute: bool, gateway_api: bool = True) -> Options:
    """Validate every option before any request."""
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not math.isfinite(window) or window <= 0:
        raise StatusError("window: expected a number of seconds > 0, got %r" % (window,))
    if isinstance(max_changes, bool) or not isinstance(max_changes, int) or max_changes < 0:
        raise StatusError("max_changes: expected an integer >= 0, got %r" % (max_changes,))
    pools = None
    if expected_pools:
        if not isinstance(expected_pools, list):
            raise StatusError("expected_pools: expected a list of CIDRs (100.64.0.0/16) or ranges (a-b), got %r" % (expected_pools,))
        ranges = []
        for i, entry in enumerate(expected_pools):
            try:
                ranges.append(parse_entry("expected_pools", entry))
            except PoolError as exc:
                raise StatusError("expected_pools[%d]: %s" % (i, str(exc).split(": ", 1)[-1])) from None
        pools = Pool("expected_pools", tuple(ranges))
    return Options(float(window), max_changes, bool(allow_empty), pools, bool(stop_on_violation), bool(attribute), bool(gateway_api))
