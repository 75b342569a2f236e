#!/usr/bin/env bash
# Runs the molecule scenarios under extensions/molecule/ (molecule's collection layout),
# each with `molecule test`, from the repository root with the collection on
# ANSIBLE_COLLECTIONS_PATH. Scenarios whose name starts with "kind" need a real kind
# cluster: a Docker engine, and kind and helm on PATH (lab_backend auto's rule); they are
# skipped, saying so, without them. Offline inputs, if needed, go in KINDLAB_MOLECULE_VARS.
#   hack/molecule.sh [scenario ...]     (default: every scenario that can run here)
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool molecule
ensure_collection_link
cd "$ROOT"

docker_ok=false
if command -v docker >/dev/null 2>&1 && command -v kind >/dev/null 2>&1 && command -v helm >/dev/null 2>&1 \
        && docker info >/dev/null 2>&1; then
    docker_ok=true
fi

scenarios=("$@")
if [ "${#scenarios[@]}" -eq 0 ]; then
    for config in extensions/molecule/*/molecule.yml; do
        [ -e "$config" ] || continue
        name="$(basename "$(dirname "$config")")"
        if [[ "$name" == kind* ]] && [ "$docker_ok" = false ]; then
            echo "SKIPPED molecule scenario $name: it needs a Docker engine answering, and kind and helm on PATH" >&2
            continue
        fi
        scenarios+=("$name")
    done
fi
if [ "${#scenarios[@]}" -eq 0 ]; then
    echo "no molecule scenario to run under extensions/molecule/" >&2
    exit 0
fi

failed=()
for name in "${scenarios[@]}"; do
    run molecule test -s "$name" || failed+=("$name")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "molecule FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "molecule passed: ${scenarios[*]}" >&2
