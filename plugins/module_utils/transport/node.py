# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Requests from inside a kind node container: curl through `docker exec NODE` (argv built here, never a
shell line), its MARKED output read back (curl.py). For requests on a fixed schedule, one `docker exec`
runs LOOP, a bash loop that sends them all (a process per request through docker would not keep 20/s)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.curl import MARK, curl_options
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request

RunCommand = Callable[[list[str]], "tuple[int, str, str]"]

# Requests on a schedule from a node: one `docker exec` runs this loop. It is a constant: every value comes in
# as an argument, never as shell text. bash's EPOCHREALTIME (bash 5, as in kind's Debian node image) schedules
# each tick at start + i * period without a fork and stamps it when the tick fires; each request runs in the
# background, so slow answers do not delay the next tick, and prints one line (shorter than PIPE_BUF, so lines
# do not mix); the loop lasts the whole window, whatever the last answer took:
#   __kindlab_sample__ SEQ START_US CURL_RC OUTPUT  (OUTPUT with backslash, newline and CR escaped)
LOOP = r"""set -u
count=$1 period=$2 n=$3
shift 3
urls=("${@:1:n}")
shift "$n"
if [ -z "${EPOCHREALTIME:-}" ]; then echo "__kindlab_error__ bash without EPOCHREALTIME (bash 5 needed)"; exit 3; fi
start=${EPOCHREALTIME/[.,]/}
echo "__kindlab_start__ $start"
i=0
while [ "$i" -lt "$count" ]; do
  d=$(( start + i * period - ${EPOCHREALTIME/[.,]/} ))
  if [ "$d" -gt 0 ]; then printf -v pause '%d.%06d' $(( d / 1000000 )) $(( d % 1000000 )); sleep "$pause"; fi
  t=${EPOCHREALTIME/[.,]/}
  (
    out=$(curl "$@" "${urls[i % n]}" 2>&1)
    rc=$?
    if [ "${#out}" -gt 1900 ]; then out="${out:0:1500}${out: -400}"; fi
    out=${out//\\/\\\\}
    out=${out//$'\n'/\\n}
    out=${out//$'\r'/\\r}
    printf '__kindlab_sample__ %s %s %s %s\n' "$i" "$t" "$rc" "$out"
  ) &
  i=$(( i + 1 ))
done
wait
d=$(( start + count * period - ${EPOCHREALTIME/[.,]/} ))
if [ "$d" -gt 0 ]; then printf -v pause '%d.%06d' $(( d / 1000000 )) $(( d % 1000000 )); sleep "$pause"; fi
echo "__kindlab_end__ ${EPOCHREALTIME/[.,]/}"
"""
_LOOP_LINE = re.compile(r"^__kindlab_sample__ ([0-9]+) ([0-9]+) ([0-9]+) ?(.*)$")
_UNESCAPE = re.compile(r"\\(\\|n|r)")


@dataclass(frozen=True)
class Ticked:
    """One request of the loop: its tick, when the tick fired (microseconds since the epoch), its answer."""
    seq: int
    began: int
    answer: Answer


@dataclass(frozen=True)
class LoopRun:
    """What the loop said: when it started and ended (microseconds since the epoch; end None when it did not
    say), every request it reported, or why it did not run (`fatal`)."""
    start: int | None
    end: int | None
    ticks: tuple[Ticked, ...] = ()
    fatal: str | None = None


class NodeTransport:
    """A Transport from inside node container NODE, through DOCKER (a path) and RUN_COMMAND (argv → rc, stdout,
    stderr). HINT (with %r for the node) says what to do when there is no node container to exec into."""

    def __init__(self, run_command: RunCommand, docker: str, node: str,
                 hint: str = "cannot run curl in node container %r") -> None:
        self.run_command, self.docker, self.node, self.hint = run_command, docker, node, hint

    def argv(self, request: Request) -> list[str]:
        """curl inside the node container."""
        return [self.docker, "exec", self.node, "curl"] + curl_options(request) + [request.url]

    def send(self, request: Request) -> Answer:
        if request.body:
            return Answer(None, "", "curl in node %s: a request body is not sent from a node" % self.node, fatal=True)
        rc, out, err = self.run_command(self.argv(request))
        return self.read(rc, out, err)

    def repeat(self, request: Request, copies: int) -> list[Answer]:
        return [self.send(request) for _copy in range(max(1, copies))]

    def read(self, rc: int, stdout: str, stderr: str) -> Answer:
        """(status, body) from curl's stdout with the MARK, or the error."""
        body, sep, code = stdout.rpartition(MARK)
        if "No such container" in stderr or "is not running" in stderr:
            return Answer(None, "", self.hint % self.node, fatal=True)
        if "Cannot connect to the Docker daemon" in stderr:  # no engine: a twin lab, or Docker is down
            return Answer(None, "", "docker has no engine to exec into (%s); " % stderr.strip()[:120] + self.hint % self.node,
                          fatal=True)
        if rc != 0 or not sep or not code.strip().isdigit() or code.strip() == "000":
            return Answer(None, "", "curl in node %s failed (rc=%d): %s" % (self.node, rc, (stderr or stdout).strip()[:300]))
        return Answer(int(code.strip()), body)

    def loop_argv(self, requests: list[Request], count: int, period: int) -> list[str]:
        """`docker exec NODE bash -c LOOP` with COUNT ticks PERIOD microseconds apart, the URLs of REQUESTS used in
        turn, and curl's options (the first request's Host header, method and connect-to entries)."""
        urls = [r.url for r in requests]
        return ([self.docker, "exec", self.node, "bash", "-c", LOOP, "kindlab-probe", str(count), str(period), str(len(urls))]
                + urls + curl_options(requests[0]))

    def loop(self, requests: list[Request], count: int, period: int) -> LoopRun:
        rc, out, err = self.run_command(self.loop_argv(requests, count, period))
        return self.read_loop(rc, out, err)

    def read_loop(self, rc: int, stdout: str, stderr: str) -> LoopRun:
        """LOOP's output, or why it did not run."""
        start: int | None = None
        end: int | None = None
        ticks: list[Ticked] = []
        for line in stdout.splitlines():
            if line.startswith("__kindlab_start__ "):
                start = int(line.split()[1])
            elif line.startswith("__kindlab_end__ "):
                end = int(line.split()[1])
            elif line.startswith("__kindlab_error__ "):
                return LoopRun(None, None, (), "the probe loop in node %s cannot run: %s" % (self.node, line.split(" ", 1)[1]))
            else:
                match = _LOOP_LINE.match(line)
                if match and start is not None:
                    ticks.append(Ticked(int(match.group(1)), int(match.group(2)),
                                        self._loop_answer(int(match.group(3)), _unescape(match.group(4)))))
        if start is None:
            fatal = self.read(rc or 1, "", stderr)
            return LoopRun(None, None, (), fatal.error if fatal.fatal else "the probe loop in node %s did not start (rc=%d): %s" % (
                self.node, rc, (stderr or stdout).strip()[:300]))
        return LoopRun(start, end, tuple(ticks))

    def _loop_answer(self, rc: int, output: str) -> Answer:
        body, sep, rest = output.rpartition(MARK)
        if not sep:
            body, rest = output, ""
        code, tail = rest[:3], rest[3:].strip()
        if rc != 0 or not code.isdigit() or code == "000":
            why = (tail or body or "no output").strip()[:300]
            return Answer(None, "", "curl in node %s failed (rc=%d): %s" % (self.node, rc, why))
        return Answer(int(code), body)


def _unescape(text: str) -> str:
    return _UNESCAPE.sub(lambda m: {"\\": "\\", "n": "\n", "r": "\r"}[m.group(1)], text)
