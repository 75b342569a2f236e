#!/usr/bin/env bash
# The kind path for real, beside the twin (make test-kind; part of make test).
#
# On Linux as root: starts the lab's own Docker engine when none answers (make kind-engine),
# builds the offline images (make kind-images), then runs tests/kind/smoke.yml on a real kind
# cluster - every process that talks to lab addresses inside the engine's network namespace -
# and on the twin, compares their verdicts, tears both down, and checks that nothing of the lab
# is left and that the machine's own network namespace never held a lab address.
# Elsewhere it says SKIPPED, loudly, and exits 0.
#
# Not covered here: the ingress controllers on real kind. k8s.io/ingress-nginx at the pinned
# controller version (and the chart it carries) is not served by the Go module proxy these
# machines reach (plugins/module_utils/_versions.py), so no real controller image can be built;
# the incident scenarios' verdicts are checked on the twin only.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ENGINE="$ROOT/hack/kind-engine.sh"

banner() { printf '\n==== test-kind: %s ====\n' "$*" >&2; }

if [ "$(uname -s)" != Linux ] || [ "$(id -u)" -ne 0 ]; then
    banner "SKIPPED: the real kind path needs Linux as root here (this is $(uname -s), uid $(id -u)); only the twin was tested"
    exit 0
fi
require_venv_tool ansible-playbook
ensure_collection_link

WORK="$(mktemp -d /var/tmp/kindlab-test-kind.XXXXXX)"
STARTED_ENGINE=0  # this run started the lab's engine, and stops it at the end
IN_NETNS=0        # the engine is the lab's own (make kind-engine): lab addresses live in its namespace
failures=()
cleanup() {
    local rc=$?
    banner "teardown"
    in_engine ansible-playbook "$ROOT/tests/kind/smoke.yml" -e smoke_backend=kind -e smoke_state=absent \
        -e "smoke_dir=$WORK" >"$WORK/teardown-kind.log" 2>&1 || { tail -n 20 "$WORK/teardown-kind.log" >&2; rc=1; }
    left="$(in_engine ip -br addr | grep -c ' 100\.64\.' || true)"
    [ "$left" = 0 ] || { echo "test-kind: FAIL: the pool's address is still on the kind bridge after teardown" >&2; rc=1; }
    ansible-playbook "$ROOT/tests/kind/smoke.yml" -e smoke_backend=twin -e smoke_state=absent \
        -e "smoke_dir=$WORK" >"$WORK/teardown-twin.log" 2>&1 || { tail -n 20 "$WORK/teardown-twin.log" >&2; rc=1; }
    if [ "$STARTED_ENGINE" = 1 ]; then
        left="$(docker ps -aq | wc -l)"
        [ "$left" = 0 ] || { echo "test-kind: FAIL: $left container(s) left in the engine after teardown" >&2; rc=1; }
        "$ENGINE" down >&2 || rc=1
    fi
    rm -rf "$WORK"
    exit "$rc"
}

# in_engine CMD...: run CMD where the engine's lab addresses are reachable (its namespace, when
# this script started the engine; here otherwise).
in_engine() {
    if [ "$IN_NETNS" = 1 ]; then "$ENGINE" exec env "PATH=$PATH" "$@"; else "$@"; fi
}

# no_lab_address_here WHEN: the machine's own namespace gained no address in the lab's ranges.
BEFORE_LAB_ADDRESSES="$(lab_addresses)"
no_lab_address_here() {
    local now
    now="$(lab_addresses)"
    if [ "$now" != "$BEFORE_LAB_ADDRESSES" ]; then
        echo "test-kind: FAIL: the machine's own namespace gained a lab address ($1): $now" >&2
        failures+=("lab address in the machine's namespace ($1)")
    fi
}

banner "engine"
if "$ENGINE" status >/dev/null 2>&1 && [ -e "/run/netns/${KINDLAB_NETNS:-kindlab}" ]; then
    echo "test-kind: using the lab's own Docker engine, already up (left up afterwards)" >&2
    IN_NETNS=1
elif docker info >/dev/null 2>&1; then
    echo "test-kind: using the Docker engine that answers at the default socket" >&2
else
    "$ENGINE" up
    STARTED_ENGINE=1
    IN_NETNS=1
fi
trap cleanup EXIT

banner "images (make kind-images)"
started=$SECONDS
VENV="$VENV" "$ROOT/hack/kind-images.sh"
echo "test-kind: images ready in $((SECONDS - started)) s" >&2
# kind and kubectl at their pins, first on PATH for the collection's modules and the playbook.
kindlab-twin build binaries kind kubectl --link-into "$WORK/bin" >&2
export PATH="$WORK/bin:$PATH"
metallb_manifest="$(python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
from kindlab_twin import binaries; print(binaries.assets_dir("metallb-controller") / "metallb-native.yaml")' "$ROOT/src")"
SMOKE_ARGS=(-e "smoke_dir=$WORK" -e "smoke_kubectl=$WORK/bin/kubectl"
            -e "smoke_web_image=$(pin KIND_OFFLINE_WEB_IMAGE)")
KIND_ARGS=(-e "smoke_node_image=$(pin KIND_OFFLINE_NODE_IMAGE)"
           -e "smoke_manifest_url=file://$metallb_manifest"
           -e "{\"smoke_load_images\": [\"$(pin METALLB_CONTROLLER_IMAGE)\", \"$(pin METALLB_SPEAKER_IMAGE)\", \"$(pin KIND_OFFLINE_WEB_IMAGE)\"]}")

for backend in kind twin; do
    banner "smoke on $backend"
    started=$SECONDS
    extra=()
    [ "$backend" = kind ] && extra=("${KIND_ARGS[@]}")
    runner=()
    [ "$backend" = kind ] && runner=(in_engine)
    if ! "${runner[@]}" ansible-playbook "$ROOT/tests/kind/smoke.yml" -e "smoke_backend=$backend" \
            "${SMOKE_ARGS[@]}" "${extra[@]}" >"$WORK/smoke-$backend.log" 2>&1; then
        tail -n 40 "$WORK/smoke-$backend.log" >&2
        failures+=("smoke playbook on $backend")
    fi
    echo "test-kind: smoke on $backend took $((SECONDS - started)) s" >&2
    no_lab_address_here "after the $backend smoke"
    if [ "$backend" = kind ]; then
        echo "test-kind: inside the engine's namespace:" >&2
        in_engine docker ps --format '  {{.Names}}  {{.Image}}  {{.Label "io.x-k8s.kind.cluster"}}' >&2 || true
        in_engine kubectl --kubeconfig "$WORK/kubeconfig-kind" get nodes -o wide >&2 || true
        in_engine kubectl --kubeconfig "$WORK/kubeconfig-kind" get pods -A >&2 || true
    fi
done

banner "verdicts: kind vs twin"
if ! python3 - "$WORK/verdicts-kind.json" "$WORK/verdicts-twin.json" "$WORK/facts-kind.json" "$WORK/facts-twin.json" <<'PY'
import json, sys
def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return None
kind, twin, kind_facts, twin_facts = (load(p) for p in sys.argv[1:5])
if kind is None or twin is None:
    print("  no verdicts from", "kind" if kind is None else "the twin")
    sys.exit(1)
print("  %-22s %-10s %-10s" % ("verdict", "kind", "twin"))
differ = []
for key in sorted(set(kind) | set(twin)):
    mark = "" if kind.get(key) == twin.get(key) else "   <- differs"
    print("  %-22s %-10s %-10s%s" % (key, kind.get(key), twin.get(key), mark))
    if mark:
        differ.append(key)
for name, facts in (("kind", kind_facts), ("twin", twin_facts)):
    for node in (facts or {}).get("nodes", []):
        print("  %s node: kubelet %s, %s" % (name, node.get("kubeletVersion"), node.get("containerRuntimeVersion")))
    print("  %s MetalLB address: %s" % (name, (facts or {}).get("lb_address")))
failed = [k for k in ("lb_address_in_pool", "http_passed", "backends_passed") if kind.get(k) is not True]
if failed:
    print("  kind failed:", ", ".join(failed))
sys.exit(1 if differ or failed else 0)
PY
then
    failures+=("verdicts")
fi

if [ "${#failures[@]}" -gt 0 ]; then
    echo "test-kind: FAIL: ${failures[*]}" >&2
    exit 1
fi
banner "PASS (ingress controllers on real kind: not covered, see the top of this script)"
