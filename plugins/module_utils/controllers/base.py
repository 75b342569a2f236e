# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every controller type shares: the snapshot of the cluster it is read from, the shape of
a controller found in it as the verification modules understand it (AnalysedController), and the
registry entry a type fills in (ControllerType).

A controller type is one package beside this file (ingress_nginx/, traefik/); registry.py lists
them. Diagnose, conflicts, the status writers, the install module and the lab ask the registry,
never a type directly.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import DataPlaneReader
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import selects
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import label_selector_matches

Obj = dict[str, Any]
Values = dict[str, Any]


# Kubernetes' own names, the same for every controller type.
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
# On an Ingress a migration rehearsal rebuilt: the IngressClass it named (spec.ingressClassName), where the rehearsal
# names the class by CLASS_ANNOTATION instead (migration/rehearsal_lab.py says why); the capture's round trip and the
# migrated manifests give it back.
CLASS_NAMED_ANNOTATION = "kindlab.ingress/ingress-class-name"


# ---------------------------------------------------------------- cluster snapshot


@dataclass
class ClusterState:
    """Every object the analysis reads, listed once."""

    workloads: list[Obj] = field(default_factory=list)  # Deployments and DaemonSets
    pods: list[Obj] = field(default_factory=list)
    services: list[Obj] = field(default_factory=list)
    nodes: list[Obj] = field(default_factory=list)
    namespaces: list[Obj] = field(default_factory=list)
    ingress_classes: list[Obj] = field(default_factory=list)
    cluster_roles: list[Obj] = field(default_factory=list)
    cluster_role_bindings: list[Obj] = field(default_factory=list)
    ingresses: list[Obj] = field(default_factory=list)  # the selected ones
    # Gateway API (gateway.networking.k8s.io/v1), all of them; empty where its CRDs are not served.
    gateway_api: bool = False  # whether the cluster serves it
    gateway_classes: list[Obj] = field(default_factory=list)
    gateways: list[Obj] = field(default_factory=list)
    http_routes: list[Obj] = field(default_factory=list)

    def service(self, namespace: str, name: str) -> Obj | None:
        return next((s for s in self.services if meta(s).get("namespace") == namespace and meta(s).get("name") == name), None)

    def node(self, name: str) -> Obj | None:
        return next((n for n in self.nodes if meta(n).get("name") == name), None)

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        ns = next((n for n in self.namespaces if meta(n).get("name") == name), None)
        return None if ns is None else dict(meta(ns).get("labels") or {})


def meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


# ---------------------------------------------------------------- generic helpers


def expand_env(value: str, env: dict[str, str]) -> str:
    """The kubelet's $(VAR) expansion in args: known variables are replaced, `$$` escapes,
    unknown references stay as written."""
    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", repl, value)


def container_env(container: Obj, namespace: str, pod_name: str = "") -> dict[str, str]:
    """Literal env values and the downward-API fields args refer to (POD_NAMESPACE, POD_NAME)."""
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        if "value" in item and item["value"] is not None:
            env[name] = expand_env(str(item["value"]), env)
            continue
        path = (((item.get("valueFrom") or item.get("value_from") or {}).get("fieldRef") or {}).get("fieldPath"))
        if path == "metadata.namespace":
            env[name] = namespace
        elif path == "metadata.name" and pod_name:
            env[name] = pod_name
    return env


def container_argv(container: Obj, namespace: str) -> list[str]:
    """command + args with $(VAR) expanded: what the process gets."""
    env = container_env(container, namespace)
    return [expand_env(str(a), env) for a in list(container.get("command") or []) + list(container.get("args") or [])]


def pod_template(workload: Obj) -> Obj:
    return ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}


def pod_running_ready(pod: Obj) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or meta(pod).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


# ---------------------------------------------------------------- RBAC

_SA_GROUPS = ("system:serviceaccounts", "system:authenticated")


def _subject_is(subject: Obj, namespace: str, service_account: str) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return subject.get("name") == service_account and subject.get("namespace") == namespace
    if kind == "Group":
        return subject.get("name") in _SA_GROUPS + ("system:serviceaccounts:%s" % namespace,)
    return kind == "User" and subject.get("name") == "system:serviceaccount:%s:%s" % (namespace, service_account)


def rule_allows(rule: Obj, group: str, resource: str, verb: str) -> bool:
    """One PolicyRule granting verb on every object of group/resource (resourceNames narrow it)."""
    groups, resources, verbs = rule.get("apiGroups") or [], rule.get("resources") or [], rule.get("verbs") or []
    return (("*" in groups or group in groups) and ("*" in resources or resource in resources)
            and ("*" in verbs or verb in verbs) and not rule.get("resourceNames"))


def can_cluster_wide(state: ClusterState, namespace: str, service_account: str, group: str, resource: str, verb: str) -> bool:
    """Whether the ServiceAccount may `verb` a cluster-scoped resource: only a
    ClusterRoleBinding to a ClusterRole grants that (a Role, or a RoleBinding even to a
    ClusterRole, is confined to its namespace and cannot cover cluster-scoped kinds)."""
    roles = {meta(r).get("name"): r for r in state.cluster_roles}
    for crb in state.cluster_role_bindings:
        if not any(_subject_is(s, namespace, service_account) for s in crb.get("subjects") or []):
            continue
        ref = crb.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole":
            continue
        if ref.get("name") == "cluster-admin":
            return True
        role = roles.get(ref.get("name"))
        if role and any(rule_allows(r, group, resource, verb) for r in role.get("rules") or []):
            return True
    return False


def image_repository(image: str) -> str:
    """registry/path of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    head, _sep, last = name.rpartition("/")
    return (head + "/" if head else "") + last.split(":", 1)[0]


def is_ip(address: str) -> bool:
    try:
        ipaddress.ip_address(address)
        return True
    except ValueError:
        return False


def ip_first(addresses: list[str]) -> list[str]:
    """IPs before hostnames, each by text."""
    return sorted(addresses, key=lambda a: (not is_ip(a), a))


def watch_scope(state: ClusterState, namespaces: list[str], selector: str) -> tuple[str, Callable[[str], bool]]:
    """What a controller watches, in words, and whether it watches a namespace: the namespaces
    named (all when none) that match the label selector (any when empty)."""
    def watches(namespace: str) -> bool:
        if namespaces and namespace not in namespaces:
            return False
        if selector:
            labels = state.namespace_labels(namespace)
            return labels is not None and label_selector_matches(selector, labels)
        return True

    if len(namespaces) == 1:
        text = "namespace %s" % namespaces[0]
    elif namespaces:
        text = "namespaces %s" % ", ".join(namespaces)
    elif selector:
        text = "namespaces matching %s" % selector
    else:
        text = "all namespaces"
    return text, watches


def workload_service(state: ClusterState, workload: Obj) -> Obj | None:
    """A Service in the workload's namespace selecting its pods (the chart's controller Service)."""
    ns = meta(workload).get("namespace")
    labels = ((workload.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    for svc in state.services:
        if meta(svc).get("namespace") == ns and selects((svc.get("spec") or {}).get("selector"), labels, form="Service"):
            return svc
    return None


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Problem:
    """What keeps a controller from doing its job, as its type reads it: the sentence the report gives, the
    diagnose finding it makes ("" for none) and the type's own fix for it (chart values, args)."""

    text: str
    finding: str = ""
    fix: tuple[str, str] = ("", "")


# The findings a problem can make.
CANNOT_START = "cannot_start"
PUBLISH_SERVICE_MISSING = "publish_service_missing"


@dataclass
class AnalysedController:
    """One ingress controller found in a cluster, as the analysis understands it: one status writer
    of a workload (a workload with several, such as Traefik's providers, gives one each)."""

    type: str
    namespace: str
    name: str
    kind: str  # Deployment / DaemonSet
    pods: list[str]
    ready_pods: list[str]
    settings: dict[str, Any]  # type-specific, returned as is
    watch: str  # "all namespaces", "namespace one", "namespaces matching ..."
    publish_source: str  # status-address / service / node-addresses
    publish_detail: str
    address: list[str] | None  # None: it writes nothing (cannot start, update-status off)
    address_from_lb: bool
    faults: list[Problem] = field(default_factory=list)
    # type-specific callables (not returned)
    claim: Callable[[Obj], tuple[str, str]] | None = None
    watches_namespace: Callable[[str], bool] | None = None
    class_keys: list[str] = field(default_factory=list)  # what it claims, for collisions
    sync_period: int = 60
    scope_fix: tuple[str, str] = ("", "")
    publish_fix: tuple[str, str] = ("", "")
    # (chart values, args) that make it stop writing the Ingresses it should leave alone, where
    # the type has a better fix than scope or publishing (Traefik's migration guide).
    stop_fix: tuple[str, str] = ("", "")
    # (chart values, args) that give it a class of its own, so it stops claiming others' Ingresses.
    class_fix: tuple[str, str] = ("", "")
    # Its scope, and its publishing (with %s for the addresses it writes), in its own flags' words for
    # a culprit's reason; "": said from `watch` and `publish_detail`.
    scope_words: str = ""
    publish_words: str = ""

    @property
    def ref(self) -> str:
        return "%s/%s" % (self.namespace, self.name)

    @property
    def problems(self) -> list[str]:
        return [f.text for f in self.faults]

    @property
    def cluster_scoped(self) -> bool:
        return self.watch == "all namespaces"

    def as_dict(self) -> dict[str, Any]:
        return {
            "controller": self.ref, "type": self.type, "kind": self.kind, "pods": self.pods,
            "ready_pods": self.ready_pods, "watch": self.watch, "publish_source": self.publish_source,
            "publish_detail": self.publish_detail, "address": self.address,
            "settings": self.settings, "problems": self.problems,
        }


@dataclass
class GatewayController:
    """One Gateway API implementation found in a cluster, as diagnose understands it: the
    GatewayClasses it claims, the namespaces it watches, what it writes in a Gateway's
    status.addresses and which listener ports it serves. One per workload whose Gateway
    provider is on (ControllerType.gateway)."""

    type: str
    namespace: str
    name: str
    pods: list[str]
    controller_name: str  # the GatewayClass spec.controllerName it claims, and writes in routes' status.parents
    watch: str  # "all namespaces", "namespace one", ...
    address_source: str  # ip / hostname / service / none / blocked
    address_detail: str
    # What it writes in status.addresses ([] for none); None: it writes no status at all (blocked).
    address: list[str] | None
    entry_points: list[dict[str, Any]]  # name, address, port, http_tls: where its listeners can land
    settings: dict[str, Any]  # type-specific, returned as is
    # type-specific callables (not returned)
    claim_class: Callable[[Obj], tuple[bool, str]]  # a GatewayClass → (claims it, why)
    watches_namespace: Callable[[str], bool]
    serves_listener: Callable[[Obj], tuple[str | None, str]]  # a listener → (the entry point serving it or None, why)
    # (chart values, args) that make it claim only a GatewayClass of its own, and that give it an address.
    class_fix: tuple[str, str] = ("", "")
    address_fix: tuple[str, str] = ("", "")
    # The reason it writes in a route's Accepted False when the route's listeners are all ones it serves not.
    route_reason_no_listener: str = "NotAllowedByListeners"
    # The field manager of its status writes (Gateways' and routes'), which the status watch's
    # managedFields name; "": the type's own (ControllerType.field_manager).
    field_manager: str = ""
    # What it does when matches of two routes tie on every criterion, where Gateway API names the
    # older route the winner; "": it follows the spec.
    on_route_tie: str = ""

    @property
    def ref(self) -> str:
        return "%s/%s" % (self.namespace, self.name)

    @property
    def address_from_lb(self) -> bool:
        """It writes its Service's LoadBalancer address (as AnalysedController.address_from_lb), not a fixed one."""
        return self.address_source == "service"

    def as_dict(self) -> dict[str, Any]:
        return {
            "controller": self.ref, "type": self.type, "pods": self.pods, "controller_name": self.controller_name,
            "watch": self.watch, "address_source": self.address_source, "address_detail": self.address_detail,
            "address": self.address, "entry_points": self.entry_points, "settings": self.settings,
        }


# ---------------------------------------------------------------- a controller type


@dataclass(frozen=True)
class SyncFreeze:
    """How test machinery stops a controller's syncing while its proxy keeps serving (lab_actions
    freeze_sync): SIGSTOP to the process whose command line starts with `process`, in the
    container the type detects; SIGCONT resumes it. While it is stopped its health endpoints do
    not answer, so the kubelet would restart or unready the pod: `probe_values` names the chart
    values that loosen its liveness and readiness probes."""

    process: str
    probe_values: tuple[str, ...]


@dataclass(frozen=True)
class CredentialSecret:
    """A Secret of credentials an Ingress's annotations name (ingress-nginx's basic auth): a lab generates it with
    credentials of its own, and a capture keeps the annotations that name it, never the Secret."""

    namespace: str
    name: str
    format: str  # how the users are written: "auth-file" (htpasswd lines under key `auth`) or "auth-map" (user -> hash)
    annotations: tuple[str, ...]  # the annotations (full keys) that ask for it: what a capture keeps


@dataclass(frozen=True)
class IngressPart:
    """What a type does with Ingresses (ingress_diagnose, ingress_conflicts, the status writers):
    the part of a type that serves Ingresses; None on a type that serves only Gateway API."""

    # (state, workload, its container, the workload's pods) → one AnalysedController per status writer in it
    analyse: Callable[[ClusterState, Obj, Obj, list[Obj]], "list[AnalysedController]"]
    # One line of its log → (when, namespace, ingress, addresses written or None when the line
    # does not say) for a status write, else None: who wrote a change, by pod.
    status_log: Callable[[str, int], "tuple[Any, str, str, tuple[str, ...] | None] | None"]
    # Substrings of an IngressClass's spec.controller (or a class annotation's value) that name this type.
    class_markers: tuple[str, ...]
    # (route a, route b) of two Ingresses it serves with the same host and path (ingress_conflicts'
    # Route: .ingress, .key, .path, .path_type, .backend) → which one answers, in words.
    on_duplicate: Callable[[Any, Any], str]
    # Path types it matches as a plain string prefix (nginx's `location /foo` covers /foobar),
    # not by path element as the Ingress spec's Prefix does.
    string_prefix_path_types: tuple[str, ...] = ()
    # (Ingress a, Ingress b) with an identical host+path → why this type does not make them rivals (an
    # ingress-nginx canary Ingress adds an alternative backend to its main Ingress's location), or "".
    companion: Callable[[Obj, Obj], str] | None = None
    # The prefix of the Ingress annotations it routes by ("" for none): what a capture keeps of an Ingress.
    annotation_prefix: str = ""
    # (namespace, an Ingress's annotations) → the credential Secrets they ask it to check requests against.
    credential_secrets: Callable[[str, Mapping[str, str]], "list[CredentialSecret]"] | None = None


@dataclass(frozen=True)
class GatewayPart:
    """What a type does as a Gateway API implementation; None on a type that implements none."""

    # (state, workload, its container, the workload's pods) → its Gateway API side, or None when the
    # workload runs no Gateway provider.
    analyse: Callable[[ClusterState, Obj, Obj, list[Obj]], GatewayController | None]
    # (values) → whether they turn its Gateway provider on, and (values, release, namespace) → what a
    # lab with Gateway API (lab_gateway_api) gives it beneath its own values, which win (as lab_values).
    # A lab without the CRDs refuses a type whose values turn it on (helm would fail half-way: the
    # chart's objects need the CRDs).
    enabled: Callable[[Values], bool]
    lab_values: Callable[[Values, str, str], Values]
    # The controllerName of the GatewayClasses it serves: a lab's GatewayClass names it unless it names another.
    controller_name: str


@dataclass(frozen=True)
class CapturePart:
    """The inverse of effective_config's args (lab_capture); None: the type cannot be captured."""

    # (a running container's args, release, namespace, chart version or None for the pin) → (chart
    # values that render the same effective args, what the values alone do not say: flags in the
    # chart's extra-args value, args not captured).
    args_to_values: Callable[[list[str], str, str, "str | None"], "tuple[Values, list[str]]"]
    # (args, namespace, chart version) → the effective flags both are compared by.
    effective_args: Callable[[list[str], str, "str | None"], "dict[str, str]"]
    # (state, workload, its container, values from args_to_values, the release, the IngressClass
    # names other captured releases create) → (values with what else the cluster shows: kind,
    # replicas, RBAC, its IngressClass, its Service; notes on what the lab cannot reproduce).
    capture_values: Callable[[ClusterState, Obj, Obj, Values, str, "set[str]"], "tuple[Values, list[str]]"]
    # Flags whose value is a secret: they never leave the cluster.
    secret_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class OfflinePart:
    """What the project's own machines run in place of what users pull (the offline kind lab,
    hack/kind-lab.sh); None: the offline lab has no stand-in for the type."""

    # The image built here for each key of default_images (hack/kind-images.sh).
    images: Mapping[str, str]
    # The local chart helm installs (lab_charts), a path under the kindlab cache (~/.cache/kindlab).
    chart: str


@dataclass(frozen=True)
class InstallPart:
    """How the lab installs the type (ingress_controller, lab_definition): its chart, what its values
    mean (the Config), the objects it renders without helm, and the images its pods run."""

    chart_name: str
    chart_repo: str
    chart_version: str
    # (values, release, namespace, chart version or None for the pin) → the type's Config
    effective_config: Callable[[Values, str, str, "str | None"], Any]
    # The Config → the objects the chart would create; None: only helm installs this type.
    render_manifests: Callable[[Any], list[Obj]] | None
    # (values, scope, publish_service, ingress_class) → values
    apply_options: Callable[[Values, "bool | None", "bool | None", "str | None"], Values]
    value_errors: tuple[type[Exception], ...]
    # For the manifest method's pruning: the kinds it may render, and the selector of a release's objects.
    rendered_kinds: tuple[tuple[str, str], ...]
    release_selector: Callable[[str], str]
    # The images its pods run: their keys in lab_images → the pinned image (what users get). The lab's
    # image map (lab/images.py) takes its keys and defaults from here.
    default_images: Mapping[str, str]
    # (values, the lab's image map) → values that run those images
    with_images: Callable[[Values, "dict[str, str]"], Values]
    # (values, time scale) → values that shorten the controller's own periods by that factor
    with_time_scale: Callable[[Values, float], Values]
    # Values the lab (lab_definition) gives every controller of this type beneath the lab's own,
    # which win: what the lab needs of it that the chart leaves off. The ingress_controller module
    # alone (a user's install) gets none of them.
    lab_values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def image_keys(self) -> tuple[str, ...]:
        """Its keys in lab_images."""
        return tuple(self.default_images)


@dataclass(frozen=True)
class ControllerType:
    """Everything the collection knows about one kind of ingress controller, in one entry: what
    every type has (how to recognise its container in a running workload, its field manager and
    data plane), and optional parts that a type declares only where it has them: `install` (how the
    lab installs it; a type without it is still found and diagnosed in a captured or running cluster),
    `ingress` (what it claims, publishes and does with a duplicate host/path), `gateway` (the same
    for GatewayClasses and Gateways), `capture` (a running install read back into chart values) and
    `offline` (what the project's machines run instead). A type that serves only Gateway API leaves
    `ingress` out; one that implements no Gateway API leaves `gateway` out.
    """

    name: str
    # A container of a running workload: is it this type's binary?
    detect: Callable[[Obj], bool]
    # The field manager the API server records for its status writes (from its user agent).
    field_manager: str
    # Whether the twin emulates it (kindlab-twin runs no real proxy: a type it does not emulate
    # runs on kind only, and lab_definition refuses it on the twin).
    on_twin: bool
    # How its data plane is read from one pod (what it routes each backend to) and how it names
    # an Ingress backend there: ingress_dataplane compares that with the EndpointSlices.
    dataplane: DataPlaneReader
    install: InstallPart | None = None
    ingress: IngressPart | None = None
    gateway: GatewayPart | None = None
    capture: CapturePart | None = None
    offline: OfflinePart | None = None
    # How test machinery stops its syncing while its proxy serves, or None with why it cannot.
    sync_freeze: SyncFreeze | None = None
    no_sync_freeze: str = ""
    # The request header its proxy adds to every request it passes on, naming its own pod (its hostname); "" when it
    # adds none. An answer proves which proxy passed it by this header (the rehearsal's proof of origin).
    proxy_marker: str = ""

    def installer(self) -> InstallPart:
        """Its install part; a ControllerError naming the field when it declares none (the lab cannot install it)."""
        if self.install is None:
            raise ControllerError("type: %s is known to discovery and diagnosis, but the lab cannot install it (its"
                                  " entry declares no install part)" % self.name)
        return self.install
