#!/usr/bin/env bash
# Every pinned Go binary `make test` needs, in one build (`kindlab-twin build binaries`: modules side
# by side, a no-op for what is cached): the twin's, the ingress-nginx controller (its module carries
# the chart the unit tests render), actionlint, and where test-kind runs (Linux as root) the kind
# node's and images' and the kind clients'; and Traefik's chart from its Go module. The stages after
# it then find them all there (make test runs two of them side by side: neither builds or fetches).
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool kindlab-twin

args=(--set twin ingress-nginx-controller actionlint)
if [ "$(uname -s)" = Linux ] && [ "$(id -u)" -eq 0 ]; then
    ensure_runc_build_deps
    args+=(--set kind-images kind kubectl)
fi
kindlab-twin build binaries "${args[@]}"
"$ROOT/hack/traefik-chart.sh" >/dev/null
