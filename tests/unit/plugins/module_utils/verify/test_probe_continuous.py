"""http_probe's continuous mode: the schedule, the failures, the node loop and its parser."""
from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
from ansible.module_utils.six.moves.urllib.error import HTTPError
from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.host import HostTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import LOOP, NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import probe_from_module
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import (
    Sample, achieved_rate, node_samples, run_continuous, tick_count,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_once import run_probe
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeError, ProbeSpec, parse_spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import Target, build_target

T0 = dt.datetime(2026, 11, 26, 10, 0, 0, tzinfo=dt.timezone.utc)


def spec(**kw: Any) -> ProbeSpec:
    base: dict[str, Any] = {"url": "http://100.64.0.0/", "rate": 10, "duration": 1}
    base.update(kw)
    return parse_spec(base)


class FakeTime:
    """A clock that only sleep (and slow answers) move."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


# ---------------------------------------------------------------- options

@pytest.mark.parametrize("kw, option", [
    ({"rate": 0}, "rate"),
    ({"rate": -1}, "rate"),
    ({"rate": 201}, "rate"),
    ({"rate": "fast"}, "rate"),
    ({"rate": float("nan")}, "rate"),
    ({"duration": 0}, "duration"),
    ({"rate": 1, "duration": 0.5}, "duration"),  # no tick inside the window
    ({"max_failures": -1}, "max_failures"),
    ({"max_failures": 1.5}, "max_failures"),
    ({"attempts": 3}, "attempts"),
    ({"samples": 5}, "samples"),
    ({"rate": None, "duration": 60}, "duration"),
    ({"rate": None, "duration": None, "max_failures": 2}, "max_failures"),
])
def test_bad_continuous_options_name_the_option(kw: dict[str, Any], option: str) -> None:
    with pytest.raises(ProbeError, match="^%s: " % option):
        spec(**kw)


def test_continuous_options_parsed() -> None:
    parsed = spec(rate=20, duration=60, max_failures=3)
    assert (parsed.rate, parsed.duration, parsed.max_failures) == (20.0, 60.0, 3)
    assert parse_spec({"url": "http://a/"}).rate is None
    assert tick_count(20, 60) == 1200 and tick_count(3, 1) == 3 and tick_count(2.5, 1) == 3 and tick_count(10, 0.1) == 1
    assert achieved_rate([0.0, 0.05, 0.1, 0.15], 1) == pytest.approx(20.0)
    assert achieved_rate([0.0], 2) == 0.5


# ---------------------------------------------------------------- the schedule (fake clock)

def test_requests_start_on_their_ticks_however_long_the_answers_take() -> None:
    fake = FakeTime()
    sent_at: list[float] = []
    answers = iter([Answer(200, "pod: a\n"), Answer(503, "busy"), Answer(200, "pod: b\n"), Answer(None, "", "refused"),
                    Answer(200, "pod: a\n")])

    def send(_request: Request) -> Answer:
        sent_at.append(round(fake.now - 100.0, 6))
        fake.now += 0.15  # each answer takes 3/4 of the 0.2 s period
        return next(answers)

    result = run_continuous(spec(rate=5, duration=1, max_failures=1), send, sleep=fake.sleep, clock=fake.clock,
                            wall=lambda: T0, workers=1)
    assert sent_at == [0.0, 0.2, 0.4, 0.6, 0.8]  # not 0, 0.35, 0.7, ... as sleeping after each answer would
    assert fake.sleeps == [0.05, 0.05, 0.05, 0.05, 0.05]  # the remainder of each period, then of the window
    cont = result["continuous"]
    assert (cont["sent"], cont["answered"], cont["failed_count"], cont["rate_achieved"]) == (5, 4, 2, 5.0)
    assert cont["backends"] == {"a": 2, "(unmatched)": 1, "b": 1}
    assert cont["failures"] == [
        {"seq": 1, "time": "2026-11-26T10:00:00.200Z", "offset": 0.2, "address": "100.64.0.0", "backend": "(unmatched)",
         "status": 503, "problem": "got 503 (expected 200)"},
        {"seq": 3, "time": "2026-11-26T10:00:00.600Z", "offset": 0.6, "address": "100.64.0.0", "backend": None,
         "error": "refused"},
    ]
    assert not result["passed"]  # 2 failures, 1 allowed
    assert result["reason"].startswith("5 sent at 5/s (achieved 5.00/s) over 1s to 100.64.0.0: 2 failed (allowed 1)")
    assert "first at +0.200s, last at +0.600s" in result["reason"]


def test_failures_within_max_failures_pass_and_run_probe_switches_on_rate() -> None:
    fake = FakeTime()
    answers = iter([Answer(200, "pod: a\n"), Answer(502, "")] + [Answer(200, "pod: a\n")] * 8)
    result = run_probe(spec(rate=10, duration=1, max_failures=1), lambda _r: next(answers), sleep=fake.sleep,
                       clock=fake.clock)
    assert result["passed"] and result["continuous"]["failed_count"] == 1 and result["continuous"]["sent"] == 10
    assert result["attempts"] == [] and result["distribution"] == {"a": 9, "(unmatched)": 1}
    assert result["url"] == "http://100.64.0.0/"


def test_the_ingress_status_is_read_at_most_once_a_second() -> None:
    fake = FakeTime()
    reads: list[float] = []

    def lookup() -> tuple[list[str], str | None]:
        reads.append(fake.now - 100.0)
        return (["100.64.0.1", "100.64.0.2"], "app.example")

    hosts: list[tuple[str, str]] = []

    def send(request: Request) -> Answer:
        hosts.append((request.address, request.host))
        return Answer(200, "pod: a\n")

    result = run_continuous(parse_spec({"ingress": "one/test", "rate": 10, "duration": 3}), send, lookup,
                            sleep=fake.sleep, clock=fake.clock, wall=lambda: T0, workers=1)
    assert result["passed"] and len(hosts) == 30
    assert len(reads) == 3 and reads == pytest.approx([0.0, 1.0, 2.0])
    assert hosts[:3] == [("100.64.0.1", "app.example"), ("100.64.0.2", "app.example"), ("100.64.0.1", "app.example")]
    assert result["addresses"] == ["100.64.0.1", "100.64.0.2"]


def test_no_status_address_is_a_failure_of_that_request() -> None:
    fake = FakeTime()
    result = run_continuous(parse_spec({"ingress": "one/test", "rate": 2, "duration": 1}), lambda _r: Answer(200, ""),
                            lambda: ([], None), sleep=fake.sleep, clock=fake.clock, wall=lambda: T0, workers=1)
    assert result["continuous"]["failed_count"] == 2 and result["continuous"]["answered"] == 0
    assert result["continuous"]["failures"][0]["error"] == "no status address on Ingress one/test"


# ---------------------------------------------------------------- real threads, real clock

def test_slow_answers_overlap_and_do_not_lower_the_rate() -> None:
    """Each request starts on its tick while earlier ones are still unanswered: here an answer comes
    only once four requests are in flight at once, which a sender that waited for each answer would
    never reach (its requests would fail after 10 s). On a fake clock, so a loaded machine cannot
    make it fail; the rate as sent is measured by benchmarks/probe_rate_bench.py."""
    now, in_flight, peak = [0.0], [0], [0]
    lock = threading.Lock()
    four = threading.Event()

    def clock() -> float:
        with lock:
            return now[0]

    def sleep(delay: float) -> None:
        with lock:
            now[0] += delay

    def send(_request: Request) -> Answer:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            if in_flight[0] >= 4:
                four.set()
        overlapped = four.wait(timeout=10)
        with lock:
            in_flight[0] -= 1
        return Answer(200, "pod: a\n") if overlapped else Answer(None, "", "no four requests were ever in flight")

    result = run_continuous(spec(rate=20, duration=1, timeout=2), send, sleep=sleep, clock=clock)
    cont = result["continuous"]
    assert cont["sent"] == 20 and cont["failed_count"] == 0 and result["passed"], cont
    assert peak[0] >= 4  # overlapping requests
    assert now[0] == pytest.approx(1.0)  # the window lasted its duration on the clock, no longer


# ---------------------------------------------------------------- via node: one loop, its output

def loop_of(parsed: ProbeSpec, targets: list[Target], rc: int, stdout: str, stderr: str, node: str = "n"
            ) -> tuple[list[list[str]], tuple[float | None, float, list[Sample], str | None]]:
    """The argv of the window's one `docker exec` from NODE, and what it came to when it printed STDOUT."""
    argvs: list[list[str]] = []

    def run(argv: list[str]) -> tuple[int, str, str]:
        argvs.append(argv)
        return rc, stdout, stderr

    return argvs, node_samples(NodeTransport(run, "/usr/bin/docker", node), parsed, targets)


def test_node_loop_argv_passes_every_value_as_an_argument() -> None:
    parsed = spec(rate=20, duration=60, connect_to=["100.64.0.0:80:127.0.0.1:9"], timeout=2)
    targets = [build_target(parsed, None, "app.example"),
               Target(Request("GET", "http://100.64.0.1/", "100.64.0.1", 80, "app.example"), "100.64.0.1")]
    (argv,), _run = loop_of(parsed, targets, 1, "", "", "lab-control-plane")
    assert argv[:6] == ["/usr/bin/docker", "exec", "lab-control-plane", "bash", "-c", LOOP]
    assert argv[6:12] == ["kindlab-probe", "1200", "50000", "2", "http://100.64.0.0/", "http://100.64.0.1/"]
    curl = argv[12:]
    assert curl[:2] == ["-sS", "-o"] and "Host: app.example" in curl and curl[curl.index("--max-time") + 1] == "2"
    assert curl[curl.index("--connect-to") + 1] == "100.64.0.0:80:127.0.0.1:9"
    assert "100.64.0.0" not in LOOP and "$@" in LOOP  # the script is a constant


LOOP_OUTPUT = "\n".join([
    "__kindlab_start__ 1795694400000000",
    "__kindlab_sample__ 1 1795694400050300 0 <h1>Bad Gateway</h1>\\n\\n__kindlab_probe_status__:502",
    "__kindlab_sample__ 0 1795694400000100 0 pod: web-1\\nnamespace: one\\n\\n__kindlab_probe_status__:200",
    "__kindlab_sample__ 2 1795694400100200 7 curl: (7) Failed to connect to 100.64.0.0 port 80\\n__kindlab_probe_status__:000",
    "__kindlab_sample__ 3 1795694400150000 0 pod: web-2 a\\\\b\\r\\n\\n__kindlab_probe_status__:200",
    "__kindlab_end__ 1795694400200000",
])


ROUND_ROBIN = parse_spec({"ingress": "one/test", "rate": 20, "duration": 0.2})


def test_parse_loop_reads_every_sample_with_its_time() -> None:
    targets = [build_target(ROUND_ROBIN, a, None) for a in ("100.64.0.0", "100.64.0.1")]
    _argvs, (start, elapsed, samples, fatal) = loop_of(ROUND_ROBIN, targets, 0, LOOP_OUTPUT + "\n", "")
    assert fatal is None and start == 1795694400.0 and elapsed == pytest.approx(0.2)
    by_seq = {s.seq: s for s in samples}
    assert by_seq[0].answer == Answer(200, "pod: web-1\nnamespace: one\n") and by_seq[0].address == "100.64.0.0"
    assert by_seq[1].answer.status == 502 and by_seq[1].offset == pytest.approx(0.0503)
    assert by_seq[1].time == "2026-11-26T12:00:00.050Z"
    assert by_seq[2].answer.status is None and by_seq[2].address == "100.64.0.0" and by_seq[3].address == "100.64.0.1"
    assert by_seq[2].answer.error == "curl in node n failed (rc=7): curl: (7) Failed to connect to 100.64.0.0 port 80"
    assert by_seq[3].answer.body == "pod: web-2 a\\b\r\n"


def test_parse_loop_names_a_missing_node_or_an_old_bash() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import NODE_HINT

    node = NodeTransport(lambda _argv: (1, "", "Error response from daemon: No such container: lab-control-plane"),
                         "/usr/bin/docker", "lab-control-plane", NODE_HINT)
    *_rest, fatal = node_samples(node, spec(), [build_target(spec(), None, None)])
    assert fatal is not None and "use via: host with connect_to" in fatal
    _argvs, (*_rest, fatal) = loop_of(spec(), [build_target(spec(), None, None)], 3,
                                      "__kindlab_error__ bash without EPOCHREALTIME (bash 5 needed)\n", "")
    assert fatal == "the probe loop in node n cannot run: bash without EPOCHREALTIME (bash 5 needed)"
    _argvs, (*_rest, fatal) = loop_of(spec(), [build_target(spec(), None, None)], 127, "", "exec: bash: not found")
    assert fatal is not None and fatal.startswith("the probe loop in node n did not start (rc=127): exec: bash")


def test_via_node_runs_one_docker_exec_for_the_whole_window() -> None:
    calls: list[list[str]] = []

    def docker_exec(argv: list[str]) -> tuple[int, str, str]:
        calls.append(argv)
        return 0, LOOP_OUTPUT, ""

    def never(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("nothing is sent from the host")

    result = probe_from_module({"url": "http://100.64.0.0/", "via": "node", "context": "kind-lab", "rate": 20, "duration": 0.2,
                                "max_failures": 1}, never, never, HTTPError, docker_exec, lambda _b: "/usr/bin/docker")
    assert len(calls) == 1 and calls[0][3:5] == ["bash", "-c"] and calls[0][7:9] == ["4", "50000"]
    cont = result["continuous"]
    assert (cont["sent"], cont["answered"], cont["failed_count"]) == (4, 3, 2)
    assert [f["seq"] for f in cont["failures"]] == [1, 2] and cont["failures"][0]["status"] == 502
    assert cont["backends"] == {"web-1": 1, "(unmatched)": 1, "web-2": 1}
    assert not result["passed"] and (result["via"], result["node"]) == ("node", "lab-control-plane")
    assert cont["started"] == "2026-11-26T12:00:00.000Z"


# ---------------------------------------------------------------- the loop itself, run here

class _Handler(BaseHTTPRequestHandler):
    count = 0

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        type(self).count += 1
        status = 503 if type(self).count % 4 == 0 else 200
        data = ("pod: web-%d\n" % (type(self).count % 2)).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.skipif(not (shutil.which("bash") and shutil.which("curl")), reason="needs bash and curl here")
def test_the_node_loop_runs_in_bash_against_a_loopback_server(loopback: int) -> None:
    """The argv after `docker exec NODE` is what the node runs: run it here."""
    parsed = spec(url="http://app.lab.invalid/", rate=40, duration=1, connect_to=["app.lab.invalid:80:127.0.0.1:%d" % loopback])

    def here(argv: list[str]) -> tuple[int, str, str]:
        done = subprocess.run(argv[3:], capture_output=True, text=True, timeout=20, check=False)
        return done.returncode, done.stdout, done.stderr

    start, elapsed, samples, fatal = node_samples(NodeTransport(here, "docker", "n"), parsed, [build_target(parsed, None, None)])
    assert fatal is None and start is not None and elapsed >= 1.0  # the loop lasts its window (however loaded the machine)
    assert sorted(s.seq for s in samples) == list(range(40))
    assert sum(1 for s in samples if s.answer.status == 503) == 10
    assert {s.answer.body for s in samples} == {"pod: web-0\n", "pod: web-1\n"}
    # The rate it holds is measured by benchmarks/probe_rate_bench.py, not here: a loaded machine slows bash.
    assert sorted(s.offset for s in samples) == [s.offset for s in sorted(samples, key=lambda s: s.seq)]


def test_real_http_continuous_from_the_host(loopback: int) -> None:
    result = run_continuous(spec(url="http://127.0.0.1:%d/" % loopback, rate=40, duration=0.5, max_failures=5),
                            HostTransport(open_url=open_url, http_error=HTTPError).send)
    cont = result["continuous"]
    assert cont["sent"] == 20 and cont["answered"] == 20 and cont["failed_count"] == 5 and result["passed"]
    assert {f["status"] for f in cont["failures"]} == {503} and cont["backends"].keys() == {"web-0", "web-1"}


def test_each_second_of_the_window_counts_its_outcomes_by_kind() -> None:
    """Issue 36: report.html draws the probe second by second, each kind of failure in its own colour."""
    fake = FakeTime()
    answers = iter([Answer(200, "ok"), Answer(404, ""), Answer(404, ""), Answer(None, "", error="timed out after 2.0s"),
                    Answer(502, ""), Answer(None, "", error="[Errno 111] Connection refused"), Answer(200, "nope")]
                   + [Answer(200, "ok")] * 5)
    result = run_continuous(spec(rate=4, duration=3, max_failures=12, body_regex="ok"), lambda _r: next(answers),
                            sleep=fake.sleep, clock=fake.clock, workers=1)
    assert result["continuous"]["per_second"] == [
        {"second": 0, "outcomes": {"404": 2, "answered": 1, "timed out": 1}},
        {"second": 1, "outcomes": {"502": 1, "refused": 1, "wrong body": 1, "answered": 1}},
        {"second": 2, "outcomes": {"answered": 4}},
    ]
