# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A best-effort read in a daemon thread while a watch window runs: repeated every `period` seconds,
or done once (period None). A read that fails only ends the background reads (the caller's last,
foreground read raises a real bug), and stop_reading() never waits out a read the server does not answer:
the window's end is bounded, not the reads."""
from __future__ import annotations

import threading

STOP_WAIT = 2.0  # seconds stop_reading() waits for a read in flight


class BackgroundReader:
    period: float | None = None  # None: one read
    thread_name = "kindlab-reader"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self, rounds: int) -> None:
        """One read; ROUNDS: how many periods have passed (0 for the one read)."""
        raise NotImplementedError

    def _loop(self) -> None:
        rounds = 0
        if self.period is None:
            self._quietly(rounds)
            return
        while not self._stop.wait(self.period):
            rounds += 1
            if not self._quietly(rounds):
                return

    def _quietly(self, rounds: int) -> bool:
        try:
            self.poll(rounds)
        except Exception:  # best effort in the background; the caller's last read raises a real bug
            return False
        return True

    def start_reading(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop_reading(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT)
