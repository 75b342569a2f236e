#!/usr/bin/env bash
# `make test` (and so CI): every stage of the test suite, each timed, and at the end - passed or
# failed - a table of the stages and their seconds, so that every CI log shows where the time went.
# Stages that record their own parts (the Go builds, hack/test-kind.sh: each scenario, the diagnose
# table, ...) add them to the table through stage_record (hack/lib.sh).
#
#   hack/ci-stages.sh            every stage of make test
#   hack/ci-stages.sh STAGE...   these stages, one after another
#
# A stage is a make target. The first stages run one after another (what every later one needs:
# the venv, Debian's chromium, helm, the Go builds and charts: nothing later installs or fetches
# what the other track also would). Then two tracks run side by side:
#   checks  unit tests, static checks, molecule: mostly CPU;
#   kind    the engine test, then every scenario on kind and the twin, the diagnose table, the
#           fault test: mostly waiting for controllers, status periods and pods.
# The checks track sees no Docker engine (DOCKER_HOST points nowhere), as when it ran before the
# engine existed: nothing there may pick the lab's engine up; and it has a KINDLAB_TWIN_HOME of its
# own. Its output is kept in a file and printed when it ends, so the log reads one track at a time.
# The kind track's side cluster (hack/test-kind.sh: the diagnose table, the fault test and its share of
# the scenarios) starts when the unit tests have ended, the checks track's heaviest and longest stage:
# KINDLAB_SIDE_GO is touched as stage SIDE_AFTER ends (and when the track ends, failed or not). It used to
# wait for the whole track, while the static checks and molecule left the machine 20-30 % idle; in the cold
# run of 1c08dea it started 530 s earlier and the kind track, the longer one, ended about 130 s earlier
# (changelogs/fragments/testing-figures-history.yml). Starting it with the unit tests gained nothing: the machine was saturated.
# Every stage runs even after one has failed (the table then shows every stage's cost); the exit
# status is non-zero when any failed.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FIRST=(setup chromium helm test-binaries)
CHECKS=(unit-inputs unit mypy syntax lint sanity collection workflows molecule)
KIND=(engine-test test-kind)
SIDE_AFTER=unit

KINDLAB_STAGE_LOG="$(mktemp /tmp/kindlab-stages.XXXXXX)"
export KINDLAB_STAGE_LOG
FAILED="$(mktemp /tmp/kindlab-stages-failed.XXXXXX)"
# Each stage's output is also kept here, so that a failed stage's last lines can close the log: a CI
# page often shows only the log's end, and the table alone says where it failed, not why.
OUTPUTS="$(mktemp -d /tmp/kindlab-stage-outputs.XXXXXX)"
CHECKS_LOG=""
KINDLAB_SIDE_GO="$(mktemp -u /tmp/kindlab-side-go.XXXXXX)"
started_all=$SECONDS

table() {
    printf '\n==== CI budget: seconds per stage (parts indented; the two tracks ran side by side) ====\n'
    awk -F'\t' '{ printf "%-60s %7d  %s\n", $1, $2, $3 }' "$KINDLAB_STAGE_LOG"
    printf '%-60s %7d  %s\n' "total (wall clock)" "$((SECONDS - started_all))" \
        "$(if [ -s "$FAILED" ]; then echo "failed: $(tr '\n' ' ' <"$FAILED")"; fi)"
    local name
    while read -r name; do
        printf '\n==== the last lines of make %s (it failed) ====\n' "$name"
        tail -n 40 "$OUTPUTS/$name"
    done <"$FAILED"
    rm -rf "$KINDLAB_STAGE_LOG" "$FAILED" "${CHECKS_LOG:-}" "$KINDLAB_SIDE_GO" "$OUTPUTS"
}
trap table EXIT

# stage NAME: make NAME, timed; its line (and the parts it recorded, indented) go to the table.
stage() {
    local name="$1" started=$SECONDS rc=0 parts
    printf '\n==== make %s ====\n' "$name" >&2
    parts="$(mktemp /tmp/kindlab-stage-parts.XXXXXX)"
    KINDLAB_STAGE_LOG="$parts" make --no-print-directory -C "$ROOT" "$name" 2>&1 | tee "$OUTPUTS/$name" || rc=${PIPESTATUS[0]}
    local result=ok
    if [ "$rc" != 0 ]; then result="FAILED (rc=$rc)"; echo "$name" >>"$FAILED"; fi
    { printf '%s\t%d\t%s\n' "$name" "$((SECONDS - started))" "$result"; sed 's/^/  /' "$parts"; } >>"$KINDLAB_STAGE_LOG"
    rm -f "$parts"
}

# track NAME STAGE...: the stages one after another, and the track's own line. SIDE_GO, when set, is touched
# as stage SIDE_AFTER ends.
track() {
    local name="$1" started=$SECONDS
    shift
    for s in "$@"; do
        stage "$s"
        [ "$s" != "$SIDE_AFTER" ] || [ -z "${SIDE_GO:-}" ] || touch "$SIDE_GO"
    done
    printf '%s\t%d\t%s\n' "track $name (wall clock)" "$((SECONDS - started))" "" >>"$KINDLAB_STAGE_LOG"
}

if [ "$#" -gt 0 ]; then
    for s in "$@"; do stage "$s"; done
else
    for s in "${FIRST[@]}"; do stage "$s"; done
    CHECKS_LOG="$(mktemp /tmp/kindlab-checks.XXXXXX)"
    export KINDLAB_SIDE_GO  # (only here: a stage run alone has no checks track to wait for)
    printf '\n==== the checks track (%s) runs beside the kind track; its output follows when it ends ====\n' \
        "${CHECKS[*]}" >&2
    # Its own twin home too: molecule's twin and the kind track's twin series never meet.
    (DOCKER_HOST=unix:///nonexistent/kindlab-checks-track-sees-no-engine \
        KINDLAB_TWIN_HOME="$(mktemp -d /tmp/kindlab-checks-twins.XXXXXX)" SIDE_GO="$KINDLAB_SIDE_GO" \
        track checks "${CHECKS[@]}"; touch "$KINDLAB_SIDE_GO") \
        >"$CHECKS_LOG" 2>&1 &
    checks_pid=$!
    track kind "${KIND[@]}"
    wait "$checks_pid" || true
    printf '\n==== the checks track ====\n' >&2
    cat "$CHECKS_LOG" >&2
fi

[ ! -s "$FAILED" ]
