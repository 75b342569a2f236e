# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: what chart values mean for the controller that runs.

`effective_config` maps chart values to what chart 4.15.1 renders (container args in
template order, RBAC, IngressClass, object names) and to what the controller v1.15.1
binary then does with those args (watch scope, which Ingresses it claims, where its
status address comes from). `render_manifests` turns that into the objects the chart
would create, for clusters without network access to the chart (the twin). Both the
helm and the manifest paths go through `effective_config`, so they cannot disagree.

Facts were read from kubernetes/ingress-nginx at tag helm-chart-4.15.1
(charts/ingress-nginx/templates/_params.tpl, _helpers.tpl, controller-*.yaml,
clusterrole.yaml, values.yaml) and controller-v1.15.1 (cmd/nginx/main.go,
pkg/flags/flags.go, internal/ingress/status/status.go, store/store.go).
"""
from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._images import ingress_nginx_image_values
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    INGRESS_NGINX_CHART_REPO,
    INGRESS_NGINX_CHART_VERSION,
    INGRESS_NGINX_CONTROLLER_DIGEST,
    INGRESS_NGINX_CONTROLLER_VERSION,
    INGRESS_NGINX_OFFLINE_CHART_VERSION,
)

Values = dict[str, Any]
Obj = dict[str, Any]

CHART_NAME = "ingress-nginx"
CHART_REPO = INGRESS_NGINX_CHART_REPO
CHART_VERSION = INGRESS_NGINX_CHART_VERSION
APP_VERSION = INGRESS_NGINX_CONTROLLER_VERSION.lstrip("v")

# Controller binary defaults (pkg/flags/flags.go, ingressclass.go) used when the chart
# passes no flag.
BINARY_DEFAULT_INGRESS_CLASS = "nginx"
BINARY_DEFAULT_CONTROLLER_CLASS = "k8s.io/ingress-nginx"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
POD_NAMESPACE_REF = "$(POD_NAMESPACE)"

# The part of chart 4.15.1's values.yaml this module reads (same keys, same defaults).
CHART_DEFAULTS: Values = {
    "global": {"image": {"registry": "registry.k8s.io"}},
    "nameOverride": "",
    "fullnameOverride": "",
    "namespaceOverride": "",
    "commonLabels": {},
    "revisionHistoryLimit": 10,
    "controller": {
        "name": "controller",
        "enableAnnotationValidations": True,
        "image": {
            "chroot": False,
            "image": "ingress-nginx/controller",
            "tag": INGRESS_NGINX_CONTROLLER_VERSION,
            "digest": INGRESS_NGINX_CONTROLLER_DIGEST,
            "pullPolicy": "IfNotPresent",
            "runAsNonRoot": True,
            "runAsUser": 101,
            "runAsGroup": 82,
            "allowPrivilegeEscalation": False,
            "seccompProfile": {"type": "RuntimeDefault"},
            "readOnlyRootFilesystem": False,
        },
        "containerName": "controller",
        "containerPort": {"http": 80, "https": 443},
        "config": {},
        "allowSnippetAnnotations": False,
        "dnsPolicy": "ClusterFirst",
        "reportNodeInternalIp": False,
        "watchIngressWithoutClass": False,
        "ingressClassByName": False,
        "enableTopologyAwareRouting": False,
        "disableLeaderElection": False,
        "electionTTL": "",
        "hostNetwork": False,
        "electionID": "",
        "ingressClassResource": {
            "name": "nginx",
            "enabled": True,
            "default": False,
            "annotations": {},
            "controllerValue": BINARY_DEFAULT_CONTROLLER_CLASS,
        },
        "ingressClass": "nginx",
        "podLabels": {},
        "podAnnotations": {},
        "containerSecurityContext": {},
        "publishService": {"enabled": True, "pathOverride": ""},
        "scope": {"enabled": False, "namespace": "", "namespaceSelector": ""},
        "configMapNamespace": "",
        "maxmindLicenseKey": "",
        "extraArgs": {},
        "extraEnvs": [],
        "kind": "Deployment",
        "labels": {},
        "updateStrategy": {},
        "minReadySeconds": 0,
        "terminationGracePeriodSeconds": 300,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 10254, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 5,
        },
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": 10254, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "healthCheckPath": "/healthz",
        "healthCheckHost": "",
        "replicaCount": 1,
        "resources": {"requests": {"cpu": "100m", "memory": "90Mi"}},
        "enableMimalloc": True,
        "service": {
            "enabled": True,
            "external": {"enabled": True},
            "internal": {"enabled": False},
            "annotations": {},
            "labels": {},
            "type": "LoadBalancer",
            "loadBalancerIP": "",
            "loadBalancerClass": "",
            "externalTrafficPolicy": "",
            "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"],
            "enableHttp": True,
            "enableHttps": True,
            "ports": {"http": 80, "https": 443},
            "targetPorts": {"http": "http", "https": "https"},
            "appProtocol": True,
        },
        "admissionWebhooks": {
            "enabled": True,
            "port": 8443,
            "certificate": "/usr/local/certificates/cert",
            "key": "/usr/local/certificates/key",
        },
        "metrics": {"enabled": False, "port": 10254, "portName": "metrics"},
        "lifecycle": {"preStop": {"exec": {"command": ["/wait-shutdown"]}}},
        "autoscaling": {"enabled": False},
        "keda": {"enabled": False},
    },
    "defaultBackend": {"enabled": False, "name": "defaultbackend"},
    "rbac": {"create": True, "scope": False},
    "serviceAccount": {"create": True, "name": "", "automountServiceAccountToken": True, "annotations": {}},
    "tcp": {},
    "udp": {},
}

# Every top-level key chart 4.15.1's values.yaml declares (anything else is unknown to it).
CHART_TOP_LEVEL_KEYS = frozenset(
    "global namespaceOverride commonLabels controller revisionHistoryLimit defaultBackend rbac "
    "serviceAccount imagePullSecrets tcp udp portNamePrefix dhParam nameOverride fullnameOverride".split()
)

# The type each modelled key must have ("null" is always allowed: helm then drops the
# chart default). Keys below a "map"/"list" entry are not checked further.
_TYPES: dict[str, str] = {
    "nameOverride": "str", "fullnameOverride": "str", "namespaceOverride": "str",
    "commonLabels": "str_map", "revisionHistoryLimit": "int",
    "global.image.registry": "str",
    "controller.name": "str", "controller.enableAnnotationValidations": "bool",
    "controller.image.registry": "str", "controller.image.image": "str", "controller.image.repository": "str",
    "controller.image.tag": "str", "controller.image.digest": "str", "controller.image.chroot": "bool",
    "controller.image.pullPolicy": "str",
    "controller.containerName": "str", "controller.containerPort": "int_map",
    "controller.config": "scalar_map", "controller.allowSnippetAnnotations": "bool",
    "controller.reportNodeInternalIp": "bool", "controller.hostNetwork": "bool",
    "controller.watchIngressWithoutClass": "bool", "controller.ingressClassByName": "bool",
    "controller.enableTopologyAwareRouting": "bool", "controller.disableLeaderElection": "bool",
    "controller.electionTTL": "str", "controller.electionID": "str",
    "controller.ingressClassResource.name": "str", "controller.ingressClassResource.enabled": "bool",
    "controller.ingressClassResource.default": "bool", "controller.ingressClassResource.annotations": "str_map",
    "controller.ingressClassResource.controllerValue": "str",
    "controller.ingressClass": "str",
    "controller.podLabels": "str_map", "controller.podAnnotations": "scalar_map", "controller.labels": "str_map",
    "controller.containerSecurityContext": "map",
    "controller.publishService.enabled": "bool", "controller.publishService.pathOverride": "str",
    "controller.scope.enabled": "bool", "controller.scope.namespace": "str",
    "controller.scope.namespaceSelector": "str",
    "controller.configMapNamespace": "str", "controller.maxmindLicenseKey": "str",
    "controller.extraArgs": "scalar_map", "controller.extraEnvs": "list", "controller.kind": "str",
    "controller.updateStrategy": "map", "controller.minReadySeconds": "int",
    "controller.terminationGracePeriodSeconds": "int", "controller.nodeSelector": "str_map",
    "controller.livenessProbe": "map", "controller.readinessProbe": "map",
    "controller.healthCheckPath": "str", "controller.healthCheckHost": "str",
    "controller.replicaCount": "int", "controller.resources": "map", "controller.enableMimalloc": "bool",
    "controller.lifecycle": "map", "controller.dnsPolicy": "str",
    "controller.autoscaling.enabled": "bool", "controller.keda.enabled": "bool",
    "controller.service.enabled": "bool", "controller.service.external.enabled": "bool",
    "controller.service.internal.enabled": "bool", "controller.service.annotations": "scalar_map",
    "controller.service.labels": "str_map", "controller.service.type": "str",
    "controller.service.loadBalancerIP": "str", "controller.service.loadBalancerClass": "str",
    "controller.service.externalTrafficPolicy": "str", "controller.service.ipFamilyPolicy": "str",
    "controller.service.ipFamilies": "list", "controller.service.enableHttp": "bool",
    "controller.service.enableHttps": "bool", "controller.service.ports.http": "int",
    "controller.service.ports.https": "int", "controller.service.targetPorts.http": "str",
    "controller.service.targetPorts.https": "str", "controller.service.appProtocol": "bool",
    "controller.admissionWebhooks.enabled": "bool", "controller.admissionWebhooks.port": "int",
    "controller.admissionWebhooks.certificate": "str", "controller.admissionWebhooks.key": "str",
    "controller.metrics.enabled": "bool", "controller.metrics.port": "int", "controller.metrics.portName": "str",
    "defaultBackend.enabled": "bool", "defaultBackend.name": "str",
    "rbac.create": "bool", "rbac.scope": "bool_or_map",
    "serviceAccount.create": "bool", "serviceAccount.name": "str",
    "serviceAccount.automountServiceAccountToken": "bool", "serviceAccount.annotations": "str_map",
    "tcp": "scalar_map", "udp": "scalar_map",
}
_SERVICE_TYPES = ("LoadBalancer", "NodePort", "ClusterIP", "ExternalName")
_TYPE_WORDS = {
    "bool": "a boolean", "str": "a string", "int": "an integer", "map": "a mapping",
    "list": "a list", "bool_or_map": "a boolean or a mapping", "str_map": "a mapping of strings",
    "int_map": "a mapping of integers", "scalar_map": "a mapping of scalars (string, number, boolean, null)",
}
# Parents of modelled keys must be mappings.
_PARENTS = {".".join(k.split(".")[:i]) for k in _TYPES for i in range(1, k.count(".") + 1)}


class ValuesError(OptionError):
    """The values cannot be rendered; the message names the key path and the problem."""


# ---------------------------------------------------------------- result types


@dataclass(frozen=True)
class IngressClassInfo:
    name: str
    controller_value: str
    default: bool

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "controller_value": self.controller_value, "default": self.default}


@dataclass(frozen=True)
class RbacInfo:
    """What the chart's RBAC lets the controller do (None = rbac.create=false: unknown)."""

    scope: str  # "cluster" | "namespace" | "none"
    kinds: tuple[str, ...]
    can_list_ingress_classes: bool | None
    can_get_nodes: bool | None
    can_update_ingress_status: bool | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "kinds": list(self.kinds),
            "can_list_ingress_classes": self.can_list_ingress_classes,
            "can_get_nodes": self.can_get_nodes,
            "can_update_ingress_status": self.can_update_ingress_status,
        }


@dataclass(frozen=True)
class PublishInfo:
    """Where the controller's status address comes from (status.go runningAddresses)."""

    source: str  # "status-address" | "service" | "node-addresses" | "none"
    service: str | None = None  # namespace/name, $(POD_NAMESPACE) resolved
    addresses: tuple[str, ...] = ()
    node_address_type: str | None = None  # "ExternalIP (InternalIP if none)" | "InternalIP"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "service": self.service,
            "addresses": list(self.addresses),
            "node_address_type": self.node_address_type,
        }


@dataclass
class ControllerConfig:
    release: str
    namespace: str  # where the chart puts its namespaced objects (namespaceOverride applied)
    values: Values  # chart defaults with the user values merged over them
    user_values: Values
    name: str
    fullname: str
    controller_fullname: str
    service_account: str
    election_id: str
    image: str
    args: list[str]
    flags: dict[str, str]  # effective flag values: last occurrence wins, as in pflag
    rbac: RbacInfo
    watch_namespace: str | None  # None = every namespace
    watch_namespace_selector: str | None
    ingress_class: IngressClassInfo | None  # the IngressClass object the chart creates
    class_annotation: str  # --ingress-class value the binary uses
    controller_class: str
    watch_without_class: bool
    update_status: bool
    publish: PublishInfo
    service_name: str | None
    service_type: str | None
    replicas: int | None
    notes: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)

    @property
    def deployment(self) -> tuple[str, str]:
        """(namespace, name) of the controller Deployment."""
        return self.namespace, self.controller_fullname

    def summary(self) -> dict[str, Any]:
        """The module's return values."""
        return {
            "args": list(self.args),
            "image": self.image,
            "rbac_scope": self.rbac.scope,
            "rbac": self.rbac.as_dict(),
            "watch_namespace": self.watch_namespace,
            "watch_namespace_selector": self.watch_namespace_selector,
            "publish": self.publish.as_dict(),
            "ingress_class": {
                "resource": self.ingress_class.as_dict() if self.ingress_class else None,
                "annotation_value": self.class_annotation,
                "controller_class": self.controller_class,
                "watch_without_class": self.watch_without_class,
                "class_name_honoured": self.rbac.can_list_ingress_classes is not False,
            },
            "names": {
                "fullname": self.fullname,
                "deployment": self.controller_fullname,
                "service": self.service_name,
                "service_account": self.service_account,
                "election_id": self.election_id,
                "configmap": self.controller_fullname,
            },
            "notes": list(self.notes),
            "not_modelled": list(self.not_modelled),
        }


# ---------------------------------------------------------------- helpers (Go/Helm semantics)


def truthy(value: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings/maps/lists are false."""
    return bool(value) if value is not None else False


def go_default(fallback: Any, value: Any) -> Any:
    """Sprig `default fallback value`."""
    return value if truthy(value) else fallback


def trunc63(name: str) -> str:
    """`trunc 63 | trimSuffix "-"` (trimSuffix removes one dash only)."""
    name = name[:63]
    return name[:-1] if name.endswith("-") else name


def go_number(value: int | float) -> str:
    """How `{{ $v }}` prints a YAML number. Helm decodes numbers into float64 and Go's %v
    prints the shortest repr in %g style, switching to an exponent below 1e-4 and from
    1e6 upwards (strconv: shortest %g uses precision 6 for that decision): 1000000 → 1e+06."""
    f = float(value)
    if math.isnan(f):
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "0"
    d = Decimal(repr(f))
    exp = d.adjusted()
    if exp < -4 or exp >= 6:
        mantissa = format(d.scaleb(-exp).normalize(), "f")
        return "%se%s%02d" % (mantissa, "-" if exp < 0 else "+", abs(exp))
    return format(d.normalize(), "f")


def go_string(value: Any) -> str:
    """`{{ $value }}` for a scalar as helm renders it (nil prints nothing)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return go_number(value)
    return str(value)


def get_path(values: Values, path: str) -> Any:
    """The value at a dotted key path, None when any level is missing."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _type_ok(kind: str, value: Any) -> bool:
    scalar = (str, int, float, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "map":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    if kind == "bool_or_map":
        return isinstance(value, (bool, dict))
    if kind == "str_map":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if kind == "int_map":
        return isinstance(value, dict) and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values())
    if kind == "scalar_map":
        return isinstance(value, dict) and all(v is None or isinstance(v, scalar) for v in value.values())
    raise AssertionError(kind)


def check_types(values: Values, prefix: str = "") -> list[str]:
    """Raise ValuesError for the first modelled key with a wrong type; return the dotted
    paths of keys that are not modelled (passed to helm untouched)."""
    if not isinstance(values, dict):
        raise ValuesError("%s: expected a mapping, got %r" % (prefix or "values", values))
    unmodelled: list[str] = []
    for key, value in values.items():
        if not isinstance(key, str):
            raise ValuesError("%s%r: keys must be strings" % (prefix, key))
        path = prefix + key
        if value is None:
            continue
        if path in _TYPES:
            kind = _TYPES[path]
            if not _type_ok(kind, value):
                raise ValuesError("%s: expected %s, got %r" % (path, _TYPE_WORDS[kind], value))
        elif path in _PARENTS:
            if not isinstance(value, dict):
                raise ValuesError("%s: expected a mapping, got %r" % (path, value))
            unmodelled.extend(check_types(value, path + "."))
        else:
            unmodelled.append(path)
    return unmodelled


def merge_values(defaults: Values, user: Values) -> Values:
    """Helm's coalescing of user values over chart defaults: maps merge key by key, other
    values replace, and a user null deletes the chart default (a null with no default to
    delete stays null: helm only walks the chart's keys when it drops nulls)."""
    out = copy.deepcopy(defaults)
    for key, value in user.items():
        if value is None:
            if key in out:
                del out[key]
            else:
                out[key] = None
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_flags(args: list[str]) -> dict[str, str]:
    """Flag name → value as the binary sees it: pflag keeps the last occurrence; a bare
    `--flag` is a boolean true."""
    flags: dict[str, str] = {}
    for arg in args:
        if not arg.startswith("--"):
            continue
        name, sep, value = arg[2:].partition("=")
        flags[name] = value if sep else "true"
    return flags


def _flag_true(flags: dict[str, str], name: str, default: bool) -> bool:
    if name not in flags:
        return default
    return flags[name].lower() in ("true", "1", "t")


# ---------------------------------------------------------------- names and image


def chart_names(values: Values, release: str) -> dict[str, str]:
    """Object names as _helpers.tpl builds them."""
    name = trunc63(go_default(CHART_NAME, values.get("nameOverride")))
    if truthy(values.get("fullnameOverride")):
        fullname = trunc63(values["fullnameOverride"])
    elif name in release:  # `contains $name .Release.Name`: substring test
        fullname = trunc63(release)
    else:
        fullname = trunc63("%s-%s" % (release, name))
    controller = trunc63("%s-%s" % (fullname, go_string(get_path(values, "controller.name"))))
    sa_name = get_path(values, "serviceAccount.name")
    if truthy(get_path(values, "serviceAccount.create")):
        service_account = go_default(fullname, sa_name)
    else:
        service_account = go_default("default", sa_name)
    election_id = go_default("%s-leader" % fullname, get_path(values, "controller.electionID"))
    return {
        "name": name,
        "fullname": fullname,
        "controller": controller,
        "service_account": service_account,
        "election_id": election_id,
    }


def image_ref(values: Values) -> str:
    """controller-deployment.yaml: `merge controller.image global.image` (controller wins),
    then repository:tag or registry/image[-chroot]:tag, plus @digest (digestChroot if chroot)."""
    image = dict(get_path(values, "global.image") or {})
    image.update({k: v for k, v in (get_path(values, "controller.image") or {}).items() if v is not None})
    chroot = truthy(image.get("chroot"))
    if truthy(image.get("repository")):
        base = str(image["repository"])
    else:
        name = go_string(image.get("image")) + ("-chroot" if chroot else "")
        base = "%s/%s" % (go_string(image.get("registry")), name)
    digest = image.get("digestChroot") if chroot else image.get("digest")
    return "%s:%s%s" % (base, go_string(image.get("tag")), "@" + str(digest) if truthy(digest) else "")


# ---------------------------------------------------------------- chart versions


@dataclass(frozen=True)
class ChartProfile:
    """Where another chart version renders the modelled values differently from 4.15.1."""

    version: str
    defaults: Values  # merged over CHART_DEFAULTS
    # 4.15.1 renders --enable-annotation-validation=false when validation is off and
    # --enable-metrics=true when metrics are on; 4.11.0 the other way round (=true when
    # validation is on, =false when metrics are off), matching its binary's defaults.
    annotation_validation_opt_in: bool = False
    metrics_opt_out: bool = False


CHART_PROFILES: dict[str, ChartProfile] = {
    CHART_VERSION: ChartProfile(CHART_VERSION, {}),
    # The chart the project's own machines install (from the served k8s.io/ingress-nginx module;
    # _versions.py): values.yaml has enableAnnotationValidations false and the v1.11.0 image.
    INGRESS_NGINX_OFFLINE_CHART_VERSION: ChartProfile(
        INGRESS_NGINX_OFFLINE_CHART_VERSION,
        {"controller": {"enableAnnotationValidations": False,
                        "image": {"tag": "v1.11.0",
                                  "digest": "sha256:a886e56d532d1388c77c8340261149d974370edca1093af4c97a96fb1467cb39"}}},
        annotation_validation_opt_in=True, metrics_opt_out=True),
}


def chart_profile(version: str | None) -> ChartProfile:
    """The modelled chart VERSION (None: the pin); the pin's for a version not modelled
    (effective_config says so in its notes)."""
    return CHART_PROFILES.get(version or CHART_VERSION, CHART_PROFILES[CHART_VERSION])


# ---------------------------------------------------------------- args


def _extra_arg(key: str, value: Any) -> str:
    # _params.tpl: `if eq ($value | quote | len) 2` → bare flag. Only "" quotes to two
    # characters ("\"\""); false quotes to "\"false\"" and nil quotes to nothing, so those
    # render as --key=false and --key= respectively.
    if isinstance(value, str) and value == "":
        return "--%s" % key
    return "--%s=%s" % (key, go_string(value))


def render_args(values: Values, names: dict[str, str], profile: ChartProfile | None = None) -> list[str]:
    """The controller container args in the order _params.tpl renders them."""
    profile = profile or CHART_PROFILES[CHART_VERSION]
    c = values.get("controller") or {}
    v = functools.partial(get_path, values)
    args = ["/nginx-ingress-controller"]
    validation = truthy(v("controller.enableAnnotationValidations"))
    if profile.annotation_validation_opt_in and validation:
        args.append("--enable-annotation-validation=true")
    elif not profile.annotation_validation_opt_in and not validation:
        args.append("--enable-annotation-validation=false")
    if truthy(v("defaultBackend.enabled")):
        backend = trunc63("%s-%s" % (names["fullname"], go_string(v("defaultBackend.name"))))
        args.append("--default-backend-service=%s/%s" % (POD_NAMESPACE_REF, backend))
    if truthy(v("controller.publishService.enabled")) and truthy(v("controller.service.enabled")):
        path = go_default("%s/%s" % (POD_NAMESPACE_REF, names["controller"]), v("controller.publishService.pathOverride"))
        path = path[:-1] if path.endswith("-") else path
        if truthy(v("controller.service.external.enabled")):
            args.append("--publish-service=%s" % path)
        elif truthy(v("controller.service.internal.enabled")):
            args.append("--publish-service=%s-internal" % path)
    args.append("--election-id=%s" % names["election_id"])
    args.append("--controller-class=%s" % go_string(v("controller.ingressClassResource.controllerValue")))
    if truthy(c.get("ingressClass")):
        args.append("--ingress-class=%s" % go_string(c["ingressClass"]))
    args.append("--configmap=%s/%s" % (go_default(POD_NAMESPACE_REF, c.get("configMapNamespace")), names["controller"]))
    if truthy(values.get("tcp")):
        args.append("--tcp-services-configmap=%s/%s-tcp" % (go_default(POD_NAMESPACE_REF, v("controller.tcp.configMapNamespace")), names["fullname"]))
    if truthy(values.get("udp")):
        args.append("--udp-services-configmap=%s/%s-udp" % (go_default(POD_NAMESPACE_REF, v("controller.udp.configMapNamespace")), names["fullname"]))
    if truthy(v("controller.scope.enabled")):
        args.append("--watch-namespace=%s" % go_default(POD_NAMESPACE_REF, v("controller.scope.namespace")))
    if not truthy(v("controller.scope.enabled")) and truthy(v("controller.scope.namespaceSelector")):
        args.append("--watch-namespace-selector=%s" % v("controller.scope.namespaceSelector"))
    if truthy(c.get("reportNodeInternalIp")) and truthy(c.get("hostNetwork")):
        args.append("--report-node-internal-ip-address=%s" % go_string(c["reportNodeInternalIp"]))
    if truthy(v("controller.admissionWebhooks.enabled")):
        args.append("--validating-webhook=:%s" % go_string(v("controller.admissionWebhooks.port")))
        args.append("--validating-webhook-certificate=%s" % go_string(v("controller.admissionWebhooks.certificate")))
        args.append("--validating-webhook-key=%s" % go_string(v("controller.admissionWebhooks.key")))
    if truthy(c.get("maxmindLicenseKey")):
        args.append("--maxmind-license-key=%s" % c["maxmindLicenseKey"])
    if truthy(c.get("healthCheckHost")):
        args.append("--healthz-host=%s" % c["healthCheckHost"])
    if c.get("healthCheckPath") != "/healthz":
        args.append("--health-check-path=%s" % go_string(c.get("healthCheckPath")))
    if truthy(c.get("ingressClassByName")):
        args.append("--ingress-class-by-name=true")
    if truthy(c.get("watchIngressWithoutClass")):
        args.append("--watch-ingress-without-class=true")
    if truthy(v("controller.metrics.enabled")) != profile.metrics_opt_out:
        args.append("--enable-metrics=%s" % go_string(v("controller.metrics.enabled")))
    if truthy(c.get("enableTopologyAwareRouting")):
        args.append("--enable-topology-aware-routing=true")
    if truthy(c.get("disableLeaderElection")):
        args.append("--disable-leader-election=true")
    if truthy(c.get("electionTTL")):
        args.append("--election-ttl=%s" % go_string(c["electionTTL"]))
    for key in sorted(c.get("extraArgs") or {}):  # Go templates range over maps in key order
        args.append(_extra_arg(key, c["extraArgs"][key]))
    return args


# ---------------------------------------------------------------- RBAC


def _check_rbac(values: Values) -> None:
    # clusterrole.yaml fails the render in one direction only.
    if truthy(get_path(values, "rbac.create")) and truthy(get_path(values, "rbac.scope")) and not truthy(
        get_path(values, "controller.scope.enabled")
    ):
        raise ValuesError(
            "rbac.scope: the chart refuses to render (\"Invalid configuration: 'rbac.scope' should be equal to "
            "'controller.scope.enabled' (true/false).\"): rbac.scope is %r (true) but controller.scope.enabled is "
            "%r; set controller.scope.enabled=true or rbac.scope=false"
            % (get_path(values, "rbac.scope"), get_path(values, "controller.scope.enabled"))
        )


def _update_status_omitted(values: Values) -> bool:
    """controller-role.yaml omits ingresses/status when extraArgs["update-status"] is the
    string "false"."""
    raw = (get_path(values, "controller.extraArgs") or {}).get("update-status")
    if isinstance(raw, bool):
        # `ne <bool> "false"` is a Go template type error: helm fails the render.
        raise ValuesError(
            "controller.extraArgs.update-status: the chart compares it with the string \"false\" and fails on "
            "a boolean (%r); quote it: \"false\" or \"true\"" % raw
        )
    return raw == "false"


def rbac_info(values: Values) -> RbacInfo:
    if not truthy(get_path(values, "rbac.create")):
        return RbacInfo("none", (), None, None, None)
    status_in_role = not _update_status_omitted(values)
    if truthy(get_path(values, "rbac.scope")):
        # A Role cannot grant cluster-scoped resources: IngressClasses and Nodes are out of reach.
        return RbacInfo("namespace", ("Role", "RoleBinding"), False, False, status_in_role)
    return RbacInfo("cluster", ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), True, True, True)


# ---------------------------------------------------------------- the whole picture


def _resolve_ns(value: str, namespace: str) -> str:
    return value.replace(POD_NAMESPACE_REF, namespace)


def _publish(flags: dict[str, str], namespace: str) -> PublishInfo:
    if flags.get("publish-status-address"):
        addrs = tuple(a for a in re.split(r",\s*", flags["publish-status-address"]) if a)
        return PublishInfo("status-address", addresses=addrs)
    if flags.get("publish-service"):
        return PublishInfo("service", service=_resolve_ns(flags["publish-service"], namespace))
    internal = _flag_true(flags, "report-node-internal-ip-address", False)
    return PublishInfo(
        "node-addresses", node_address_type="InternalIP" if internal else "ExternalIP (InternalIP if the node has none)"
    )


def _notes(cfg: ControllerConfig, user: Values) -> list[str]:
    v = functools.partial(get_path, cfg.values)
    u = functools.partial(get_path, user)
    notes: list[str] = []
    override = u("controller.publishService.pathOverride")
    if not truthy(v("controller.publishService.enabled")):
        if truthy(override):
            notes.append(
                "publishService.enabled=false: pathOverride %r is ignored (no --publish-service flag)" % override
            )
    elif not truthy(v("controller.service.enabled")) or not (
        truthy(v("controller.service.external.enabled")) or truthy(v("controller.service.internal.enabled"))
    ):
        notes.append("publishService.enabled=true but the chart renders no Service to publish: no --publish-service flag")
    if cfg.publish.source == "node-addresses":
        text = "status will carry the %s addresses of the nodes running Ready controller pods" % cfg.publish.node_address_type
        if cfg.rbac.can_get_nodes is False:
            text += ", but namespace-scoped RBAC cannot get Nodes: the address list comes out empty"
        notes.append(text)
    elif cfg.publish.source == "service" and truthy(override):
        notes.append(
            "publish service %s (pathOverride) must exist: a missing publish Service stops the controller at "
            "start-up and later leaves the status unchanged (no fallback to node addresses)" % cfg.publish.service
        )
    if "publish-service" in cfg.flags and "publish-status-address" in cfg.flags:
        notes.append("--publish-service and --publish-status-address are mutually exclusive: the controller exits at start-up")
    if v("controller.reportNodeInternalIp") and not v("controller.hostNetwork"):
        notes.append("reportNodeInternalIp=true is ignored without hostNetwork=true (the chart passes no flag)")
    if cfg.watch_namespace is None:
        if cfg.watch_namespace_selector:
            notes.append("scope.enabled=false with namespaceSelector: watches namespaces labelled %s" % cfg.watch_namespace_selector)
        else:
            notes.append("scope.enabled=false: watches every namespace")
        if truthy(v("controller.scope.namespace")):
            notes.append("scope.namespace %r is ignored while scope.enabled=false" % v("controller.scope.namespace"))
    elif truthy(v("controller.scope.namespaceSelector")) and truthy(v("controller.scope.enabled")):
        notes.append("scope.namespaceSelector is ignored while scope.enabled=true")
    if "watch-namespace" in cfg.flags and "watch-namespace-selector" in cfg.flags and cfg.flags["watch-namespace"]:
        notes.append("--watch-namespace and --watch-namespace-selector are mutually exclusive: the controller exits at start-up")
    scope_raw = u("rbac.scope")
    if isinstance(scope_raw, dict):
        notes.append(
            "rbac.scope is a map (%r): the chart only tests its truth, and a non-empty map is true%s"
            % (scope_raw, " even with enabled=false" if scope_raw.get("enabled") is False else "")
        )
    if cfg.rbac.scope == "namespace":
        notes.append(
            "namespace-scoped RBAC (rbac.scope) cannot list IngressClasses: the controller ignores "
            "spec.ingressClassName and claims only Ingresses with the %s: %s annotation%s"
            % (CLASS_ANNOTATION, cfg.class_annotation, " and class-less ones" if cfg.watch_without_class else "")
        )
        if cfg.watch_namespace and cfg.watch_namespace != cfg.namespace:
            notes.append(
                "watch namespace %s is not the release namespace %s and the Role lives in %s only: the controller "
                "cannot get that namespace and exits at start-up" % (cfg.watch_namespace, cfg.namespace, cfg.namespace)
            )
        if cfg.rbac.can_update_ingress_status is False:
            notes.append("extraArgs.update-status=\"false\": the Role grants no ingresses/status")
    elif cfg.rbac.scope == "cluster" and cfg.watch_namespace is not None:
        notes.append("rbac.scope=false with scope.enabled=true: the chart still creates a ClusterRole (it only refuses the opposite)")
    elif cfg.rbac.scope == "none":
        notes.append("rbac.create=false: no Role or ClusterRole; what the controller may do depends on service account %s" % cfg.service_account)
    if not cfg.update_status:
        notes.append("--update-status=false: this controller writes no Ingress status")
    if not truthy(v("controller.ingressClass")):
        notes.append("controller.ingressClass is empty: no --ingress-class flag, the binary still uses %r" % BINARY_DEFAULT_INGRESS_CLASS)
    ic = cfg.ingress_class
    if ic is not None and ic.name != cfg.class_annotation and not truthy(v("controller.ingressClassByName")):
        notes.append(
            "IngressClass %r is not the annotation value %r: Ingresses pick this controller with spec.ingressClassName: %s "
            "or the annotation %s: %s (not %s: %s)"
            % (ic.name, cfg.class_annotation, ic.name, CLASS_ANNOTATION, cfg.class_annotation, CLASS_ANNOTATION, ic.name)
        )
    if ic is not None and ic.name == CHART_DEFAULTS["controller"]["ingressClassResource"]["name"]:
        notes.append(
            "IngressClass %r (the chart's default name) is cluster-wide: a second release with the default name collides; "
            "give each release its own ingressClassResource.name" % ic.name
        )
    if ic is not None and ic.default:
        notes.append("IngressClass %r is the cluster default: new Ingresses without a class get it" % ic.name)
    if cfg.watch_without_class:
        notes.append("watchIngressWithoutClass=true: also claims Ingresses with neither a class name nor the annotation")
    if truthy(v("controller.admissionWebhooks.enabled")):
        notes.append("admissionWebhooks.enabled=true: a cluster-wide failurePolicy=Fail validating webhook per release (labs disable it)")
    if isinstance(cfg.replicas, int) and cfg.replicas > 1:
        notes.append("replicaCount=%d: only the leader (Lease %s) writes Ingress status" % (cfg.replicas, cfg.election_id))
    if truthy(v("defaultBackend.enabled")):
        notes.append("defaultBackend.enabled=true: the chart adds a default backend Deployment (not modelled)")
    chart_flags = parse_flags(render_args(merge_values(cfg.values, {"controller": {"extraArgs": None}}), chart_names(cfg.values, cfg.release)))
    for key, value in sorted((v("controller.extraArgs") or {}).items()):
        if key in chart_flags:
            notes.append("extraArgs.%s overrides the chart's --%s=%s (the last flag wins)" % (key, key, chart_flags[key]))
        if value is None:
            notes.append("extraArgs.%s is null: renders --%s= (an empty value); use \"\" for a bare flag" % (key, key))
        elif value is False:
            notes.append("extraArgs.%s=false renders --%s=false" % (key, key))
    for key in sorted(user):
        if key not in CHART_TOP_LEVEL_KEYS:
            notes.append("%s: not a chart 4.15.1 value (not modelled; passed to helm, which ignores it)" % key)
    return notes


def effective_config(values: Values | None, release: str, namespace: str,
                     chart_version: str | None = None) -> ControllerConfig:
    """Chart values → what the chart (CHART_VERSION unless another modelled one is named)
    renders and what the controller then does."""
    profile = chart_profile(chart_version)
    user = copy.deepcopy(values or {})
    if not release or not isinstance(release, str):
        raise ValuesError("release: expected a non-empty string, got %r" % (release,))
    if not namespace or not isinstance(namespace, str):
        raise ValuesError("namespace: expected a non-empty string, got %r" % (namespace,))
    unmodelled = check_types(user)
    merged = merge_values(merge_values(CHART_DEFAULTS, profile.defaults), user)
    svc_type = get_path(merged, "controller.service.type")
    if truthy(svc_type) and svc_type not in _SERVICE_TYPES:
        raise ValuesError("controller.service.type: expected one of %s, got %r" % (", ".join(_SERVICE_TYPES), svc_type))
    _check_rbac(merged)
    names = chart_names(merged, release)
    rel_ns = trunc63(go_default(namespace, merged.get("namespaceOverride")))
    args = render_args(merged, names, profile)
    flags = parse_flags(args)
    rbac = rbac_info(merged)

    watch = flags.get("watch-namespace") or None
    ic_values = get_path(merged, "controller.ingressClassResource") or {}
    ingress_class = (
        IngressClassInfo(go_string(ic_values.get("name")), go_string(ic_values.get("controllerValue")), truthy(ic_values.get("default")))
        if truthy(ic_values.get("enabled"))
        else None
    )
    service_on = truthy(get_path(merged, "controller.service.enabled")) and truthy(get_path(merged, "controller.service.external.enabled"))
    replicas = get_path(merged, "controller.replicaCount")
    cfg = ControllerConfig(
        release=release,
        namespace=rel_ns,
        values=merged,
        user_values=user,
        name=names["name"],
        fullname=names["fullname"],
        controller_fullname=names["controller"],
        service_account=names["service_account"],
        election_id=names["election_id"],
        image=image_ref(merged),
        args=args,
        flags=flags,
        rbac=rbac,
        watch_namespace=_resolve_ns(watch, rel_ns) if watch else None,
        watch_namespace_selector=(flags.get("watch-namespace-selector") or None) if not watch else None,
        ingress_class=ingress_class,
        class_annotation=flags.get("ingress-class", BINARY_DEFAULT_INGRESS_CLASS),
        controller_class=flags.get("controller-class", BINARY_DEFAULT_CONTROLLER_CLASS),
        watch_without_class=_flag_true(flags, "watch-ingress-without-class", False),
        update_status=_flag_true(flags, "update-status", True),
        publish=_publish(flags, rel_ns),
        service_name=names["controller"] if service_on else None,
        service_type=go_string(svc_type) if service_on else None,
        replicas=replicas if isinstance(replicas, int) else None,
        not_modelled=unmodelled,
    )
    cfg.notes = _notes(cfg, user)
    if (chart_version or CHART_VERSION) not in CHART_PROFILES:
        cfg.notes.append("chart %s is not modelled (the collection models %s): args and notes are chart %s's"
                         % (chart_version, " and ".join(sorted(CHART_PROFILES, reverse=True)), CHART_VERSION))
    return cfg


# ---------------------------------------------------------------- manifests


# Every kind render_manifests can produce: what a re-apply looks through for objects the
# release no longer renders (scope changes swap a ClusterRole for a Role, and so on).
RENDERED_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "ServiceAccount"), ("v1", "ConfigMap"), ("v1", "Service"), ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("networking.k8s.io/v1", "IngressClass"),
)
MANAGED_BY = "kindlab.ingress"


def release_selector(release: str) -> str:
    """The label selector of every object the collection rendered for a release."""
    return "app.kubernetes.io/instance=%s,app.kubernetes.io/managed-by=%s" % (release, MANAGED_BY)


def _labels(cfg: ControllerConfig, component: bool = True) -> dict[str, str]:
    labels = {
        "helm.sh/chart": trunc63("%s-%s" % (CHART_NAME, CHART_VERSION)),
        "app.kubernetes.io/name": cfg.name,
        "app.kubernetes.io/instance": cfg.release,
        "app.kubernetes.io/version": APP_VERSION,
        "app.kubernetes.io/part-of": cfg.name,
        # Not "Helm": these objects are applied by the collection, not by a helm release.
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }
    labels.update(cfg.values.get("commonLabels") or {})
    if component:
        labels["app.kubernetes.io/component"] = "controller"
    labels.update(get_path(cfg.values, "controller.labels") or {})
    return labels


def _selector(cfg: ControllerConfig) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": cfg.name,
        "app.kubernetes.io/instance": cfg.release,
        "app.kubernetes.io/component": "controller",
    }


def _meta(cfg: ControllerConfig, name: str, namespaced: bool = True, component: bool = True) -> Obj:
    meta: Obj = {"name": name, "labels": _labels(cfg, component)}
    if namespaced:
        meta["namespace"] = cfg.namespace
    return meta


# Cluster-wide grants of clusterrole.yaml (namespaces list/watch only when unscoped).
def _cluster_rules(values: Values) -> list[Obj]:
    scoped = truthy(get_path(values, "controller.scope.enabled"))
    core = ["configmaps", "endpoints", "nodes", "pods", "secrets"] + ([] if scoped else ["namespaces"])
    rules: list[Obj] = [
        {"apiGroups": [""], "resources": core, "verbs": ["list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list", "watch"]},
    ]
    if scoped and truthy(get_path(values, "controller.scope.namespace")):
        rules.append({"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [get_path(values, "controller.scope.namespace")], "verbs": ["get"]})
    rules += [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch", "get"]},
    ]
    return rules


# controller-role.yaml: always created with rbac.create (leader Lease, own namespace).
def _role_rules(cfg: ControllerConfig) -> list[Obj]:
    rules: list[Obj] = [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["configmaps", "pods", "secrets", "endpoints"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
    ]
    if not _update_status_omitted(cfg.values):
        rules.append({"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]})
    rules += [
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [cfg.election_id], "verbs": ["get", "update"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch", "get"]},
    ]
    return rules


def _security_context(values: Values) -> Obj:
    custom = get_path(values, "controller.containerSecurityContext")
    if truthy(custom):
        return copy.deepcopy(custom)
    img = get_path(values, "controller.image") or {}
    chroot = truthy(img.get("chroot"))
    ctx: Obj = {
        "runAsNonRoot": img.get("runAsNonRoot"),
        "runAsUser": img.get("runAsUser"),
        "runAsGroup": img.get("runAsGroup"),
        "allowPrivilegeEscalation": truthy(img.get("allowPrivilegeEscalation")) or chroot,
    }
    if truthy(img.get("seccompProfile")):
        ctx["seccompProfile"] = copy.deepcopy(img["seccompProfile"])
    add = ["NET_BIND_SERVICE"] + ((["SYS_ADMIN"] if truthy(img.get("seccompProfile")) else []) + ["SYS_CHROOT"] if chroot else [])
    ctx["capabilities"] = {"drop": ["ALL"], "add": add}
    ctx["readOnlyRootFilesystem"] = img.get("readOnlyRootFilesystem")
    return {k: val for k, val in ctx.items() if val is not None}


def _unsupported_for_manifest(values: Values) -> list[str]:
    """Chart features the manifest renderer does not reproduce; refusing beats a silent
    difference from what helm would deploy."""
    problems = []
    checks = [
        ("controller.admissionWebhooks.enabled", "needs the chart's certificate jobs and webhook configuration; set it to false (labs disable it)"),
        ("defaultBackend.enabled", "the default backend Deployment is not rendered"),
        ("controller.service.internal.enabled", "the internal Service is not rendered"),
        ("controller.autoscaling.enabled", "the HorizontalPodAutoscaler is not rendered"),
        ("controller.keda.enabled", "the KEDA ScaledObject is not rendered"),
        ("tcp", "the TCP services ConfigMap is not rendered"),
        ("udp", "the UDP services ConfigMap is not rendered"),
    ]
    for path, why in checks:
        if truthy(get_path(values, path)):
            problems.append("%s: %s" % (path, why))
    kind = get_path(values, "controller.kind")
    if kind != "Deployment":
        problems.append("controller.kind: only Deployment is rendered, got %r" % (kind,))
    return problems


def _deployment(cfg: ControllerConfig) -> Obj:
    v = functools.partial(get_path, cfg.values)
    env: list[Obj] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    ]
    if truthy(v("controller.enableMimalloc")):
        env.append({"name": "LD_PRELOAD", "value": "/usr/local/lib/libmimalloc.so"})
    env += copy.deepcopy(v("controller.extraEnvs") or [])
    ports = [
        {"name": key, "containerPort": port, "protocol": "TCP"}
        for key, port in sorted((v("controller.containerPort") or {}).items())
    ]
    if truthy(v("controller.metrics.enabled")):
        ports.append({"name": go_string(v("controller.metrics.portName")), "containerPort": v("controller.metrics.port"), "protocol": "TCP"})
    container: Obj = {
        "name": go_string(v("controller.containerName")),
        "image": cfg.image,
        "imagePullPolicy": go_string(v("controller.image.pullPolicy")),
        "args": list(cfg.args),
        "securityContext": _security_context(cfg.values),
        "env": env,
        "ports": ports,
    }
    for key in ("lifecycle", "livenessProbe", "readinessProbe", "resources"):
        if truthy(v("controller." + key)):
            container[key] = copy.deepcopy(v("controller." + key))
    pod_labels = _labels(cfg)
    pod_labels.update(v("controller.podLabels") or {})
    template_meta: Obj = {"labels": pod_labels}
    if truthy(v("controller.podAnnotations")):
        template_meta["annotations"] = {k: go_string(x) for k, x in v("controller.podAnnotations").items()}
    pod_spec: Obj = {
        "dnsPolicy": go_string(v("controller.dnsPolicy")),
        "containers": [container],
        "serviceAccountName": cfg.service_account,
        "automountServiceAccountToken": truthy(v("serviceAccount.automountServiceAccountToken")),
        "terminationGracePeriodSeconds": v("controller.terminationGracePeriodSeconds"),
    }
    if truthy(v("controller.hostNetwork")):
        pod_spec["hostNetwork"] = True
    if truthy(v("controller.nodeSelector")):
        pod_spec["nodeSelector"] = dict(v("controller.nodeSelector"))
    spec: Obj = {"selector": {"matchLabels": _selector(cfg)}}
    if cfg.replicas is not None:
        spec["replicas"] = cfg.replicas
    spec["revisionHistoryLimit"] = cfg.values.get("revisionHistoryLimit")
    if truthy(v("controller.updateStrategy")):
        spec["strategy"] = copy.deepcopy(v("controller.updateStrategy"))
    spec["minReadySeconds"] = v("controller.minReadySeconds") or 0
    spec["template"] = {"metadata": template_meta, "spec": pod_spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(cfg, cfg.controller_fullname), "spec": _drop_none(spec)}


def _service(cfg: ControllerConfig) -> Obj:
    s = functools.partial(get_path, get_path(cfg.values, "controller.service") or {})
    meta = _meta(cfg, cfg.controller_fullname)
    meta["labels"].update(s("labels") or {})
    if truthy(s("annotations")):
        meta["annotations"] = {k: go_string(x) for k, x in s("annotations").items()}
    spec: Obj = {"type": cfg.service_type}
    for key in ("loadBalancerIP", "loadBalancerClass", "externalTrafficPolicy", "ipFamilyPolicy"):
        if truthy(s(key)):
            spec[key] = s(key)
    if truthy(s("ipFamilies")):
        spec["ipFamilies"] = list(s("ipFamilies"))
    ports = []
    for name in ("http", "https"):
        if truthy(s("enable" + name.capitalize())):
            port: Obj = {"name": name, "port": s("ports." + name), "protocol": "TCP", "targetPort": s("targetPorts." + name)}
            if truthy(s("appProtocol")):
                port["appProtocol"] = name
            ports.append(port)
    spec["ports"] = ports
    spec["selector"] = _selector(cfg)
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def _drop_none(obj: Obj) -> Obj:
    return {k: val for k, val in obj.items() if val is not None}


def render_manifests(config: ControllerConfig) -> list[Obj]:
    """The objects chart 4.15.1 renders for these values (controller part only)."""
    problems = _unsupported_for_manifest(config.values)
    if problems:
        raise ValuesError("the manifest method cannot render these values: " + "; ".join(problems))
    cfg = config
    v = functools.partial(get_path, cfg.values)
    objs: list[Obj] = []
    if truthy(v("serviceAccount.create")):
        meta = _meta(cfg, cfg.service_account)
        if truthy(v("serviceAccount.annotations")):
            meta["annotations"] = dict(v("serviceAccount.annotations"))
        automount = truthy(v("serviceAccount.automountServiceAccountToken"))
        objs.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": automount})
    subjects = [{"kind": "ServiceAccount", "name": cfg.service_account, "namespace": cfg.namespace}]
    if cfg.rbac.scope == "cluster":
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": _meta(cfg, cfg.fullname, namespaced=False, component=False),
            "rules": _cluster_rules(cfg.values),
        })
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": _meta(cfg, cfg.fullname, namespaced=False, component=False),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cfg.fullname},
            "subjects": subjects,
        })
    if cfg.rbac.scope != "none":
        objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(cfg, cfg.fullname), "rules": _role_rules(cfg)})
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(cfg, cfg.fullname),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": cfg.fullname},
            "subjects": subjects,
        })
    data: dict[str, str] = {}
    if truthy(v("controller.allowSnippetAnnotations")):
        data["allow-snippet-annotations"] = "true"
    for key, val in sorted((v("controller.config") or {}).items()):
        data[key] = go_string(val)
    configmap: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(cfg, cfg.controller_fullname)}
    if data:
        configmap["data"] = data
    objs.append(configmap)
    if cfg.ingress_class is not None:
        meta = _meta(cfg, cfg.ingress_class.name, namespaced=False)
        annotations: dict[str, str] = {}
        if cfg.ingress_class.default:
            annotations[DEFAULT_CLASS_ANNOTATION] = "true"
        annotations.update(v("controller.ingressClassResource.annotations") or {})
        if annotations:
            meta["annotations"] = annotations
        spec = {"controller": cfg.ingress_class.controller_value}
        objs.append({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta, "spec": spec})
    if cfg.service_name is not None:
        objs.append(_service(cfg))
    objs.append(_deployment(cfg))
    return objs


def object_names(objs: list[Obj]) -> list[str]:
    """Kind namespace/name for each object, for the module's `objects` return value."""
    out = []
    for obj in objs:
        meta = obj.get("metadata", {})
        ns = meta.get("namespace")
        out.append("%s %s%s" % (obj["kind"], ns + "/" if ns else "", meta["name"]))
    return out


# ---------------------------------------------------------------- convenience options


def controller_value_for(class_name: str) -> str:
    """The controller value the module pairs with an IngressClass name: the binary's default
    for the chart's default class, a per-class value otherwise (so two classes never share
    a controller by accident)."""
    return BINARY_DEFAULT_CONTROLLER_CLASS if class_name == "nginx" else "%s-%s" % (BINARY_DEFAULT_CONTROLLER_CLASS, class_name)


def apply_options(values: Values | None, scope: bool | None = None, publish_service: bool | None = None, ingress_class: str | None = None) -> Values:
    """Fold the module's convenience options into the chart values. A convenience option
    and an explicit value for the same key must agree; a disagreement is an error naming
    both (neither silently wins)."""
    out = copy.deepcopy(values or {})
    wanted: list[tuple[str, Any, str]] = []
    if scope is not None:
        wanted += [("controller.scope.enabled", scope, "scope"), ("rbac.scope", scope, "scope")]
    if publish_service is not None:
        wanted.append(("controller.publishService.enabled", publish_service, "publish_service"))
    if ingress_class is not None:
        if not ingress_class:
            raise ValuesError("ingress_class: expected a non-empty IngressClass name")
        wanted += [
            ("controller.ingressClassResource.name", ingress_class, "ingress_class"),
            ("controller.ingressClassResource.controllerValue", controller_value_for(ingress_class), "ingress_class"),
            ("controller.ingressClass", ingress_class, "ingress_class"),
        ]
    for path, value, option in wanted:
        current = get_path(out, path)
        if current is not None:
            same = truthy(current) == truthy(value) if path == "rbac.scope" else current == value
            if not same:
                raise ValuesError(
                    "%s=%r conflicts with values.%s=%r; drop one of them" % (option, value, path, current)
                )
            continue
        node = out
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ValuesError("values.%s: expected a mapping, got %r" % (part, child))
            node = child
        node[parts[-1]] = value
    return out


# Values keys that choose the controller image (controller-deployment.yaml's image template).
IMAGE_KEYS = ("global.image.registry", "controller.image.registry", "controller.image.image",
              "controller.image.repository", "controller.image.tag", "controller.image.digest")


def with_image(values: Values | None, image: str, default_image: str) -> Values:
    """Fold the lab's controller image (lab_images.ingress_nginx_controller) into the values as
    controller.image.repository/tag/digest. The pinned default is what the chart renders anyway,
    so it adds nothing; another image in values that choose one themselves is an error naming both."""
    out = copy.deepcopy(values or {})
    if image == default_image:
        return out
    chosen = [key for key in IMAGE_KEYS if get_path(out, key) is not None]
    if chosen:
        raise ValuesError("%s: chooses the controller image while lab_images.ingress_nginx_controller is %r; "
                          "set the image in one place" % (chosen[0], image))
    return merge_values(out, ingress_nginx_image_values(image))


# The controller's own status period (--status-update-interval, seconds; flags.go: default 60,
# at least 5). A lab's time scale shortens it with that flag, so the real controller keeps its
# own clock.
STATUS_SYNC_SECONDS = 60
MIN_STATUS_UPDATE_INTERVAL = 5


def status_update_interval(time_scale: float) -> int:
    """The --status-update-interval for TIME_SCALE (60 / scale); a ValuesError unless that is a
    whole number of seconds, at least 5 (the verification windows divide by the same scale)."""
    if isinstance(time_scale, bool) or not isinstance(time_scale, (int, float)) or time_scale <= 0:
        raise ValuesError("time_scale: expected a number greater than 0, got %r" % (time_scale,))
    seconds = STATUS_SYNC_SECONDS / time_scale
    if seconds < MIN_STATUS_UPDATE_INTERVAL or abs(seconds - round(seconds)) > 1e-9:
        fits = [s for s in range(1, 13) if STATUS_SYNC_SECONDS % s == 0]
        raise ValuesError("time_scale: ingress-nginx's status period 60 s / %s = %.3g s, but "
                          "--status-update-interval takes whole seconds, at least %d; use one of %s"
                          % (time_scale, seconds, MIN_STATUS_UPDATE_INTERVAL, ", ".join(map(str, fits))))
    return int(round(seconds))


def with_time_scale(values: Values | None, time_scale: float) -> Values:
    """Fold the lab's time scale into the values as controller.extraArgs.status-update-interval;
    a value the user set there wins."""
    interval = status_update_interval(time_scale)
    out = copy.deepcopy(values or {})
    controller = out.setdefault("controller", {})
    if not isinstance(controller, dict):
        raise ValuesError("values.controller: expected a mapping, got %r" % (controller,))
    extra = controller.setdefault("extraArgs", {})
    if not isinstance(extra, dict):
        raise ValuesError("values.controller.extraArgs: expected a mapping, got %r" % (extra,))
    if interval != STATUS_SYNC_SECONDS:
        extra.setdefault("status-update-interval", interval)
    if not extra:
        del controller["extraArgs"]
    if not controller:
        del out["controller"]
    return out
