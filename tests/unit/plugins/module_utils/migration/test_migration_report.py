from __future__ import annotations

from typing import Any

import pytest
from test_migration_compare import run

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render

GOOD = {"baseline": {"name": "nginx", "namespace": "ingress-nginx"}, "targets": [{"name": "traefik", "namespace": "traefik"}]}


def result(expected: list | None = None) -> dict:
    comparison, verdict = run(expected)
    return {"changed": False, "passed": verdict["passed"], "verdict": verdict, "comparison": comparison,
            "baseline": {"name": "nginx", "at": "Service ingress-nginx/x at 192.0.2.1:80", "not_faithful": {}},
            "targets": {"traefik": "Service traefik/traefik at 192.0.2.2:80"}, "requests_sent": 60, "samples": 2,
            "seconds": {"corpus": 0.01, "replay": 1.0, "total": 1.2}, "corpus": []}


@pytest.mark.parametrize("body, message", [
    ([], r"lab_expect.migration: expected a mapping with baseline and targets"),
    ({"baseline": {"name": "nginx"}, "targets": GOOD["targets"]}, r"lab_expect.migration.baseline: expected exactly one of namespace, gateway, address"),
    ({"baseline": GOOD["baseline"], "targets": []}, r"lab_expect.migration.targets: expected a non-empty list"),
    ({**GOOD, "targets": [{"name": "nginx", "namespace": "x"}]}, r"names unique"),
    ({**GOOD, "targets": [{"name": "t", "address": "100.64.0.300"}]}, r"targets\[0\]\.address: expected an IP address"),
    ({**GOOD, "expected": [{"feild": "status"}]}, r"lab_expect.migration.expected\[0\]: expected only the keys"),
    ({**GOOD, "expected": [{"field": "("}]}, r"lab_expect.migration.expected\[0\]\.field: '\(' is not a valid regular expression"),
    ({**GOOD, "samples": 0}, r"lab_expect.migration.samples: expected a whole number of at least 1"),
    ({**GOOD, "extra": 1}, r"lab_expect.migration: expected only the keys"),
    ({**GOOD, "fix": "yes"}, r"lab_expect.migration.fix: expected true or false, got 'yes'"),
])
def test_malformed_migration_expectations_name_the_field(body: Any, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        validate_expect({"migration": body})


def test_verdicts_per_target_and_ingress_and_for_unseen_expectations() -> None:
    verdicts = evaluate({"migration": result()}, {"migration": GOOD})
    subjects = {v.subject: v for v in verdicts if v.check == "migration"}
    assert subjects["baseline nginx"].met
    assert not subjects["traefik: shop/api"].met and "unexpected" in subjects["traefik: shop/api"].observed
    assert not subjects["traefik: every request"].met
    expected = [{"ingress": "^shop/"}, {"kind": "^everywhere$"}, {"ingress": "shop/none"}]
    verdicts = evaluate({"migration": result(expected)}, {"migration": dict(GOOD, expected=expected)})
    subjects = {v.subject: v for v in verdicts if v.check == "migration"}
    assert subjects["traefik: shop/api"].met and subjects["traefik: every request"].met
    assert [v.observed for v in verdicts if v.subject == "expected difference"] == ["fail: not seen"]


def test_a_rehearsal_that_could_not_run_is_one_unmet_verdict_and_the_report_is_written() -> None:
    failed = {"failed": True, "msg": "targets[0].namespace: expected exactly one LoadBalancer Service in namespace traefik"}
    verdicts = evaluate({"migration": failed}, {"migration": GOOD})
    assert [(v.subject, v.met) for v in verdicts] == [("rehearsal", False)]
    assert "LoadBalancer Service in namespace traefik" in verdicts[0].observed
    assert "Could not run: targets[0].namespace" in markdown("s", "kind", verdicts, {"migration": failed})
    # expected but absent from the results (the task never ran): unmet too
    assert [v.subject for v in evaluate({}, {"migration": GOOD})] == ["rehearsal"]


def test_summary_and_html_show_the_differences_with_causes_and_curl() -> None:
    res = result()
    verdicts = evaluate({"migration": res}, {"migration": GOOD})
    md = markdown("migration", "kind", verdicts, {"migration": res})
    assert "## Migration rehearsal" in md
    assert "| traefik | shop/api | `GET /API/V0` (case) | backend shop/api; path /API/V0; status 200 | backend -; path -; status 404 |" in md
    assert "curl -sS -i --path-as-is" in md
    page = render({"scenario": "migration", "backend": "kind", "verdicts": [], "results": {"migration": res}})
    assert 'id="migration-differences"' in page and "ingress-nginx matches regex paths case-insensitively" in page


def test_the_answer_comes_first_one_line_per_behaviour_with_its_requests_and_a_curl_pair() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import behaviours

    res = result()
    found = behaviours(res)["traefik"]
    differing = [r for r in res["comparison"]["targets"]["traefik"]["rows"] if r["differences"]]
    # every request that differs is in exactly one behaviour, each cause once, most requests first
    assert sum(b["requests"] for b in found) == len(differing) == res["comparison"]["targets"]["traefik"]["counts"]["differ"]
    assert len({(b["responsible"], b["cause"]) for b in found}) == len(found)
    assert [b["requests"] for b in found] == sorted((b["requests"] for b in found), reverse=True)
    case = next(b for b in found if "case-insensitively" in b["cause"])
    assert case["ingresses"] == ["shop/api"] and case["curl"][0].startswith("curl ") and "192.0.2.2" in case["curl"][1]
    md = markdown("migration", "kind", evaluate({"migration": res}, {"migration": GOOD}), {"migration": res})
    answer, checks, table = md.index("## What changes if you switch"), md.index("| check | subject"), md.index("## Migration rehearsal")
    assert answer < checks < table
    assert "**traefik**: %d of the" % len(differing) in md and "%d behaviour(s) to change or accept" % len(found) in md
    page = render({"scenario": "migration", "backend": "kind", "verdicts": [], "results": {"migration": res}})
    assert page.index('id="migration-answer"') < page.index('id="verdicts"') < page.index('id="migration-differences"')


def test_a_gateway_targets_own_findings_are_its_findings_not_a_failure_of_the_rehearsal() -> None:
    """Seen on kind: the translated HTTPRoutes of a default backend tie on Traefik, and a route names a listener the
    translated Gateway lacks; in a rehearsal these are findings of the gateway-api target, listed at the top."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import findings_by_target, target_findings
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Verdict

    tie = Verdict("conflicts", "shop/a vs shop/b", "no conflict",
                  "HTTPRoutes shop/a and shop/b both route x.test PathPrefix / on Gateway shop/nginx listener x", False)
    other = Verdict("conflicts", "shop/c vs shop/d", "no conflict", "Ingresses shop/c and shop/d both route y.test /", False)
    elsewhere = Verdict("routes", "shop/e", "pass", "fail: parent shop/nginx-2/http by t: not Accepted", False)
    targets = [{"name": "traefik-nginx-provider", "namespace": "rehearse-traefik"}, {"name": "gateway-api", "gateway": "shop/nginx"}]
    out = target_findings([tie, other, elsewhere], targets)
    assert [v.met for v in out] == [True, False, False]
    assert out[0].observed.startswith("finding of gateway-api: HTTPRoutes shop/a and shop/b")
    assert findings_by_target([(v.check, v.subject, v.observed) for v in out]) == {
        "gateway-api": ["conflicts shop/a vs shop/b: HTTPRoutes shop/a and shop/b both route x.test PathPrefix / on Gateway "
                        "shop/nginx listener x"]}
    # the report: a rehearsal whose target traefik serves Gateway shop/nginx says its finding at the top, and passes
    res = result()
    expect = {"migration": {"baseline": GOOD["baseline"], "targets": [{"name": "traefik", "gateway": "shop/nginx"}],
                            "report_only": True}}
    verdicts = evaluate({"migration": res, "conflicts": {"conflicts": []}}, expect)
    verdicts = target_findings(verdicts + [tie], expect["migration"]["targets"])
    assert all(v.met for v in verdicts)
    md = markdown("migration", "kind", verdicts, {"migration": res})
    assert md.index("- a finding of traefik's own objects: conflicts shop/a vs shop/b") < md.index("| check | subject")
    assert "0 unmet: **PASS**" in md


def test_the_answer_says_per_target_how_many_behaviours_a_proven_fix_keeps_and_why_the_others_remain() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import behaviours

    res = result()
    found = behaviours(res)["traefik"]
    closed, impossible = found[0], found[1]
    res["fixes"] = {"traefik": {"kept": 1, "remain": 1, "migrated": ["x.yaml"], "attempts": [
        {"responsible": closed["responsible"], "cause": closed["cause"], "outcome": "closed", "says": "edit the route",
         "objects": ["HTTPRoute shop/api"], "curl": closed["curl"]},
        {"responsible": impossible["responsible"], "cause": impossible["cause"], "outcome": "no setting of the target reproduces it",
         "says": "none", "why": "RE2 has no lookahead"}]}}
    md = markdown("migration", "kind", evaluate({"migration": res}, {"migration": GOOD}), {"migration": res})
    first = md[md.index("## What changes if you switch"):md.index("| check | subject")]
    assert ("Fixes proven in the rehearsal cluster: 1 of the 2 behaviour(s) kept by a proven fix (the migrated manifests: "
            "migrated/traefik/); 1 remain: 1 no setting of the target reproduces it.") in first
    assert "   - fix proven: edit the route (HTTPRoute shop/api)" in first and "   - no fix: RE2 has no lookahead" in first
    page = render({"scenario": "migration", "backend": "kind", "verdicts": [], "results": {"migration": res}})
    assert '<p class="fixes">Fixes proven in the rehearsal cluster: 1 of the 2' in page
    assert '<em class="fix">fix proven: edit the route (HTTPRoute shop/api)</em>' in page
    # one without a fix of its own that a later fix settled: said so, and what it was when tried
    res["fixes"]["traefik"]["attempts"][1].update(outcome="closed by a later fix", says="edit the route",
                                                  before_it="no fix known when it was tried")
    res["fixes"]["traefik"].update(kept=2, remain=0)
    md = markdown("migration", "kind", evaluate({"migration": res}, {"migration": GOOD}), {"migration": res})
    assert "   - closed by a later fix (no fix known when it was tried): edit the route" in md
    assert "2 of the 2 behaviour(s) kept by a proven fix (the migrated manifests: migrated/traefik/); 0 remain." in md
    # without fixes tried, nothing is said of them
    assert "Fixes" not in markdown("migration", "kind", [], {"migration": result()})


def test_requests_tied_routers_take_are_a_risk_in_the_answer_even_where_they_answered_the_same() -> None:
    """Two routers of one rule at one priority (a canary on Traefik's Ingress provider): which one Traefik tries first
    is not defined, so a request answered the same there was chance. The answer says so per group of routers, and
    whether the proven fixes left one router taking each request."""
    from test_migration_compare import INGS, TARGET

    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import Plane
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import generate
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.ingress_migration import mark_ties
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import ties

    res = result()
    rule = "Host(`d.test`) && PathPrefix(`/docs/`)"
    routers = (Router("shop-docs-canary@kubernetes", rule, priority=40, service="shop-docs-canary-80"),
               Router("shop-docs@kubernetes", rule, priority=40, service="shop-docs-80"),
               Router("shop-api@kubernetes", "Host(`q.test`) && PathPrefix(`/api`)", priority=30, service="shop-api-80"))
    body = res["comparison"]["targets"]["traefik"]
    mark_ties(body, Plane("traefik", TARGET, None, routers, controller_type("traefik").dataplane), generate(INGS))
    docs = [r for r in body["rows"] if r["tied"]]
    # every request of /docs/ the rule matches (a dot-segment one too, as Traefik cleans the path), none of api's
    assert {r["ingress"] for r in docs} == {"shop/docs"} and {"/docs/", "/kindlab-sub/../docs/"} <= {r["target"] for r in docs}
    assert all(r["tied"] == ["shop-docs-canary@kubernetes", "shop-docs@kubernetes"] for r in docs)
    assert not any(r["tied"] for r in body["rows"] if r["ingress"] == "shop/api")
    group, = ties(res)["traefik"]
    assert group["requests"] == len(docs) and group["ingresses"] == ["shop/docs"]
    assert sum(group["outcomes"].values()) == len(docs)
    md = markdown("migration", "kind", [], {"migration": res})
    first = md[md.index("## What changes if you switch"):]
    assert ("- a risk: %d request(s) of shop/docs are taken by one of the routers shop-docs-canary@kubernetes, "
            "shop-docs@kubernetes, tied at one priority in traefik's own account" % len(docs)) in first
    assert "is chance, not a kept behaviour" in first and "after the proven fixes" not in first
    # the fixes proven: whether one router now takes each of them
    res["fixes"] = {"traefik": {"kept": 0, "remain": 0, "attempts": [], "still_tied": [docs[0]["id"]]}}
    assert "; after the proven fixes 1 of them still are" in markdown("migration", "kind", [], {"migration": res})
    res["fixes"]["traefik"]["still_tied"] = []
    assert "; after the proven fixes one router takes each of them" in markdown("migration", "kind", [], {"migration": res})
    page = render({"scenario": "migration", "backend": "kind", "verdicts": [], "results": {"migration": res}})
    assert "<li>a risk: %d request(s) of shop/docs are taken by one of the routers" % len(docs) in page
