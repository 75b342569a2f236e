# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a read inside a pod returns (an exec; a GET through the API server's pod proxy, answered as any
request the lab sends: transport/request.py's Answer), as plain values, and the pure helpers that turn the kubernetes client's answers into them, so
the readers of each controller type never see the client's exceptions."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer


@dataclass(frozen=True)
class ExecResult:
    """A command run in a container. `refused` is the HTTP status of an exec the API server
    refused (403: RBAC); `rc` None when the command did not run or did not end; `error` says why."""

    rc: int | None
    stdout: str = ""
    stderr: str = ""
    refused: int | None = None
    error: str = ""


_HANDSHAKE = re.compile(r"Handshake status (\d{3})")


def handshake_status(reason: str) -> int | None:
    """The HTTP status of a refused websocket upgrade, from the client's ApiException(status=0)
    reason ("Handshake status 403 Forbidden ..."); None when the text carries none."""
    m = _HANDSHAKE.search(reason or "")
    return int(m.group(1)) if m else None


def status_message(text: str) -> str:
    """The `message` of a Kubernetes Status in TEXT (the body of a refusal), else TEXT's first line."""
    start = text.find("{")
    if start >= 0:
        try:
            data = json.loads(text[start:text.rfind("}") + 1])
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("message"):
            return str(data["message"])
    return (text.strip().splitlines() or [""])[0][:300]


def exec_outcome(error_channel: str) -> tuple[int | None, str]:
    """(exit code, error) from an exec's error channel, a Status: Success is 0; a non-zero
    exit carries its code in details.causes (reason ExitCode); a command that could not start
    (no such file) has no code, only a message. Empty: the stream ended without a status."""
    if not error_channel.strip():
        return None, "the exec stream ended without an exit status"
    try:
        status = json.loads(error_channel)
    except ValueError:
        return None, error_channel.strip()[:300]
    if not isinstance(status, dict):
        return None, str(status)[:300]
    if status.get("status") == "Success":
        return 0, ""
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message")), str(status.get("message") or "")
            except (TypeError, ValueError):
                break
    return None, str(status.get("message") or status.get("reason") or "exec failed")


class ClientPodAccess:
    """One pod through the Client (a controllers.dataplane_reader.PodAccess): exec and the pod proxy, bounded by TIMEOUT seconds."""

    def __init__(self, client: Any, namespace: str, name: str, timeout: float) -> None:
        self.client, self.namespace, self.name, self.timeout = client, namespace, name, timeout

    def exec(self, container: str, command: list[str]) -> ExecResult:
        result: ExecResult = self.client.pod_exec(self.namespace, self.name, container, command, self.timeout)
        return result

    def get(self, port: int, path: str, query: tuple[tuple[str, str], ...] = ()) -> Answer:
        answer: Answer = self.client.pod_proxy_get(self.namespace, self.name, port, path, query, self.timeout)
        return answer
