#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: verify_compare
short_description: Compare two verify reports - a live cluster and its reproduction, or a scenario and its capture's rebuild
description:
  - Reads two C(report.json) files written by the C(verify) role (M(kindlab.ingress.verify_report)) and compares them
    check by check, so that "reproduced" is a checked claim.
  - With O(mode=symptoms) (a live cluster, verified with C(playbooks/verify-cluster.yml), against the lab built from
    its capture), what the incident is made of must be equal - the diagnosis's error findings (kind and subject) and
    which Ingresses and Gateways changed status during the watch. A live cluster has no lab pool and no expectations, so
    outcomes and expectations are not compared.
  - With O(mode=verdicts) (a scenario's run against the rebuild of its capture), the verdicts of the checks a capture
    reproduces (diagnose, addresses, status, backends, conflicts, gateways, routes) must be equal - the same subjects
    with the same outcome and the same expectation met. Diagnose rows are compared by count (their subjects are
    expectation regexes). Reachability is not captured, so it is never compared.
  - With O(anonymized=true) (one side built from an C(anonymize=true) capture) subjects are compared by count, not name.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  left:
    description: One report.json (the live cluster's, or the original scenario's).
    type: path
    required: true
  right:
    description: The other report.json (the reproduction's).
    type: path
    required: true
  mode:
    description: C(symptoms) or C(verdicts), as above.
    type: str
    choices: [symptoms, verdicts]
    default: symptoms
  anonymized:
    description: One side's names were rewritten by an anonymized capture; compare subjects by count.
    type: bool
    default: false
  fail_on_difference:
    description: Fail the task when a row differs (the rows are returned either way).
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: It only reads the two files.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Did the lab reproduce the live incident?
  kindlab.ingress.verify_compare:
    left: artifacts/live/verify/report.json
    right: artifacts/ingress-lab/verify/report.json
"""

RETURN = r"""
rows:
  description: One per check, with C(check), C(left) and C(right) (what each side had, as text) and C(same).
  returned: always
  type: list
  elements: dict
equal:
  description: Whether every row is the same.
  returned: always
  type: bool
differences:
  description: The checks that differ.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_compare


def main() -> None:
    KindlabModule(
        argument_spec={
            "left": {"type": "path", "required": True},
            "right": {"type": "path", "required": True},
            "mode": {"type": "str", "choices": ["symptoms", "verdicts"], "default": "symptoms"},
            "anonymized": {"type": "bool", "default": False},
            "fail_on_difference": {"type": "bool", "default": True},
        },
    ).run(run_verify_compare)


if __name__ == "__main__":
    main()
