#!/usr/bin/env bash
# `make test` (and so CI): every stage of the test suite, each timed, and at the end - passed or
# failed - a table of the stages and their seconds, so that every CI log shows where the time went.
# Stages that record their own parts (hack/test-kind.sh: each scenario, the diagnose table, ...)
# add them to the table through stage_record (hack/lib.sh).
#
#   hack/ci-stages.sh [STAGE ...]     (default: every stage of make test, in order)
#
# A stage is a make target. All stages run even after one fails (the table then shows every
# stage's cost), and the script exits non-zero when any failed.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STAGES=("$@")
[ "${#STAGES[@]}" -gt 0 ] || STAGES=(setup test-binaries unit-inputs unit mypy syntax lint sanity collection workflows molecule engine-test test-kind)

KINDLAB_STAGE_LOG="$(mktemp /tmp/kindlab-stages.XXXXXX)"
export KINDLAB_STAGE_LOG
started_all=$SECONDS
failed=()

table() {
    printf '\n==== CI budget: seconds per stage (parts indented) ====\n'
    awk -F'\t' '{ printf "%-58s %7d  %s\n", $1, $2, $3 }' "$KINDLAB_STAGE_LOG"
    printf '%-58s %7d  %s\n' "total" "$((SECONDS - started_all))" "${failed[*]:+failed: ${failed[*]}}"
    rm -f "$KINDLAB_STAGE_LOG"
}
trap table EXIT

for stage in "${STAGES[@]}"; do
    printf '\n==== make %s ====\n' "$stage" >&2
    started=$SECONDS
    # The stage's own parts are recorded while it runs; its line goes before them.
    parts="$(mktemp /tmp/kindlab-stage-parts.XXXXXX)"
    rc=0
    KINDLAB_STAGE_LOG="$parts" make --no-print-directory -C "$ROOT" "$stage" || rc=$?
    result=ok
    [ "$rc" = 0 ] || { result="FAILED (rc=$rc)"; failed+=("$stage"); }
    printf '%s\t%d\t%s\n' "$stage" "$((SECONDS - started))" "$result" >>"$KINDLAB_STAGE_LOG"
    sed 's/^/  /' "$parts" >>"$KINDLAB_STAGE_LOG"
    rm -f "$parts"
done

[ "${#failed[@]}" -eq 0 ]
