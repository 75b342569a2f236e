#!/usr/bin/env bash
# The lab on real kind on a machine where no registry answers (Linux, root; test machinery and
# `make kind-lab`): the lab's own Docker engine when none answers (make kind-engine), the offline
# images (make kind-images), the pinned kind, kubectl and helm, and then the collection's own
# playbooks with the offline inputs, inside the engine's network namespace (where the lab's
# addresses live).
#
#   hack/kind-lab.sh up [SCENARIO] [ANSIBLE ARGS...]     playbooks/lab.yml (the lab stays up; SCENARIO: a
#                                                        name in scenarios/ or a scenario file's path)
#   hack/kind-lab.sh verify [SCENARIO] [ANSIBLE ARGS...] playbooks/verify.yml
#   hack/kind-lab.sh down [SCENARIO] [ANSIBLE ARGS...]   playbooks/teardown.yml
#   hack/kind-lab.sh rehearse [ANSIBLE ARGS...]          playbooks/rehearse.yml, in a kind cluster named rehearsal
#                                                        (beside the lab's: -e rehearse_kubeconfig=its kubeconfig)
#   hack/kind-lab.sh vars                                print the offline inputs (a vars file)
#   hack/kind-lab.sh exec CMD...                         run CMD where the lab is reachable
#
# The offline inputs are what a user behind a mirror would pass: the node image (lab_cluster),
# MetalLB's manifest from its Go module (lab_metallb_manifest_url), Gateway API's CRDs from theirs
# (lab_gateway_api_manifest_url), the images built here
# (lab_images, loaded into the nodes with lab_images_load), and each controller type's local chart
# (lab_charts). What each controller type runs here (its image and chart) is declared in its package
# (ControllerType.offline: its images and chart) and read through kindlab_twin.controller_types;
# hack/kind-images.sh builds the images.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ENGINE="$ROOT/hack/kind-engine.sh"
TOOLS="${KINDLAB_KIND_TOOLS:-$HOME/.cache/kindlab/kind-tools}"

me="$(basename "$0")"
say() { printf '%s: %s\n' "$me" "$*" >&2; }

[ "$(uname -s)" = Linux ] && [ "$(id -u)" -eq 0 ] || die "the offline kind lab needs Linux as root (this is $(uname -s), uid $(id -u))"

# in_engine CMD...: run CMD where the engine's lab addresses are reachable: the lab engine's
# namespace when it runs (make kind-engine), here when an engine of yours answers.
in_engine() {
    if [ -e "/run/netns/${KINDLAB_NETNS:-kindlab}" ] && "$ENGINE" answers; then
        "$ENGINE" exec env "PATH=$TOOLS:$PATH" "$@"
    else
        env "PATH=$TOOLS:$PATH" "$@"
    fi
}

# offline_vars: the vars file with the offline inputs, on stdout.
offline_vars() {
    "$VENV/bin/python" - "$(pin KIND_OFFLINE_NODE_IMAGE)" "$(pin KIND_OFFLINE_WEB_IMAGE)" "$(pin KIND_OFFLINE_ECHO_IMAGE)" \
        "$(pin KIND_OFFLINE_WHOAMI_IMAGE)" "$(pin METALLB_CONTROLLER_IMAGE)" "$(pin METALLB_SPEAKER_IMAGE)" <<'PY'
import json, os, sys
from kindlab_twin import binaries, controller_types
node_image, web_image, echo_image = sys.argv[1:4]
types = controller_types.offline_vars()  # every controller type's images and chart
images = dict(types["lab_images"], test_app=web_image, echo=echo_image)
print(json.dumps({
    "lab_backend": "kind",
    # KINDLAB_CLUSTER: another cluster beside the lab's (a rehearsal's, while the cluster it rehearses runs)
    "lab_cluster": {"name": os.environ.get("KINDLAB_CLUSTER") or "ingress-lab", "workers": 0, "kind_config": {},
                    "node_image": node_image},
    "lab_metallb_manifest_url": "file://%s" % (binaries.assets_dir("metallb-controller") / "metallb-native.yaml"),
    # Gateway API's CRDs from their Go module (used when a scenario sets lab_gateway_api)
    "lab_gateway_api_manifest_url": "file://%s" % (binaries.assets_dir("gateway-api-crds") / "standard-install.yaml"),
    "lab_images": images,
    # every image of lab_images, and whoami's stand-in (host-path-conflict runs it)
    "lab_images_load": list(images.values()) + sys.argv[4:7],
    "lab_charts": types["lab_charts"],
}, indent=2))
PY
}

# prepare: the engine, the images and the pinned clients (each a no-op when current; skipped
# with KINDLAB_PREPARED=1, as test-kind and the benchmark do after preparing once).
prepare() {
    [ "${KINDLAB_PREPARED:-0}" != 1 ] || return 0
    require_venv_tool ansible-playbook
    ensure_collection_link
    if ! docker info >/dev/null 2>&1; then "$ENGINE" up; fi
    VENV="$VENV" "$ROOT/hack/kind-images.sh"
    kind_tools "$TOOLS"
}

playbook() {  # playbook NAME SCENARIO ARGS...
    local book="$1" scenario="${2:-}"
    shift 2 || shift $#
    local vars
    vars="$(mktemp /tmp/kindlab-offline.XXXXXX.json)"
    offline_vars >"$vars"
    local args=()
    # SCENARIO: a name in scenarios/, or the path of a scenario file elsewhere (a capture, playbooks/capture.yml)
    case "$scenario" in
        "") ;;
        */*) args+=(-e "@$scenario") ;;
        *) args+=(-e "@$ROOT/scenarios/$scenario.yml" -e "lab_scenario=$scenario") ;;
    esac
    args+=(-e "@$vars")
    local rc=0
    ( cd "$ROOT" && in_engine ansible-playbook "playbooks/$book.yml" "${args[@]}" "$@" ) || rc=$?
    rm -f "$vars"
    return "$rc"
}

case "${1:-}" in
    up) shift; prepare; playbook lab "$@" ;;
    prepare) prepare ;;
    verify) shift; playbook verify "$@" ;;
    down) shift; playbook teardown "$@" ;;
    # rehearse -e rehearse_kubeconfig=PATH ...: playbooks/rehearse.yml (capture, rebuild on kind, replay, tear down)
    rehearse) shift; prepare; KINDLAB_CLUSTER=rehearsal playbook rehearse "" -e rehearse_cluster_name=rehearsal "$@" ;;
    vars) offline_vars ;;
    exec) shift; in_engine "$@" ;;
    *) die "usage: $me up|verify|down [SCENARIO] [ANSIBLE ARGS...] | rehearse [ANSIBLE ARGS...] | prepare | vars | exec CMD..." ;;
esac
