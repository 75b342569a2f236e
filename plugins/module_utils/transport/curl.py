# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one curl-line builder: curl's options for a Request, in the two forms the lab uses.

- MARKED, read by a program (node.py runs it in a kind node, once or in a loop): the body on stdout, then
  MARK and the status code, bounded by `--max-time`; HEAD as `--head` (curl would wait for a body after
  `-X HEAD`).
- SHOWN, run by a person (the rehearsal's curl pairs, `curl_line`): the status line, headers and body
  (`-i`); a body is written as that many zero bytes (its size is what a rule reads, not its content).

Both carry the Host header, the method, `-k` over TLS (the lab's certificates are self-signed), the
request's connect-to entries and headers, and `--path-as-is` for a raw request. Each form keeps the order
of options its lines have always had (MARKED: Host, then the method; SHOWN: the method, then Host).
"""
from __future__ import annotations

import shlex

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Request

# Written after the body by --write-out, so that status and body come from one stdout.
MARK = "\n__kindlab_probe_status__:"
MARKED = "marked"
SHOWN = "shown"


def curl_options(request: Request, form: str = MARKED) -> list[str]:
    """curl's options for REQUEST (all but the URL) in FORM. A body goes only into a SHOWN line
    (`curl_line`): MARKED options are run with no stdin to read one from."""
    host = ["-H", "Host: %s" % request.host]
    rest = (["-k"] if request.tls else []) + [a for rule in request.connect_to for a in ("--connect-to", rule.entry())]
    rest += [a for name, value in request.headers for a in ("-H", "%s: %s" % (name, value))]
    as_is = ["--path-as-is"] if request.raw else []
    if form == SHOWN:
        return ["-sS", "-i"] + as_is + ["-X", request.method] + host + rest
    if form != MARKED:
        raise ValueError("form: expected %r or %r, got %r" % (MARKED, SHOWN, form))
    if request.body:
        raise ValueError("a request body is not sent by a marked curl (%d bytes)" % len(request.body))
    method = ["--head"] if request.method == "HEAD" else ["-X", request.method]
    return ["-sS", "-o", "-", "-w", MARK + "%{http_code}", "--max-time", "%g" % request.timeout] + as_is + host + method + rest


def curl_line(request: Request, repeat: int = 1) -> str:
    """The shell line that sends REQUEST as the lab sent it (SHOWN); with REPEAT > 1, a loop that sends it REPEAT
    times and counts the statuses."""
    line = " ".join(shlex.quote(a) for a in ["curl"] + curl_options(request, SHOWN))
    if request.body:
        line += " --data-binary @<(head -c %d /dev/zero)" % len(request.body)
    if repeat > 1:
        return "for i in $(seq %d); do %s %s -o /dev/null -w '%%{http_code}\\n'; done | sort | uniq -c" % (
            repeat, line, shlex.quote(request.url))
    return "%s %s" % (line, shlex.quote(request.url))
