# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_capture's flow: a live cluster (read by capture/cluster.py, captured by capture/scenario.py) or a
team's manifests (capture/manifests.py) captured, rendered with its header, written when it changed, and
compared with an earlier capture (capture/round_trip.py). Above both, so that neither imports the other back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._files import write_if_changed
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.cluster import read_cluster, watch_status
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.round_trip import round_trip_differences
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.scenario import CaptureError, capture, check, render
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.manifests import capture_manifests

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


def run_lab_capture(params: Params, module: Module) -> dict[str, Any]:
    """The lab_capture module."""
    scenario = params["scenario"]
    if not is_dns1123_label(scenario):
        raise CaptureError("scenario: expected a lower-case DNS label (it names the scenario), got %r" % (scenario,))
    watch = params.get("watch") or 0
    if isinstance(watch, bool) or not isinstance(watch, (int, float)) or watch < 0:
        raise CaptureError("watch: expected seconds >= 0 (0: no watch), got %r" % (watch,))
    if params.get("manifests"):
        if watch:
            raise CaptureError("watch: manifests have no status to watch (give one of watch and manifests)")
        result = capture_manifests(params["manifests"], params["namespaces"] or [], scenario, params["anonymize"])
        source = "an anonymized set of manifests" if params["anonymize"] else "the manifests %s" % params["manifests"]
    else:
        client = module.client()
        state = read_cluster(client, params["namespaces"] or [])
        observed = watch_status(client, params["namespaces"] or [], float(watch)) if watch else None
        result = capture(state, scenario, params["anonymize"], observed)
        check(result.lab)
        source = "an anonymized cluster" if params["anonymize"] else (client.where() if hasattr(client, "where") else "the cluster")
    text = render(result, source)
    dest = params["dest"]
    out: dict[str, Any] = {}
    if params.get("compare_with"):
        try:
            with open(params["compare_with"], encoding="utf-8") as handle:
                first = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError) as exc:
            raise CaptureError("compare_with: cannot read %s (%s)" % (params["compare_with"], exc)) from None
        if not isinstance(first, dict) or "lab_workloads" not in first:
            raise CaptureError("compare_with: %s is not a lab definition lab_capture wrote (no lab_workloads)" % params["compare_with"])
        differences = round_trip_differences(first, result.lab, params["namespaces"] or [])
        out["round_trip"] = {"equal": not differences, "differences": differences}
    changed, before = write_if_changed(dest, text, module.check_mode)
    return dict(out, changed=changed, dest=dest, lab=result.lab, unexpressed=result.unexpressed,
                controllers=result.controllers, diff={"before": before, "after": text})
