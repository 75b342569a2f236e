# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller types the collection knows, by name. Adding a type is one package beside this
file and one line here."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import ingress_nginx, traefik
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ControllerType, CredentialSecret, IngressPart, InstallPart
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError

REGISTRY: dict[str, ControllerType] = {t.name: t for t in (ingress_nginx.TYPE, traefik.TYPE)}

# The type of a controller that names none (a lab's controller, the ingress_controller module).
DEFAULT_TYPE = ingress_nginx.TYPE.name


def type_names() -> list[str]:
    return sorted(REGISTRY)


def installable() -> dict[str, InstallPart]:
    """The types the lab can install, by name, each with its install part."""
    return {name: t.install for name, t in REGISTRY.items() if t.install is not None}


def installable_names() -> list[str]:
    """The types the lab can install: ingress_controller's and lab_controllers' choices."""
    return sorted(installable())


def controller_type(name: str) -> ControllerType:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ControllerError("type: expected one of %s, got %r" % (", ".join(type_names()), name)) from None


def detect(container: dict[str, Any]) -> ControllerType | None:
    """The type whose binary this container runs, if any."""
    return next((t for t in REGISTRY.values() if t.detect(container)), None)


def type_of_class(value: str) -> str:
    """The type an IngressClass's spec.controller (or a class annotation's value) names, else "unknown"."""
    low = value.lower()
    for t in REGISTRY.values():
        if t.ingress is not None and any(marker in low for marker in t.ingress.class_markers):
            return t.name
    return "unknown"


def ingress_part(name: str) -> IngressPart | None:
    """The Ingress part of the registered type of that name; None for an unknown type or one that serves no Ingress."""
    ctype = REGISTRY.get(name)
    return ctype.ingress if ctype is not None else None


def annotation_prefixes() -> tuple[str, ...]:
    """The prefixes of the Ingress annotations the known types route by."""
    return tuple(t.ingress.annotation_prefix for t in REGISTRY.values() if t.ingress is not None and t.ingress.annotation_prefix)


def credential_secrets(namespace: str, annotations: Mapping[str, str]) -> list[CredentialSecret]:
    """The credential Secrets an Ingress in NAMESPACE with these annotations asks any known type to check requests
    against (IngressPart.credential_secrets)."""
    return [s for t in REGISTRY.values() if t.ingress is not None and t.ingress.credential_secrets is not None
            for s in t.ingress.credential_secrets(namespace, annotations)]


def proxy_markers() -> tuple[str, ...]:
    """The request headers by which the known types' proxies name their pod (ControllerType.proxy_marker)."""
    return tuple(sorted({t.proxy_marker for t in REGISTRY.values() if t.proxy_marker}))


def default_gateway_controller_name() -> str:
    """The controllerName of the first known type that implements Gateway API: what a lab's GatewayClass
    names unless it names another."""
    return next(t.gateway.controller_name for t in REGISTRY.values() if t.gateway is not None)


def off_twin(controllers: Iterable[Mapping[str, Any]]) -> list[str]:
    """The types among a lab's controllers (lab_controllers entries; DEFAULT_TYPE where one names
    none) that the twin does not emulate: such a lab runs on kind only."""
    types = {str(ctl.get("type") or DEFAULT_TYPE) for ctl in controllers}
    return sorted(t for t in types if not controller_type(t).on_twin)
