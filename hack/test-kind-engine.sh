#!/usr/bin/env bash
# End-to-end test of the lab's own Docker engine (hack/kind-engine.sh), one command, as root:
#
#   hack/test-kind-engine.sh            brings the engine up, uses it, takes it down
#   KINDLAB_TEST_COLD=1 hack/...        first deletes the engine's data root and the cached
#                                       base image tarball, to time a run from nothing
#
# Checks: the capability runtime edits specs and passes other calls through (with a fake
# runc); `up` twice gives one engine; a base image is made here and imported; a privileged
# container can create a veth pair and mount tmpfs, at `run` and at `exec`; a container's
# address answers inside the engine's namespace while the machine's own addresses and routes
# do not change; `down` leaves no namespace, engine process, bridge or mount, and a second
# `down` is no error. Prints the time of each step.
#
# Skips (loudly, exit 0) when not Linux/root or when an engine it did not start answers at
# the default socket. Refuses (exit 1) when the project's engine is already up, because it
# ends by taking it down with every container in it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENGINE="$HERE/kind-engine.sh"
IMAGE="kindlab/debian-minbase:bookworm"
SOCK="/var/run/docker.sock"
DATA_ROOT="/var/lib/kindlab-docker"
STATE="/run/kindlab-docker"
TARBALL="$("$HERE/base-image.sh" --tarball "$IMAGE")"
# shellcheck source=hack/lib.sh
source "$HERE/lib.sh"  # lab_addresses

skip() {
    printf '\n*** SKIPPED: %s ***\n\n' "$*" >&2
    exit 0
}
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}
ok() { printf 'ok: %s\n' "$*"; }

[ "$(uname -s)" = Linux ] || skip "the lab's Docker engine test runs on Linux only"
[ "$(id -u)" -eq 0 ] || skip "the lab's Docker engine test needs root (network namespace, dockerd)"
if [ -d "$STATE" ] || [ -e /run/netns/kindlab ]; then
    fail "the project's engine is already up; this test ends with 'down' (which removes its containers): run make kind-engine-down first"
fi
if [ -S "$SOCK" ] && [ "$(curl -s --max-time 5 --unix-socket "$SOCK" http://docker/_ping)" = OK ]; then
    skip "a Docker engine this project did not start answers at $SOCK; the test leaves it alone"
fi

# On a failure after `up`, take the engine down again (its log is printed first).
ENGINE_STARTED=false
on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ] && $ENGINE_STARTED; then
        echo "--- last lines of $STATE/dockerd.log" >&2
        tail -n 15 "$STATE/dockerd.log" >&2 2>/dev/null || true
        "$ENGINE" down || true
    fi
}
trap on_exit EXIT

TIMINGS=()
# timed NAME CMD...: run CMD, record its wall time under NAME, fail when it fails.
timed() {
    local name="$1" start end
    shift
    start="$(date +%s.%N)"
    "$@" || fail "$name (exit $?)"
    end="$(date +%s.%N)"
    TIMINGS+=("$(printf '%-34s %7.2f s' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")")
}
in_netns() { "$ENGINE" exec "$@"; }

# What the machine's own namespace looks like; the engine may add nothing to it. Routes learnt from
# router advertisements or DHCP print their remaining lifetime ("expires 1797sec"), which changes by
# itself: left out. The checks track runs beside this test (hack/ci-stages.sh) and the machine goes
# on living, so what went away is not the engine's doing; what appeared is.
host_view() {
    { ip -br addr; ip route; ip -6 route; ip -br link | awk '{ print $1 }'; } \
        | sed -E 's/ expires [0-9]+sec//' | sort
}
host_mounts() { awk '{ print $5 }' /proc/self/mountinfo | sort; }
# appeared BEFORE NOW: the lines of NOW that BEFORE lacks (both sorted).
appeared() { comm -13 <(echo "$1") <(echo "$2"); }
BEFORE_VIEW="$(host_view)"
BEFORE_MOUNTS="$(host_mounts)"
BEFORE_LAB_ADDRESSES="$(lab_addresses)"
lab_address_on_host() { [ "$(lab_addresses)" != "$BEFORE_LAB_ADDRESSES" ]; }

if [ "${KINDLAB_TEST_COLD:-}" = 1 ]; then
    "$ENGINE" down --purge
    rm -f "$TARBALL"
    echo "cold run: data root and image cache removed"
fi

# --- 1. the capability runtime, against a fake runc that records its arguments -----------
check_runtime() {
    local tmp argv
    tmp="$(mktemp -d)"
    printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/argv"\n' "$tmp" >"$tmp/runc"
    chmod +x "$tmp/runc"
    mkdir "$tmp/bundle"
    local caps='["CAP_CHOWN","CAP_SYS_RESOURCE","CAP_SYS_ADMIN"]'
    local proc="{\"args\":[\"sh\"],\"capabilities\":{\"bounding\":$caps,\"effective\":$caps,\"permitted\":$caps,\"inheritable\":$caps,\"ambient\":$caps}}"
    printf '{"ociVersion":"1.0.2","process":%s}' "$proc" >"$tmp/bundle/config.json"
    printf '%s' "$proc" >"$tmp/process.json"
    cp "$tmp/bundle/config.json" "$tmp/config.orig"
    # What the runtime drops: the capabilities missing from this machine's bounding set.
    local want=3
    if (( (16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status) >> 24 & 1) == 0 )); then want=2; fi

    KINDLAB_RUNC="$tmp/runc" /usr/bin/python3 "$HERE/kindlab-runc.py" --root /run/x --log=/dev/null create --bundle "$tmp/bundle" --pid-file p id1
    argv="$(tr '\n' ' ' <"$tmp/argv")"
    [ "$argv" = "--root /run/x --log=/dev/null create --bundle $tmp/bundle --pid-file p id1 " ] || fail "create: runc got '$argv'"
    [ "$(jq '[.process.capabilities[] | length] | unique | .[0]' "$tmp/bundle/config.json")" = "$want" ] \
        || fail "create: capabilities left: $(jq -c .process.capabilities.bounding "$tmp/bundle/config.json")"
    [ "$(jq -c .process.args "$tmp/bundle/config.json")" = '["sh"]' ] || fail "create: the rest of the spec changed"

    cp "$tmp/config.orig" "$tmp/bundle/config.json"
    (cd "$tmp/bundle" && KINDLAB_RUNC="$tmp/runc" /usr/bin/python3 "$HERE/kindlab-runc.py" run id2)
    [ "$(jq '.process.capabilities.effective | length' "$tmp/bundle/config.json")" = "$want" ] || fail "run without --bundle: cwd's config.json not edited"

    KINDLAB_RUNC="$tmp/runc" /usr/bin/python3 "$HERE/kindlab-runc.py" --root /run/x exec -p "$tmp/process.json" --detach id1
    [ "$(jq '.capabilities.permitted | length' "$tmp/process.json")" = "$want" ] || fail "exec -p: process file not edited"

    cp "$tmp/config.orig" "$tmp/bundle/config.json"
    KINDLAB_RUNC="$tmp/runc" /usr/bin/python3 "$HERE/kindlab-runc.py" state --bundle "$tmp/bundle" id1
    cmp -s "$tmp/config.orig" "$tmp/bundle/config.json" || fail "state: a file was edited"
    [ "$(tr '\n' ' ' <"$tmp/argv")" = "state --bundle $tmp/bundle id1 " ] || fail "state: arguments changed"
    rm -rf "$tmp"
}
timed "runtime wrapper (fake runc)" check_runtime
ok "kindlab-runc edits create/run/exec specs and passes other calls through unchanged"

# --- 2. up, twice --------------------------------------------------------------------------
ENGINE_STARTED=true
timed "up" "$ENGINE" up
PID1="$(cat "$STATE/dockerd.pid")"
timed "up again (no-op)" "$ENGINE" up
PID2="$(cat "$STATE/dockerd.pid")"
[ "$PID1" = "$PID2" ] || fail "a second up started another dockerd ($PID1, $PID2)"
[ "$(find /proc -maxdepth 2 -name exe -lname "$(readlink -f "$(command -v dockerd)")" 2>/dev/null | wc -l)" = 1 ] \
    || fail "more than one dockerd runs"
ok "up twice = one engine (dockerd pid $PID1)"

# --- 3. a base image made here -------------------------------------------------------------
timed "base image (debootstrap/import)" "$HERE/base-image.sh" "$IMAGE"
ok "image $IMAGE present ($(docker image inspect -f '{{.Size}}' "$IMAGE") bytes)"

# --- 4. privileged containers --------------------------------------------------------------
timed "docker run --privileged" docker run --rm --privileged "$IMAGE" \
    sh -c 'ip link add v0 type veth peer name v1 && mount -t tmpfs t /mnt'
ok "privileged run: veth pair and tmpfs mount"
CID=""
# Published on 127.0.0.1 like kind's API server port: that loopback is the namespace's.
start_sleeper() { CID="$(docker run -d --privileged -p 127.0.0.1::9 "$IMAGE" sleep 600)"; }
timed "docker run -d (sleeper)" start_sleeper
timed "docker exec --privileged" docker exec --privileged "$CID" \
    sh -c 'ip link add v2 type veth peer name v3 && mount -t tmpfs t /mnt'
ok "privileged exec: veth pair and tmpfs mount"

# --- 5. addresses live in the namespace only -----------------------------------------------
IP="$(docker inspect -f '{{.NetworkSettings.IPAddress}}' "$CID")"
MAC="$(docker inspect -f '{{.NetworkSettings.MacAddress}}' "$CID")"
[ -n "$IP" ] || fail "the container has no address"
# (Outputs are read whole before grep -q: with pipefail, grep -q's early exit fails the pipe.)
out="$(docker exec "$CID" ip -br addr)"
grep -q " $IP/" <<<"$out" || fail "the container does not hold $IP: $out"
out="$(in_netns ip -br addr)"
grep -q '^docker0 .* 172\.17\.0\.1/16' <<<"$out" || fail "docker0 is not in the namespace: $out"
# A TCP connect to a closed port: "refused" means the container's kernel answered.
if in_netns bash -c "exec 3<>/dev/tcp/$IP/9" 2>"$STATE/connect.err"; then :; fi
grep -q 'Connection refused' "$STATE/connect.err" || fail "no answer from $IP inside the namespace: $(cat "$STATE/connect.err")"
out="$(in_netns ip neigh show "$IP")"
grep -qi "lladdr $MAC" <<<"$out" || fail "the namespace has no neighbour entry $IP $MAC: $out"
ok "container $IP ($MAC) answers inside the namespace"
PORT="$(docker port "$CID" 9/tcp | head -n 1)"
[[ "$PORT" == 127.0.0.1:* ]] || fail "no published port: '$PORT'"
out="$(in_netns ss -ltnH)"
grep -q "$PORT " <<<"$out" || fail "published port $PORT is not listening in the namespace: $out"
out="$(ss -ltnH)"
! grep -q "$PORT " <<<"$out" || fail "published port $PORT listens in the machine's own namespace"
ok "published port $PORT listens on the namespace's loopback only"
lab_address_on_host && fail "a lab address appeared in the machine's own namespace: $(ip -br addr)"
new="$(appeared "$BEFORE_VIEW" "$(host_view)")"
[ -z "$new" ] || fail "addresses/routes/links appeared in the machine's own namespace: $new"
ok "the machine's own namespace is unchanged (no lab address, route or link)"

# --- 6. down, twice ------------------------------------------------------------------------
timed "down" "$ENGINE" down
ENGINE_STARTED=false
[ ! -e /run/netns/kindlab ] || fail "the namespace remains"
for exe in dockerd containerd containerd-shim-runc-v2 docker-proxy; do
    path="$(command -v "$exe" || true)"
    [ -n "$path" ] || continue
    left="$(find /proc -maxdepth 2 -name exe -lname "$(readlink -f "$path")" 2>/dev/null || true)"
    [ -z "$left" ] || fail "$exe still runs: $left"
done
new="$(appeared "$BEFORE_VIEW" "$(host_view)")"
[ -z "$new" ] || fail "addresses/routes/links left after down (a bridge?): $new"
new="$(appeared "$BEFORE_MOUNTS" "$(host_mounts)")"
[ -z "$new" ] || fail "mounts left after down: $new"
awk -v d="$DATA_ROOT" 'index($5, d) == 1 { found = 1 } END { exit found }' /proc/self/mountinfo \
    || fail "a mount remains under $DATA_ROOT"
[ ! -e "$STATE" ] || fail "$STATE remains"
ls -d /sys/fs/cgroup/*/kindlab-docker >/dev/null 2>&1 && fail "cgroups remain"
ok "down: no namespace, engine process, bridge, mount or cgroup left"
timed "down again (no-op)" "$ENGINE" down
ok "a second down is no error"

echo
echo "timings:"
printf '  %s\n' "${TIMINGS[@]}"
echo "PASS"
