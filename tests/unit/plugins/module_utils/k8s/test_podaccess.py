from __future__ import annotations

import json

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import exec_outcome, handshake_status, status_message


def test_handshake_status_of_a_refused_exec() -> None:
    reason = "Handshake status 403 Forbidden -+-+- {'audit-id': 'x'} -+-+- b'{\"kind\":\"Status\"}'"
    assert handshake_status(reason) == 403
    assert handshake_status("Connection refused") is None


def test_status_message_prefers_the_status_message() -> None:
    body = json.dumps({"kind": "Status", "message": 'pods "c1" is forbidden: cannot create resource "pods/exec"'})
    assert status_message("b'" + body + "'") == 'pods "c1" is forbidden: cannot create resource "pods/exec"'
    assert status_message("404 page not found\n") == "404 page not found"


def test_exec_outcomes() -> None:
    assert exec_outcome('{"metadata":{},"status":"Success"}') == (0, "")
    failed = {"status": "Failure", "message": "command terminated with non-zero exit code: exit status 2",
              "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "2"}]}}
    assert exec_outcome(json.dumps(failed))[0] == 2
    no_file = {"status": "Failure", "message": 'exec: "/dbg": stat /dbg: no such file or directory: unknown'}
    assert exec_outcome(json.dumps(no_file)) == (None, 'exec: "/dbg": stat /dbg: no such file or directory: unknown')
    assert exec_outcome("")[0] is None
