#!/usr/bin/env bash
# Installs the kind path's client tools at pinned versions into DEST (default .tools/bin), for
# CI runners that have Docker (the GitHub workflow .github/workflows/kind-lab.yml, the GitLab
# template .gitlab/kind-lab.gitlab-ci.yml) and for people who want the same versions:
#   kind  - `go install sigs.k8s.io/kind@KIND_VERSION` (the pin in plugins/module_utils/_versions.py);
#   helm  - `go install helm.sh/helm/v4/cmd/helm@HELM_VERSION`;
#           the go command checks every module it downloads against the Go checksum database
#           (GOSUMDB, on by default; this script refuses GOSUMDB=off and GONOSUMDB, GOPRIVATE,
#           GOINSECURE) and refuses a mismatch; a newer Go toolchain that a go.mod asks for is
#           fetched and checked the same way;
#   kubectl - the release binary from dl.k8s.io, checked against the sha256 that the Kubernetes
#           release publishes beside it (Kubernetes' documented install).
# Idempotent: a tool already in DEST at the pinned version is kept. Prints nothing on stdout.
#   hack/ci-tools.sh [DEST]
#   KIND_VERSION, HELM_VERSION, KUBECTL_VERSION override the pins.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.tools/bin}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"

pin() { sed -n "s/^$1 = \"\(.*\)\"$/\1/p" "$ROOT/plugins/module_utils/_versions.py"; }
KIND_VERSION="${KIND_VERSION:-$(pin KIND_VERSION)}"
HELM_VERSION="${HELM_VERSION:-v4.3.1}"
# kubectl within one minor of the node image (kindest/node v1.35.x).
KUBECTL_VERSION="${KUBECTL_VERSION:-v1.35.5}"

die() { printf 'ci-tools.sh: error: %s\n' "$*" >&2; exit 1; }
[ -n "$KIND_VERSION" ] || die "KIND_VERSION not found in plugins/module_utils/_versions.py"
command -v go >/dev/null || die "the go command is needed (kind and helm are built from their Go modules)"
[ "$(uname -s)/$(uname -m)" = "Linux/x86_64" ] || die "this script installs linux amd64 tools (this is $(uname -s)/$(uname -m))"
for var in GONOSUMDB GOPRIVATE GOINSECURE; do
    [ -z "${!var:-}" ] || die "$var is set: the Go checksum database must check every module"
done
[ "$(go env GOSUMDB)" != off ] || die "GOSUMDB=off: the Go checksum database must check every module"

has() { [ -x "$DEST/$1" ] && [ "$(cat "$DEST/.$1.version" 2>/dev/null)" = "$2" ]; }

go_tool() {  # name module-path version
    has "$1" "$3" && return 0
    echo "+ GOBIN=$DEST go install $2@$3" >&2
    GOBIN="$DEST" GOTOOLCHAIN=auto go install "$2@$3"
    echo "$3" >"$DEST/.$1.version"
}

go_tool kind sigs.k8s.io/kind "$KIND_VERSION"
go_tool helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION"

if ! has kubectl "$KUBECTL_VERSION"; then
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    base="https://dl.k8s.io/release/$KUBECTL_VERSION/bin/linux/amd64"
    echo "+ curl $base/kubectl and kubectl.sha256; sha256sum --check" >&2
    curl -fsSL --retry 3 -o "$tmp/kubectl" "$base/kubectl"
    curl -fsSL --retry 3 -o "$tmp/kubectl.sha256" "$base/kubectl.sha256"
    (cd "$tmp" && echo "$(cat kubectl.sha256)  kubectl" | sha256sum --check --strict) || die "kubectl $KUBECTL_VERSION: checksum mismatch"
    install -m 0755 "$tmp/kubectl" "$DEST/kubectl"
    echo "$KUBECTL_VERSION" >"$DEST/.kubectl.version"
fi

"$DEST/kind" version >&2
"$DEST/helm" version --short >&2
"$DEST/kubectl" version --client >&2
