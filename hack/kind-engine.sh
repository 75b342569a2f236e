#!/usr/bin/env bash
# A Docker engine for the kind lab on a Linux machine where none answers (make kind-engine).
#
#   hack/kind-engine.sh up            install Debian's docker.io if dockerd is missing, create the
#                                     network namespace, start dockerd in it; a second `up` is a no-op
#   hack/kind-engine.sh down [--purge]  remove every container/network of the engine, stop it,
#                                     remove the namespace; --purge also deletes the data root
#                                     (images). Nothing up: says so, exit 0
#   hack/kind-engine.sh status        what is up (exit 0 when the engine answers, 1 when not)
#   hack/kind-engine.sh answers       only that exit status, printing nothing (status measures the data
#                                     root with du: 0.5 CPU-s, which a caller asking before each command pays)
#   hack/kind-engine.sh exec CMD...   run CMD inside the engine's network namespace
#
# dockerd runs in the network namespace $KINDLAB_NETNS (default kindlab), with its own data
# root, exec root, config file and cgroup parent, and listens on the default socket
# /var/run/docker.sock, so `docker` and kind find it as usual. The namespace has only its
# loopback and what dockerd creates in it (docker0, kind's bridge, veths): no link to the
# machine, no route out. Nothing can be pulled; lab addresses exist only in there. Whatever
# must reach them (kind's API server port on 127.0.0.1, node, pool and pod addresses) runs
# through `exec`.
#
# dockerd is started with `nsenter --net=...`, not `ip netns exec`: the latter remounts /sys,
# which hides the cgroup v1 mounts from dockerd ("Devices cgroup isn't mounted").
# When this machine's capability bounding set lacks CAP_SYS_RESOURCE, `--privileged`
# containers fail in runc ("unable to apply caps"); the engine then runs containers through
# hack/kindlab-runc.py, which drops the capabilities the machine cannot grant from the OCI spec.
#
# It never touches an engine you already run: if something else answers at the default
# socket, `up` says so and does nothing, and `down` leaves it alone.
set -euo pipefail

NETNS="${KINDLAB_NETNS:-kindlab}"
NETNS_PATH="/run/netns/$NETNS"
STATE="/run/kindlab-docker"                 # pid file, log, exec root, installed runtime
DATA_ROOT="/var/lib/kindlab-docker"         # images, containers, volumes (kept by `down`)
EXEC_ROOT="$STATE/exec"
PIDFILE="$STATE/dockerd.pid"
LOG="$STATE/dockerd.log"
SOCK="/var/run/docker.sock"
CGROUP_PARENT="kindlab-docker"
RUNTIME_NAME="kindlab-caps"
RUNTIME_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kindlab-runc.py"
RUNTIME_BIN="$STATE/kindlab-runc"
START_TIMEOUT="${KINDLAB_ENGINE_START_TIMEOUT:-60}"
STOP_TIMEOUT="${KINDLAB_ENGINE_STOP_TIMEOUT:-30}"
CAP_SYS_RESOURCE=24

me="$(basename "$0")"
say() { printf '%s: %s\n' "$me" "$*" >&2; }
die() { printf '%s: error: %s\n' "$me" "$*" >&2; exit 1; }

require_linux_root() {
    [ "$(uname -s)" = Linux ] || die "the lab's own Docker engine runs on Linux only (this is $(uname -s)); use Docker Desktop or the twin (lab_backend=twin)"
    [ "$(id -u)" -eq 0 ] || die "run as root (it creates a network namespace and starts dockerd): sudo $0 ${ACTION:-up}"
}

# socket_answers: true when a Docker engine answers at the default socket.
socket_answers() {
    [ -S "$SOCK" ] && [ "$(curl -s --max-time 5 --unix-socket "$SOCK" http://docker/_ping 2>/dev/null)" = OK ]
}

# our_pid: print the pid of the dockerd this script started, if it still runs.
our_pid() {
    local pid
    [ -r "$PIDFILE" ] || return 1
    pid="$(cat "$PIDFILE")"
    [[ "$pid" =~ ^[0-9]+$ ]] && [ -d "/proc/$pid" ] || return 1
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$(command -v dockerd)")" ] || return 1
    [ "$(netns_inode "/proc/$pid/ns/net")" = "$(netns_inode "$NETNS_PATH")" ] || return 1
    printf '%s\n' "$pid"
}

netns_inode() { stat -L -c %i "$1" 2>/dev/null || echo none; }

# pids_in_netns: every process whose network namespace is ours.
pids_in_netns() {
    local want pid
    want="$(netns_inode "$NETNS_PATH")"
    [ "$want" != none ] || return 0
    for pid in /proc/[0-9]*; do
        [ "$(netns_inode "$pid/ns/net")" = "$want" ] && printf '%s\n' "${pid#/proc/}"
    done
    return 0
}

# pids_in_cgroups: every process in the engine's cgroups (containers and their children).
pids_in_cgroups() {
    find /sys/fs/cgroup/*/"$CGROUP_PARENT" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un
}

# mounts_under DIR...: mount points at or below DIR, deepest first.
mounts_under() {
    local dir
    for dir in "$@"; do
        awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
    done | sort -r -u
}

bounding_lacks_sys_resource() {
    local mask
    mask="$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)"
    (( (16#$mask >> CAP_SYS_RESOURCE & 1) == 0 ))
}

docker_cli() { docker -H "unix://$SOCK" "$@"; }

engine_summary() {
    local line
    line="$(docker_cli info --format 'dockerd {{.ServerVersion}}, {{.Driver}}, cgroup v{{.CgroupVersion}} ({{.CgroupDriver}}), default runtime {{.DefaultRuntime}}' 2>/dev/null)" \
        || line="(docker info failed)"
    printf '%s\n' "$line"
}

install_docker_io() {
    command -v dockerd >/dev/null && command -v docker >/dev/null && return 0
    command -v apt-get >/dev/null || die "dockerd is missing and this is not a Debian-family system: install a Docker engine package first"
    say "installing Debian's docker.io (dockerd, containerd, runc) without starting its services"
    export DEBIAN_FRONTEND=noninteractive
    # The package's maintainer scripts would start docker.service (and containerd) in the
    # machine's own network namespace - docker0 with 172.17.0.1/16 on the machine. A
    # policy-rc.d that answers 101 ("action forbidden") keeps invoke-rc.d/deb-systemd-invoke
    # from starting anything; it is removed again whatever happens.
    local policy=/usr/sbin/policy-rc.d made_policy=false
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# kindlab: hack/kind-engine.sh installs docker.io; start nothing\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        made_policy=true
    fi
    local rc=0
    apt-get install -y -q --no-install-recommends docker.io \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends docker.io; } || rc=$?
    if [ "$made_policy" = true ]; then rm -f "$policy"; fi
    [ "$rc" -eq 0 ] || die "apt-get install docker.io failed"
    if socket_answers; then
        die "installing docker.io started an engine at $SOCK (not ours; a policy-rc.d of yours allowed it): stop it (systemctl disable --now docker.service docker.socket) or use it"
    fi
}

create_netns() {
    if [ ! -e "$NETNS_PATH" ]; then
        # `ip netns add` makes /run/netns a mount point when it is not one: remember whether
        # we caused that, so `down` can undo it.
        if ! mountpoint -q /run/netns 2>/dev/null; then touch "$STATE/made-run-netns-mount"; fi
        ip netns add "$NETNS"
        say "created network namespace $NETNS"
    fi
    ip -n "$NETNS" link set lo up
}

do_up() {
    require_linux_root
    local pid
    if pid="$(our_pid)"; then
        if socket_answers; then
            say "already up: dockerd pid $pid in network namespace $NETNS, socket $SOCK"
            return 0
        fi
        die "dockerd pid $pid runs but does not answer at $SOCK; see $LOG, or run: $0 down"
    fi
    if socket_answers; then
        say "a Docker engine you run already answers at $SOCK: using it, starting nothing"
        return 0
    fi
    if [ -n "${DOCKER_HOST:-}" ]; then
        say "note: DOCKER_HOST=$DOCKER_HOST is set; this engine listens at $SOCK"
    fi
    install_docker_io
    mkdir -p "$STATE" "$EXEC_ROOT" "$DATA_ROOT"
    chmod 0711 "$DATA_ROOT"
    create_netns
    # Settings come from these flags and an empty config file, never /etc/docker/daemon.json
    # (which belongs to an engine the user may run another time).
    printf '{}\n' >"$STATE/daemon.json"
    local args=(
        --config-file "$STATE/daemon.json"
        --data-root "$DATA_ROOT"
        --exec-root "$EXEC_ROOT"
        --pidfile "$PIDFILE"
        --host "unix://$SOCK"
        --cgroup-parent "$CGROUP_PARENT"
    )
    if bounding_lacks_sys_resource; then
        [ -x /usr/bin/python3 ] || die "/usr/bin/python3 is missing (the capability runtime needs it): apt-get install python3"
        { printf '#!/usr/bin/python3\n'; cat "$RUNTIME_SRC"; } >"$RUNTIME_BIN.tmp"
        chmod 0755 "$RUNTIME_BIN.tmp"
        mv "$RUNTIME_BIN.tmp" "$RUNTIME_BIN"
        args+=(--add-runtime "$RUNTIME_NAME=$RUNTIME_BIN" --default-runtime "$RUNTIME_NAME")
        say "the capability bounding set lacks CAP_SYS_RESOURCE: containers run through $RUNTIME_BIN"
    else
        rm -f "$RUNTIME_BIN"
    fi
    rm -f "$PIDFILE"
    say "starting dockerd in network namespace $NETNS (data root $DATA_ROOT, log $LOG)"
    nsenter --net="$NETNS_PATH" -- setsid dockerd "${args[@]}" >>"$LOG" 2>&1 </dev/null &
    local steps=0  # of 0.2 s
    until socket_answers; do
        if [ "$steps" -ge $((START_TIMEOUT * 5)) ] || ! kill -0 $! 2>/dev/null; then
            tail -n 20 "$LOG" >&2 || true
            die "dockerd did not answer at $SOCK within ${START_TIMEOUT}s or exited (log above, $LOG); clean up with: $0 down"
        fi
        sleep 0.2
        steps=$((steps + 1))
    done
    pid="$(our_pid)" || die "something answers at $SOCK, but not the dockerd started here (pid $!)"
    say "up: dockerd pid $pid; $(engine_summary)"
}

stop_engine() {
    local pid="$1" steps=0 ids
    ids="$(docker_cli ps -aq 2>/dev/null || true)"
    if [ -n "$ids" ]; then
        say "removing $(wc -w <<<"$ids") container(s)"
        # shellcheck disable=SC2086 # one id per word
        docker_cli rm -f -v $ids >/dev/null || say "warning: some containers could not be removed"
    fi
    docker_cli network prune -f >/dev/null 2>&1 || true
    docker_cli volume prune -f >/dev/null 2>&1 || true
    say "stopping dockerd pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    while [ -d "/proc/$pid" ] && [ "$steps" -lt $((STOP_TIMEOUT * 5)) ]; do
        sleep 0.2
        steps=$((steps + 1))
    done
    if [ -d "/proc/$pid" ]; then
        say "dockerd pid $pid did not stop in ${STOP_TIMEOUT}s: killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

# kill_leftovers: processes the engine started that outlived dockerd (its containerd, shims,
# docker-proxy, container processes), found by namespace and cgroup, ended by pid.
kill_leftovers() {
    local pid exe others=() leftovers=()
    for pid in $(pids_in_netns); do
        exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
        case "$(basename "$exe")" in
            dockerd|containerd|containerd-shim*|docker-proxy) leftovers+=("$pid") ;;
            *) others+=("$pid") ;;
        esac
    done
    for pid in $(pids_in_cgroups); do leftovers+=("$pid"); done
    if [ "${#leftovers[@]}" -gt 0 ]; then
        say "ending leftover engine processes: ${leftovers[*]}"
        kill -KILL "${leftovers[@]}" 2>/dev/null || true
        sleep 0.5
    fi
    if [ "${#others[@]}" -gt 0 ]; then
        for pid in "${others[@]}"; do
            say "  still in namespace $NETNS: pid $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-100)"
        done
        die "processes not started by the engine still run in network namespace $NETNS (above): stop them, then run $0 down again"
    fi
}

unmount_under() {
    local m
    for m in $(mounts_under "$@"); do
        umount "$m" 2>/dev/null || umount -l "$m" || say "warning: cannot unmount $m"
    done
}

remove_cgroups() {
    local dir
    for dir in /sys/fs/cgroup/*/"$CGROUP_PARENT"; do
        [ -d "$dir" ] || continue
        find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [ -d "$dir" ] && say "warning: cgroup $dir remains"
    done
    return 0
}

do_down() {
    require_linux_root
    local purge=false pid did=false
    [ "${1:-}" = --purge ] && purge=true
    if pid="$(our_pid)"; then
        stop_engine "$pid"
        did=true
    elif socket_answers; then
        say "the Docker engine answering at $SOCK was not started by $me: leaving it alone"
    fi
    if [ -e "$NETNS_PATH" ] || [ -d "$STATE" ]; then
        kill_leftovers
        did=true
    fi
    unmount_under "$DATA_ROOT" "$STATE"
    if [ -e "$NETNS_PATH" ]; then
        ip netns delete "$NETNS"
        say "removed network namespace $NETNS"
    fi
    if [ -e "$STATE/made-run-netns-mount" ] && mountpoint -q /run/netns \
        && [ -z "$(ls -A /run/netns)" ]; then
        if umount /run/netns; then rmdir /run/netns 2>/dev/null || true; fi
    fi
    remove_cgroups
    if [ -d "$STATE" ]; then
        [ -z "$(mounts_under "$STATE")" ] || die "mounts remain under $STATE: $(mounts_under "$STATE" | tr '\n' ' ')"
        # dockerd removes its socket when it stops; a socket it left behind answers nobody.
        if [ -S "$SOCK" ] && ! socket_answers; then rm -f "$SOCK"; fi
        rm -rf "$STATE"
    fi
    if $purge && [ -d "$DATA_ROOT" ]; then
        [ -z "$(mounts_under "$DATA_ROOT")" ] || die "mounts remain under $DATA_ROOT: $(mounts_under "$DATA_ROOT" | tr '\n' ' ')"
        rm -rf "$DATA_ROOT"
        say "deleted the data root $DATA_ROOT"
        did=true
    fi
    if $did; then say "down"; else say "nothing to do: the engine is not up"; fi
}

do_status() {
    local pid rc=1
    if pid="$(our_pid)"; then
        printf 'dockerd:   pid %s in network namespace %s\n' "$pid" "$NETNS"
    else
        printf 'dockerd:   not running (from %s)\n' "$me"
    fi
    if [ -e "$NETNS_PATH" ]; then
        printf 'netns:     %s: %s\n' "$NETNS" "$(ip -n "$NETNS" -br addr | awk '{ printf "%s %s; ", $1, $3 }')"
    else
        printf 'netns:     %s absent\n' "$NETNS"
    fi
    if socket_answers; then
        rc=0
        printf 'socket:    %s answers (%s)\n' "$SOCK" "$([ -n "$pid" ] && echo ours || echo 'not ours')"
        printf 'server:    %s\n' "$(engine_summary)"
        printf 'containers: %s\n' "$(docker_cli ps -aq 2>/dev/null | wc -l)"
    else
        printf 'socket:    %s: no engine answers\n' "$SOCK"
    fi
    printf 'data root: %s\n' "$([ -d "$DATA_ROOT" ] && du -sh "$DATA_ROOT" 2>/dev/null | cut -f1 || echo absent)"
    return "$rc"
}

do_exec() {
    [ "$#" -gt 0 ] || die "usage: $0 exec CMD [ARG...]"
    [ -e "$NETNS_PATH" ] || die "network namespace $NETNS is absent: run make kind-engine first"
    require_linux_root
    exec nsenter --net="$NETNS_PATH" -- "$@"
}

ACTION="${1:-}"
[ "$#" -gt 0 ] && shift
case "$ACTION" in
    up) do_up ;;
    down) do_down "$@" ;;
    status) do_status ;;
    answers) socket_answers ;;
    exec) do_exec "$@" ;;
    *) die "usage: $0 up | down [--purge] | status | answers | exec CMD [ARG...]" ;;
esac
