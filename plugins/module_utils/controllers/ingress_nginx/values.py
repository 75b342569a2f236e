# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx chart values: the part of the chart's values.yaml the collection reads, their
types, and the Helm/Go template semantics the chart's templates apply to them (truthiness,
`default`, number and string formatting, merging, object names, the image reference).

Read from kubernetes/ingress-nginx at tag helm-chart-4.15.1 (values.yaml, _helpers.tpl).
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, trunc63, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    INGRESS_NGINX_CHART_REPO,
    INGRESS_NGINX_CHART_VERSION,
    INGRESS_NGINX_CONTROLLER_DIGEST,
    INGRESS_NGINX_CONTROLLER_VERSION,
    INGRESS_NGINX_IMAGE,
)

Values = dict[str, Any]
Obj = dict[str, Any]


# The prefix of the Ingress annotations ingress-nginx routes by.
ANNOTATION_PREFIX = "nginx.ingress.kubernetes.io/"
CHART_NAME = "ingress-nginx"
CHART_REPO = INGRESS_NGINX_CHART_REPO
CHART_VERSION = INGRESS_NGINX_CHART_VERSION
APP_VERSION = INGRESS_NGINX_CONTROLLER_VERSION.lstrip("v")
# The controller's key in lab_images, and its pin: the image chart 4.15.1 renders with its own
# values (the tag with the digest the chart pins).
IMAGE_KEY = "ingress_nginx_controller"
DEFAULT_IMAGE = INGRESS_NGINX_IMAGE + "@" + INGRESS_NGINX_CONTROLLER_DIGEST

# Controller binary defaults (pkg/flags/flags.go, ingressclass.go) used when the chart
# passes no flag.
BINARY_DEFAULT_INGRESS_CLASS = "nginx"
BINARY_DEFAULT_CONTROLLER_CLASS = "k8s.io/ingress-nginx"
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


# ---------------------------------------------------------------- helpers (Go/Helm semantics)


def go_default(fallback: Any, value: Any) -> Any:
    """Sprig `default fallback value`."""
    return value if truthy(value) else fallback


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
