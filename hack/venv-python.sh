#!/usr/bin/env bash
# The interpreter `make setup` builds the venv from (the Makefile's PYTHON, unless given): the
# system's /usr/bin/python3 when it is 3.11 to 3.13 and can make a venv (ensurepip: Debian's python3-venv),
# else python3 on PATH.
# Why: ansible imports each module's module_utils from a zip on every run, so they are compiled from
# source each time, and the tests are Python too. On the 2-core development machine Debian's 3.11.2
# took less CPU than the pyenv 3.11.7 on PATH (built without --enable-optimizations): the figures are in
# docs/benchmarks.md (benchmarks/python_cpu_bench.py).
set -euo pipefail
system="${KINDLAB_SYSTEM_PYTHON:-/usr/bin/python3}"  # (the variable: for its tests)
if [ -x "$system" ] && "$system" -c 'import sys, ensurepip; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null; then
    echo "$system"
else
    echo python3
fi
