"""ingress-nginx's nginx.tmpl, adapted to Debian's nginx (test machinery: hack/kind-images.sh).

    adapt-template.py UPSTREAM_TEMPLATE OUTPUT

The controller renders its configuration from this template exactly as upstream; only what
Debian bookworm's nginx 1.22 cannot run is changed, each change checked against the upstream
text so that a different template fails the image build instead of yielding a half-adapted one:
- Debian builds lua, ndk and headers-more as dynamic modules, which the template never loads;
- `http2 on;` needs nginx 1.25.1 (HTTP/2 is off);
- the stream block needs ngx_stream_lua, which Debian does not package (no TCP/UDP services);
  the controller still sends its stream configuration to the stream port, so an http server
  there answers it;
- Lua libraries Debian lacks come from /usr/local/share/kindlab/lua, searched first.
"""
from __future__ import annotations

import sys

LUA_OVERRIDES = "/usr/local/share/kindlab/lua"
MODULES = ("ndk_http_module", "ngx_http_lua_module", "ngx_http_headers_more_filter_module")

STREAM_ANSWER = """
    # kindlab: no stream block (ngx_stream_lua is not packaged by Debian). The controller posts
    # its TCP/UDP configuration to the stream port: answer it from here.
    server {
        listen 127.0.0.1:{{ .StreamPort }};
        access_log off;
        lingering_close always;
        return 204;
    }
}

"""


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise SystemExit("adapt-template: expected exactly one %r in the upstream template, found %d"
                         % (old, text.count(old)))
    return text.replace(old, new)


def adapt(text: str) -> str:
    loads = "".join("load_module /usr/lib/nginx/modules/%s.so;\n" % m for m in MODULES)
    text = replace_once(text, "pid {{ .PID }};\n",
                        "pid {{ .PID }};\n\n# kindlab: Debian's dynamic modules (built in upstream).\n" + loads)
    text = replace_once(text, 'lua_package_path "/etc/nginx/lua/?.lua;;";',
                        'lua_package_path "%s/?.lua;/etc/nginx/lua/?.lua;;";' % LUA_OVERRIDES)
    text = replace_once(text, "            http2 on;\n",
                        "            # http2 on; (kindlab: nginx 1.22 has no such directive)\n")
    start = text.find("\n}\n\nstream {")
    end = text.find("{{/* definition of templates")
    if text.count("\nstream {") != 1 or start < 0 or not start < end:
        raise SystemExit("adapt-template: the stream block is not where it was expected (right after the http block, "
                         "before the template definitions)")
    return text[:start] + "\n" + STREAM_ANSWER + text[end:]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        raise SystemExit(__doc__)
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(adapt(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
