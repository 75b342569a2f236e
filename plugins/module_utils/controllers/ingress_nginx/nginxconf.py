# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ingress-nginx built, in its own words: the nginx.conf the controller rendered, read from a pod, as one
record (a controllers.dataplane_reader.Router) per location of each server, and the location nginx gives a request.

Read from the controller v1.11.0's rootfs/etc/nginx/template/nginx.tmpl and template.go:
- each host is one `server` (`## start server <host>`), `server_name <name> <server-alias>...`; a wildcard host is
  written as the regex name `~^(?<subdomain>[\\w-]+)\\.example\\.com$` (buildServerName); the server of rules
  without a host and of the default backend is `_`, the `default_server`;
- each path is a `location` (buildLocation): `= /p` for Exact, `~* "^/p"` when a path of the host uses regex
  (use-regex, rewrite-target: enforceRegexModifier), else the plain prefix `/p`; inside it `set $namespace`,
  `$ingress_name`, `$service_name`, `$service_port` name the Ingress and backend it was rendered from;
- the settings a difference can come from: `proxy_set_header Host` (upstream-vhost), `X-Forwarded-Prefix`,
  `Authorization` (emptied where basic auth checked it), `rewrite` (rewrite-target), `return` (redirects, app-root,
  permanent-redirect), `auth_basic`, and the Lua table of rewrite_by_lua_block (force_ssl_redirect, ssl_redirect).

nginx chooses (ngx_http_core_module): the server by exact name, then the longest leading wildcard, then the first
matching regex name, else the default server; in it the `=` location that equals the path (or a proxied prefix
location that is the path and a slash: its 301), else the longest prefix, unless a regex location (in the order
written) matches, which then wins. It matches the normalised URI:
dot segments resolved, slashes merged, no query.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import (
    DataPlaneError, PodAccess, Router, clean_path, compile_regex)

Obj = dict[str, Any]

CONF = "/etc/nginx/nginx.conf"
DEFAULT_SERVER = "_"
# The location directives a rehearsal's difference can come from, each as nginx.conf writes it.
_SETTINGS = ("rewrite", "return", "auth_basic", "proxy_pass")
_HEADERS = ("host", "x-forwarded-prefix", "authorization")
_LUA_FLAGS = re.compile(r"\b(force_ssl_redirect|ssl_redirect)\s*=\s*(true|false)")
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'|([{};])|([^\s{};"\']+)')


@dataclass
class Block:
    name: str
    args: list[str]
    children: list["Block"] = field(default_factory=list)
    text: str = ""  # a *_by_lua_block's Lua source, kept whole


def _lua_end(text: str, start: int) -> int:
    """The index just past the brace closing a Lua block whose `{` is at START (Lua strings and comments skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            end = text.find(c, i + 1)
            while end > 0 and text[end - 1] == "\\":
                end = text.find(c, end + 1)
            i = (end if end > 0 else len(text)) + 1
            continue
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise DataPlaneError("nginx.conf: a Lua block opened at offset %d is never closed" % start)


def parse(text: str) -> list[Block]:
    """nginx.conf → its directives as a tree (comments dropped; a Lua block's source kept as text). A DataPlaneError
    names the offset where the text is not nginx configuration."""
    root = Block("", [])
    stack = [root]
    words: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "#":
            nl = text.find("\n", i)
            i = len(text) if nl < 0 else nl
            continue
        if text[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(text, i)
        if m is None:
            raise DataPlaneError("nginx.conf: unreadable at offset %d: %r" % (i, text[i:i + 40]))
        i = m.end()
        quoted = m.group(1) if m.group(1) is not None else m.group(2)
        punct = m.group(3)
        if punct is None:
            words.append(quoted if quoted is not None else m.group(4))
            continue
        if punct == ";":
            if words:
                stack[-1].children.append(Block(words[0], words[1:]))
            words = []
        elif punct == "{":
            if not words:
                raise DataPlaneError("nginx.conf: a block without a name at offset %d" % m.start())
            block = Block(words[0], words[1:])
            stack[-1].children.append(block)
            words = []
            if block.name.endswith("_by_lua_block"):
                end = _lua_end(text, m.start())
                block.text = text[m.start() + 1:end - 1]
                i = end
            else:
                stack.append(block)
        else:
            if len(stack) == 1:
                raise DataPlaneError("nginx.conf: a `}` without its block at offset %d" % m.start())
            stack.pop()
    if len(stack) != 1:
        raise DataPlaneError("nginx.conf: the block %s is never closed" % stack[-1].name)
    return root.children


def _walk(blocks: Sequence[Block], name: str) -> list[Block]:
    out = []
    for b in blocks:
        if b.name == name:
            out.append(b)
        elif b.name in ("http", "") and b.children:
            out += _walk(b.children, name)
    return out


def _settings(location: Block) -> tuple[tuple[str, str], ...]:
    """The location's settings a difference can come from, in the order written (an `if` block's too)."""
    out: list[tuple[str, str]] = []
    for d in location.children:
        if d.name == "if":
            out += [(k, v) for k, v in _settings(d) if k in ("return", "rewrite")]
        elif d.name in _SETTINGS:
            out.append((d.name, " ".join(d.args)))
        elif d.name == "proxy_set_header" and d.args and d.args[0].lower() in _HEADERS:
            out.append(("proxy_set_header " + d.args[0], " ".join(d.args[1:])))
        elif d.name == "rewrite_by_lua_block":
            out += list(_LUA_FLAGS.findall(d.text))
    return tuple(out)


def routers(text: str) -> list[Router]:
    """One Router per location of each named server (the locations the controller adds itself, such as the default
    server's `/`, have no Ingress)."""
    out = []
    order = 0
    for server in _walk(parse(text), "server"):
        names = next((tuple(d.args) for d in server.children if d.name == "server_name"), ())
        if not names:
            continue  # the controller's own servers (status, the internal default backend) serve no request of ours
        default = any(d.name == "listen" and "default_server" in d.args for d in server.children)
        hosts = names + ((DEFAULT_SERVER,) if default and DEFAULT_SERVER not in names else ())
        for location in (d for d in server.children if d.name == "location"):
            sets = {d.args[0]: (d.args[1] if len(d.args) > 1 else "") for d in location.children if d.name == "set" and d.args}
            ns, ing = sets.get("$namespace", ""), sets.get("$ingress_name", "")
            service = sets.get("$service_name", "")
            order += 1
            out.append(Router(
                name="server %s location %s" % (names[0] if names else DEFAULT_SERVER, " ".join(location.args)),
                rule=" ".join(location.args), priority=order,
                service="%s/%s:%s" % (ns, service, sets.get("$service_port", "")) if service else "",
                hosts=hosts, ingress="%s/%s" % (ns, ing) if ing else "", settings=_settings(location)))
    return out


def _server_regex(name: str) -> re.Pattern[str] | None:
    try:
        return compile_regex(name[1:], re.IGNORECASE)
    except re.error:
        return None


def _server_rank(name: str, host: str) -> tuple[int, int] | None:
    """How well server name NAME takes HOST: (3, _) exact, (2, length) leading wildcard, (1, 0) regex, else None."""
    if name.startswith("~"):
        regex = _server_regex(name)
        return (1, 0) if regex and regex.search(host) else None
    if name.startswith("*."):
        return (2, len(name)) if host.endswith(name[1:]) else None
    return (3, 0) if name.lower() == host else None


def normalise(target: str) -> str:
    """The URI nginx matches locations against: without the query, slashes merged, dot segments resolved."""
    return clean_path(target.split("?", 1)[0])


@functools.lru_cache(maxsize=4096)  # asked for every location once per differing request of a rehearsal
def _location_matches(rule: str) -> tuple[str, Any]:
    """(kind, what) of a location: ("=", path), ("^~", prefix), ("~", regex), or ("", prefix)."""
    parts = rule.split(None, 1)
    if len(parts) == 2 and parts[0] in ("=", "^~", "~", "~*"):
        modifier, path = parts
        if modifier in ("~", "~*"):
            try:
                return "~", compile_regex(path, re.IGNORECASE if modifier == "~*" else 0)
            except re.error:
                return "~", None
        return modifier, path
    return "", rule


def take(records: Sequence[Router], scheme: str, host: str, target: str, method: str = "GET",
         headers: Sequence[tuple[str, str]] = ()) -> Router | None:
    """The location nginx gives a request for HOST and TARGET (see the module docstring); None when none matches. The
    scheme, method and headers do not choose a location (one server listens for HTTP and HTTPS alike)."""
    host = host.split(":", 1)[0].lower().rstrip(".")
    best: tuple[int, int] | None = None
    server: tuple[str, ...] | None = None
    for r in records:
        for name in r.hosts:
            rank = _server_rank(name, host)
            if rank is not None and (best is None or rank > best):
                best, server = rank, r.hosts
    if server is None:
        server = next((r.hosts for r in records if DEFAULT_SERVER in r.hosts), None)
    if server is None:
        return None
    uri = normalise(target)
    locations = [r for r in records if r.hosts == server]
    prefix: Router | None = None
    prefix_kind = ""
    exact = [r for r in locations if _location_matches(r.rule) == ("=", uri)]
    if exact:
        return exact[0]
    for r in locations:
        kind, what = _location_matches(r.rule)
        if kind in ("", "^~") and what == uri + "/" and any(k == "proxy_pass" for k, _v in r.settings):
            return r  # auto_redirect: nginx answers 301 to the location's own path from it, before any regex
        if kind in ("", "^~") and uri.startswith(what) and (prefix is None or len(what) > len(_location_matches(prefix.rule)[1])):
            prefix, prefix_kind = r, kind
    if prefix is not None and prefix_kind == "^~":
        return prefix
    for r in locations:
        kind, what = _location_matches(r.rule)
        if kind == "~" and what is not None and what.search(uri):
            return r
    return prefix


def describe(record: Router) -> str:
    """One line: where it is, what it was rendered from, the settings a difference can come from."""
    said = ["location %s of server %s" % (record.rule, " ".join(record.hosts))]
    if record.ingress:
        said.append("from Ingress %s to %s" % (record.ingress, record.service) if record.service else
                    "from Ingress %s, the host's root location ingress-nginx adds (its default backend answers)" % record.ingress)
    said += ["%s %s" % (k, v if v else '""') for k, v in record.settings if k != "proxy_pass"]
    said += ["canary %s" % c.said for c in record.canaries]
    return "; ".join(said)


def read_routers(access: PodAccess, pod: Obj, container: Obj) -> tuple[tuple[Router, ...], str]:
    """The pod's rendered nginx.conf (an exec of cat), as records; or why it could not be read."""
    result = access.exec(str(container.get("name")), ["cat", CONF])
    if result.refused is not None:
        return (), "exec refused by the API server (%s): %s; grant create on pods/exec in namespace %s" % (
            result.refused, result.error, meta(pod).get("namespace"))
    if result.rc != 0:
        return (), "cat %s failed: %s" % (CONF, result.error or result.stderr.strip() or "exit %s" % result.rc)
    try:
        return tuple(routers(result.stdout)), ""
    except DataPlaneError as exc:
        return (), str(exc)
