#!/usr/bin/env bash
# Traefik's pinned chart, fetched once from its Go module (TRAEFIK_CHART_MODULE: the module's
# traefik/ directory is the chart) into the cache, never into the repo; prints its directory
# (the type's offline_chart, KIND_OFFLINE_TRAEFIK_CHART under the kindlab cache). Used by
# hack/kind-images.sh (lab_charts.traefik on kind) and `make unit` (tests/twin/test_traefik_chart_args.py
# renders it with real helm).
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
read -r module version <<<"$(pin TRAEFIK_CHART_MODULE)"
chart="$("$VENV/bin/python" -m kindlab_twin.controller_types offline-chart traefik)"
if [ ! -f "$chart/Chart.yaml" ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
    [ -f "$dir/traefik/Chart.yaml" ] || die "$module@$version has no traefik/Chart.yaml"
    rm -rf "$chart.new" && mkdir -p "$(dirname "$chart")"
    cp -r "$dir/traefik" "$chart.new" && chmod -R u+w "$chart.new"  # the module cache is read-only
    mv "$chart.new" "$chart"
    echo "traefik-chart.sh: Traefik's chart $version in $chart" >&2
fi
echo "$chart"
