# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A probe on a fixed schedule (`rate`): requests for `duration` seconds, every failure listed with its
time. From this host, run_continuous starts each request on its tick in a thread pool, so slow answers do
not lower the rate; from a node, node_continuous has one loop in the node send them all (transport/node.py).

The window starts at once and replaces both the attempts and the samples: it is a measurement over a fixed
span that a scenario's actions are timed against, so a wait for a first good answer would move it by an
unknown amount, and an outage at its start is exactly what it must count, not wait out."""
from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeSpec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import (
    Lookup,
    Resolver,
    Target,
    backend_of,
    build_target,
    distribution,
    judge,
    names_of,
)

Obj = dict[str, Any]
# The most requests in flight from the host (rate x timeout of them when every answer times out, as to a
# stale endpoint's dead address).
MAX_WORKERS = 256
# The Ingress status is read again at most this often in continuous mode (not at every request).
LOOKUP_EVERY = 1.0


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
    send: Callable[[Request], Answer],
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
    resolver = Resolver(spec, lookup, clock, max_age=LOOKUP_EVERY)
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
        answer = send(target.request)
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


def node_samples(node: NodeTransport, spec: ProbeSpec, targets: list[Target]
                 ) -> tuple[float | None, float, list[Sample], str | None]:
    """(start epoch, elapsed s, samples, fatal error) of the window sent from NODE's loop, the targets' URLs used
    in turn (targets[i % n] is the address of request i)."""
    rate = float(spec.rate or 1)
    run = node.loop([t.request for t in targets], tick_count(rate, spec.duration), max(1, int(round(1e6 / rate))))
    if run.fatal is not None or run.start is None:
        return None, 0.0, [], run.fatal
    start = run.start
    addresses = [t.address for t in targets]
    samples = [Sample(t.seq, (t.began - start) / 1e6, iso(datetime.fromtimestamp(t.began / 1e6, timezone.utc)),
                      addresses[t.seq % len(addresses)] if addresses else None, t.answer) for t in run.ticks]
    elapsed = ((run.end if run.end is not None else max([start] + [int(s.offset * 1e6) + start for s in samples])) - start) / 1e6
    return start / 1e6, elapsed, samples, None


def node_continuous(spec: ProbeSpec, node: NodeTransport, lookup: Lookup | None) -> Obj:
    """The continuous window from inside a node: the Ingresses' status is read once, at the
    start (the loop in the node cannot ask the API), and its addresses are used in turn."""
    targets: list[Target] = []
    if spec.ingresses and lookup is not None:
        addresses, default_host = lookup()
        targets = [build_target(spec, address, default_host) for address in addresses]
        if not targets:
            return _unprobed(spec, "no status address on Ingress %s at the start of the window" % names_of(spec))
    else:
        targets = [build_target(spec, None, None)]
    start, elapsed, samples, fatal = node_samples(node, spec, targets)
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
