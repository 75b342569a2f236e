"""hack/lib.sh's beside / ended_well, which hack/test-kind.sh runs its twin and side-cluster series with:
a series' verdict comes from the status it wrote, never from `wait PID`, whose answer belongs to
whichever child last had that pid once the machine's pids wrap."""
from __future__ import annotations

import subprocess
from pathlib import Path

LIB = Path(__file__).resolve().parents[3] / "hack" / "lib.sh"


def bash(script: str, tmp_path: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", 'source "$1"; S="$2"; ' + script, "bash", str(LIB), str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return done.stdout.strip()


def test_a_series_that_ends_well_is_well_and_one_that_fails_is_not(tmp_path: Path) -> None:
    out = bash(
        'good() { false || true; echo ran; }; bad() { echo ran; false; echo "never here"; }; '
        'beside "$S/good" good >"$S/good.log"; g=$!; beside "$S/bad" bad >"$S/bad.log"; b=$!; '
        'ended_well "$S/good" "$g" && echo good-well || echo good-not-well; '
        'ended_well "$S/bad" "$b" && echo bad-well || echo bad-not-well',
        tmp_path,
    )
    assert out.splitlines() == ["good-well", "bad-not-well"]
    assert (tmp_path / "bad.log").read_text() == "ran\n"  # errexit holds inside the series
    assert (tmp_path / "bad").read_text().strip() == "1"


def test_the_verdict_is_the_written_status_not_what_wait_says_of_the_pid(tmp_path: Path) -> None:
    # A pid whose `wait` answers 7 stands in for a series' pid reused by a later, failing command.
    out = bash(
        'good() { :; }; beside "$S/good" good; g=$!; wait "$g"; '
        '(exit 7) & other=$!; wait "$other" || echo "wait says $?"; '
        'ended_well "$S/good" "$other" && echo well || echo not-well',
        tmp_path,
    )
    assert out.splitlines() == ["wait says 7", "well"]


def test_a_series_killed_before_it_wrote_its_status_is_not_well(tmp_path: Path) -> None:
    out = bash(
        'slow() { sleep 3; }; beside "$S/slow" slow >/dev/null 2>&1; s=$!; kill -9 "$s"; '
        'ended_well "$S/slow" "$s" && echo well || echo not-well',
        tmp_path,
    )
    assert out == "not-well"
    assert not (tmp_path / "slow").exists()
