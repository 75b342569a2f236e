#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: verify_report
short_description: Judge verification results against a scenario's expectations and write the report
description:
  - Takes the registered results of the verification modules (M(kindlab.ingress.controller_health), M(kindlab.ingress.ingress_diagnose),
    M(kindlab.ingress.ingress_status), M(kindlab.ingress.ingress_backends), M(kindlab.ingress.ingress_conflicts),
    M(kindlab.ingress.http_probe)) and the scenario's expectations, and returns one verdict per checked subject.
  - An expectation lists the subjects that must fail, each with a regular expression their reason must match;
    every other subject must pass. An expected failure is thus asserted as that failure.
  - Writes C(report.json) (verdicts and every raw result) and C(summary.md) (a table of verdicts, the diagnosis
    and the status timeline, whose writer column names the controller pod and the field manager of each change)
    to O(output_dir).
  - Writes C(report.html) beside them, a self-contained page (no network fetches) with the verdict table and, per
    Ingress, a drawing of its status address over the watch window coloured by the controller pod that wrote it,
    next to the diagnosis findings and fixes that explain it.
  - Where the status watch covered Gateway API, both C(summary.md) and C(report.html) show each Gateway (addresses
    seen, conditions, changes and writers) and each HTTPRoute parent entry (conditions, changes, writers) beside the
    Ingresses, and the timeline has an axis per Gateway and route that changed.
  - Never fails because of a verdict; the C(verify) role fails at the end when RV(unmet) is not empty.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  scenario:
    description: Name of the scenario, for the report.
    type: str
    default: default
  backend:
    description: The lab backend (kind or twin), for the report.
    type: str
    default: unknown
  results:
    description:
      - Module results by check name (C(controllers), C(diagnose), C(status), C(backends), C(conflicts), and C(reachability)
        as a list).
      - The C(addresses) verdicts come from the C(status) result (the addresses each Ingress showed during the watch).
      - The C(gateways) and C(routes) verdicts come from the C(status) result too, where it watched Gateway API (its
        C(gateways) and C(routes)); every Gateway and HTTPRoute it watched must pass unless C(expect) names it.
      - C(migration) is M(kindlab.ingress.ingress_migration)'s result (or its failure, which becomes one unmet verdict
        while the rest of the report is still written), judged against C(expect.migration) (C(expected) differences and
        C(same) answers); its section in summary.md and report.html lists each request that differs with its cause.
        With C(expect.migration.report_only=true) (a rehearsal of a captured cluster) every difference is reported and
        none fails a verdict; the rehearsal must still run and its baseline serve part of the requests.
    type: dict
    required: true
  expect:
    description:
      - "The scenario's expectations by check name: C(controllers.failing) (namespace/release of a controller expected
        not to start, to a regex its failure must match: the kubelet's reason, exit code and last log lines),
        C(addresses.failing) (namespace/name of an Ingress expected to get no status address during the watch, to a regex
        over C(no address during the watch window)), C(status.failing) (plus C(settle), C(window), C(max_changes),
        C(pools), C(allow_empty) for the role), C(gateways.failing) (namespace/name of a Gateway expected to fail the
        status watch - no address, outside the pools, more than C(status.max_changes) changes - to a reason regex),
        C(routes.failing) (namespace/name of an HTTPRoute expected not to be C(Accepted) and C(ResolvedRefs) by every
        parent it names, or to change too often, to a reason regex such as C(NotAllowedByListeners)) and
        C(backends.failing) (namespace/name to a reason regex),
        C(diagnose.findings) (each C(kind) plus optional C(ingress), C(culprit) and C(reason) regexes; an expected finding
        may be of any severity, and an unexpected one fails the check only when it is an error),
        C(conflicts.expected) (each C(ingresses): two namespace/name), C(reachability) (the probes, each with optional
        C(failing) reason regex, C(backends) list, C(min_backends) and C(max_backends); with C(rate), C(duration) and C(max_failures) a
        continuous probe, judged by its failed requests against C(max_failures), default 0)."
    type: dict
    default: {}
  output_dir:
    description: Directory for C(report.json), C(summary.md) and C(report.html); created if missing.
    type: path
    required: true
  not_reproduced:
    description:
      - What the lab does not reproduce of the cluster it was captured from (a captured scenario's
        C(lab_capture_report), written by M(kindlab.ingress.lab_capture)), one sentence each. The report lists it
        (C(not_reproduced) in C(report.json), a section of C(summary.md)), so a reproduction never looks more complete
        than it is.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: In check mode the verdicts are computed and nothing is written.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Judge the checks of the puzzle scenario
  kindlab.ingress.verify_report:
    scenario: puzzle
    backend: twin
    results:
      diagnose: "{{ verify_diagnose }}"
      status: "{{ verify_status }}"
    expect:
      status:
        failing:
          one/test: "changes"
          three/test: "changes"
    output_dir: artifacts/ingress-lab/verify
  register: verify_verdicts
"""

RETURN = r"""
verdicts:
  description: One verdict per checked subject.
  returned: always
  type: list
  elements: dict
  sample: [{"check": "status", "subject": "one/test", "expected": "fail: changes", "observed": "fail: 4 changes in 10s (max 0)",
            "met": true}]
unmet:
  description: The verdicts whose expectation was not met.
  returned: always
  type: list
  elements: dict
passed:
  description: Whether every expectation was met.
  returned: always
  type: bool
files:
  description: The report files written (or that would be written).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report


def main() -> None:
    KindlabModule(
        argument_spec={
            "scenario": {"type": "str", "default": "default"},
            "backend": {"type": "str", "default": "unknown"},
            "results": {"type": "dict", "required": True},
            "expect": {"type": "dict", "default": {}},
            "output_dir": {"type": "path", "required": True},
            "not_reproduced": {"type": "list", "elements": "str", "default": []},
        },
    ).run(run_verify_report)


if __name__ == "__main__":
    main()
