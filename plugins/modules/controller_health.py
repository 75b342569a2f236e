#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: controller_health
short_description: Tell whether each ingress controller started, and if not, why
description:
  - For each controller of a lab definition (as in C(lab_controllers)), reads its Deployment and reports whether
    it is ready. One that is neither ready nor failing yet (starting, or between two runs of a crash loop) is read
    again every 2 seconds for up to O(settle_timeout) seconds.
  - "A controller whose pod will not start (a container in C(CrashLoopBackOff), C(ImagePullBackOff), C(ErrImagePull),
    C(CreateContainerConfigError), C(CreateContainerError), C(InvalidImageName) or C(RunContainerError)) is reported
    with the kubelet's reason, the exit code of its last run and the last lines of its log, for example
    C(cannot start: pod two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q container controller: CrashLoopBackOff
    (...), last exit code 255 (Error), 3 restarts; last log lines: F1123 ... no service with name missing found in namespace two)."
  - The C(verify) role runs it so that a scenario can assert that a controller did not start, and why
    (C(lab_expect.controllers.failing)).
  - Read-only; never changes the cluster.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  controllers:
    description:
      - The controllers, each a mapping with C(namespace), C(type), C(release) and C(values) (and optionally C(scope),
        C(publish_service), C(ingress_class)), validated as M(kindlab.ingress.lab_definition) does. The values give
        the name of the controller's Deployment.
    type: list
    elements: raw
    required: true
  log_lines:
    description: How many of the last log lines of a failing container to return.
    type: int
    default: 10
  settle_timeout:
    description:
      - Seconds to keep reading a controller that is neither ready nor failing yet; V(0) reads each controller once.
    type: int
    default: 30
  fail_on_violation:
    description: Fail when a controller is not ready. The C(verify) role sets it to false and judges the result itself.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
"""

EXAMPLES = r"""
- name: Did every lab controller start?
  kindlab.ingress.controller_health:
    kubeconfig: "{{ lab_kubeconfig }}"
    controllers: "{{ lab_controllers }}"
    fail_on_violation: false
  register: health
"""

RETURN = r"""
controllers:
  description:
    - By C(namespace/release), whether the controller started (C(passed)), why (C(reason)), its C(deployment)
      (C(namespace/name)), and for a pod that will not start the C(failure) (C(pod), C(container), C(reason),
      C(message), C(restarts), C(exit_code), C(terminated_reason), C(log)), else null.
  returned: success
  type: dict
  sample: {"one/ingress": {"passed": true, "reason": "started: Deployment one/ingress-ingress-nginx-controller 1/1 ready, 1 updated,
           1 available", "deployment": "one/ingress-ingress-nginx-controller", "failure": null}}
passed:
  description: Whether every controller started.
  returned: success
  type: bool
failures:
  description: One line per controller that did not start.
  returned: success
  type: list
  elements: str
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.runner import run_controller_health
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            controllers={"type": "list", "elements": "raw", "required": True},
            log_lines={"type": "int", "default": 10},
            settle_timeout={"type": "int", "default": 30},
            fail_on_violation={"type": "bool", "default": True},
        ),
    ).run(run_controller_health)


if __name__ == "__main__":
    main()
