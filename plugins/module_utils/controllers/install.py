# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the `ingress_controller` module installs a controller of any registered type (helm or
rendered manifests), and how `lab_definition` and `controller_health` read the lab's controllers.
Everything type-specific comes from the type's registry entry (controllers/registry.py).

`run` is the module's logic without AnsibleModule: it takes a parsed request, a client
factory and a run_command callable, so unit tests drive it with fakes.
"""
from __future__ import annotations

import json
import os
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ansible_collections.kindlab.ingress.plugins.module_utils import _helm
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import (
    DNS1035_LABEL,
    DNS1123_SUBDOMAIN,
    is_dns1035_label,
    is_dns1123_subdomain,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import apply_order
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import (
    LOG_TAIL_LINES,
    deployment_ready,
    describe_failure,
    wait_for_workload,
    workload_failure,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ControllerType
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import merge_values
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import (
    DEFAULT_TYPE,
    REGISTRY,
    controller_type,
    installable,
    installable_names,
)

Values = dict[str, Any]
Obj = dict[str, Any]
RunCommand = Callable[[list[str]], "tuple[int, str, str]"]

# Cluster-scoped objects carry their release, so a second release cannot silently take
# over another's IngressClass or ClusterRole (helm refuses the same way, by its own
# ownership annotations).
OWNER_ANNOTATION = "kindlab.ingress/release"


class HealthError(KindlabError):
    """A controller did not start (controller_health with fail_on_violation); details carry the result."""


class Config(Protocol):
    """What every controller type's effective_config returns."""

    values: Values
    notes: list[str]
    image: str  # the image its pods run

    @property
    def deployment(self) -> tuple[str, str]: ...

    def summary(self) -> dict[str, Any]: ...


# ---------------------------------------------------------------- request and plan


@dataclass
class Request:
    type: str = DEFAULT_TYPE
    namespace: str = ""
    release: str = "ingress"
    values: Values = field(default_factory=dict)
    scope: bool | None = None
    publish_service: bool | None = None
    ingress_class: str | None = None
    method: str = "helm"
    state: str = "present"
    helm_binary: str = "helm"
    chart_version: str | None = None
    chart_repo: str | None = None
    chart_path: str | None = None
    # Controller type -> a local chart: this type's entry stands in for chart_path (lab_charts, as a lab gives them).
    charts: dict[str, str] = field(default_factory=dict)
    time_scale: float | None = None
    create_namespace: bool = True
    kubeconfig: str | None = None
    context: str | None = None
    wait: bool = True
    wait_timeout: int = 300


@dataclass
class Plan:
    ctype: ControllerType
    values: Values  # what helm gets (user values + convenience options)
    config: Any
    objects: list[Obj]  # rendered objects (manifest method), empty for helm
    chart: _helm.ChartSource | None = None  # where helm takes the chart from (helm method)


def plan(req: Request) -> Plan:
    """Validate everything before anything changes."""
    ctype = controller_type(req.type)
    how = ctype.installer()
    if req.method not in METHODS:
        raise ControllerError("method: expected helm or manifest, got %r" % req.method)
    if req.state not in ("present", "absent"):
        raise ControllerError("state: expected present or absent, got %r" % req.state)
    check_release(req.release, "release")
    for name, path in (req.charts or {}).items():
        if name not in installable():
            raise ControllerError("charts.%s: expected a controller type the lab installs, one of %s" % (name, ", ".join(installable_names())))
        if not isinstance(path, str) or not path:
            raise ControllerError("charts.%s: expected the path of a chart directory or .tgz, got %r" % (name, path))
    chart = None
    if req.method == "helm":
        # chart_path wins; else the charts entry of this type (a controller installed from manifests needs none).
        chart_path, field_name = req.chart_path, "chart_path"
        if not chart_path and ctype.name in (req.charts or {}):
            chart_path, field_name = req.charts[ctype.name], "charts.%s" % ctype.name
        try:
            chart = _helm.chart_source(how.chart_name, how.chart_repo, how.chart_version,
                                       req.chart_repo, req.chart_version, chart_path)
        except _helm.HelmError as exc:
            raise ControllerError(str(exc).replace("chart_path", field_name, 1)) from exc
    elif req.chart_path:
        raise ControllerError("chart_path: only method=helm installs a chart; method=manifest renders the objects itself")
    try:
        values = how.apply_options(req.values, req.scope, req.publish_service, req.ingress_class)
        if req.time_scale is not None:
            values = how.with_time_scale(values, req.time_scale)
        config = how.effective_config(values, req.release, req.namespace,
                                      chart.version if chart else req.chart_version)
        check_object_names(config.summary()["names"], req.release, "")
        if req.method == "manifest" and how.render_manifests is None:
            raise ControllerError("method: type %s is installed with helm only (method: helm)" % req.type)
        objects = how.render_manifests(config) if req.method == "manifest" and how.render_manifests else []
    except how.value_errors as exc:
        raise ControllerError("values: %s" % exc) from exc
    for obj in objects:
        if not obj["metadata"].get("namespace"):
            obj["metadata"].setdefault("annotations", {})[OWNER_ANNOTATION] = "%s/%s" % (req.namespace, req.release)
    if req.method == "manifest" and req.create_namespace:
        ns_obj: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": config.deployment[0]}}
        objects = [ns_obj] + objects
    return Plan(ctype, values, config, objects, chart)


# ---------------------------------------------------------------- names

# What each key of a config summary's `names` names, for messages.
_NAMED = {"fullname": "RBAC objects", "deployment": "Deployment", "service": "Service",
          "service_account": "ServiceAccount", "election_id": "leader-election Lease", "configmap": "ConfigMap"}


def check_release(release: Any, where: str) -> str:
    """helm's rule for release names, for either method: helm refuses any other name, and the
    manifest method names the objects after the release as the chart would."""
    if not _helm.valid_release_name(release):
        raise ControllerError("%s: expected %s, got %r" % (where, _helm.RELEASE_NAME, release))
    return str(release)


def check_object_names(names: dict[str, str | None], release: str, where: str) -> None:
    """The names a controller's objects get (from the release, or from values such as
    fullnameOverride) must be names Kubernetes takes: a DNS-1035 label for its Service, a DNS-1123
    subdomain for the others. helm would accept the release and the API server refuse the object."""
    for key, name in sorted(names.items()):
        if name is None:
            continue
        service = key == "service"
        if is_dns1035_label(name) if service else is_dns1123_subdomain(name):
            continue
        what = _NAMED.get(key, key)
        rule = DNS1035_LABEL if service else DNS1123_SUBDOMAIN
        if name.startswith(release):  # the charts name their objects <release>[-...] unless the values override it
            raise ControllerError("%s: expected a release name that makes the controller's %s name %s, got %r (%s %r)"
                                  % (_field(where, "release"), what, rule, release, what, name))
        raise ControllerError("%s: expected values that make the controller's %s name %s, got %s %r"
                              % (_field(where, "values"), what, rule, what, name))


def _field(where: str, key: str) -> str:
    return "%s.%s" % (where, key) if where else key


# ---------------------------------------------------------------- lab definitions

_DEFINITION_KEYS = {"type", "namespace", "release", "values", "scope", "publish_service", "ingress_class", "method"}
METHODS = ("helm", "manifest")


def parse_controller(raw: Any, where: str = "", images: dict[str, str] | None = None,
                     gateway_api: bool | None = None) -> dict[str, Any]:
    """One controller of a lab definition → normalised dict with what the chart will do.
    `images` (the parsed lab_images: the lab's path) are folded into the values, and so are the
    type's lab_values, beneath the definition's own. `gateway_api` (lab_gateway_api; None outside
    a lab): whether the lab applies the Gateway API CRDs; with it, a type whose values turn on its
    Gateway provider gets the type's gateway_lab_values beneath its own too, and without it such a
    controller is refused. Errors are prefixed with `where` (e.g. "[1]") and name the field."""
    if not isinstance(raw, dict):
        raise ControllerError("%s: expected a mapping with %s, got %r" % (where or "controller", ", ".join(sorted(_DEFINITION_KEYS)), raw))
    unknown = sorted(set(raw) - _DEFINITION_KEYS)
    if unknown:
        raise ControllerError("%s: unknown keys %s (expected some of %s)" % (where or "controller", unknown, ", ".join(sorted(_DEFINITION_KEYS))))
    try:
        ctype = controller_type(raw.get("type", DEFAULT_TYPE))
        how = ctype.installer()
    except ControllerError as exc:
        raise ControllerError("%s.%s" % (where, exc)) from None
    namespace, release = raw.get("namespace"), raw.get("release", "ingress")
    if not isinstance(namespace, str) or not namespace:
        raise ControllerError("%s.namespace: expected a namespace name, got %r" % (where, namespace))
    check_release(release, where + ".release")
    for key in ("scope", "publish_service"):
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            raise ControllerError("%s.%s: expected a boolean, got %r" % (where, key, raw[key]))
    method = raw.get("method")
    if method is not None and method not in METHODS:
        raise ControllerError("%s.method: expected one of %s, got %r" % (where, ", ".join(METHODS), method))
    if method == "manifest" and how.render_manifests is None:
        raise ControllerError("%s.method: type %s is installed with helm only (method: helm)" % (where, ctype.name))
    try:
        values = how.apply_options(raw.get("values") or {}, raw.get("scope"), raw.get("publish_service"), raw.get("ingress_class"))
        gateway = ctype.gateway is not None and ctype.gateway.enabled(values)
        if gateway and method == "manifest":
            raise ControllerError("%s.method: the values turn on %s's Gateway API provider, which only helm installs "
                                  "(method=manifest renders no Gateway API objects or RBAC); use method: helm"
                                  % (where, ctype.name))
        if gateway and gateway_api is False:
            raise ControllerError("%s.values: they turn on %s's Gateway API provider, but lab_gateway_api is false: "
                                  "the chart's install would fail without the Gateway API CRDs; set lab_gateway_api: true"
                                  % (where, ctype.name))
        lab_values = dict(how.lab_values)
        if gateway and gateway_api and ctype.gateway is not None:
            lab_values = merge_values(lab_values, ctype.gateway.lab_values(values, release, namespace))
        if images is not None:
            values = how.with_images(merge_values(lab_values, values), images)
        config = how.effective_config(values, release, namespace, None)
        if method == "manifest" and how.render_manifests is not None:
            how.render_manifests(config)  # refuses what it cannot render now, before the lab changes anything
    except how.value_errors as exc:
        raise ControllerError("%s.values: %s" % (where, exc)) from None
    summary = config.summary()
    check_object_names(summary["names"], release, where)
    resource = summary["ingress_class"]["resource"]
    # `values` has the convenience options folded in: what helm and the manifest method get, so
    # the lab installs what was validated (scope, publish_service, ingress_class included).
    return {
        "type": ctype.name,
        "namespace": namespace,
        "release": release,
        "values": values,
        "method": method,  # None: the installer's default (helm on kind, manifest on the twin)
        "ingress_class_resource": resource["name"] if resource else None,
        "deployment": "%s/%s" % config.deployment,
        "args": summary["args"],
        "rbac_scope": summary["rbac_scope"],
        # What the release creates outside its namespace besides its IngressClass (one name per cluster).
        "cluster_objects": summary["cluster_objects"],
        "watch_namespace": summary["watch_namespace"],
        "publish": summary["publish"],
        "notes": summary["notes"],
        # Whether its values turn on its Gateway API provider (it then claims GatewayClasses).
        "gateway_provider": gateway,
    }


def parse_controllers(raw: Any, images: dict[str, str] | None = None, gateway_api: bool | None = None) -> list[dict[str, Any]]:
    """A lab's controller list: each validated, then the clashes between releases that
    helm would only report half-way through the lab (same release twice in a namespace,
    one cluster-scoped IngressClass, ClusterRole or ClusterRoleBinding name created by two releases)."""
    if not isinstance(raw, list):
        raise ControllerError("expected a list of controllers, got %r" % (raw,))
    parsed = [parse_controller(item, "[%d]" % i, images, gateway_api) for i, item in enumerate(raw)]
    releases: dict[tuple[str, str], int] = {}
    classes: dict[str, int] = {}
    cluster_objects: dict[str, int] = {}
    for i, ctl in enumerate(parsed):
        key = (ctl["namespace"], ctl["release"])
        if key in releases:
            raise ControllerError("[%d].release: release %s/%s is already defined by [%d]" % (i, key[0], key[1], releases[key]))
        releases[key] = i
        name = ctl["ingress_class_resource"]
        if name is not None:
            if name in classes:
                first = parsed[classes[name]]
                raise ControllerError(
                    "[%d].values.controller.ingressClassResource.name: IngressClass %r is already created by [%d] (%s/%s); "
                    "IngressClasses are cluster-wide, so give each release its own name (or ingressClassResource.enabled=false)"
                    % (i, name, classes[name], first["namespace"], first["release"])
                )
            classes[name] = i
        for obj in ctl["cluster_objects"]:
            if obj in cluster_objects:
                first = parsed[cluster_objects[obj]]
                # helm: "ClusterRole ... exists and cannot be imported into the current release" (seen on kind)
                raise ControllerError(
                    "[%d].release: %s is already created by [%d] (%s/%s): the chart names its cluster-wide RBAC after the "
                    "release, so two cluster-wide releases need different release names (or rbac.scope=true)"
                    % (i, obj, cluster_objects[obj], first["namespace"], first["release"]))
            cluster_objects[obj] = i
    return parsed


# ---------------------------------------------------------------- health


# How often controller_health reads again a controller that is neither ready nor failing yet.
HEALTH_POLL_SECONDS = 2.0


def _health_once(client: Any, ctl: dict[str, Any], log_lines: int) -> dict[str, Any]:
    ns, _sep, name = ctl["deployment"].partition("/")
    deployment = client.get("apps/v1", "Deployment", name, ns)
    ready, detail = deployment_ready(deployment)
    failure = None
    if deployment is None:
        reason = "Deployment %s not found" % ctl["deployment"]
    elif ready:
        reason = "started: Deployment %s %s" % (ctl["deployment"], detail)
    else:
        failure = workload_failure(client, deployment, log_lines)
        reason = ("cannot start: %s" % describe_failure(failure)) if failure else \
            "not ready: Deployment %s %s" % (ctl["deployment"], detail)
    return {"passed": ready, "reason": reason, "deployment": ctl["deployment"], "failure": failure,
            "settled": deployment is None or ready or failure is not None}


def health(client: Any, controllers: list[dict[str, Any]], log_lines: int = LOG_TAIL_LINES, settle_timeout: float = 0.0,
           sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """Whether each parsed controller (parse_controllers) started: its Deployment ready, or why
    not. A pod that will not start gives the kubelet's reason, the exit code and the last log
    lines (the same reading as the install's wait). A controller neither ready nor failing yet
    (starting, or between two runs of a crash loop) is read again for up to settle_timeout seconds."""
    deadline = clock() + settle_timeout
    results: dict[str, Any] = {}
    while True:
        for ctl in controllers:
            key = "%s/%s" % (ctl["namespace"], ctl["release"])
            if key not in results or not results[key]["settled"]:
                results[key] = _health_once(client, ctl, log_lines)
        if all(entry["settled"] for entry in results.values()) or clock() >= deadline:
            break
        sleep(min(HEALTH_POLL_SECONDS, max(0.0, deadline - clock())))
    for entry in results.values():
        del entry["settled"]
    failures = ["%s: %s" % (key, entry["reason"]) for key, entry in results.items() if not entry["passed"]]
    return {"controllers": results, "passed": not failures, "failures": failures}


# ---------------------------------------------------------------- run


def _result(p: Plan, changed: bool) -> dict[str, Any]:
    out = dict(p.config.summary())
    out["changed"] = changed
    out["values"] = p.values
    out["objects"] = [ref_of(o) for o in p.objects if o["kind"] != "Namespace"]
    return out


def _wait_ready(client: Any, p: Plan, timeout: int, changed: bool) -> str:
    """Wait for the controller's Deployment; a controller that cannot start (crash loop, image
    error) fails at once with the kubelet's reason, the exit code and its last log lines. A
    failed wait still reports whether the install changed the cluster."""
    ns, name = p.config.deployment
    try:
        return wait_for_workload(client, "Deployment", ns, name, timeout)
    except K8sError as exc:
        exc.details.setdefault("changed", changed)
        raise


def _check_owner(client: Any, obj: Obj) -> None:
    meta = obj["metadata"]
    want = meta.get("annotations", {}).get(OWNER_ANNOTATION)
    if want is None:
        return
    current = client.get(obj["apiVersion"], obj["kind"], meta["name"])
    if current is None:
        return
    have = ((current.get("metadata") or {}).get("annotations") or {}).get(OWNER_ANNOTATION)
    if have != want:
        raise ControllerError(
            "%s %s already exists and belongs to %s, not to release %s; give this release its own name "
            "(for an IngressClass: values.controller.ingressClassResource.name)"
            % (obj["kind"], meta["name"], "release " + have if have else "something else (not applied by this collection)", want)
        )


def run_manifest(req: Request, p: Plan, client: Any, check_mode: bool) -> dict[str, Any]:
    if req.state == "absent":
        changed = False
        deleted = []
        for obj in sorted((o for o in p.objects if o["kind"] != "Namespace"), key=apply_order, reverse=True):
            meta = obj["metadata"]
            if meta.get("annotations", {}).get(OWNER_ANNOTATION):
                current = client.get(obj["apiVersion"], obj["kind"], meta["name"])
                owner = ((current or {}).get("metadata", {}).get("annotations") or {}).get(OWNER_ANNOTATION)
                if current is not None and owner != meta["annotations"][OWNER_ANNOTATION]:
                    continue  # someone else's object of the same name: leave it
            if client.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"), check_mode=check_mode):
                changed = True
                deleted.append(ref_of(obj))
        result = _result(p, changed)
        result["deleted"] = deleted
        return result
    for obj in p.objects:
        _check_owner(client, obj)
    results = client.apply_all(p.objects, check_mode=check_mode)
    pruned = _prune(req, p, client, check_mode)
    changed = any(r.changed for r in results) or bool(pruned)
    result = _result(p, changed)
    result["pruned"] = pruned
    # One Ansible diff per changed object, headed with its name (the list form the callback takes).
    result["diff"] = [r.diff for r in results if r.changed]
    if req.wait and not check_mode:
        result["ready"] = _wait_ready(client, p, req.wait_timeout, changed)
    return result


def _prune(req: Request, p: Plan, client: Any, check_mode: bool) -> list[str]:
    """Delete what this release rendered before but no longer renders, as `helm upgrade` does
    (e.g. the ClusterRole of a controller that became namespace-scoped). Namespaced objects
    are the release's by label in its namespace; cluster-scoped ones also by the owner annotation."""
    keep = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in p.objects}
    owner = "%s/%s" % (req.namespace, req.release)
    pruned = []
    how = p.ctype.installer()
    for api_version, kind in how.rendered_kinds:
        for obj in client.list(api_version, kind, label_selector=how.release_selector(req.release)):
            meta = obj.get("metadata") or {}
            namespace = meta.get("namespace")
            mine = namespace == req.namespace if namespace else (meta.get("annotations") or {}).get(OWNER_ANNOTATION) == owner
            if mine and (kind, namespace, meta["name"]) not in keep:
                if client.delete(api_version, kind, meta["name"], namespace, check_mode=check_mode):
                    pruned.append(ref_of({"kind": kind, "metadata": meta}))
    return pruned


def _run(run_command: RunCommand, argv: list[str]) -> str:
    rc, out, err = run_command(argv)
    if rc != 0:
        raise ControllerError("`%s` failed (rc=%s): %s" % (shlex.join(argv), rc, (err or out).strip()))
    return out


def write_values_file(values: Values) -> str:
    """A private temporary file with the values (JSON is YAML, so helm reads it)."""
    fd, path = tempfile.mkstemp(prefix="kindlab-values-", suffix=".yaml")
    with os.fdopen(fd, "w") as handle:
        json.dump(values, handle, indent=2, sort_keys=True)
    return path


def run_helm(
    req: Request,
    p: Plan,
    helm: str,
    run_command: RunCommand,
    check_mode: bool,
    client_factory: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    kube: dict[str, Any] = {"kubeconfig": req.kubeconfig, "context": req.context}
    if p.chart is None:
        raise ControllerError("method=helm: no chart source was planned")
    chart = p.chart
    commands: list[list[str]] = []

    def call(argv: list[str]) -> str:
        commands.append(argv)
        return _run(run_command, argv)

    deployed = _helm.find_release(
        _helm.parse_list(call(_helm.list_argv(helm, req.release, req.namespace, **kube))), req.release, req.namespace
    )
    if req.state == "absent":
        if deployed is not None and not check_mode:
            call(_helm.uninstall_argv(helm, req.release, req.namespace, wait=req.wait, timeout=req.wait_timeout if req.wait else None, **kube))
        result = _result(p, deployed is not None)
        result["release"] = deployed.as_dict() if deployed else None
        result["commands"] = commands
        return result

    deployed_values = _helm.parse_get_values(call(_helm.get_values_argv(helm, req.release, req.namespace, **kube))) if deployed else None
    changed, reason = _helm.upgrade_needed(deployed, deployed_values, chart.name, chart.version, p.values)
    if changed and not check_mode:
        path = write_values_file(p.values)
        try:
            call(
                _helm.upgrade_install_argv(
                    helm, req.release, chart.ref, chart.repo, chart.version if chart.repo else "", req.namespace, path,
                    create_namespace=req.create_namespace, timeout=req.wait_timeout, **kube,
                )
            )
        finally:
            os.unlink(path)
        # Read back with `helm list`: `helm status -o json` strips the chart (v3 and v4 alike).
        deployed = _helm.find_release(
            _helm.parse_list(call(_helm.list_argv(helm, req.release, req.namespace, **kube))), req.release, req.namespace
        )
    result = _result(p, changed)
    result["reason"] = reason
    result["chart"] = chart.as_dict()
    result["release"] = deployed.as_dict() if deployed else None
    result["commands"] = commands
    if changed:
        result["diff"] = _helm.values_diff(deployed_values, p.values)
    if req.wait and not check_mode:
        if client_factory is None:
            raise ControllerError("wait: the kubernetes client is needed to wait for the Deployment")
        result["ready"] = _wait_ready(client_factory(), p, req.wait_timeout, changed)
    return result


def run(
    req: Request,
    check_mode: bool,
    client_factory: Callable[[], Any] | None = None,
    run_command: RunCommand | None = None,
    helm: str | None = None,
) -> dict[str, Any]:
    """Plan (validate), then install/upgrade or remove. Raises ControllerError/K8sError."""
    p = plan(req)
    if req.method == "manifest":
        if client_factory is None:
            raise ControllerError("method=manifest needs the kubernetes client")
        return run_manifest(req, p, client_factory(), check_mode)
    if run_command is None or helm is None:
        raise ControllerError("method=helm needs the helm binary")
    try:
        return run_helm(req, p, helm, run_command, check_mode, client_factory)
    except _helm.HelmError as exc:
        raise ControllerError(str(exc)) from exc


__all__ = [
    "DEFAULT_TYPE", "ControllerError", "K8sError", "REGISTRY", "Request", "controller_type", "health", "parse_controller", "parse_controllers",
    "plan", "run", "installable", "installable_names",
]
