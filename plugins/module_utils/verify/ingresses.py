# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Ingresses: their status addresses, and waiting for them to be published."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError

Obj = dict[str, Any]


def status_addresses(ingress: Obj | None) -> list[str]:
    """The addresses (IPs or hostnames) in status.loadBalancer.ingress, in order."""
    if not ingress:
        return []
    entries = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return [e.get("ip") or e.get("hostname") for e in entries if e.get("ip") or e.get("hostname")]


def parse_refs(raw: list[Any], where: str = "ingresses") -> list[tuple[str, str]]:
    """`namespace/name` strings or {namespace, name} mappings → (namespace, name) pairs."""
    refs = []
    for i, item in enumerate(raw):
        if isinstance(item, str) and item.count("/") == 1 and all(item.split("/")):
            ns, name = item.split("/")
        elif isinstance(item, dict) and isinstance(item.get("namespace"), str) and isinstance(item.get("name"), str):
            ns, name = item["namespace"], item["name"]
        else:
            raise OptionError("%s[%d]: expected 'namespace/name' or a mapping with namespace and name, got %r" % (where, i, item))
        refs.append((ns, name))
    return refs


def wait_for_addresses(client: Any, refs: list[tuple[str, str]], timeout: float, interval: float = 1.0) -> dict[str, list[str]]:
    """Wait until every Ingress has a non-empty status address; returns ns/name → addresses.
    The timeout error lists the Ingresses still without one."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import wait_until

    found: dict[str, list[str]] = {}

    def check() -> tuple[bool, str]:
        pending = []
        for ns, name in refs:
            key = "%s/%s" % (ns, name)
            obj = client.get("networking.k8s.io/v1", "Ingress", name, ns)
            found[key] = status_addresses(obj)
            if obj is None:
                pending.append(key + " (not found)")
            elif not found[key]:
                pending.append(key + " (no address)")
        return not pending, ", ".join(pending) or "all published"

    wait_until(check, timeout=timeout, what="a status address on every Ingress", interval=interval)
    return found
