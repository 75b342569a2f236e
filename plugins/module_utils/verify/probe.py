# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reachability probes: HTTP with a Host header to a URL or to an Ingress's published
address, curl-style connect_to, attempts until the expected answer, then samples whose
answering backends make a distribution.

Everything is validated by parse_spec() before a request is sent. The loop (run_probe)
takes its transport, address lookup, clock and sleep as arguments, so it is tested
without a network; the two transports are from the host (Ansible's open_url) and from
inside a kind node container (curl through `docker exec`, argv built here).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple
from urllib.error import HTTPError
from urllib.parse import urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, OptionError

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params

Obj = dict[str, Any]

# The echo images answer "pod: NAME\n…"; the nginx image answers its welcome page.
DEFAULT_BACKEND_REGEX = r"pod: (\S+)"
_NGINX_WELCOME = "<title>Welcome to nginx!</title>"
_MAX_BODY = 1024 * 1024
_METHOD = re.compile(r"^[A-Z]+$")
_PORT = re.compile(r"^[0-9]{1,5}$")
# curl --write-out marker appended after the body, so status and body come from one stdout.
_CURL_MARK = "\n__kindlab_probe_status__:"


class ProbeError(OptionError):
    """A probe option is invalid; the message names the option."""


@dataclass(frozen=True)
class ConnectTo:
    """One curl --connect-to entry; empty host/port match any, empty targets keep the original."""
    host: str
    port: str
    target_host: str
    target_port: str

    def applies(self, host: str, port: int) -> bool:
        return (not self.host or self.host.lower() == host.lower()) and (not self.port or int(self.port) == port)


@dataclass
class Target:
    """Where one request goes: the URL as sent, the Host header, and the peer actually dialled."""
    url: str
    host_header: str
    address: str  # the host part of the URL (lab address, before connect_to)
    connect_host: str
    connect_port: int
    mapped: bool = False  # a connect_to entry applied


@dataclass
class Answer:
    status: int | None
    body: str
    error: str | None = None
    fatal: bool = False  # retrying cannot help (no node container to exec into)


@dataclass
class ProbeSpec:
    url: str | None
    ingresses: list[tuple[str, str]]  # empty with url
    scheme: str
    port: int | None
    host: str | None
    path: str
    method: str
    status: list[int]
    body_regex: re.Pattern[str] | None
    attempts: int
    interval: float
    timeout: float
    samples: int
    backend_regex: re.Pattern[str]
    connect_to: list[ConnectTo] = field(default_factory=list)
    # Dial only through connect_to: an address without an entry counts as refused. On the twin
    # nothing but the mapped loopback ports exists, and lab addresses must never be dialled.
    connect_to_only: bool = False


def _take_host(text: str) -> tuple[str, str] | None:
    """Split a leading host (possibly empty, or an [IPv6] literal) off 'HOST:rest'."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1:end + 2] != ":":
            return None
        return text[1:end], text[end + 2:]
    host, sep, rest = text.partition(":")
    return (host, rest) if sep else None


def _parse_entry(entry: str) -> ConnectTo | None:
    first = _take_host(entry)
    if first is None:
        return None
    port, sep, rest = first[1].partition(":")
    second = _take_host(rest) if sep else None
    if second is None or ":" in second[1]:
        return None
    return ConnectTo(first[0], port, second[0], second[1])


def parse_connect_to(entries: Any) -> list[ConnectTo]:
    """curl's HOST:PORT:CONNECT_HOST:CONNECT_PORT (IPv6 hosts in brackets; empty parts allowed
    as curl allows them, but a port must be a number in 1-65535)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProbeError("connect_to: expected a list of HOST:PORT:TARGET_HOST:TARGET_PORT strings, got %r" % (entries,))
    out = []
    for i, entry in enumerate(entries):
        where = "connect_to[%d]" % i
        parsed = _parse_entry(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise ProbeError("%s: %r is not HOST:PORT:TARGET_HOST:TARGET_PORT (e.g. 100.64.0.0:80:127.0.0.1:40123)"
                             % (where, entry))
        for port in (parsed.port, parsed.target_port):
            if port and (not _PORT.match(port) or not 0 < int(port) < 65536):
                raise ProbeError("%s: %r: port %r is not a number in 1-65535" % (where, entry, port))
        out.append(parsed)
    return out


def _regex(value: Any, option: str, groups: bool = False) -> re.Pattern[str] | None:
    if value is None:
        return None
    try:
        pattern = re.compile(value)
    except (re.error, TypeError) as exc:
        raise ProbeError("%s: %r is not a valid Python regular expression: %s" % (option, value, exc)) from exc
    if groups and pattern.groups < 1:
        raise ProbeError("%s: %r needs a capturing group that names the answering backend, e.g. 'pod: (\\S+)'"
                         % (option, value))
    return pattern


def _ingress_ref(value: Any, where: str) -> tuple[str, str]:
    if isinstance(value, str) and value.count("/") == 1 and all(value.split("/")):
        ns, name = value.split("/")
        return ns, name
    if isinstance(value, dict) and isinstance(value.get("namespace"), str) and isinstance(value.get("name"), str):
        return value["namespace"], value["name"]
    raise ProbeError("%s: expected 'namespace/name' or a mapping with namespace and name, got %r" % (where, value))


def parse_ingresses(value: Any) -> list[tuple[str, str]]:
    """One Ingress, or a list of them whose addresses are used in turn (DNS round-robin)."""
    if value is None:
        return []
    if isinstance(value, list):
        if not value:
            raise ProbeError("ingress: expected at least one Ingress, got an empty list")
        return [_ingress_ref(item, "ingress[%d]" % i) for i, item in enumerate(value)]
    return [_ingress_ref(value, "ingress")]


def parse_spec(params: Obj) -> ProbeSpec:
    """Validate the module options (url XOR ingress, counts, regexes, connect_to)."""
    url, ingress = params.get("url"), params.get("ingress")
    if (url is None) == (ingress is None):
        raise ProbeError("url, ingress: give exactly one (a URL, or the Ingress whose status address to probe)")
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProbeError("url: expected an http:// or https:// URL with a host, got %r" % url)
        try:
            _port = parts.port  # raises ValueError on a bad port
        except ValueError as exc:
            raise ProbeError("url: %r has an invalid port" % url) from exc
    path = params.get("path") or "/"
    if not path.startswith("/"):
        raise ProbeError("path: expected an absolute path starting with '/', got %r" % path)
    method = (params.get("method") or "GET").upper()
    if not _METHOD.match(method):
        raise ProbeError("method: expected an HTTP method such as GET, HEAD or POST, got %r" % params.get("method"))
    status = params.get("status") or [200]
    if not all(isinstance(s, int) and 100 <= s <= 599 for s in status):
        raise ProbeError("status: expected a list of HTTP status codes (100-599), got %r" % (status,))
    for option, minimum in (("attempts", 1), ("samples", 0)):
        if int(params.get(option, minimum)) < minimum:
            raise ProbeError("%s: expected a whole number >= %d, got %r" % (option, minimum, params.get(option)))
    for option in ("interval", "timeout"):
        if float(params.get(option, 1)) < 0 or (option == "timeout" and float(params.get(option, 1)) == 0):
            raise ProbeError("%s: expected a positive number of seconds, got %r" % (option, params.get(option)))
    port = params.get("port")
    if port is not None and not 0 < int(port) < 65536:
        raise ProbeError("port: expected a port number in 1-65535, got %r" % port)
    scheme = params.get("scheme") or "http"
    if scheme not in ("http", "https"):
        raise ProbeError("scheme: expected http or https, got %r" % scheme)
    host = params.get("host")
    if host is not None and (not host or any(c in host for c in " /\r\n")):
        raise ProbeError("host: expected a host name for the Host header (optionally host:port), got %r" % host)
    return ProbeSpec(
        url=url, ingresses=parse_ingresses(ingress), scheme=scheme, port=port,
        host=host, path=path, method=method, status=list(status),
        body_regex=_regex(params.get("body_regex"), "body_regex"),
        attempts=int(params.get("attempts", 1)), interval=float(params.get("interval", 1)),
        timeout=float(params.get("timeout", 10)), samples=int(params.get("samples", 1)),
        backend_regex=_regex(params.get("backend_regex") or DEFAULT_BACKEND_REGEX, "backend_regex", groups=True)
        or re.compile(DEFAULT_BACKEND_REGEX),
        connect_to=parse_connect_to(params.get("connect_to")),
        connect_to_only=bool(params.get("connect_to_only", False)),
    )


def first_rule_host(ingress: Obj) -> str | None:
    """The Ingress's first rule host: the name DNS would give clients of this Ingress. A
    wildcard host (*.example.com) becomes one name it matches, probe.example.com."""
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        host = rule.get("host")
        if host:
            return "probe" + str(host)[1:] if str(host).startswith("*.") else str(host)
    return None


def _bracket(host: str) -> str:
    return "[%s]" % host if ":" in host else host


def build_target(spec: ProbeSpec, address: str | None, default_host: str | None) -> Target:
    """The URL, Host header and dialled peer for one request (connect_to applied like curl)."""
    if spec.url is not None:
        parts = urlsplit(spec.url)
        address = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        url = spec.url
        netloc = parts.netloc.rpartition("@")[2]
    else:
        if address is None:
            raise ProbeError("ingress: no status address to probe")  # run_probe skips such attempts
        port = spec.port or (443 if spec.scheme == "https" else 80)
        default_port = port == (443 if spec.scheme == "https" else 80)
        netloc = _bracket(address) + ("" if default_port else ":%d" % port)
        url = "%s://%s%s" % (spec.scheme, netloc, spec.path)
    host_header = spec.host or default_host or netloc
    connect_host, connect_port, mapped = address, port, False
    for rule in spec.connect_to:
        if rule.applies(address, port):
            connect_host = rule.target_host or address
            connect_port = int(rule.target_port) if rule.target_port else port
            mapped = True
            break
    return Target(url=url, host_header=host_header, address=address, connect_host=connect_host, connect_port=connect_port,
                  mapped=mapped)


def backend_of(body: str, pattern: re.Pattern[str]) -> str:
    """Which backend answered: the regex's first group, 'nginx' for the welcome page."""
    match = pattern.search(body)
    if match and match.group(1):
        return match.group(1)
    if _NGINX_WELCOME in body:
        return "nginx"
    return "(unmatched)"


def distribution(backends: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in backends:
        out[name] = out.get(name, 0) + 1
    return out


def judge(spec: ProbeSpec, answer: Answer) -> str | None:
    """None when the answer is what was expected, else why not."""
    if answer.error is not None:
        return answer.error
    if answer.status not in spec.status:
        return "got %s (expected %s)" % (answer.status, " or ".join(str(s) for s in spec.status))
    if spec.body_regex is not None and not spec.body_regex.search(answer.body):
        return "got %s but the body does not match %r" % (answer.status, spec.body_regex.pattern)
    return None


def failure_reason(problem: str, target: Target | None, attempts: int) -> str:
    """'got 503 from 100.64.0.0 (expected 200) after 3 attempts'."""
    plural = "s" if attempts != 1 else ""
    if target is None:
        return "%s after %d attempt%s" % (problem, attempts, plural)
    if problem.startswith("got "):
        code, _sep, rest = problem[4:].partition(" ")
        return "got %s from %s %s after %d attempt%s" % (code, target.address, rest, attempts, plural)
    return "%s (address %s) after %d attempt%s" % (problem, target.address, attempts, plural)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Evaluated at run time, so spelled with typing's names (the modules may run on older Pythons).
Lookup = Callable[[], Tuple[List[str], Optional[str]]]


def _names(spec: ProbeSpec) -> str:
    return ", ".join("%s/%s" % ref for ref in spec.ingresses)


class _Resolver:
    """The target of each request. With Ingresses, their status is read again every time and
    the addresses are used in turn, as a client resolving DNS built from that status would."""

    def __init__(self, spec: ProbeSpec, lookup: Lookup | None) -> None:
        self.spec, self.lookup, self.count = spec, lookup, 0

    def next(self) -> tuple[Target | None, str | None]:
        if not self.spec.ingresses or self.lookup is None:
            return build_target(self.spec, None, None), None
        addresses, default_host = self.lookup()
        if not addresses:
            return None, "no status address on Ingress %s" % _names(self.spec)
        address = addresses[self.count % len(addresses)]
        self.count += 1
        return build_target(self.spec, address, default_host), None


def run_probe(
    spec: ProbeSpec,
    send: Callable[[ProbeSpec, Target], Answer],
    lookup: Lookup | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    now: Callable[[], str] = _now,
) -> Obj:
    """Attempts until one passes, then the samples. lookup() returns (status addresses, default
    Host) of the Ingresses; it is called before every request."""
    resolver = _Resolver(spec, lookup)
    attempts: list[Obj] = []
    target: Target | None = None
    problem: str | None = "no attempt made"
    for n in range(spec.attempts):
        if n:
            sleep(spec.interval)
        current, problem = resolver.next()
        if current is None:
            attempts.append({"time": now(), "address": None, "status": None, "elapsed": 0.0, "error": problem})
            continue
        target = current
        started = clock()
        answer = send(spec, target)
        problem = judge(spec, answer)
        attempts.append({"time": now(), "address": target.address, "status": answer.status,
                         "elapsed": round(clock() - started, 3), "error": answer.error if answer.error else problem})
        if problem is None or answer.fatal:
            break
    result: Obj = {"attempts": attempts, "samples": [], "distribution": {},
                   "url": target.url if target else None, "address": target.address if target else None,
                   "host": target.host_header if target else None}
    if problem is not None or target is None:
        result.update(passed=False, reason=failure_reason(problem or "no attempt made", target, len(attempts)))
        return result
    return _sample(spec, send, resolver, result, now, clock)


def _sample(spec: ProbeSpec, send: Callable[[ProbeSpec, Target], Answer], resolver: _Resolver, result: Obj,
            now: Callable[[], str], clock: Callable[[], float]) -> Obj:
    """N more requests (each resolved again); every one must pass too."""
    samples: list[Obj] = []
    backends: list[str] = []
    bad: list[str] = []
    used: list[str] = [result["address"]]
    for _sample_no in range(spec.samples):
        target, problem = resolver.next()
        if target is None:
            samples.append({"time": now(), "address": None, "status": None, "backend": "(error)", "elapsed": 0.0,
                            "error": problem})
            backends.append("(error)")
            bad.append(problem or "no target")
            continue
        started = clock()
        answer = send(spec, target)
        problem = judge(spec, answer)
        backend = "(error)" if answer.error else backend_of(answer.body, spec.backend_regex)
        samples.append({"time": now(), "address": target.address, "status": answer.status, "backend": backend,
                        "elapsed": round(clock() - started, 3), "error": problem})
        backends.append(backend)
        if target.address not in used:
            used.append(target.address)
        if problem:
            bad.append(problem)
    result["samples"] = samples
    result["distribution"] = distribution(backends)
    result["addresses"] = used
    if bad:
        result.update(passed=False, reason="%d of %d samples from %s failed: %s" % (
            len(bad), len(samples), ", ".join(used), "; ".join(sorted(set(bad)))))
    else:
        result.update(passed=True, reason="got %s from %s" % (result["attempts"][-1]["status"], ", ".join(used)))
    return result


# --- transports -------------------------------------------------------------------------

def host_send(open_url: Callable[..., Any], http_error: type[Exception], validate_certs: bool = True
              ) -> Callable[[ProbeSpec, Target], Answer]:
    """A transport from this host through Ansible's open_url. connect_to is done like curl's:
    the request goes to the mapped peer, with the original Host header (and the same path)."""

    def send(spec: ProbeSpec, target: Target) -> Answer:
        if spec.connect_to_only and not target.mapped:
            return Answer(None, "", "%s to %s:%d refused: no connect_to entry maps it (connect_to_only: nothing listens there)"
                          % (spec.method, target.address, target.connect_port))
        parts = urlsplit(target.url)
        url = target.url
        if (target.connect_host, target.connect_port) != (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)):
            url = parts._replace(netloc="%s:%d" % (_bracket(target.connect_host), target.connect_port)).geturl()
        try:
            resp = open_url(url, method=spec.method, headers={"Host": target.host_header}, timeout=spec.timeout,
                            follow_redirects="none", use_proxy=False, validate_certs=validate_certs)
            return Answer(resp.getcode(), _text(resp.read(_MAX_BODY)))
        except http_error as exc:  # a non-2xx answer is still an answer
            try:
                body = exc.read(_MAX_BODY)  # type: ignore[attr-defined]
            except Exception:  # no body (HEAD, or already closed)
                body = b""
            return Answer(int(getattr(exc, "code", 0)), _text(body))
        except Exception as exc:  # connection refused, timeout, TLS: the attempt's error
            return Answer(None, "", "%s to %s:%d failed: %s" % (spec.method, target.connect_host, target.connect_port,
                                                                getattr(exc, "reason", None) or exc))

    return send


def _text(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def curl_argv(docker: str, node: str, spec: ProbeSpec, target: Target) -> list[str]:
    """curl inside the node container; its --connect-to does what connect_to says."""
    argv = [docker, "exec", node, "curl", "-sS", "-o", "-", "-w", _CURL_MARK + "%{http_code}",
            "--max-time", "%g" % spec.timeout, "-H", "Host: %s" % target.host_header]
    argv += ["--head"] if spec.method == "HEAD" else ["-X", spec.method]
    if target.url.startswith("https:"):
        argv.append("-k")  # the lab's certificates are self-signed
    for rule in spec.connect_to:
        argv += ["--connect-to", "%s:%s:%s:%s" % (_bracket(rule.host) if rule.host else "", rule.port,
                                                  _bracket(rule.target_host) if rule.target_host else "", rule.target_port)]
    return argv + [target.url]


NODE_HINT = ("cannot run curl in node container %r: on the twin (kindlab-twin) nodes are not containers, so use "
             "via: host with connect_to (kindlab-twin get connect-to --name CLUSTER, or the kind_cluster "
             "module's connect_to return)")


def parse_curl(rc: int, stdout: str, stderr: str, node: str) -> Answer:
    """(status, body) from curl's stdout with the write-out marker, or the error."""
    body, sep, code = stdout.rpartition(_CURL_MARK)
    if "No such container" in stderr or "is not running" in stderr:
        return Answer(None, "", NODE_HINT % node, fatal=True)
    if "Cannot connect to the Docker daemon" in stderr:  # no engine: a twin lab, or Docker is down
        return Answer(None, "", "docker has no engine to exec into (%s); " % stderr.strip()[:120] + NODE_HINT % node,
                      fatal=True)
    if rc != 0 or not sep or not code.strip().isdigit() or code.strip() == "000":
        return Answer(None, "", "curl in node %s failed (rc=%d): %s" % (node, rc, (stderr or stdout).strip()[:300]))
    return Answer(int(code.strip()), body)


def node_send(run_command: Callable[[list[str]], tuple[int, str, str]], docker: str, node: str
              ) -> Callable[[ProbeSpec, Target], Answer]:
    def send(spec: ProbeSpec, target: Target) -> Answer:
        rc, out, err = run_command(curl_argv(docker, node, spec, target))
        return parse_curl(rc, out, err, node)

    return send


def node_from_context(context: str | None) -> str | None:
    """kind names its context kind-NAME and its first node container NAME-control-plane."""
    if context and context.startswith("kind-") and len(context) > 5:
        return context[5:] + "-control-plane"
    return None


def ingress_lookup(client: Any, refs: list[tuple[str, str]]) -> Lookup:
    """Read the Ingresses again at every request: their status addresses (in order, without
    repeats) and the first rule host among them."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses

    def lookup() -> tuple[list[str], str | None]:
        addresses: list[str] = []
        host: str | None = None
        for ns, name in refs:
            obj = client.get("networking.k8s.io/v1", "Ingress", name, ns)
            if obj is None:
                continue
            addresses += [a for a in status_addresses(obj) if a not in addresses]
            host = host or first_rule_host(obj)
        return addresses, host

    return lookup


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
    if params.get("via") == "node":
        node = params.get("node") or node_from_context(params.get("context"))
        if not node:
            raise ProbeError("node: via=node needs the node container's name (e.g. ingress-lab-control-plane), "
                             "or a kind-NAME context to derive it from")
        docker = get_bin_path(params.get("docker_binary") or "docker")
        if docker is None:
            raise ProbeError("docker_binary: %r not found; via=node runs curl in a kind node container. " % (
                params.get("docker_binary") or "docker") + NODE_HINT % node)
        send = node_send(run_command, docker, node)
    else:
        send = host_send(open_url, http_error, bool(params.get("validate_certs", True)))
    lookup = None
    if spec.ingresses:
        client = make_client(params.get("kubeconfig"), params.get("context"))
        lookup = ingress_lookup(client, spec.ingresses)
        missing = ["%s/%s" % (ns, name) for ns, name in spec.ingresses
                   if client.get("networking.k8s.io/v1", "Ingress", name, ns) is None]
        if missing:
            raise ProbeError("ingress: Ingress %s not found" % ", ".join(missing))
    result = run_probe(spec, send, lookup)
    result["via"] = "node" if node else "host"
    if node:
        result["node"] = node
    return result


def run_http_probe(params: Params, module: Module) -> Obj:
    """The http_probe module: probe, and fail (with the whole result) when it does not pass
    and fail_on_violation is set. The kubernetes client is needed only with `ingress`."""
    result = probe_from_module(dict(params), make_client=module.client, open_url=open_url, http_error=HTTPError,
                               run_command=module.run_command, get_bin_path=module.which)
    if params["fail_on_violation"] and not result["passed"]:
        raise CheckFailed("http_probe: " + result["reason"], **dict(result, changed=False))
    return dict(result, changed=False)
