#!/usr/bin/env bash
# The interpreter `make setup` builds the venv from (the Makefile's PYTHON, unless given): the
# system's /usr/bin/python3 when it is 3.11 to 3.13 and can make a venv (ensurepip: Debian's python3-venv),
# else python3 on PATH.
# Why: ansible imports each module's module_utils from a zip on every run, so they are compiled from
# source each time, and the tests are Python too. On the 2-core development machine Debian's 3.11.2
# took about a fifth less CPU than the 3.11.7 on PATH (a pyenv build without --enable-optimizations):
# lab.yml --check on the twin 7.2 and 8.1 CPU-s against 8.9 and 10.4, 441 unit tests 9.9 and 9.8
# against 13.2 and 10.7 (session 21, issue 33's notes).
set -euo pipefail
system="${KINDLAB_SYSTEM_PYTHON:-/usr/bin/python3}"  # (the variable: for its tests)
if [ -x "$system" ] && "$system" -c 'import sys, ensurepip; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null; then
    echo "$system"
else
    echo python3
fi
