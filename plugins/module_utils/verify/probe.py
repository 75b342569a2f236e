# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The http_probe module: its options validated (probe_options.py), the transport chosen (from this host,
with connect_to as on the twin, or from a kind node: plugins/module_utils/transport), the probe run once
(probe_once.py) or on a schedule (probe_continuous.py), and the answering pods checked to be this
cluster's (probe_origin.py)."""
from __future__ import annotations

from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.host import HostTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Transport
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import probe_origin
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import node_continuous
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_once import run_probe
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import DEFAULT_BACKEND_REGEX, ProbeError, ProbeSpec, parse_spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import ingress_lookup


Obj = dict[str, Any]
# At most this much of an answer's body is read from the host.
MAX_BODY = 1024 * 1024

NODE_HINT = ("cannot run curl in node container %r: on the twin (kindlab-twin) nodes are not containers, so use "
             "via: host with connect_to (kindlab-twin get connect-to --name CLUSTER, or the kind_cluster "
             "module's connect_to return)")


def node_from_context(context: str | None) -> str | None:
    """kind names its context kind-NAME and its first node container NAME-control-plane."""
    if context and context.startswith("kind-") and len(context) > 5:
        return context[5:] + "-control-plane"
    return None


def probe_from_module(
    params: Obj,
    make_client: Callable[..., Any],
    open_url: Callable[..., Any],
    http_error: type[Exception],
    run_command: Callable[[list[str]], tuple[int, str, str]],
    get_bin_path: Callable[[str], str | None],
) -> Obj:
    """The module's one call: validate everything, pick the transport, run the probe."""
    spec = parse_spec(params)
    node = None
    transport: Transport
    if params.get("via") == "node":
        node = params.get("node") or node_from_context(params.get("context"))
        if not node:
            raise ProbeError("node: via=node needs the node container's name (e.g. ingress-lab-control-plane), "
                             "or a kind-NAME context to derive it from")
        docker = get_bin_path(params.get("docker_binary") or "docker")
        if docker is None:
            raise ProbeError("docker_binary: %r not found; via=node runs curl in a kind node container. " % (
                params.get("docker_binary") or "docker") + NODE_HINT % node)
        transport = NodeTransport(run_command, docker, node, NODE_HINT)
        if spec.rate is not None:
            return _node_window(params, spec, make_client, transport)
    else:
        transport = HostTransport(connect_to_only=spec.connect_to_only, validate_certs=bool(params.get("validate_certs", True)),
                                  max_body=MAX_BODY, open_url=open_url, http_error=http_error)
    client, ingresses = _checked_ingresses(params, spec, make_client)
    origin = _Origin(spec, client, ingresses)
    result = run_probe(spec, transport.send, ingress_lookup(client, spec.ingresses) if client is not None else None)
    origin.check(result)
    result["via"] = "node" if node else "host"
    if node:
        result["node"] = node
    if spec.ingresses:
        result["ingresses"] = ["%s/%s" % ref for ref in spec.ingresses]
    return result


def _checked_ingresses(params: Obj, spec: ProbeSpec, make_client: Callable[..., Any]) -> tuple[Any, list[Obj]]:
    """(the client, the probed Ingresses), after checking each exists; (None, []) for a URL."""
    if not spec.ingresses:
        return None, []
    client = make_client(params.get("kubeconfig"), params.get("context"))
    found = [(ns, name, client.get("networking.k8s.io/v1", "Ingress", name, ns)) for ns, name in spec.ingresses]
    missing = ["%s/%s" % (ns, name) for ns, name, obj in found if obj is None]
    if missing:
        raise ProbeError("ingress: Ingress %s not found" % ", ".join(missing))
    return client, [obj for _ns, _name, obj in found if obj is not None]


class _Origin:
    """The check that a probe of Ingresses was answered from this cluster (probe_origin): the pods behind their
    Services read before the probe and again after it. Nothing to check for a URL, or with a backend_regex of the
    scenario's own (it may not name pods)."""

    def __init__(self, spec: ProbeSpec, client: Any, ingresses: list[Obj]) -> None:
        self.refs = spec.ingresses
        self.client = client if spec.backend_regex.pattern == DEFAULT_BACKEND_REGEX else None
        self.services = probe_origin.services_of(ingresses) if self.client is not None else []
        self.before = probe_origin.pods_behind(self.client, self.services)

    def check(self, result: Obj) -> None:
        if self.client is None:
            return
        known = self.before | probe_origin.pods_behind(self.client, self.services)
        foreign = probe_origin.foreign_pods(self.client, result.get("distribution") or {}, known,
                                            sorted({ns for ns, _name in self.refs}))
        probe_origin.refuse_foreign(result, foreign, self.refs)


def _node_window(params: Obj, spec: ProbeSpec, make_client: Callable[..., Any], node: NodeTransport) -> Obj:
    client, ingresses = _checked_ingresses(params, spec, make_client)
    origin = _Origin(spec, client, ingresses)
    result = node_continuous(spec, node, ingress_lookup(client, spec.ingresses) if client is not None else None)
    origin.check(result)
    result.update(via="node", node=node.node)
    if spec.ingresses:
        result["ingresses"] = ["%s/%s" % ref for ref in spec.ingresses]
    return result
