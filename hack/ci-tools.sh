#!/usr/bin/env bash
# Puts the kind path's client tools - kind, helm and kubectl at the versions pinned in
# plugins/module_utils/_versions.py (KIND_CLIENT_BINARIES) - into DEST (default .tools/bin), for
# CI runners that have Docker (.github/workflows/kind-lab.yml, .gitlab/kind-lab.gitlab-ci.yml)
# and for people who want the same versions.
#   hack/ci-tools.sh [DEST]
# They are built from their Go modules by the project's one builder (`kindlab-twin build
# binaries`, in the project venv that `make setup` creates), so the go command checks every
# module against the Go checksum database; this script refuses settings that would skip that
# check. The binaries stay in ~/.cache/kindlab/bin (built once per machine); DEST gets links.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.tools/bin}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"

die() { printf 'ci-tools.sh: error: %s\n' "$*" >&2; exit 1; }
command -v go >/dev/null || die "the go command is needed (kind, helm and kubectl are built from their Go modules)"
for var in GONOSUMDB GOPRIVATE GOINSECURE; do
    [ -z "${!var:-}" ] || die "$var is set: the Go checksum database must check every module"
done
[ "$(go env GOSUMDB)" != off ] || die "GOSUMDB=off: the Go checksum database must check every module"

make -C "$ROOT" --no-print-directory setup >&2
"$ROOT/.venv/bin/kindlab-twin" build binaries --set kind-clients --link-into "$DEST"

"$DEST/kind" version >&2
"$DEST/helm" version --short >&2
"$DEST/kubectl" version --client >&2
