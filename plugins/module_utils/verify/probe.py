# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reachability probes: HTTP with a Host header to a URL or to an Ingress's published
address, curl-style connect_to, attempts until the expected answer, then samples whose
answering backends make a distribution.

Everything is validated by parse_spec() before a request is sent. The loop (run_probe)
takes its transport, address lookup, clock and sleep as arguments, so it is tested
without a network; the two transports are from the host (Ansible's open_url) and from
inside a kind node container (curl through `docker exec`, argv built here).

With `rate`, the probe is continuous instead: requests on a fixed schedule for `duration`
seconds, every failure listed with its time (run_continuous from the host, a thread pool so
slow answers do not lower the rate; node_loop_argv/parse_loop from a node, one shell loop in
one `docker exec`).
"""
from __future__ import annotations

import math
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple
from urllib.error import HTTPError
from urllib.parse import urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import probe_origin

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params

Obj = dict[str, Any]

# The echo images answer "pod: NAME\n…"; the nginx image answers its welcome page.
DEFAULT_BACKEND_REGEX = r"pod: (\S+)"
_NGINX_WELCOME = "<title>Welcome to nginx!</title>"
_MAX_BODY = 1024 * 1024
_METHOD = re.compile(r"^[A-Z]+$")
_PORT = re.compile(r"^[0-9]{1,5}$")
# curl --write-out marker appended after the body, so status and body come from one stdout.
_CURL_MARK = "\n__kindlab_probe_status__:"
# Continuous probing: the highest rate accepted, and the most requests in flight from the host
# (rate x timeout of them when every answer times out, as to a stale endpoint's dead address).
MAX_RATE = 200.0
MAX_WORKERS = 256
# The Ingress status is read again at most this often in continuous mode (not at every request).
LOOKUP_EVERY = 1.0


class ProbeError(OptionError):
    """A probe option is invalid; the message names the option."""


@dataclass(frozen=True)
class ConnectTo:
    """One curl --connect-to entry; empty host/port match any, empty targets keep the original."""
    host: str
    port: str
    target_host: str
    target_port: str

    def applies(self, host: str, port: int) -> bool:
        return (not self.host or self.host.lower() == host.lower()) and (not self.port or int(self.port) == port)


@dataclass
class Target:
    """Where one request goes: the URL as sent, the Host header, and the peer actually dialled."""
    url: str
    host_header: str
    address: str  # the host part of the URL (lab address, before connect_to)
    connect_host: str
    connect_port: int
    mapped: bool = False  # a connect_to entry applied


@dataclass
class Answer:
    status: int | None
    body: str
    error: str | None = None
    fatal: bool = False  # retrying cannot help (no node container to exec into)


@dataclass
class ProbeSpec:
    url: str | None
    ingresses: list[tuple[str, str]]  # empty with url
    scheme: str
    port: int | None
    host: str | None
    path: str
    method: str
    status: list[int]
    body_regex: re.Pattern[str] | None
    attempts: int
    interval: float
    timeout: float
    samples: int
    backend_regex: re.Pattern[str]
    connect_to: list[ConnectTo] = field(default_factory=list)
    # Dial only through connect_to: an address without an entry counts as refused. On the twin
    # nothing but the mapped loopback ports exists, and lab addresses must never be dialled.
    connect_to_only: bool = False
    # Continuous mode (rate set): requests per second for `duration` seconds; the probe passes
    # when at most `max_failures` of them fail.
    rate: float | None = None
    duration: float = 60.0
    max_failures: int = 0


def _take_host(text: str) -> tuple[str, str] | None:
    """Split a leading host (possibly empty, or an [IPv6] literal) off 'HOST:rest'."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1:end + 2] != ":":
            return None
        return text[1:end], text[end + 2:]
    host, sep, rest = text.partition(":")
    return (host, rest) if sep else None


def _parse_entry(entry: str) -> ConnectTo | None:
    first = _take_host(entry)
    if first is None:
        return None
    port, sep, rest = first[1].partition(":")
    second = _take_host(rest) if sep else None
    if second is None or ":" in second[1]:
        return None
    return ConnectTo(first[0], port, second[0], second[1])


def parse_connect_to(entries: Any) -> list[ConnectTo]:
    """curl's HOST:PORT:CONNECT_HOST:CONNECT_PORT (IPv6 hosts in brackets; empty parts allowed
    as curl allows them, but a port must be a number in 1-65535)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProbeError("connect_to: expected a list of HOST:PORT:TARGET_HOST:TARGET_PORT strings, got %r" % (entries,))
    out = []
    for i, entry in enumerate(entries):
        where = "connect_to[%d]" % i
        parsed = _parse_entry(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise ProbeError("%s: %r is not HOST:PORT:TARGET_HOST:TARGET_PORT (e.g. 100.64.0.0:80:127.0.0.1:40123)"
                             % (where, entry))
        for port in (parsed.port, parsed.target_port):
            if port and (not _PORT.match(port) or not 0 < int(port) < 65536):
                raise ProbeError("%s: %r: port %r is not a number in 1-65535" % (where, entry, port))
        out.append(parsed)
    return out


def _regex(value: Any, option: str, groups: bool = False) -> re.Pattern[str] | None:
    if value is None:
        return None
    try:
        pattern = re.compile(value)
    except (re.error, TypeError) as exc:
        raise ProbeError("%s: %r is not a valid Python regular expression: %s" % (option, value, exc)) from exc
    if groups and pattern.groups < 1:
        raise ProbeError("%s: %r needs a capturing group that names the answering backend, e.g. 'pod: (\\S+)'"
                         % (option, value))
    return pattern


def _ingress_ref(value: Any, where: str) -> tuple[str, str]:
    if isinstance(value, str) and value.count("/") == 1 and all(value.split("/")):
        ns, name = value.split("/")
        return ns, name
    if isinstance(value, dict) and isinstance(value.get("namespace"), str) and isinstance(value.get("name"), str):
        return value["namespace"], value["name"]
    raise ProbeError("%s: expected 'namespace/name' or a mapping with namespace and name, got %r" % (where, value))


def parse_ingresses(value: Any) -> list[tuple[str, str]]:
    """One Ingress, or a list of them whose addresses are used in turn (DNS round-robin)."""
    if value is None:
        return []
    if isinstance(value, list):
        if not value:
            raise ProbeError("ingress: expected at least one Ingress, got an empty list")
        return [_ingress_ref(item, "ingress[%d]" % i) for i, item in enumerate(value)]
    return [_ingress_ref(value, "ingress")]


def parse_spec(params: Obj) -> ProbeSpec:
    """Validate the module options (url XOR ingress, counts, regexes, connect_to)."""
    url, ingress = params.get("url"), params.get("ingress")
    if (url is None) == (ingress is None):
        raise ProbeError("url, ingress: give exactly one (a URL, or the Ingress whose status address to probe)")
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProbeError("url: expected an http:// or https:// URL with a host, got %r" % url)
        try:
            _port = parts.port  # raises ValueError on a bad port
        except ValueError as exc:
            raise ProbeError("url: %r has an invalid port" % url) from exc
    path = params.get("path") or "/"
    if not path.startswith("/"):
        raise ProbeError("path: expected an absolute path starting with '/', got %r" % path)
    method = (params.get("method") or "GET").upper()
    if not _METHOD.match(method):
        raise ProbeError("method: expected an HTTP method such as GET, HEAD or POST, got %r" % params.get("method"))
    status = params.get("status") or [200]
    if not all(isinstance(s, int) and 100 <= s <= 599 for s in status):
        raise ProbeError("status: expected a list of HTTP status codes (100-599), got %r" % (status,))
    for option, minimum in (("attempts", 1), ("samples", 0)):
        if int(params.get(option, minimum)) < minimum:
            raise ProbeError("%s: expected a whole number >= %d, got %r" % (option, minimum, params.get(option)))
    for option in ("interval", "timeout"):
        if float(params.get(option, 1)) < 0 or (option == "timeout" and float(params.get(option, 1)) == 0):
            raise ProbeError("%s: expected a positive number of seconds, got %r" % (option, params.get(option)))
    port = params.get("port")
    if port is not None and not 0 < int(port) < 65536:
        raise ProbeError("port: expected a port number in 1-65535, got %r" % port)
    scheme = params.get("scheme") or "http"
    if scheme not in ("http", "https"):
        raise ProbeError("scheme: expected http or https, got %r" % scheme)
    host = params.get("host")
    if host is not None and (not host or any(c in host for c in " /\r\n")):
        raise ProbeError("host: expected a host name for the Host header (optionally host:port), got %r" % host)
    rate, duration, max_failures = parse_continuous(params)
    return ProbeSpec(
        url=url, ingresses=parse_ingresses(ingress), scheme=scheme, port=port,
        host=host, path=path, method=method, status=list(status),
        body_regex=_regex(params.get("body_regex"), "body_regex"),
        attempts=int(params.get("attempts", 1)), interval=float(params.get("interval", 1)),
        timeout=float(params.get("timeout", 10)), samples=int(params.get("samples", 1)),
        backend_regex=_regex(params.get("backend_regex") or DEFAULT_BACKEND_REGEX, "backend_regex", groups=True)
        or re.compile(DEFAULT_BACKEND_REGEX),
        connect_to=parse_connect_to(params.get("connect_to")),
        connect_to_only=bool(params.get("connect_to_only", False)),
        rate=rate, duration=duration, max_failures=max_failures,
    )


def _number(params: Obj, option: str, default: float) -> float:
    value = params.get(option)
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProbeError("%s: expected a number, got %r" % (option, value)) from None
    if not math.isfinite(number):
        raise ProbeError("%s: expected a finite number, got %r" % (option, value))
    return number


def parse_continuous(params: Obj) -> tuple[float | None, float, int]:
    """rate (requests/s, 0 < rate <= MAX_RATE), duration (s) and max_failures; duration and
    max_failures only with rate, and attempts/samples above 1 not with it (the window starts
    at once and every request in it is a sample)."""
    given = {k for k in ("duration", "max_failures") if params.get(k) is not None}
    if params.get("rate") is None:
        if given:
            raise ProbeError("%s: only with rate (continuous probing); without rate the probe makes attempts, "
                             "then samples" % ", ".join(sorted(given)))
        return None, 60.0, 0
    rate = _number(params, "rate", 0)
    if not 0 < rate <= MAX_RATE:
        raise ProbeError("rate: expected requests per second above 0 and at most %g, got %r" % (MAX_RATE, params.get("rate")))
    duration = _number(params, "duration", 60.0)
    if not 0 < duration <= 24 * 3600:
        raise ProbeError("duration: expected seconds above 0 (at most a day), got %r" % params.get("duration"))
    if duration * rate < 1:
        raise ProbeError("duration: %g s at rate %g/s sends no request; expected at least 1 / rate = %g s"
                         % (duration, rate, 1 / rate))
    failures = _number(params, "max_failures", 0)
    if failures < 0 or failures != int(failures):
        raise ProbeError("max_failures: expected a whole number >= 0, got %r" % params.get("max_failures"))
    for option in ("attempts", "samples"):
        if int(params.get(option) or 1) > 1:
            raise ProbeError("%s: not used with rate: the continuous window starts at once and every request in it is a "
                             "sample (set duration and max_failures instead), got %r" % (option, params.get(option)))
    return rate, duration, int(failures)


def first_rule_host(ingress: Obj) -> str | None:
    """The Ingress's first rule host: the name DNS would give clients of this Ingress. A
    wildcard host (*.example.com) becomes one name it matches, probe.example.com."""
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        host = rule.get("host")
        if host:
            return "probe" + str(host)[1:] if str(host).startswith("*.") else str(host)
    return None


def _bracket(host: str) -> str:
    return "[%s]" % host if ":" in host else host


def build_target(spec: ProbeSpec, address: str | None, default_host: str | None) -> Target:
    """The URL, Host header and dialled peer for one request (connect_to applied like curl)."""
    if spec.url is not None:
        parts = urlsplit(spec.url)
        address = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        url = spec.url
        netloc = parts.netloc.rpartition("@")[2]
    else:
        if address is None:
            raise ProbeError("ingress: no status address to probe")  # run_probe skips such attempts
        port = spec.port or (443 if spec.scheme == "https" else 80)
        default_port = port == (443 if spec.scheme == "https" else 80)
        netloc = _bracket(address) + ("" if default_port else ":%d" % port)
        url = "%s://%s%s" % (spec.scheme, netloc, spec.path)
    host_header = spec.host or default_host or netloc
    connect_host, connect_port, mapped = address, port, False
    for rule in spec.connect_to:
        if rule.applies(address, port):
            connect_host = rule.target_host or address
            connect_port = int(rule.target_port) if rule.target_port else port
            mapped = True
            break
    return Target(url=url, host_header=host_header, address=address, connect_host=connect_host, connect_port=connect_port,
                  mapped=mapped)


def backend_of(body: str, pattern: re.Pattern[str]) -> str:
    """Which backend answered: the regex's first group, 'nginx' for the welcome page."""
    match = pattern.search(body)
    if match and match.group(1):
        return match.group(1)
    if _NGINX_WELCOME in body:
        return "nginx"
    return "(unmatched)"


def distribution(backends: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in backends:
        out[name] = out.get(name, 0) + 1
    return out


def judge(spec: ProbeSpec, answer: Answer) -> str | None:
    """None when the answer is what was expected, else why not."""
    if answer.error is not None:
        return answer.error
    if answer.status not in spec.status:
        return "got %s (expected %s)" % (answer.status, " or ".join(str(s) for s in spec.status))
    if spec.body_regex is not None and not spec.body_regex.search(answer.body):
        return "got %s but the body does not match %r" % (answer.status, spec.body_regex.pattern)
    return None


def failure_reason(problem: str, target: Target | None, attempts: int) -> str:
    """'got 503 from 100.64.0.0 (expected 200) after 3 attempts'."""
    plural = "s" if attempts != 1 else ""
    if target is None:
        return "%s after %d attempt%s" % (problem, attempts, plural)
    if problem.startswith("got "):
        code, _sep, rest = problem[4:].partition(" ")
        return "got %s from %s %s after %d attempt%s" % (code, target.address, rest, attempts, plural)
    return "%s (address %s) after %d attempt%s" % (problem, target.address, attempts, plural)


def _now() -> str:
    return iso(datetime.now(timezone.utc))


# Evaluated at run time, so spelled with typing's names (the modules may run on older Pythons).
Lookup = Callable[[], Tuple[List[str], Optional[str]]]


def _names(spec: ProbeSpec) -> str:
    return ", ".join("%s/%s" % ref for ref in spec.ingresses)


class _Resolver:
    """The target of each request. With Ingresses, their status is read again every time and
    the addresses are used in turn, as a client resolving DNS built from that status would."""

    def __init__(self, spec: ProbeSpec, lookup: Lookup | None, clock: Callable[[], float] = time.monotonic,
                 max_age: float = 0.0) -> None:
        self.spec, self.lookup, self.count = spec, lookup, 0
        # Continuous mode reads the status at most every max_age seconds, and from several threads.
        self.clock, self.max_age = clock, max_age
        self.lock = threading.Lock()
        self.cached: tuple[list[str], str | None] | None = None
        self.read_at = 0.0

    def _read(self, lookup: Lookup) -> tuple[list[str], str | None]:
        if self.cached is None or self.max_age <= 0 or self.clock() - self.read_at >= self.max_age:
            self.cached, self.read_at = lookup(), self.clock()
        return self.cached

    def next(self) -> tuple[Target | None, str | None]:
        if not self.spec.ingresses or self.lookup is None:
            return build_target(self.spec, None, None), None
        with self.lock:
            addresses, default_host = self._read(self.lookup)
            if not addresses:
                return None, "no status address on Ingress %s" % _names(self.spec)
            address = addresses[self.count % len(addresses)]
            self.count += 1
        return build_target(self.spec, address, default_host), None


def run_probe(
    spec: ProbeSpec,
    send: Callable[[ProbeSpec, Target], Answer],
    lookup: Lookup | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    now: Callable[[], str] = _now,
) -> Obj:
    """Attempts until one passes, then the samples. lookup() returns (status addresses, default
    Host) of the Ingresses; it is called before every request. With spec.rate, the continuous
    window instead (run_continuous)."""
    if spec.rate is not None:
        return run_continuous(spec, send, lookup, sleep=sleep, clock=clock)
    resolver = _Resolver(spec, lookup)
    attempts: list[Obj] = []
    target: Target | None = None
    problem: str | None = "no attempt made"
    for n in range(spec.attempts):
        if n:
            sleep(spec.interval)
        current, problem = resolver.next()
        if current is None:
            attempts.append({"time": now(), "address": None, "status": None, "elapsed": 0.0, "error": problem})
            continue
        target = current
        started = clock()
        answer = send(spec, target)
        problem = judge(spec, answer)
        attempts.append({"time": now(), "address": target.address, "status": answer.status,
                         "elapsed": round(clock() - started, 3), "error": answer.error if answer.error else problem})
        if problem is None or answer.fatal:
            break
    result: Obj = {"attempts": attempts, "samples": [], "distribution": {},
                   "url": target.url if target else None, "address": target.address if target else None,
                   "host": target.host_header if target else None}
    if problem is not None or target is None:
        result.update(passed=False, reason=failure_reason(problem or "no attempt made", target, len(attempts)))
        return result
    return _sample(spec, send, resolver, result, now, clock)


def _sample(spec: ProbeSpec, send: Callable[[ProbeSpec, Target], Answer], resolver: _Resolver, result: Obj,
            now: Callable[[], str], clock: Callable[[], float]) -> Obj:
    """N more requests (each resolved again); every one must pass too."""
    samples: list[Obj] = []
    backends: list[str] = []
    bad: list[str] = []
    used: list[str] = [result["address"]]
    for _sample_no in range(spec.samples):
        target, problem = resolver.next()
        if target is None:
            samples.append({"time": now(), "address": None, "status": None, "backend": "(error)", "elapsed": 0.0,
                            "error": problem})
            backends.append("(error)")
            bad.append(problem or "no target")
            continue
        started = clock()
        answer = send(spec, target)
        problem = judge(spec, answer)
        backend = "(error)" if answer.error else backend_of(answer.body, spec.backend_regex)
        samples.append({"time": now(), "address": target.address, "status": answer.status, "backend": backend,
                        "elapsed": round(clock() - started, 3), "error": problem})
        backends.append(backend)
        if target.address not in used:
            used.append(target.address)
        if problem:
            bad.append(problem)
    result["samples"] = samples
    result["distribution"] = distribution(backends)
    result["addresses"] = used
    if bad:
        result.update(passed=False, reason="%d of %d samples from %s failed: %s" % (
            len(bad), len(samples), ", ".join(used), "; ".join(sorted(set(bad)))))
    else:
        result.update(passed=True, reason="got %s from %s" % (result["attempts"][-1]["status"], ", ".join(used)))
    return result


# --- continuous probing ---------------------------------------------------------------
#
# With `rate`, the window starts at once and replaces both the attempts and the samples: it is
# a measurement over a fixed span that a scenario's actions are timed against, so a wait for a
# first good answer would move it by an unknown amount, and an outage at its start is exactly
# what it must count, not wait out.


@dataclass
class Sample:
    """One request of the continuous window: `seq` is its tick, `offset` when it started (s
    since the window began), `time` the same as ISO-8601 UTC."""

    seq: int
    offset: float
    time: str
    address: str | None
    answer: Answer
    elapsed: float = 0.0


def _wall() -> datetime:
    return datetime.now(timezone.utc)


def tick_count(rate: float, duration: float) -> int:
    """Requests in the window: ticks at i / rate for every i with i / rate < duration."""
    return max(1, int(math.ceil(duration * rate - 1e-9)))


def achieved_rate(offsets: list[float], duration: float) -> float:
    """Requests per second as sent: (n - 1) intervals over the span from the first request's
    start to the last's; one request alone counts over the whole window."""
    if len(offsets) > 1 and max(offsets) > min(offsets):
        return (len(offsets) - 1) / (max(offsets) - min(offsets))
    return len(offsets) / duration if duration > 0 else 0.0


def _failure(spec: ProbeSpec, sample: Sample) -> Obj | None:
    answer = sample.answer
    problem = judge(spec, answer)
    if problem is None:
        return None
    backend = None if answer.status is None else backend_of(answer.body, spec.backend_regex)
    entry: Obj = {"seq": sample.seq, "time": sample.time, "offset": round(sample.offset, 3), "address": sample.address,
                  "backend": backend}
    if answer.status is not None:
        entry["status"] = answer.status
    if answer.error is not None:
        entry["error"] = answer.error
    else:
        entry["problem"] = problem
    return entry


ANSWERED = "answered"


def outcome_of(spec: ProbeSpec, answer: Answer) -> str:
    """What one request of the window came to, for the report's per-second band: answered (as
    expected), its status code when another came, "wrong body", or the transport's failure
    (timed out, refused, reset, error)."""
    if judge(spec, answer) is None:
        return ANSWERED
    if answer.error is not None:
        error = answer.error.lower()
        for kind, words in (("timed out", ("timed out", "timeout")), ("refused", ("refused",)), ("reset", ("reset",))):
            if any(w in error for w in words):
                return kind
        return "error"
    return str(answer.status) if answer.status not in spec.status else "wrong body"


def per_second(spec: ProbeSpec, samples: list[Sample]) -> list[Obj]:
    """The window second by second, by when each request started: {"second": i, "outcomes": {outcome: n}}."""
    seconds: dict[int, dict[str, int]] = {}
    for s in samples:
        counts = seconds.setdefault(int(max(s.offset, 0.0)), {})
        outcome = outcome_of(spec, s.answer)
        counts[outcome] = counts.get(outcome, 0) + 1
    return [{"second": i, "outcomes": dict(sorted(counts.items()))} for i, counts in sorted(seconds.items())]


def _problem_counts(failures: list[Obj]) -> str:
    counts: dict[str, int] = {}
    for entry in failures:
        text = str(entry.get("error") or entry.get("problem") or "failed")
        counts[text] = counts.get(text, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "; ".join("%s (x%d)" % (text, n) for text, n in ranked[:5]) + ("; ..." if len(ranked) > 5 else "")


def summarise(spec: ProbeSpec, samples: list[Sample], started: str, elapsed: float) -> Obj:
    """The continuous result from its samples, whichever transport sent them: every failure
    listed, the answering backends counted, the verdict against max_failures."""
    rate = float(spec.rate or 0)
    samples = sorted(samples, key=lambda s: s.seq)
    failures = [f for f in (_failure(spec, s) for s in samples) if f is not None]
    backends = distribution([backend_of(s.answer.body, spec.backend_regex) for s in samples if s.answer.status is not None])
    addresses: list[str] = []
    for s in samples:
        if s.address and s.address not in addresses:
            addresses.append(s.address)
    achieved = achieved_rate([s.offset for s in samples], spec.duration)
    continuous = {
        "rate_requested": rate, "rate_achieved": round(achieved, 3), "duration": spec.duration,
        "started": started, "elapsed": round(elapsed, 3), "sent": len(samples),
        "scheduled": tick_count(rate, spec.duration),
        "answered": sum(1 for s in samples if s.answer.status is not None),
        "failures": failures, "failed_count": len(failures), "max_failures": spec.max_failures, "backends": backends,
        "per_second": per_second(spec, samples),
    }
    passed = len(failures) <= spec.max_failures and bool(samples)
    where = ", ".join(addresses) or "no address"
    summary = "%d sent at %g/s (achieved %.2f/s) over %gs to %s: %d failed (allowed %d)" % (
        len(samples), rate, achieved, spec.duration, where, len(failures), spec.max_failures)
    if failures:
        summary += ", first at +%.3fs, last at +%.3fs: %s" % (failures[0]["offset"], failures[-1]["offset"], _problem_counts(failures))
    return {
        "passed": passed, "reason": summary, "continuous": continuous, "attempts": [], "samples": [],
        "distribution": backends, "addresses": addresses, "url": None, "address": addresses[-1] if addresses else None,
        "host": None,
    }


def run_continuous(
    spec: ProbeSpec,
    send: Callable[[ProbeSpec, Target], Answer],
    lookup: Lookup | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], datetime] = _wall,
    workers: int | None = None,
) -> Obj:
    """Requests at start + i / rate for the whole window, each started on its tick whatever the
    answers before it took (never 'sleep after each answer'): a pool of worker threads sends
    them, so they may overlap. workers=1 sends inline (tests with a fake clock)."""
    rate = float(spec.rate or 0)
    resolver = _Resolver(spec, lookup, clock, max_age=LOOKUP_EVERY)
    count = tick_count(rate, spec.duration)
    # Enough threads that requests which all time out still leave one free at every tick (the
    # pool starts them only as needed); beyond MAX_WORKERS the rate drops, and rate_achieved says so.
    pool_size = workers or min(MAX_WORKERS, int(math.ceil(rate * spec.timeout * 1.25)) + 4)
    base, t0 = wall(), clock()
    seen: dict[str, Target] = {}

    def one(seq: int) -> Sample:
        offset = clock() - t0
        when = iso(base + timedelta(seconds=offset))
        target, problem = resolver.next()
        if target is None:
            return Sample(seq, offset, when, None, Answer(None, "", problem or "no target"))
        seen["last"] = target
        answer = send(spec, target)
        return Sample(seq, offset, when, target.address, answer, round(clock() - t0 - offset, 3))

    samples: list[Sample] = []
    if pool_size <= 1:
        for seq in range(count):
            _wait_until(t0 + seq / rate, clock, sleep)
            samples.append(one(seq))
    else:
        with ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="http_probe") as pool:
            futures = []
            for seq in range(count):
                _wait_until(t0 + seq / rate, clock, sleep)
                futures.append(pool.submit(one, seq))
            samples = [f.result() for f in futures]
    _wait_until(t0 + spec.duration, clock, sleep)  # the window lasts its duration, whatever the last answer took
    result = summarise(spec, samples, iso(base), clock() - t0)
    last = seen.get("last")
    if last is not None:
        result.update(url=last.url, host=last.host_header)
    result["continuous"]["workers"] = pool_size
    return result


def _wait_until(due: float, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
    delay = due - clock()
    if delay > 0:
        sleep(delay)


# --- transports -------------------------------------------------------------------------

def host_send(open_url: Callable[..., Any], http_error: type[Exception], validate_certs: bool = True
              ) -> Callable[[ProbeSpec, Target], Answer]:
    """A transport from this host through Ansible's open_url. connect_to is done like curl's:
    the request goes to the mapped peer, with the original Host header (and the same path)."""

    def send(spec: ProbeSpec, target: Target) -> Answer:
        if spec.connect_to_only and not target.mapped:
            return Answer(None, "", "%s to %s:%d refused: no connect_to entry maps it (connect_to_only: nothing listens there)"
                          % (spec.method, target.address, target.connect_port))
        parts = urlsplit(target.url)
        url = target.url
        if (target.connect_host, target.connect_port) != (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)):
            url = parts._replace(netloc="%s:%d" % (_bracket(target.connect_host), target.connect_port)).geturl()
        try:
            resp = open_url(url, method=spec.method, headers={"Host": target.host_header}, timeout=spec.timeout,
                            follow_redirects="none", use_proxy=False, validate_certs=validate_certs)
            return Answer(resp.getcode(), _text(resp.read(_MAX_BODY)))
        except http_error as exc:  # a non-2xx answer is still an answer
            try:
                body = exc.read(_MAX_BODY)  # type: ignore[attr-defined]
            except Exception:  # no body (HEAD, or already closed)
                body = b""
            return Answer(int(getattr(exc, "code", 0)), _text(body))
        except Exception as exc:  # connection refused, timeout, TLS: the attempt's error
            return Answer(None, "", "%s to %s:%d failed: %s" % (spec.method, target.connect_host, target.connect_port,
                                                                getattr(exc, "reason", None) or exc))

    return send


def _text(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def _curl_options(spec: ProbeSpec, target: Target) -> list[str]:
    """curl's options for one target (all but the URL); its --connect-to does what connect_to says."""
    argv = ["-sS", "-o", "-", "-w", _CURL_MARK + "%{http_code}", "--max-time", "%g" % spec.timeout,
            "-H", "Host: %s" % target.host_header]
    argv += ["--head"] if spec.method == "HEAD" else ["-X", spec.method]
    if target.url.startswith("https:"):
        argv.append("-k")  # the lab's certificates are self-signed
    for rule in spec.connect_to:
        argv += ["--connect-to", "%s:%s:%s:%s" % (_bracket(rule.host) if rule.host else "", rule.port,
                                                  _bracket(rule.target_host) if rule.target_host else "", rule.target_port)]
    return argv


def curl_argv(docker: str, node: str, spec: ProbeSpec, target: Target) -> list[str]:
    """curl inside the node container."""
    return [docker, "exec", node, "curl"] + _curl_options(spec, target) + [target.url]


NODE_HINT = ("cannot run curl in node container %r: on the twin (kindlab-twin) nodes are not containers, so use "
             "via: host with connect_to (kindlab-twin get connect-to --name CLUSTER, or the kind_cluster "
             "module's connect_to return)")


def parse_curl(rc: int, stdout: str, stderr: str, node: str) -> Answer:
    """(status, body) from curl's stdout with the write-out marker, or the error."""
    body, sep, code = stdout.rpartition(_CURL_MARK)
    if "No such container" in stderr or "is not running" in stderr:
        return Answer(None, "", NODE_HINT % node, fatal=True)
    if "Cannot connect to the Docker daemon" in stderr:  # no engine: a twin lab, or Docker is down
        return Answer(None, "", "docker has no engine to exec into (%s); " % stderr.strip()[:120] + NODE_HINT % node,
                      fatal=True)
    if rc != 0 or not sep or not code.strip().isdigit() or code.strip() == "000":
        return Answer(None, "", "curl in node %s failed (rc=%d): %s" % (node, rc, (stderr or stdout).strip()[:300]))
    return Answer(int(code.strip()), body)


def node_send(run_command: Callable[[list[str]], tuple[int, str, str]], docker: str, node: str
              ) -> Callable[[ProbeSpec, Target], Answer]:
    def send(spec: ProbeSpec, target: Target) -> Answer:
        rc, out, err = run_command(curl_argv(docker, node, spec, target))
        return parse_curl(rc, out, err, node)

    return send


# Continuous probing from a node: one `docker exec` runs this loop (a process per request through
# docker would not keep 20/s). It is a constant: every value comes in as an argument, never as
# shell text. bash's EPOCHREALTIME (bash 5, as in kind's Debian node image) schedules each tick
# at start + i * period without a fork and stamps it when the tick fires; each request runs in
# the background, so slow answers do not delay the next tick, and prints one line (shorter than
# PIPE_BUF, so lines do not mix); the loop lasts the whole window, whatever the last answer took:
#   __kindlab_sample__ SEQ START_US CURL_RC OUTPUT  (OUTPUT with backslash, newline and CR escaped)
NODE_LOOP = r"""set -u
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


def node_loop_argv(docker: str, node: str, spec: ProbeSpec, targets: list[Target]) -> list[str]:
    """`docker exec NODE bash -c NODE_LOOP` with the tick count, the period in microseconds, the
    URLs used in turn and curl's options (the first target's Host header and connect_to)."""
    rate = float(spec.rate or 1)
    period = max(1, int(round(1e6 / rate)))
    urls = [t.url for t in targets]
    return ([docker, "exec", node, "bash", "-c", NODE_LOOP, "kindlab-probe", str(tick_count(rate, spec.duration)),
             str(period), str(len(urls))] + urls + _curl_options(spec, targets[0]))


def _unescape(text: str) -> str:
    return _UNESCAPE.sub(lambda m: {"\\": "\\", "n": "\n", "r": "\r"}[m.group(1)], text)


def _loop_answer(rc: int, output: str, node: str) -> Answer:
    body, sep, rest = output.rpartition(_CURL_MARK)
    if not sep:
        body, rest = output, ""
    code, tail = rest[:3], rest[3:].strip()
    if rc != 0 or not code.isdigit() or code == "000":
        why = (tail or body or "no output").strip()[:300]
        return Answer(None, "", "curl in node %s failed (rc=%d): %s" % (node, rc, why))
    return Answer(int(code), body)


def parse_loop(rc: int, stdout: str, stderr: str, node: str, addresses: list[str]
               ) -> tuple[float | None, float, list[Sample], str | None]:
    """(start epoch, elapsed s, samples, fatal error) from NODE_LOOP's output. addresses[i % n]
    is the address of URL i % n, as the loop used them."""
    start: int | None = None
    end: int | None = None
    samples: list[Sample] = []
    for line in stdout.splitlines():
        if line.startswith("__kindlab_start__ "):
            start = int(line.split()[1])
        elif line.startswith("__kindlab_end__ "):
            end = int(line.split()[1])
        elif line.startswith("__kindlab_error__ "):
            return None, 0.0, [], "the probe loop in node %s cannot run: %s" % (node, line.split(" ", 1)[1])
        else:
            match = _LOOP_LINE.match(line)
            if match and start is not None:
                seq, began = int(match.group(1)), int(match.group(2))
                when = datetime.fromtimestamp(began / 1e6, timezone.utc)
                address = addresses[seq % len(addresses)] if addresses else None
                samples.append(Sample(seq, (began - start) / 1e6, iso(when), address,
                                      _loop_answer(int(match.group(3)), _unescape(match.group(4)), node)))
    if start is None:
        fatal = parse_curl(rc or 1, "", stderr, node)
        return None, 0.0, [], fatal.error if fatal.fatal else "the probe loop in node %s did not start (rc=%d): %s" % (
            node, rc, (stderr or stdout).strip()[:300])
    elapsed = ((end if end is not None else max([start] + [int(s.offset * 1e6) + start for s in samples])) - start) / 1e6
    return start / 1e6, elapsed, samples, None


def node_continuous(spec: ProbeSpec, run_command: Callable[[list[str]], tuple[int, str, str]], docker: str, node: str,
                    lookup: Lookup | None) -> Obj:
    """The continuous window from inside a node: the Ingresses' status is read once, at the
    start (the loop in the node cannot ask the API), and its addresses are used in turn."""
    targets: list[Target] = []
    if spec.ingresses and lookup is not None:
        addresses, default_host = lookup()
        targets = [build_target(spec, address, default_host) for address in addresses]
        if not targets:
            return _unprobed(spec, "no status address on Ingress %s at the start of the window" % _names(spec))
    else:
        targets = [build_target(spec, None, None)]
    rc, out, err = run_command(node_loop_argv(docker, node, spec, targets))
    start, elapsed, samples, fatal = parse_loop(rc, out, err, node, [t.address for t in targets])
    if fatal is not None or start is None:
        return _unprobed(spec, fatal or "no output from the probe loop")
    result = summarise(spec, samples, iso(datetime.fromtimestamp(start, timezone.utc)), elapsed)
    result.update(url=targets[-1].url, host=targets[0].host_header)
    if len(samples) < tick_count(float(spec.rate or 0), spec.duration):
        result["continuous"]["lost_lines"] = tick_count(float(spec.rate or 0), spec.duration) - len(samples)
    return result


def _unprobed(spec: ProbeSpec, why: str) -> Obj:
    result = summarise(spec, [], "", 0.0)
    result.update(passed=False, reason=why)
    return result


def node_from_context(context: str | None) -> str | None:
    """kind names its context kind-NAME and its first node container NAME-control-plane."""
    if context and context.startswith("kind-") and len(context) > 5:
        return context[5:] + "-control-plane"
    return None


def ingress_lookup(client: Any, refs: list[tuple[str, str]]) -> Lookup:
    """Read the Ingresses again at every request: their status addresses (in order, without
    repeats) and the first rule host among them."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses

    def lookup() -> tuple[list[str], str | None]:
        addresses: list[str] = []
        host: str | None = None
        for ns, name in refs:
            obj = client.get("networking.k8s.io/v1", "Ingress", name, ns)
            if obj is None:
                continue
            addresses += [a for a in status_addresses(obj) if a not in addresses]
            host = host or first_rule_host(obj)
        return addresses, host

    return lookup


def probe_from_module(
    params: Obj,
    make_client: Callable[..., Any],
    open_url: Callable[..., Any],
    http_error: type[Exception],
    run_command: Callable[[list[str]], tuple[int, str, str]],
    get_bin_path: Callable[[str], str | None],
) -> Obj:
    """The module's one call: validate everything, pick the transport, run the probe."""
    spec = parse_spec(params)
    node = None
    if params.get("via") == "node":
        node = params.get("node") or node_from_context(params.get("context"))
        if not node:
            raise ProbeError("node: via=node needs the node container's name (e.g. ingress-lab-control-plane), "
                             "or a kind-NAME context to derive it from")
        docker = get_bin_path(params.get("docker_binary") or "docker")
        if docker is None:
            raise ProbeError("docker_binary: %r not found; via=node runs curl in a kind node container. " % (
                params.get("docker_binary") or "docker") + NODE_HINT % node)
        send = node_send(run_command, docker, node)
        if spec.rate is not None:
            return _node_window(params, spec, make_client, run_command, docker, node)
    else:
        send = host_send(open_url, http_error, bool(params.get("validate_certs", True)))
    client, ingresses = _checked_ingresses(params, spec, make_client)
    origin = _Origin(spec, client, ingresses)
    result = run_probe(spec, send, ingress_lookup(client, spec.ingresses) if client is not None else None)
    origin.check(result)
    result["via"] = "node" if node else "host"
    if node:
        result["node"] = node
    if spec.ingresses:
        result["ingresses"] = ["%s/%s" % ref for ref in spec.ingresses]
    return result


def _checked_ingresses(params: Obj, spec: ProbeSpec, make_client: Callable[..., Any]) -> tuple[Any, list[Obj]]:
    """(the client, the probed Ingresses), after checking each exists; (None, []) for a URL."""
    if not spec.ingresses:
        return None, []
    client = make_client(params.get("kubeconfig"), params.get("context"))
    found = [(ns, name, client.get("networking.k8s.io/v1", "Ingress", name, ns)) for ns, name in spec.ingresses]
    missing = ["%s/%s" % (ns, name) for ns, name, obj in found if obj is None]
    if missing:
        raise ProbeError("ingress: Ingress %s not found" % ", ".join(missing))
    return client, [obj for _ns, _name, obj in found if obj is not None]


class _Origin:
    """The check that a probe of Ingresses was answered from this cluster (probe_origin): the pods behind their
    Services read before the probe and again after it. Nothing to check for a URL, or with a backend_regex of the
    scenario's own (it may not name pods)."""

    def __init__(self, spec: ProbeSpec, client: Any, ingresses: list[Obj]) -> None:
        self.refs = spec.ingresses
        self.client = client if spec.backend_regex.pattern == DEFAULT_BACKEND_REGEX else None
        self.services = probe_origin.services_of(ingresses) if self.client is not None else []
        self.before = probe_origin.pods_behind(self.client, self.services)

    def check(self, result: Obj) -> None:
        if self.client is None:
            return
        known = self.before | probe_origin.pods_behind(self.client, self.services)
        foreign = probe_origin.foreign_pods(self.client, result.get("distribution") or {}, known,
                                            sorted({ns for ns, _name in self.refs}))
        probe_origin.refuse_foreign(result, foreign, self.refs)


def _node_window(params: Obj, spec: ProbeSpec, make_client: Callable[..., Any],
                 run_command: Callable[[list[str]], tuple[int, str, str]], docker: str, node: str) -> Obj:
    client, ingresses = _checked_ingresses(params, spec, make_client)
    origin = _Origin(spec, client, ingresses)
    result = node_continuous(spec, run_command, docker, node, ingress_lookup(client, spec.ingresses) if client is not None else None)
    origin.check(result)
    result.update(via="node", node=node)
    if spec.ingresses:
        result["ingresses"] = ["%s/%s" % ref for ref in spec.ingresses]
    return result


def run_http_probe(params: Params, module: Module) -> Obj:
    """The http_probe module: probe, and fail (with the whole result) when it does not pass
    and fail_on_violation is set. The kubernetes client is needed only with `ingress`."""
    result = probe_from_module(dict(params), make_client=module.client, open_url=open_url, http_error=HTTPError,
                               run_command=module.run_command, get_bin_path=module.which)
    if params["fail_on_violation"] and not result["passed"]:
        raise CheckFailed("http_probe: " + result["reason"], **dict(result, changed=False))
    return dict(result, changed=False)
