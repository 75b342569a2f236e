#!/usr/bin/env bash
# Every pinned Go binary `make test` needs, in one build (`kindlab-twin build binaries`: modules side
# by side, a no-op for what is cached): the twin's, the unit stage's inputs (_versions.py's sets), and
# where test-kind runs (Linux as root) the kind node's and images' and the kind clients'. The stages
# after it then find them all there (make test runs two tracks side by side: neither builds).
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool kindlab-twin

names=()  # (names first: argparse takes no names after an option)
sets=(--set twin --set unit-inputs)
if [ "$(uname -s)" = Linux ] && [ "$(id -u)" -eq 0 ]; then
    ensure_runc_build_deps
    names+=(kind kubectl)
    sets+=(--set kind-images)
fi
kindlab-twin build binaries "${names[@]}" "${sets[@]}"
