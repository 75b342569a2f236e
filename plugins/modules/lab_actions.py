#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: lab_actions
short_description: Change the lab at set times while it is watched (a rollout, a scale, a restart, a frozen controller)
description:
  - Carries out a scenario's timed actions (C(lab_actions)) in order of their C(at) (see O(actions)), seconds after the task starts.
    The verify role starts it in the background (C(async), C(poll 0)) just before the status watch and the continuous
    probes, so that what the actions break is seen while it happens.
  - Every action is validated before the first one runs; an error names the field (for example
    C(lab_actions[2].scale)) and what was expected.
  - One failing action does not stop the ones after it. Each result has its start and end times, whether it worked,
    and what it did (the pod IPs before and after a rollout, the pods deleted, the processes stopped).
  - "Test machinery: C(freeze_sync) stops a controller's syncing while its proxy keeps serving (for ingress-nginx,
    SIGSTOP to the C(/nginx-ingress-controller) process, not to nginx), and C(resume_sync) lets it go on. Nothing in
    a real cluster does this on purpose; it stands for a controller that stopped updating its endpoints (memory
    pressure, a stuck informer). A stopped controller answers no health probe: it is refused unless the controller's
    liveness and readiness probes tolerate at least 600 s of failures (chart values C(controller.livenessProbe) and
    C(controller.readinessProbe) for ingress-nginx), and a type whose proxy and sync are one process (Traefik) is refused."
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  actions:
    description:
      - The actions. Each has C(at) and exactly one of the keys C(rollout), C(scale), C(restart_controller),
        C(delete_pods), C(apply), C(delete), C(freeze_sync), C(resume_sync).
      - C(rollout) C(namespace/deployment) - a new pod template annotation (what C(kubectl rollout restart) does), so new
        pods with new IPs; with C(wait) it ends when the rollout is done.
      - C(scale) C(namespace/deployment) with C(replicas).
      - C(restart_controller) C(namespace) (or C(namespace/workload) where several controllers share it) - deletes the
        controller's Running pods; with C(wait) it ends when its workload is ready again.
      - C(delete_pods) C(namespace) with C(selector), a label selector.
      - C(apply) a whole object (server-side apply); C(delete) an object named by C(apiVersion), C(kind), C(metadata).
      - C(freeze_sync) and C(resume_sync) C(namespace) (or C(namespace/workload)) - see the description.
      - Besides, C(at) (seconds from 0 to 3600, required), C(name) (for the report), C(wait) (default true) and
        C(timeout) (seconds, default 120).
    type: list
    elements: dict
    required: true
  fail_on_error:
    description: Fail the task when an action fails (after all of them ran). The verify role sets it false and judges.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.cluster
attributes:
  check_mode:
    support: full
    details: In check mode the actions are validated and listed with their times; nothing is done.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: The seed's outage - the controller stops syncing, then the app ships
  kindlab.ingress.lab_actions:
    kubeconfig: "{{ lab_kubeconfig }}"
    actions:
      - {at: 5, freeze_sync: one}
      - {at: 10, rollout: one/shop}
      - {at: 60, restart_controller: one, name: the on-call restarts the controller}
  async: 300
  poll: 0
  register: actions_job

- name: Scale down and delete the app's pods by label
  kindlab.ingress.lab_actions:
    actions:
      - {at: 0, scale: one/shop, replicas: 1}
      - {at: 20, delete_pods: one, selector: app.kubernetes.io/name=shop}
"""

RETURN = r"""
actions:
  description:
    - One per action, in the order they ran - C(name), C(kind), C(target), C(at) (as asked), C(offset) (seconds after
      the task started when it started), C(late) (how much after C(at)), C(started) and C(ended) (ISO-8601 UTC),
      C(ok), C(error) (why it failed, or null), C(detail) (what it did) and C(machinery) (test machinery, not an event of a real cluster).
    - C(rollout) and C(scale) add C(before) and C(after), the Deployment's pod IPs before the change and once it is done.
    - In check mode C(name), C(kind), C(target), C(at) and C(machinery) only.
  returned: always
  type: list
  elements: dict
failed_actions:
  description: How many actions failed.
  returned: always
  type: int
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.runner import run_lab_actions


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            actions={"type": "list", "elements": "dict", "required": True},
            fail_on_error={"type": "bool", "default": True},
        ),
    ).run(run_lab_actions)


if __name__ == "__main__":
    main()
