"""What an emulated container does, recognised by its image.

The kubelet asks `startup()` whether a container comes up (a fatal start-up check makes it
crash-loop) and the data plane asks `kind_of()` how a pod answers HTTP.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kindlab_twin.collection import nginx_binary
from kindlab_twin.contract import Obj, Store

INGRESS_NGINX = "ingress-nginx"
NGINX = "nginx"
HTTP_ECHO = "http-echo"
AGNHOST = "agnhost"
WHOAMI = "whoami"
METALLB_CONTROLLER = "metallb-controller"
METALLB_SPEAKER = "metallb-speaker"
ECHO = "echo"


def kind_of(image: str) -> str:
    """Classify an image reference (registry/repo:tag@digest)."""
    ref = image.split("@", 1)[0]
    repo = ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
    last = repo.rsplit("/", 1)[-1]
    if nginx_binary.is_nginx_image(image):
        return INGRESS_NGINX
    if repo.endswith("metallb/controller"):
        return METALLB_CONTROLLER
    if repo.endswith("metallb/speaker"):
        return METALLB_SPEAKER
    if last == "http-echo":
        return HTTP_ECHO
    if last == "agnhost":
        return AGNHOST
    if repo.endswith("traefik/whoami"):
        return WHOAMI
    if last in ("nginx", "nginx-unprivileged") or repo.endswith("nginxinc/nginx-unprivileged"):
        return NGINX
    return ECHO


@dataclass
class StartResult:
    ok: bool
    logs: list[str] = field(default_factory=list)
    exit_code: int = 0


StartupCheck = Callable[[Store, Obj, dict[str, Any]], StartResult]
_STARTUP: dict[str, StartupCheck] = {}


def register_startup(kind: str, check: StartupCheck) -> None:
    _STARTUP[kind] = check


def startup(store: Store, pod: Obj, container: dict[str, Any]) -> StartResult:
    check = _STARTUP.get(kind_of(str(container.get("image", ""))))
    if check is None:
        return StartResult(ok=True)
    return check(store, pod, container)


def container_env(pod: Obj, container: dict[str, Any]) -> dict[str, str]:
    """Env values a container sees, resolving the downward API fields charts use."""
    env: dict[str, str] = {}
    m = pod.get("metadata", {})
    fields = {"metadata.name": m.get("name", ""), "metadata.namespace": m.get("namespace", ""),
              "spec.nodeName": pod.get("spec", {}).get("nodeName", ""),
              "spec.serviceAccountName": pod.get("spec", {}).get("serviceAccountName", ""),
              "status.podIP": pod.get("status", {}).get("podIP", ""),
              "status.hostIP": pod.get("status", {}).get("hostIP", "")}
    for e in container.get("env") or []:
        if "value" in e:
            env[e["name"]] = expand_vars(str(e["value"]), env)
        else:
            path = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if path in fields:
                env[e["name"]] = str(fields[path])
    return env


def expand_vars(s: str, env: dict[str, str]) -> str:
    """Kubernetes $(VAR) expansion in command/args ($$ escapes; unknown refs stay as written)."""
    out, i = [], 0
    while i < len(s):
        if s.startswith("$$", i):
            out.append("$")
            i += 2
        elif s.startswith("$(", i) and ")" in s[i + 2:]:
            end = s.index(")", i + 2)
            name = s[i + 2:end]
            out.append(env[name] if name in env else s[i:end + 1])
            i = end + 1
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def container_argv(pod: Obj, container: dict[str, Any]) -> list[str]:
    env = container_env(pod, container)
    return [expand_vars(str(a), env) for a in (container.get("command") or []) + (container.get("args") or [])]


def stable_id(pod: Obj, container: str, restart: int) -> str:
    import hashlib

    seed = f"{pod.get('metadata', {}).get('uid', '')}/{container}/{restart}"
    return hashlib.sha256(seed.encode()).hexdigest()
