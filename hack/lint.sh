#!/usr/bin/env bash
# Runs ansible-lint (production profile, configured in .ansible-lint; its yaml rule runs
# yamllint) over the collection: galaxy.yml, meta/, roles/, playbooks/, inventories/,
# scenarios/, extensions/molecule/. Offline: no Galaxy installs, no schema refresh.
#   hack/lint.sh [extra ansible-lint args, e.g. roles/metallb]
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool ansible-lint
ensure_collection_link
cd "$ROOT"
run ansible-lint --offline --config-file .ansible-lint --profile production "$@"
