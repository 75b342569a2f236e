# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A probe made once: attempts until the expected answer (each request resolved again), then samples
whose answering backends make a distribution. The loop takes its transport (`send`), the address lookup,
clock and sleep as arguments, so it is tested without a network."""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import run_continuous
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeSpec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import (
    Lookup,
    Resolver,
    Target,
    backend_of,
    distribution,
    judge,
)

Obj = dict[str, Any]
Send = Callable[[Request], Answer]


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


def run_probe(
    spec: ProbeSpec,
    send: Send,
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
    resolver = Resolver(spec, lookup)
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
        answer = send(target.request)
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


def _sample(spec: ProbeSpec, send: Send, resolver: Resolver, result: Obj,
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
        answer = send(target.request)
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
