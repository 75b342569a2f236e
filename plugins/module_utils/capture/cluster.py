# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lab_capture reads of a cluster, read-only: the objects the capture needs, as ingress_diagnose reads
them (no Secret or ConfigMap), and with `watch` how often each Ingress's status changed while
ingress_status's watch ran. A team's manifests are read here too, through a client that answers from them
(manifests.py)."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.scenario import CaptureError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import snapshot
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import parse_selection


def read_cluster(client: Any, namespaces: list[str]) -> ClusterState:
    """Everything the capture reads, as ingress_diagnose reads it; the Ingresses of NAMESPACES
    (all when empty). No Secret or ConfigMap is read."""
    try:
        selection = parse_selection(namespaces, [], None)
    except OptionError as exc:
        raise CaptureError(str(exc)) from None
    return snapshot.read_gateway_api(client, snapshot.read_state(client, selection))


def watch_status(client: Any, namespaces: list[str], seconds: float) -> dict[str, int]:
    """Ingress → how many times its status changed while ingress_status watched it for SECONDS
    (read-only; no writer attribution: only the counts go into the capture)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status import options as _options
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status import run as _run

    result = _run.run(client, parse_selection(namespaces, [], None), _options.Options(window=seconds, max_changes=1000000,
                                                                                      attribute=False, gateway_api=False))
    return {ref: int(item.get("changes") or 0) for ref, item in (result.get("ingresses") or {}).items()}
