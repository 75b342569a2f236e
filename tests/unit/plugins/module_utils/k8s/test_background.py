"""The background reader the status watch's pollers share: repeated or once, a failure ends it quietly,
and stopping it never waits out a read that does not return."""
from __future__ import annotations

import threading
import time

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import background
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.background import BackgroundReader


class Counting(BackgroundReader):
    period = 0.01

    def __init__(self, fail_at: int = 0) -> None:
        super().__init__()
        self.rounds: list[int] = []
        self.fail_at = fail_at

    def poll(self, rounds: int) -> None:
        self.rounds.append(rounds)
        if rounds == self.fail_at:
            raise RuntimeError("a bug")


def test_it_reads_every_period_until_stopped() -> None:
    reader = Counting()
    reader.start_reading()
    time.sleep(0.2)
    reader.stop_reading()
    count = len(reader.rounds)
    assert count >= 3 and reader.rounds[:3] == [1, 2, 3]
    time.sleep(0.05)
    assert len(reader.rounds) == count  # stopped


def test_a_failing_read_ends_the_background_reads_quietly() -> None:
    reader = Counting(fail_at=2)
    reader.start_reading()
    time.sleep(0.2)
    reader.stop_reading()
    assert reader.rounds == [1, 2]


def test_once_and_a_read_that_hangs_is_not_waited_out(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    release = threading.Event()

    class Once(BackgroundReader):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def poll(self, rounds: int) -> None:
            self.calls += 1
            release.wait(5)

    monkeypatch.setattr(background, "STOP_WAIT", 0.1)
    reader = Once()
    reader.start_reading()
    began = time.monotonic()
    reader.stop_reading()
    assert time.monotonic() - began < 1 and reader.calls == 1
    release.set()
