"""The curl lines the lab prints and runs, pinned byte for byte as they were before the one curl-line builder
(plugins/module_utils/transport/curl.py) replaced the two before it (migration/compare.py's `curl`, verify/probe.py's
`_curl_options`): the rehearsal's curl pairs (one per request kind, on default and other ports, with a header, a body,
a repeat, odd characters to quote) and the argv http_probe runs in a kind node, one request or the continuous loop."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import curl
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request, generate
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import node_continuous
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import parse_spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import build_target

from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.migration.migration_fixtures import ingress


def corpus() -> list[Request]:
    """One request of each kind these two Ingresses make, and two requests of a scenario's own."""
    ings = [ingress("api", "q.test", [("/api/v[0-9]+", "ImplementationSpecific")],
                    {"use-regex": "true", "enable-cors": "true", "proxy-body-size": "1k", "limit-rps": "5"}),
            ingress("docs", "d.test", [("/docs/", "Prefix")],
                    {"canary": "true", "canary-by-header": "X-Canary", "canary-weight": "30"})]
    ings[1]["spec"]["tls"] = [{"hosts": ["d.test"], "secretName": "d"}]
    kinds: dict[str, Request] = {}
    for r in generate(ings):
        kinds.setdefault(r.kind, r)
    return list(kinds.values()) + [
        Request(id="x", ingress="shop/x", host="we'ird.test", target="/a b/$(x)?q='1'&r=\"2\"", kind="scenario",
                rule="(scenario)", method="PUT", headers=(("X-Odd", "a'b c"), ("Cookie", "k=v; j=w")), body_size=3),
        Request(id="y", ingress="shop/x", host="t.test", target="/t", kind="tls", rule="/t (Prefix)", scheme="https", repeat=3,
                method="HEAD")]


REHEARSAL_LINES = [
    ('path',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0"),
    ('sub-path',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0/kindlab-sub"),
    ('slash',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0/"),
    ('case',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/API/V0"),
    ('neighbour',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0x"),
    ('dot-segment',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/kindlab-sub/../api/v0"),
    ('double-slash',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80//api/v0"),
    ('query',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' 'http://192.0.2.1:80/api/v0?kindlab=1'"),
    ('regex-prefix',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0-kindlab-sub"),
    ('preflight',
     "curl -sS -i --path-as-is -X OPTIONS -H 'Host: q.test' -H 'Origin: https://origin.kindlab.test' -H "
     "'Access-Control-Request-Method: PUT' -H 'Access-Control-Request-Headers: X-Kindlab' http://192.0.2.1:80/api/v0"),
    ('cors',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' -H 'Origin: https://origin.kindlab.test' "
     'http://192.0.2.1:80/api/v0'),
    ('body-size',
     "curl -sS -i --path-as-is -X POST -H 'Host: q.test' --data-binary @<(head -c 2048 /dev/zero) "
     'http://192.0.2.1:80/api/v0'),
    ('burst',
     "for i in $(seq 40); do curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.1:80/api/v0 -o "
     "/dev/null -w '%{http_code}\\n'; done | sort | uniq -c"),
    ('tls',
     "curl -sS -i --path-as-is -X GET -H 'Host: d.test' -k --connect-to d.test:443:192.0.2.1:443 "
     'https://d.test:443/docs/'),
    ('canary-header',
     "curl -sS -i --path-as-is -X GET -H 'Host: d.test' -H 'X-Canary: always' http://192.0.2.1:80/docs/"),
    ('canary-weight',
     "for i in $(seq 20); do curl -sS -i --path-as-is -X GET -H 'Host: d.test' http://192.0.2.1:80/docs/ -o /dev/null "
     "-w '%{http_code}\\n'; done | sort | uniq -c"),
    ('scenario',
     'curl -sS -i --path-as-is -X PUT -H \'Host: we\'"\'"\'ird.test\' -H \'X-Odd: a\'"\'"\'b c\' -H \'Cookie: k=v; j=w\' '
     '--data-binary @<(head -c 3 /dev/zero) \'http://192.0.2.1:80/a b/$(x)?q=\'"\'"\'1\'"\'"\'&r="2"\''),
    ('tls',
     "for i in $(seq 3); do curl -sS -i --path-as-is -X HEAD -H 'Host: t.test' -k --connect-to "
     "t.test:443:192.0.2.1:443 https://t.test:443/t -o /dev/null -w '%{http_code}\\n'; done | sort | uniq -c"),
    ('path',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0"),
    ('sub-path',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0/kindlab-sub"),
    ('slash',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0/"),
    ('case',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/API/V0"),
    ('neighbour',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0x"),
    ('dot-segment',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/kindlab-sub/../api/v0"),
    ('double-slash',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080//api/v0"),
    ('query',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' 'http://192.0.2.7:8080/api/v0?kindlab=1'"),
    ('regex-prefix',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0-kindlab-sub"),
    ('preflight',
     "curl -sS -i --path-as-is -X OPTIONS -H 'Host: q.test' -H 'Origin: https://origin.kindlab.test' -H "
     "'Access-Control-Request-Method: PUT' -H 'Access-Control-Request-Headers: X-Kindlab' http://192.0.2.7:8080/api/v0"),
    ('cors',
     "curl -sS -i --path-as-is -X GET -H 'Host: q.test' -H 'Origin: https://origin.kindlab.test' "
     'http://192.0.2.7:8080/api/v0'),
    ('body-size',
     "curl -sS -i --path-as-is -X POST -H 'Host: q.test' --data-binary @<(head -c 2048 /dev/zero) "
     'http://192.0.2.7:8080/api/v0'),
    ('burst',
     "for i in $(seq 40); do curl -sS -i --path-as-is -X GET -H 'Host: q.test' http://192.0.2.7:8080/api/v0 -o "
     "/dev/null -w '%{http_code}\\n'; done | sort | uniq -c"),
    ('tls',
     "curl -sS -i --path-as-is -X GET -H 'Host: d.test' -k --connect-to d.test:8443:192.0.2.7:8443 "
     'https://d.test:8443/docs/'),
    ('canary-header',
     "curl -sS -i --path-as-is -X GET -H 'Host: d.test' -H 'X-Canary: always' http://192.0.2.7:8080/docs/"),
    ('canary-weight',
     "for i in $(seq 20); do curl -sS -i --path-as-is -X GET -H 'Host: d.test' http://192.0.2.7:8080/docs/ -o "
     "/dev/null -w '%{http_code}\\n'; done | sort | uniq -c"),
    ('scenario',
     'curl -sS -i --path-as-is -X PUT -H \'Host: we\'"\'"\'ird.test\' -H \'X-Odd: a\'"\'"\'b c\' -H \'Cookie: k=v; j=w\' '
     '--data-binary @<(head -c 3 /dev/zero) \'http://192.0.2.7:8080/a b/$(x)?q=\'"\'"\'1\'"\'"\'&r="2"\''),
    ('tls',
     "for i in $(seq 3); do curl -sS -i --path-as-is -X HEAD -H 'Host: t.test' -k --connect-to "
     "t.test:8443:192.0.2.7:8443 https://t.test:8443/t -o /dev/null -w '%{http_code}\\n'; done | sort | uniq -c"),
]


def test_the_rehearsals_curl_lines_are_as_they_were() -> None:
    got = [(r.kind, curl(r, a)) for a in (Address("192.0.2.1"), Address("192.0.2.7", 8080, 8443)) for r in corpus()]
    assert got == REHEARSAL_LINES


def probe_argv(params: dict[str, Any], address: str | None, host: str | None) -> list[str]:
    spec = parse_spec(params)
    return NodeTransport(never, "/usr/bin/docker", "lab-control-plane").argv(build_target(spec, address, host).request)


def never(argv: list[str]) -> tuple[int, str, str]:
    raise AssertionError("nothing runs: %s" % argv)


def loop_argv(params: dict[str, Any], addresses: list[str], host: str | None) -> list[str]:
    """What follows `docker exec NODE bash -c LOOP` when http_probe's continuous window runs in a node: the
    loop's arguments and curl's options."""
    argvs: list[list[str]] = []

    def run(argv: list[str]) -> tuple[int, str, str]:
        argvs.append(argv)
        return 1, "", "not run"

    spec = parse_spec(params)
    node_continuous(spec, NodeTransport(run, "docker", "n"), (lambda: (addresses, host)) if spec.ingresses else None)
    assert len(argvs) == 1 and argvs[0][:5] == ["docker", "exec", "n", "bash", "-c"]
    return argvs[0][6:]


MARK = "\n__kindlab_probe_status__:%{http_code}"


NODE = ["/usr/bin/docker", "exec", "lab-control-plane", "curl"]
OUT = ["-sS", "-o", "-", "-w", MARK, "--max-time"]


@pytest.mark.parametrize("params, address, host, argv", [
    ({"url": "http://100.64.0.0/x?y=1", "connect_to": ["100.64.0.0:80:127.0.0.1:9"], "timeout": 2}, None, None,
     NODE + OUT + ["2", "-H", "Host: 100.64.0.0", "-X", "GET", "--connect-to", "100.64.0.0:80:127.0.0.1:9",
                   "http://100.64.0.0/x?y=1"]),
    ({"url": "https://shop.example:8443/cart", "method": "HEAD", "timeout": 2.5, "host": "a.example",
      "connect_to": ["[fc00::1]:80:[::1]:8080", "::127.0.0.1:9000"]}, None, None,
     NODE + OUT + ["2.5", "-H", "Host: a.example", "--head", "-k", "--connect-to", "[fc00::1]:80:[::1]:8080",
                   "--connect-to", "::127.0.0.1:9000", "https://shop.example:8443/cart"]),
    ({"ingress": "one/test", "port": 8080, "path": "/api", "method": "post", "scheme": "https"}, "100.64.0.3", "shop.example.com",
     NODE + OUT + ["10", "-H", "Host: shop.example.com", "-X", "POST", "-k", "https://100.64.0.3:8080/api"]),
    ({"ingress": "one/test"}, "fc00::5", None,
     NODE + OUT + ["10", "-H", "Host: [fc00::5]", "-X", "GET", "http://[fc00::5]/"]),
])
def test_the_probes_curl_in_a_node_is_as_it_was(params: dict[str, Any], address: str | None, host: str | None,
                                                argv: list[str]) -> None:
    assert probe_argv(params, address, host) == argv


def test_the_continuous_probes_loop_in_a_node_is_as_it_was() -> None:
    params = {"ingress": "one/test", "rate": 20, "duration": 60, "connect_to": ["100.64.0.0:80:127.0.0.1:9"], "timeout": 2}
    assert loop_argv(params, ["100.64.0.0", "100.64.0.1"], "app.example") == (
        ["kindlab-probe", "1200", "50000", "2", "http://100.64.0.0/", "http://100.64.0.1/"]
        + OUT + ["2", "-H", "Host: app.example", "-X", "GET", "--connect-to", "100.64.0.0:80:127.0.0.1:9"])
    assert loop_argv({"url": "https://x.example/", "rate": 7, "duration": 3}, [], None) == (
        ["kindlab-probe", "21", "142857", "1", "https://x.example/"] + OUT + ["10", "-H", "Host: x.example", "-X", "GET", "-k"])


def test_a_data_plane_at_an_ipv6_address_is_written_in_brackets() -> None:
    """The one line that differs from before the one builder: a data plane at an IPv6 address. The URL and the
    connect-to entry were written without brackets, which curl refuses (exit 3: bad URL; exit 49: no valid port
    in the connect-to string); the builder writes IPv6 hosts in brackets, as the probe's entries always were."""
    address = Address("fd00::5")
    plain = Request(id="a", ingress="s/a", host="q.test", target="/x", kind="path", rule="r")
    tls = Request(id="b", ingress="s/a", host="q.test", target="/x", kind="tls", rule="r", scheme="https")
    assert curl(plain, address) == "curl -sS -i --path-as-is -X GET -H 'Host: q.test' 'http://[fd00::5]:80/x'"
    assert curl(tls, address) == ("curl -sS -i --path-as-is -X GET -H 'Host: q.test' -k --connect-to "
                                  "'q.test:443:[fd00::5]:443' https://q.test:443/x")
