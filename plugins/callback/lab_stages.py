# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a lab's build and verification spent their time: seconds per stage (role), printed at the end."""
from __future__ import annotations

DOCUMENTATION = r"""
name: lab_stages
type: aggregate
short_description: Print the seconds each stage of a run took, at its end
description:
  - Times every task and adds each one's seconds to its stage, the role it belongs to (C(kind_cluster), C(metallb),
    C(ingress_controllers), C(workloads), C(verify), ...), or to its play's own tasks. At the end of the run, whether
    it passed or failed, prints one line per stage in the order they first ran, and the total.
  - A task's seconds run from its start to the next task's start (or the end of the run), so waits, loops and
    background jobs count where they happen.
  - The repository's C(ansible.cfg) enables it for C(playbooks/lab.yml); elsewhere add C(kindlab.ingress.lab_stages) to
    C(callbacks_enabled).
version_added: 0.1.0
options:
  json_path:
    description:
      - Also write the stages as JSON to this file, for a benchmark or CI to read - C(stages), a list of C(stage) and
        C(seconds), and C(total).
    type: path
    env:
      - name: KINDLAB_STAGES_JSON
    ini:
      - section: kindlab_stages
        key: json_path
"""

import json
import time
from typing import Any

from ansible.plugins.callback import CallbackBase


class Stages:
    """Seconds per stage, in first-run order; a task's time runs until the next one starts."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.clock = clock
        self.seconds: dict[str, float] = {}
        self.current: str | None = None
        self.since = 0.0
        self.started = clock()

    def start(self, stage: str) -> None:
        self.stop()
        self.current, self.since = stage, self.clock()
        self.seconds.setdefault(stage, 0.0)

    def stop(self) -> None:
        if self.current is not None:
            self.seconds[self.current] += self.clock() - self.since
            self.current = None

    def table(self) -> dict[str, Any]:
        self.stop()
        return {"stages": [{"stage": stage, "seconds": round(s, 1)} for stage, s in self.seconds.items()],
                "total": round(self.clock() - self.started, 1)}


def stage_of(task: Any, play_name: str) -> str:
    """The role a task belongs to, or its play's own tasks."""
    role = getattr(task, "_role", None)
    if role is not None:
        return str(role.get_name(include_role_fqcn=False))
    return "%s (its own tasks)" % (play_name or "play")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "kindlab.ingress.lab_stages"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self.stages = Stages()
        self.play_name = ""

    def v2_playbook_on_play_start(self, play: Any) -> None:
        self.play_name = str(play.get_name()).strip()

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        self.stages.start(stage_of(task, self.play_name))

    def v2_playbook_on_handler_task_start(self, task: Any) -> None:
        self.stages.start(stage_of(task, self.play_name))

    def v2_playbook_on_stats(self, stats: Any) -> None:
        table = self.stages.table()
        width = max([len(row["stage"]) for row in table["stages"]] + [5])
        lines = ["", "STAGES (seconds) " + "*" * 40]
        lines += ["%s %7.1f" % (str(row["stage"]).ljust(width), row["seconds"]) for row in table["stages"]]
        lines.append("%s %7.1f" % ("total".ljust(width), table["total"]))
        self._display.display("\n".join(lines))
        path = self.get_option("json_path")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(table, handle, indent=2)
                handle.write("\n")
