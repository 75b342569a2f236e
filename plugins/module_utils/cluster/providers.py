# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster providers: one interface, a registry, backend detection and the kind config.

Like kind's own docker/podman split, the cluster module talks to a `ClusterProvider` and
never to a binary directly. `kind` (kind + docker) and `twin` (kindlab-twin) register
themselves when their module_utils are imported. Both take the same kind Cluster config,
rendered here by a pure function. Each states its `Capabilities`, which the playbooks and
roles read instead of testing the provider's name (kind's ProviderInfo).
"""
from __future__ import annotations

import copy
import ipaddress
import os
import re
import tempfile
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, Callable, ClassVar

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.kubeconfig import kubeconfig_path_for_merge
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_until
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml

# run(argv, data=None) -> (rc, stdout, stderr): AnsibleModule.run_command in a module,
# a fake in tests. which(name) -> path or None: get_bin_path / shutil.which.
Runner = Callable[..., "tuple[int, str, str]"]
Which = Callable[[str], "str | None"]

KIND_API_VERSION = "kind.x-k8s.io/v1alpha4"
CLUSTER_NAME_RE = re.compile(r"^[a-z0-9.-]+$")  # kind's own rule for cluster names
NODE_ROLES = ("control-plane", "worker")
IP_FAMILIES = ("ipv4", "ipv6", "dual")

# kind's defaults when the config leaves them out (pkg/apis/config/v1alpha4/default.go).
DEFAULT_POD_SUBNET = {"ipv4": "10.244.0.0/16", "ipv6": "fd00:10:244::/56", "dual": "10.244.0.0/16,fd00:10:244::/56"}
DEFAULT_SERVICE_SUBNET = {"ipv4": "10.96.0.0/16", "ipv6": "fd00:10:96::/112", "dual": "10.96.0.0/16,fd00:10:96::/112"}


def find_binary(wanted: str, which: Callable[[str], str | None]) -> str | None:
    """A tool's binary: an explicit path when it is an executable file, a bare name looked up
    with WHICH; None when neither finds it."""
    if os.sep in wanted:
        return wanted if os.path.isfile(wanted) and os.access(wanted, os.X_OK) else None
    return which(wanted)


class ClusterError(KindlabError):
    """A provider operation failed; the message is meant for the user."""


class BinaryNotFound(ClusterError):
    pass


class EngineUnavailable(ClusterError):
    pass


@dataclass(frozen=True)
class Capabilities:
    """What a provider's clusters can do, as booleans its callers read instead of testing the
    provider's name (kind's ProviderInfo). The kind_cluster and cluster_provider modules return
    them; playbooks/lab.yml, verify.yml, teardown.yml and the roles choose by them."""

    # The nodes run the controllers' real images, so they are installed from their upstream
    # packages (helm charts, MetalLB's native manifest). False: the cluster emulates the
    # controllers from the objects the collection renders (method manifest, MetalLB rendered).
    runs_real_controllers: bool
    # The cluster divides its controllers' periods by the time_scale it is created with. False:
    # the lab's time scale reaches the controllers only through their own period flags.
    scales_time: bool
    # The nodes are containers on a bridge network of the container engine: the host reaches the
    # MetalLB pools through an address of theirs on that bridge (host_access, which needs root
    # and no Tailscale rule dropping the replies), which teardown removes again.
    nodes_on_host_bridge: bool
    # The cluster's LoadBalancer and node addresses are routed nowhere: they are reached only
    # through the connect_to mappings (curl --connect-to) the cluster module returns.
    reached_through_connect_to: bool

    def as_dict(self) -> dict[str, bool]:
        return asdict(self)


class ClusterProvider(ABC):
    """What the kind_cluster module needs from a backend."""

    name = ""
    capabilities: ClassVar[Capabilities]

    def __init__(self, run: Runner, which: Which, binaries: dict[str, str | None] | None = None) -> None:
        self._run = run
        self._which = which
        self._binaries = {k: v for k, v in (binaries or {}).items() if v}
        self.warnings: list[str] = []  # what the backend's commands warned about, for the module result

    # -- binaries -------------------------------------------------------------------------
    def binary(self, tool: str, default: str) -> str:
        """Resolve a tool: an explicit path must be executable; a bare name is looked up."""
        wanted = self._binaries.get(tool, default)
        found = find_binary(wanted, self._which)
        if not found and os.sep in wanted:
            raise BinaryNotFound("%s_binary: %s is not an executable file" % (tool, wanted))
        if not found:
            raise BinaryNotFound(
                "%s_binary: %r was not found on PATH; install it or set %s_binary to its full path" % (tool, wanted, tool)
            )
        return found

    def call(self, argv: list[str], what: str, data: str | None = None) -> tuple[int, str, str]:
        rc, out, err = self._run(argv, data=data) if data is not None else self._run(argv)
        return rc, out or "", err or ""

    def must(self, argv: list[str], what: str) -> str:
        rc, out, err = self.call(argv, what)
        if rc != 0:
            raise ClusterError("%s failed (rc=%s): %s: %s" % (what, rc, " ".join(argv), (err or out).strip()))
        return out

    # -- the interface --------------------------------------------------------------------
    @abstractmethod
    def check_available(self) -> str:
        """Raise ClusterError (naming the binary or engine) unless the backend can work;
        return a one-line description of what answered."""

    def why_unavailable(self) -> list[str]:
        """Every reason the backend cannot be used here, not only the first (check mode's plan
        names them all); [] when it can."""
        try:
            self.check_available()
        except ClusterError as exc:
            return [str(exc)]
        return []

    @abstractmethod
    def list_clusters(self) -> list[str]: ...

    def exists(self, name: str) -> bool:
        return name in self.list_clusters()

    @abstractmethod
    def create_argv(self, name: str, config_path: str, kubeconfig: str, wait: int, image: str | None) -> list[str]: ...

    def create(self, name: str, config_yaml: str, kubeconfig: str, wait: int, image: str | None = None) -> None:
        """Create from a rendered config; the config file lives only for the call."""
        fd, path = tempfile.mkstemp(prefix="kindlab-%s-" % name, suffix=".yaml")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(config_yaml)
            self.must(self.create_argv(name, path, kubeconfig, wait, image), "creating cluster %r" % name)
        finally:
            os.unlink(path)

    @abstractmethod
    def delete(self, name: str, kubeconfig: str) -> None: ...

    @abstractmethod
    def kubeconfig(self, name: str) -> str:
        """The cluster's kubeconfig (YAML text) as the provider prints it."""

    @abstractmethod
    def export_kubeconfig(self, name: str, path: str) -> None:
        """Write/merge the cluster's context into the kubeconfig file at path."""

    @abstractmethod
    def network_subnets(self) -> list[str]:
        """CIDRs of the network the nodes live on."""

    def connect_to(self, name: str) -> list[str]:
        """curl-style HOST:PORT:127.0.0.1:PORT mappings to reach cluster addresses."""
        return []

    def adapt_config(self, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The config this backend needs (after check_available), with what it changed, said."""
        return config, []

    def load_images(self, name: str, images: list[str], check_mode: bool) -> dict[str, Any]:
        """Put local images into the cluster's nodes; a backend without nodes to load skips it."""
        return {"changed": False, "skipped": True, "command": [], "loaded": [], "present": [], "nodes": [],
                "msg": "the %s backend does not load images (%s): its pods run no images" % (self.name, ", ".join(images))}


_REGISTRY: dict[str, type[ClusterProvider]] = {}


def register(cls: type[ClusterProvider]) -> type[ClusterProvider]:
    if not isinstance(cls.__dict__.get("capabilities"), Capabilities):
        raise TypeError("cluster provider %s must state its Capabilities" % cls.__name__)
    _REGISTRY[cls.name] = cls
    return cls


def provider_names() -> list[str]:
    return sorted(_REGISTRY)


def provider_class(name: str) -> type[ClusterProvider]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ClusterError("provider: %r is not one of %s" % (name, ", ".join(provider_names()) or "(none registered)")) from None


def get_provider(
    name: str, run: Runner, which: Which, binaries: dict[str, str | None] | None = None, **options: Any
) -> ClusterProvider:
    """A provider by name; `options` are provider-specific (the twin's time_scale)."""
    return provider_class(name)(run, which, binaries, **options)


@dataclass(frozen=True)
class Backend:
    name: str
    reason: str


def detect_backend(run: Runner, which: Which, binaries: dict[str, str | None] | None = None) -> Backend:
    """`auto`: kind when kind is installed, a Docker engine answers and helm is there (the
    kind path installs the ingress controllers with it), else the twin. Decided before
    anything is created, so a missing helm never leaves a half-built kind lab behind."""
    try:
        provider = get_provider("kind", run, which, binaries)
        detail = provider.check_available()
        helm = provider.binary("helm", "helm")
    except ClusterError as exc:
        return Backend("twin", "using the twin because the kind backend is unavailable: %s" % exc)
    return Backend("kind", "using kind: %s; helm %s" % (detail, helm))


def resolve_backend(requested: str, run: Runner, which: Which, binaries: dict[str, str | None] | None = None) -> Backend:
    """The provider a request names: `auto` detected (detect_backend), any other name as asked."""
    if requested == "auto":
        return detect_backend(run, which, binaries)
    provider_class(requested)  # an unknown name fails here, naming the known ones
    return Backend(requested, "provider %s was asked for" % requested)


# --- kind config ----------------------------------------------------------------------------


def deep_merge(base: Any, override: Any) -> Any:
    """Mappings merge key by key; anything else (lists included) is replaced by override."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = deep_merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(override)


def validate_cluster_name(name: Any) -> str:
    if not isinstance(name, str) or not CLUSTER_NAME_RE.match(name):
        raise ClusterError("name: %r is not a valid kind cluster name; it must match %s" % (name, CLUSTER_NAME_RE.pattern))
    return name


def _check_cidrs(field: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ClusterError("%s: expected a CIDR (or two, comma-separated, for dual-stack), got %r" % (field, value))
    for part in value.split(","):
        try:
            if "/" not in part:
                raise ValueError("no /prefix length")
            ipaddress.ip_network(part.strip(), strict=True)
        except ValueError as exc:
            raise ClusterError("%s: %r is not a valid CIDR (%s)" % (field, part.strip(), exc)) from None


def render_kind_config(workers: int | None, node_image: str | None, user: dict[str, Any] | None = None) -> dict[str, Any]:
    """The kind Cluster config: a control-plane and `workers` workers (default 2), each with
    the node image, deep-merged with the user's passthrough. A user `nodes` list replaces the
    generated one (nodes without an image get the node image) and excludes `workers`."""
    user = copy.deepcopy(user or {})
    if not isinstance(user, dict):
        raise ClusterError("kind_config: expected a mapping (a kind Cluster config), got %s" % type(user).__name__)
    for key, want in (("kind", "Cluster"), ("apiVersion", KIND_API_VERSION)):
        if key in user and user[key] != want:
            raise ClusterError("kind_config.%s: expected %r, got %r" % (key, want, user[key]))
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 20):
        raise ClusterError("workers: expected an integer from 0 to 20, got %r" % (workers,))
    if "nodes" in user:
        if workers is not None:
            raise ClusterError("workers: cannot be combined with kind_config.nodes; list every node in kind_config.nodes")
        nodes = user.pop("nodes")
        if not isinstance(nodes, list) or not nodes:
            raise ClusterError("kind_config.nodes: expected a non-empty list of {role: control-plane|worker, ...}")
    else:
        nodes = [{"role": "control-plane"}] + [{"role": "worker"} for _i in range(2 if workers is None else workers)]
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or node.get("role", "control-plane") not in NODE_ROLES:
            raise ClusterError("kind_config.nodes[%d].role: expected one of %s" % (i, ", ".join(NODE_ROLES)))
        node.setdefault("role", "control-plane")
        if node_image:
            node.setdefault("image", node_image)
    if not any(n["role"] == "control-plane" for n in nodes):
        raise ClusterError("kind_config.nodes: at least one node must have role control-plane")
    config: dict[str, Any] = deep_merge({"kind": "Cluster", "apiVersion": KIND_API_VERSION}, user)
    config["nodes"] = nodes
    networking = config.get("networking", {})
    if not isinstance(networking, dict):
        raise ClusterError("kind_config.networking: expected a mapping")
    family = networking.get("ipFamily", "ipv4")
    if family not in IP_FAMILIES:
        raise ClusterError("kind_config.networking.ipFamily: expected one of %s, got %r" % (", ".join(IP_FAMILIES), family))
    for key in ("podSubnet", "serviceSubnet"):
        if key in networking:
            _check_cidrs("kind_config.networking." + key, networking[key])
    return config


# The KubeletConfiguration patch that lets Kubernetes 1.35's kubelet start on a cgroup v1 host.
CGROUP_V1_PATCH = "kind: KubeletConfiguration\nfailCgroupV1: false\n"


def patch_cgroup_v1(config: dict[str, Any]) -> dict[str, Any]:
    """The kind config with failCgroupV1: false in every node's kubeadmConfigPatches (kind
    merges each node's patches into that node's kubeadm config, KubeletConfiguration included)."""
    out = copy.deepcopy(config)
    for node in out.get("nodes") or []:
        patches = node.setdefault("kubeadmConfigPatches", [])
        if CGROUP_V1_PATCH not in patches:
            patches.append(CGROUP_V1_PATCH)
    return out


def cluster_subnets(config: dict[str, Any]) -> dict[str, list[str]]:
    """Pod and service subnets as the cluster will have them (kind's defaults filled in)."""
    networking = config.get("networking") or {}
    family = networking.get("ipFamily", "ipv4")
    pod = networking.get("podSubnet") or DEFAULT_POD_SUBNET[family]
    svc = networking.get("serviceSubnet") or DEFAULT_SERVICE_SUBNET[family]
    return {
        "pod": [p.strip() for p in pod.split(",") if p.strip()],
        "service": [s.strip() for s in svc.split(",") if s.strip()],
    }


def planned_nodes(cluster: str, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Node names kind gives: <name>-control-plane, -control-plane2 …, -worker, -worker2 …"""
    counts: dict[str, int] = {}
    out = []
    for node in config.get("nodes", []):
        role = node.get("role", "control-plane")
        counts[role] = counts.get(role, 0) + 1
        suffix = "" if counts[role] == 1 else str(counts[role])
        out.append({"name": "%s-%s%s" % (cluster, role, suffix), "role": role, "internal_ip": None})
    return out


def node_summary(node: dict[str, Any]) -> dict[str, Any]:
    """name, role and InternalIP of a v1 Node as the API returns it."""
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    role = "control-plane" if "node-role.kubernetes.io/control-plane" in labels else "worker"
    internal = [a.get("address") for a in (node.get("status") or {}).get("addresses") or [] if a.get("type") == "InternalIP"]
    return {"name": meta.get("name"), "role": role, "internal_ip": internal[0] if internal else None,
            "internal_ips": internal}


def default_kubeconfig_path(environ: dict[str, str] | None = None) -> str:
    """Where kind writes without --kubeconfig: the first existing $KUBECONFIG entry (the last
    entry when none exists), else ~/.kube/config (kind's pathForMerge)."""
    return kubeconfig_path_for_merge(None, environ)


def context_name(cluster: str) -> str:
    return "kind-" + cluster


# --- kubeconfig files -------------------------------------------------------------------------


def kubeconfig_contexts(text: str | None) -> list[str]:
    if not text:
        return []
    try:
        data = yaml.safe_load(text) or {}
    except YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    return [str(c.get("name")) for c in data.get("contexts") or [] if isinstance(c, dict)]


# --- the kind_cluster module's logic ----------------------------------------------------------

ClientFactory = Callable[[str, str], Any]  # (kubeconfig, context) -> k8s.client.Client


def read_text(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def live_subnets(client: Any) -> dict[str, list[str]] | None:
    """Pod/service subnets of a running cluster from kubeadm's ClusterConfiguration (kind
    nodes are kubeadm clusters); None when the cluster does not publish it."""
    try:
        cm = client.get("v1", "ConfigMap", "kubeadm-config", "kube-system")
    except Exception:  # a missing kind or RBAC gap just means "unknown"
        return None
    text = ((cm or {}).get("data") or {}).get("ClusterConfiguration")
    if not text:
        return None
    try:
        networking = (yaml.safe_load(text) or {}).get("networking") or {}
    except YAMLError:
        return None
    pod, svc = networking.get("podSubnet"), networking.get("serviceSubnet")
    if not pod or not svc:
        return None
    return {"pod": [p.strip() for p in pod.split(",")], "service": [s.strip() for s in svc.split(",")]}


def ensure_cluster(
    provider: ClusterProvider,
    name: str,
    state: str,
    config: dict[str, Any],
    kubeconfig: str,
    image: str | None,
    wait: bool,
    wait_timeout: int,
    check_mode: bool,
    client_factory: ClientFactory,
    load_images: list[str] | None = None,
    nodes_ready: bool = True,
) -> dict[str, Any]:
    """Make the cluster present or absent, and load `load_images` into its nodes; returns the
    module result (without msg).

    In check mode a backend that cannot be used here (its binary missing, no Docker engine)
    does not fail the plan of a cluster to create: the result says what would be created, with
    `unavailable` and a warning saying why a real run would fail. `planned` is true when the
    result describes a cluster still to create (or a kubeconfig still to write), so there is
    nothing to read from it yet. With `wait` but not `nodes_ready`, a new cluster is returned once its nodes
    have registered (each with an InternalIP), before they are Ready: the caller's next steps run while
    the nodes' network starts, and their pods are scheduled once it is up."""
    validate_cluster_name(name)
    unavailable = None
    try:
        available = provider.check_available()
        exists = provider.exists(name)
    except ClusterError as exc:
        if not (check_mode and state == "present"):
            raise
        available, exists, unavailable = "unavailable", False, "; ".join(provider.why_unavailable()) or str(exc)
    context = context_name(name)
    result: dict[str, Any] = {
        "changed": False, "provider": provider.name, "provider_detail": available, "name": name,
        "capabilities": provider.capabilities.as_dict(), "context": context, "kubeconfig": kubeconfig,
        "warnings": [], "exists": exists,
    }
    if unavailable is not None:
        result["unavailable"] = unavailable
        result["warnings"].append(
            "check mode: the %s backend cannot be used on this machine (%s); a real run would fail here. The result "
            "says what it would create." % (provider.name, unavailable))
    result["diff"] = {"before": {"cluster": name, "exists": exists}, "after": {"cluster": name, "exists": state == "present"}}
    if state == "absent":
        if exists:
            result["changed"] = True
            if not check_mode:
                provider.delete(name, kubeconfig)
        return result

    config, adapted = provider.adapt_config(config)
    result["warnings"].extend(adapted)
    result["config"] = config
    created = not exists
    if created:
        result["changed"] = True
        if not check_mode:
            provider.create(name, yaml.safe_dump(config, default_flow_style=False, sort_keys=False), kubeconfig,
                            wait_timeout if wait and nodes_ready else 0, image)
            result["warnings"].extend(provider.warnings)
    elif context not in kubeconfig_contexts(read_text(kubeconfig)):
        # The cluster is there but this kubeconfig does not know it: write the context in.
        result["changed"] = True
        result["kubeconfig_exported"] = True
        if not check_mode:
            provider.export_kubeconfig(name, kubeconfig)

    planned_only = bool(check_mode and (created or result.get("kubeconfig_exported")))
    result["planned"] = planned_only
    subnets = cluster_subnets(config)
    try:
        result["node_subnets"] = provider.network_subnets()
    except ClusterError as exc:
        if not (check_mode and created):
            raise
        result["node_subnets"] = []
        result["warnings"].append("node network not known before the first cluster exists: %s" % exc)

    if planned_only:
        result["nodes"] = planned_nodes(name, config)
        result["connect_to"] = []
    else:
        client = client_factory(kubeconfig, context)
        want = len(config.get("nodes", [])) if created else 1

        def nodes_up() -> tuple[bool, str]:
            nodes = [node_summary(n) for n in client.list("v1", "Node")]
            with_ip = [n for n in nodes if n["internal_ip"]]
            return len(with_ip) >= want and len(with_ip) == len(nodes), "%d node(s), %d with an InternalIP" % (len(nodes), len(with_ip))

        if wait:
            wait_until(nodes_up, wait_timeout, "the nodes of cluster %r to report InternalIPs" % name)
        result["nodes"] = sorted((node_summary(n) for n in client.list("v1", "Node")), key=lambda n: n["name"] or "")
        live = None if created else live_subnets(client)
        if live is not None:
            if live != subnets:
                result["warnings"].append(
                    "cluster %r already exists with pod %s / service %s, not the configured %s / %s; reporting the live ones"
                    % (name, live["pod"], live["service"], subnets["pod"], subnets["service"])
                )
            subnets = live
        result["connect_to"] = provider.connect_to(name)
    result["pod_subnets"] = subnets["pod"]
    result["service_subnets"] = subnets["service"]
    if load_images:
        loaded = provider.load_images(name, load_images, check_mode) if unavailable is None else {
            "changed": True, "skipped": False, "command": [], "loaded": [], "present": [], "nodes": [],
            "msg": "would load %s into the nodes once the cluster exists" % ", ".join(load_images)}
        result["images_loaded"] = loaded
        result["changed"] = result["changed"] or loaded["changed"]
        if loaded["skipped"]:
            result["warnings"].append(loaded["msg"])
    return result
