# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_capture's scenario: a cluster's ingress setup (a ClusterState, cluster.py) as a lab definition that
reproduces it, assembled from its parts, validated as the lab validates one, and rendered as the file.

Pure. Each controller a registered type recognises becomes a lab controller (controllers.py); each Ingress
becomes a stand-in workload with the same name, class, host, paths and the annotations that decide claiming
and routing, backed by a Service of the same name (stand_ins.py); the Gateway API setup is kept as the lab
builds it (gateways.py); lab_expect holds what the diagnosis finds now (expectations.py). Everything the lab
cannot express is said, in the result (`unexpressed`) and in the file (comments and lab_capture_report).
With anonymize, names, namespaces and hosts are replaced (anonymize.py). Secrets, ConfigMap data and tokens
are never read into the file: only Ingress, Service, workload, RBAC and IngressClass objects are, and a
type's secret flags are dropped from its args.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.anonymize import anonymize_lab
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.controllers import capture_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.expectations import expectations, expected_conflicts
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.gateways import capture_gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.stand_ins import capture_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import ControllerError, parse_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import type_of_class
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import controllers as discovery
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import GatewayError, parse_gateways
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_namespaces, parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import VerifyError, validate_expect

Obj = dict[str, Any]


class CaptureError(OptionError):
    """The capture cannot be written as asked; the message names the option or the object."""


@dataclass
class Capture:
    """A lab definition read from a cluster, and what it could not express."""

    lab: Obj
    unexpressed: list[str] = field(default_factory=list)
    # Each captured controller: the cluster's workload, the lab's release, the effective args both
    # run with, and where they differ (the lab's rule of no admission webhook, for one).
    controllers: list[Obj] = field(default_factory=list)


def capture(state: ClusterState, scenario: str = "captured", anonymize: bool = False,
            observed: dict[str, int] | None = None) -> Capture:
    """The lab definition for STATE (everything it needs listed: see read_cluster); OBSERVED: the
    status changes per Ingress a watch of the cluster saw (watch_status), if one ran. Pure."""
    found = discovery.find_workloads(state)
    controllers, records, notes = capture_controllers(state, found)
    for ic in sorted(state.ingress_classes, key=lambda c: str(meta(c).get("name"))):
        value = str((ic.get("spec") or {}).get("controller") or "")
        if type_of_class(value) == "unknown":
            notes.append("IngressClass %s: its controller %s is of no type the collection knows; its Ingresses are "
                         "reproduced, its controller is not" % (meta(ic).get("name"), value))
    workloads, ingress_names, more = capture_ingresses(state)
    notes += more
    gateway_api = bool(state.gateway_api and (state.gateway_classes or state.gateways or state.http_routes))
    lab_gateways: Obj = {}
    if gateway_api:
        lab_gateways, more = capture_gateway_api(state, workloads)
        notes += more
    diagnosis = diagnose.analyse(state)
    releases = {}
    for rec in records:
        for c in diagnosis["controllers"]:
            if c["controller"].split("@")[0] == rec["workload"]:
                releases[c["controller"]] = rec["release"]
    expect, more = expectations(diagnosis, ingress_names, releases, observed)
    notes += more
    conflicts = expected_conflicts(state, ingress_names)
    if conflicts:
        expect["conflicts"] = {"expected": conflicts}
    namespaces = sorted({c["namespace"] for c in controllers} | {w["namespace"] for w in workloads}
                        | {g["namespace"] for g in lab_gateways.get("gateways") or []})
    lab: Obj = {"lab_scenario": scenario, "lab_namespaces": namespaces, "lab_controllers": controllers,
                "lab_workloads": workloads, "lab_expect": expect, "lab_capture_report": notes}
    if gateway_api:
        lab.update(lab_gateway_api=True, lab_gateways=lab_gateways)
    result = Capture(lab=lab, unexpressed=notes, controllers=records)
    if anonymize:
        result.lab, result.controllers = anonymize_lab(lab, state, records)
        result.unexpressed = list(result.lab["lab_capture_report"])
    return result


def check(lab: Obj) -> None:
    """Validate the parts of the captured definition the lab validates (lab_definition does the rest
    with the inventory's cluster and pools): a CaptureError names the field."""
    try:
        ns_list, _labels = parse_namespaces(lab["lab_namespaces"], {})
        parse_controllers(lab["lab_controllers"])
        parse_workloads(lab["lab_workloads"], where="lab_workloads")
        parse_gateways(lab.get("lab_gateways"))
        validate_expect(lab["lab_expect"])
    except (ControllerError, WorkloadError, VerifyError, GatewayError) as exc:
        raise CaptureError("the captured definition does not validate (a bug to report, with the cluster's objects): %s"
                           % exc) from None
    for where in ("lab_controllers", "lab_workloads"):
        for i, item in enumerate(lab[where]):
            if item["namespace"] not in ns_list:
                raise CaptureError("%s[%d].namespace: %r is not in lab_namespaces" % (where, i, item["namespace"]))


def render(result: Capture, source: str) -> str:
    """The file: a header saying where it came from and what it could not express, then the definition."""
    lines = ["---", "# Captured by kindlab.ingress.lab_capture from %s (read-only)." % source,
             "# Reproduce: ansible-playbook playbooks/lab.yml -e @<this file>",
             "# Not expressed by this definition (also in lab_capture_report):"]
    lines += ["#   - %s" % note for note in result.unexpressed] or ["#   (nothing)"]
    body = str(yaml.safe_dump(result.lab, default_flow_style=False, sort_keys=False, width=120))
    return "\n".join(lines) + "\n" + body
