"""hack/kind-images/ingress-nginx/adapt-template.py: the changes Debian's nginx needs, each checked
against the upstream text (a template that moved on fails the image build, never half-adapted)."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "kind-images" / "ingress-nginx" / "adapt-template.py"
spec = importlib.util.spec_from_file_location("adapt_template", SCRIPT)
assert spec and spec.loader
adapt_template = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adapt_template)

# The shape of ingress-nginx v1.11.0's nginx.tmpl where the adapter cuts (abridged).
UPSTREAM = """pid {{ .PID }};

http {
    lua_package_path "/etc/nginx/lua/?.lua;;";
    server {
        {{ if $cfg.UseHTTP2 }}
            http2 on;
        {{ end }}
    }
}

stream {
    lua_package_path "/etc/nginx/lua/?.lua;/etc/nginx/lua/vendor/?.lua;;";
    server {
        listen 127.0.0.1:{{ .StreamPort }};
        content_by_lua_block {
          tcp_udp_configuration.call()
        }
    }
}

{{/* definition of templates to avoid repetitions */}}
{{ define "CORS" }}{{ end }}
"""


def test_each_change_lands_once_and_the_http_block_stays_closed() -> None:
    out = adapt_template.adapt(UPSTREAM)
    assert out.index("load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;") < out.index("http {")
    assert 'lua_package_path "/usr/local/share/kindlab/lua/?.lua;/etc/nginx/lua/?.lua;;";' in out
    assert "\n            http2 on;" not in out and "# http2 on;" in out
    assert "\nstream {" not in out and "tcp_udp_configuration" not in out
    # the stream port is answered from inside the http block, which still closes before the defines
    http = out[out.index("http {"):out.index("{{/* definition")]
    assert "listen 127.0.0.1:{{ .StreamPort }};" in http and "return 204;" in http
    assert http.count("{") == http.count("}")
    assert out.endswith('{{ define "CORS" }}{{ end }}\n')


@pytest.mark.parametrize("cut", ["pid {{ .PID }};\n", "            http2 on;\n", "\nstream {"])
def test_an_upstream_template_that_changed_fails_loudly(cut: str) -> None:
    with pytest.raises(SystemExit, match="adapt-template"):
        adapt_template.adapt(UPSTREAM.replace(cut, "\n"))


@pytest.mark.skipif(not os.environ.get("KINDLAB_CACHE") and not (Path.home() / ".cache/kindlab/assets").is_dir(),
                    reason="the k8s.io/ingress-nginx module's template is not in the cache")
def test_the_real_v1_11_template_adapts() -> None:
    from kindlab_twin import binaries
    template = binaries.assets_dir("ingress-nginx-controller") / "etc" / "nginx" / "template" / "nginx.tmpl"
    if not template.is_file():
        pytest.skip("no %s (kindlab-twin build binaries ingress-nginx-controller)" % template)
    out = adapt_template.adapt(template.read_text())
    assert "\nstream {" not in out and out.count("load_module /usr/lib/nginx/modules/") == 3
