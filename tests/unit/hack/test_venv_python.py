"""hack/venv-python.sh, the Makefile's default PYTHON: the system's python3 when it is 3.11 to 3.13 and
can make a venv, else python3 on PATH."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "venv-python.sh"


def chosen(system: Path) -> str:
    done = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=30, check=True,
                          env=dict(os.environ, KINDLAB_SYSTEM_PYTHON=str(system)))
    return done.stdout.strip()


def fake_python(tmp_path: Path, version: tuple[int, int], has_ensurepip: bool = True) -> Path:
    """A stand-in that answers the script's one question as a Python of VERSION would."""
    path = tmp_path / "python3"
    ok = (3, 11) <= version <= (3, 13) and has_ensurepip
    path.write_text("#!/bin/sh\nexit %d\n" % (0 if ok else 1))
    path.chmod(0o755)
    return path


def test_a_system_python_of_a_supported_version_is_chosen(tmp_path: Path) -> None:
    system = fake_python(tmp_path, (3, 12))
    assert chosen(system) == str(system)


def test_an_older_one_or_one_that_cannot_make_a_venv_leaves_python3_on_path(tmp_path: Path) -> None:
    assert chosen(fake_python(tmp_path, (3, 9))) == "python3"
    assert chosen(fake_python(tmp_path, (3, 11), has_ensurepip=False)) == "python3"
    assert chosen(tmp_path / "absent") == "python3"


def test_the_real_question_is_asked_of_the_interpreter(tmp_path: Path) -> None:
    # A real interpreter, through a link: the script asks it for its version and ensurepip itself.
    real = Path("/usr/bin/python3")
    if not real.exists():
        real = Path(os.path.realpath(subprocess.run(["sh", "-c", "command -v python3"], capture_output=True,
                                                    text=True, check=True).stdout.strip()))
    link = tmp_path / "python3"
    link.symlink_to(real)
    probe = subprocess.run([str(real), "-c", "import sys, ensurepip; print(sys.version_info[:2] <= (3, 13))"],
                           capture_output=True, text=True, check=False)
    expected = str(link) if probe.returncode == 0 and probe.stdout.strip() == "True" else "python3"
    assert chosen(link) == expected
