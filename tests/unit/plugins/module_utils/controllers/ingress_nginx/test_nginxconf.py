"""ingress-nginx's own account: its rendered nginx.conf read as records, and the location nginx gives a request."""
from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import DataPlaneError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import nginxconf
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer

# The shape nginx.tmpl v1.11.0 renders (trimmed to what the records read): a host in regex mode, a wildcard host
# with a server-alias, an Exact path, a canary-less upstream-vhost, basic auth, the default server, the controller's
# own servers without a name.
CONF = r'''
# Configuration checksum: 1234
pid /tmp/nginx/nginx.pid;
events { multi_accept on; }
http {
    lua_package_path "/etc/nginx/lua/?.lua;;";
    init_by_lua_block {
        collectgarbage("collect")
        local ok, res = pcall(require, "lua_ingress") -- a comment with a } brace
        if not ok then error("require failed: " .. tostring(res)) end
    }
    ## start server _
    server {
        server_name _ ;
        listen 80 default_server reuseport backlog=511 ;
        location / {
            set $proxy_upstream_name "upstream-default-backend";
            proxy_pass http://upstream_balancer;
        }
        location /healthz { access_log off; return 200; }
    }
    ## end server _
    ## start server shop.example.test
    server {
        server_name shop.example.test ;
        listen 80 ;
        listen 443 ssl ;
        location ~* "^/api(/|$)(.*)" {
            set $namespace      "shop";
            set $ingress_name   "api";
            set $service_name   "api";
            set $service_port   "web";
            set $location_path  "/api(/|${literal_dollar})(.*)";
            rewrite_by_lua_block {
                lua_ingress.rewrite({
                    force_ssl_redirect = false,
                    ssl_redirect = true,
                    global_throttle = { namespace = "", limit = 0, window_size = 0, key = { }, ignored_cidrs = { } },
                })
                balancer.rewrite()
            }
            proxy_set_header Host                   $best_http_host;
            rewrite "(?i)/api(/|$)(.*)" /$2 break;
            proxy_pass http://upstream_balancer;
        }
        location ~* "^/docs" {
            set $namespace      "shop";
            set $ingress_name   "web";
            set $service_name   "web";
            set $service_port   "80";
            proxy_set_header Host "docs.internal";
            proxy_pass http://upstream_balancer;
        }
        location ~* "^/" {
            set $namespace      "shop";
            set $ingress_name   "web";
            set $service_name   "web";
            set $service_port   "80";
            proxy_pass http://upstream_balancer;
        }
    }
    ## end server shop.example.test
    ## start server *.tenants.example.test
    server {
        server_name ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ tenants.example.org ;
        listen 80 ;
        location /status/ {
            set $namespace      "shop";
            set $ingress_name   "tenants";
            set $service_name   "api";
            set $service_port   "web";
            proxy_pass http://upstream_balancer;
        }
        location = /status {
            set $namespace      "shop";
            set $ingress_name   "tenants";
            set $service_name   "api";
            set $service_port   "web";
            auth_basic "Ops only";
            auth_basic_user_file /etc/ingress-controller/auth/shop-tenants.passwd;
            proxy_pass http://upstream_balancer;
        }
        location /app/ {
            set $namespace      "shop";
            set $ingress_name   "tenants";
            set $service_name   "web";
            set $service_port   "http";
            if ($uri = /app/old) { return 301 /app/new; }
            proxy_pass http://upstream_balancer;
        }
        location / {
            set $namespace      "shop";
            set $ingress_name   "tenants";
            set $service_name   "web";
            set $service_port   "http";
            proxy_pass http://upstream_balancer;
        }
    }
    ## end server *.tenants.example.test
    # backend for when default-backend-service is not configured or it does not have endpoints
    server {
        listen 8181 default_server reuseport backlog=511;
        location / { return 404; }
    }
    server {
        listen 127.0.0.1:10246;
        location /healthz { return 200; }
    }
}
stream {
    server { listen 127.0.0.1:10247; content_by_lua_block { tcp_udp_configuration.call() } }
}
'''


def records() -> list:
    return nginxconf.routers(CONF)


def test_every_location_of_a_named_server_is_a_record_of_its_ingress_and_settings() -> None:
    by_name = {r.name: r for r in records()}
    assert sorted(by_name) == sorted([
        "server _ location /", "server _ location /healthz",
        'server shop.example.test location ~* ^/api(/|$)(.*)', "server shop.example.test location ~* ^/docs",
        "server shop.example.test location ~* ^/",
        r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location /status/",
        r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location = /status",
        r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location /app/",
        r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location /"])
    api = by_name["server shop.example.test location ~* ^/api(/|$)(.*)"]
    assert (api.ingress, api.service) == ("shop/api", "shop/api:web")
    assert api.settings == (("force_ssl_redirect", "false"), ("ssl_redirect", "true"),
                            ("proxy_set_header Host", "$best_http_host"), ("rewrite", "(?i)/api(/|$)(.*) /$2 break"),
                            ("proxy_pass", "http://upstream_balancer"))
    status = by_name[r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location = /status"]
    assert ("auth_basic", "Ops only") in status.settings and status.hosts[1] == "tenants.example.org"
    assert ("return", "301 /app/new") in by_name[r"server ~^(?<subdomain>[\w-]+)\.tenants\.example\.test$ location /app/"].settings
    assert by_name["server _ location /"].ingress == "" and by_name["server _ location /"].hosts == ("_",)


@pytest.mark.parametrize("host, target, taken", [
    ("shop.example.test", "/api/v1", "~* ^/api(/|$)(.*)"),  # regex locations in the order written
    ("SHOP.example.test", "/API", "~* ^/api(/|$)(.*)"),  # names and ~* both without case
    ("shop.example.test", "/docs/x", "~* ^/docs"),
    ("shop.example.test", "/other", "~* ^/"),
    ("shop.example.test", "/x/../api/seg?q=1", "~* ^/api(/|$)(.*)"),  # the normalised URI
    ("a.tenants.example.test", "/status", "= /status"),  # written after /status/, whose auto_redirect it wins over
    ("a.tenants.example.test", "/status/x", "/status/"),  # = is exact; /status/ is the longest prefix then
    ("a.tenants.example.test", "/statusx", "/"),
    ("a.tenants.example.test", "/app/x", "/app/"),
    ("a.tenants.example.test", "/app", "/app/"),  # proxied /app/ answers /app with its 301 (auto_redirect)
    ("tenants.example.org", "//app//x", "/app/"),  # the alias; slashes merged
    ("a.b.tenants.example.test", "/app/x", "/"),  # [\w-]+ is one label: the default server takes it
    ("unknown.test", "/", "/"),
])
def test_nginx_takes_the_server_then_the_location(host: str, target: str, taken: str) -> None:
    got = nginxconf.take(records(), "http", host, target)
    assert got is not None and got.rule == taken, (host, target, got)
    if host.startswith("a.b.") or host == "unknown.test":
        assert got.hosts == ("_",)


def test_describe_says_where_from_what_and_the_settings() -> None:
    api = next(r for r in records() if r.ingress == "shop/api")
    assert nginxconf.describe(api) == (
        "location ~* ^/api(/|$)(.*) of server shop.example.test; from Ingress shop/api to shop/api:web; "
        "force_ssl_redirect false; ssl_redirect true; proxy_set_header Host $best_http_host; rewrite (?i)/api(/|$)(.*) /$2 break")


@pytest.mark.parametrize("text, said", [
    ("http { server { listen 80; ", "the block server is never closed"),
    ("}", "a `}` without its block"),
    ("http { init_by_lua_block { x = 1 ", "a Lua block opened at offset"),
])
def test_what_is_not_nginx_configuration_is_named(text: str, said: str) -> None:
    with pytest.raises(DataPlaneError, match=said.replace("`", ".")):
        nginxconf.parse(text)


class Access:
    def __init__(self, result: ExecResult) -> None:
        self.result, self.calls = result, []  # type: ignore[var-annotated]

    def exec(self, container: str, command: list[str]) -> ExecResult:
        self.calls.append((container, command))
        return self.result

    def get(self, port: int, path: str, query: object = ()) -> Answer:
        raise AssertionError("read by exec")


def test_read_by_exec_of_cat_or_why_not() -> None:
    pod, container = {"metadata": {"namespace": "ingress", "name": "c"}}, {"name": "controller"}
    access = Access(ExecResult(0, CONF))
    got, unread = nginxconf.read_routers(access, pod, container)
    assert unread == "" and len(got) == 9 and access.calls == [("controller", ["cat", "/etc/nginx/nginx.conf"])]
    assert nginxconf.read_routers(Access(ExecResult(None, refused=403, error="forbidden")), pod, container)[1].startswith(
        "exec refused by the API server (403): forbidden; grant create on pods/exec in namespace ingress")
    assert nginxconf.read_routers(Access(ExecResult(0, "http {")), pod, container)[1] == "nginx.conf: the block http is never closed"
