"""verify_report over the Gateway API half of the status watch (report.py, timeline.py, report_html.py):
the gateways and routes checks against lab_expect (an expected failure asserted as that failure),
the summary's Gateway API table, and the Gateways' and routes' changes on the timeline."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.verdict import judge_blind, verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import subjects as sub
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers as w
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report import report
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import merge
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose_gateways import two_installs
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_status import ing
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_subjects import CONTROLLER, POD_A, POD_B, gw, route

T0 = dt.datetime(2026, 11, 21, 23, 40, 0, tzinfo=dt.timezone.utc)
PARENT = "traefik-a/traefik-gateway by " + CONTROLLER


def two_traefiks_status() -> dict[str, Any]:
    """ingress_status's result for traefik#13743: the Gateway's address alternates between two
    installs, and the route is refused by its listener."""
    t = Tracker(parse_options(10, 0, False, ["100.64.0.0/16"], False, True), T0)
    t.initial([ing("one", "100.64.0.0")])
    t.initial([gw("100.64.0.1")], sub.GATEWAY)
    t.initial([route([("traefik-gateway", True)])], sub.HTTPROUTE)
    t.event("MODIFIED", gw("100.64.0.2", rv=2), T0 + dt.timedelta(seconds=1), sub.GATEWAY)
    t.event("MODIFIED", gw("100.64.0.1", rv=3), T0 + dt.timedelta(seconds=2), sub.GATEWAY)
    t.event("MODIFIED", route([("traefik-gateway", False)], rv=4), T0 + dt.timedelta(seconds=3), sub.HTTPROUTE)
    w.attribute(t.timeline, [], w.Evidence(w.publishers_of(two_installs(selectors=False))))
    result = verdict(t)
    judge_blind(result, [], 10, T0)
    for kind in (sub.GATEWAY, sub.HTTPROUTE):
        judge_blind(result, [], 10, T0, kind)
    return result


def test_expected_gateway_and_route_failures_are_met_and_anything_else_is_not() -> None:
    status = two_traefiks_status()
    expect = validate_expect({"gateways": {"failing": {"traefik-a/traefik-gateway": r"2 changes .*100\.64\.0\.1 ↔ 100\.64\.0\.2"}},
                              "routes": {"failing": {"traefik-a/app": "NotAllowedByListeners"}}})
    verdicts = {(v.check, v.subject): v for v in evaluate({"status": status}, expect)}
    assert [k for k in verdicts if k[0] in ("gateways", "routes")] == [("gateways", "traefik-a/traefik-gateway"), ("routes", "traefik-a/app")]
    assert all(v.met for v in verdicts.values())
    assert verdicts[("routes", "traefik-a/app")].observed == (
        "fail: parent %s: 1 changes in 10s (max 0); not Accepted: Accepted=False (NotAllowedByListeners), written by traefik" % PARENT)
    unexpected = {(v.check, v.subject): v.met for v in evaluate({"status": status}, validate_expect({}))}
    assert unexpected[("gateways", "traefik-a/traefik-gateway")] is False and unexpected[("routes", "traefik-a/app")] is False
    missing = evaluate({"status": status}, validate_expect({"routes": {"failing": {"traefik-a/other": "x"}}}))
    assert [(v.observed, v.met) for v in missing if v.subject == "traefik-a/other"] == [
        ("fail: not observed (no such HTTPRoute watched)", False)]


def test_without_gateway_api_no_gateway_verdict_unless_lab_expect_names_one() -> None:
    status = {"ingresses": {"one/test": {"passed": True, "reason": "stable", "addresses_seen": [["100.64.0.0"]]}}, "timeline": []}
    assert {v.check for v in evaluate({"status": status}, validate_expect({}))} == {"addresses", "status"}
    [gateway] = [v for v in evaluate({"status": status}, validate_expect({"gateways": {"failing": {"a/b": "x"}}})) if v.check == "gateways"]
    assert (gateway.observed, gateway.met) == ("fail: no Gateway watched: the lab's namespaces hold no Gateway", False)
    # Issue 34: where the cluster does not serve Gateway API, the verdict says so, for each Gateway named
    # and, when lab_expect names none, once for the check.
    unserved = dict(status, unserved=["Gateway", "HTTPRoute"])
    verdicts = evaluate({"status": unserved}, validate_expect({"gateways": {"failing": {"a/b": "x"}}, "routes": {}}))
    assert [(v.check, v.subject, v.observed, v.met) for v in verdicts if v.check in ("gateways", "routes")] == [
        ("gateways", "a/b", "fail: no Gateway watched: the cluster does not serve Gateway API (its CRDs are not installed)", False),
        ("routes", "(could not run)", "fail: no HTTPRoute watched: the cluster does not serve Gateway API (its CRDs are not installed)",
         False)]


def test_the_summary_shows_gateways_and_routes_beside_ingresses_and_their_changes_on_the_timeline() -> None:
    status = two_traefiks_status()
    expect = validate_expect({"gateways": {"failing": {"traefik-a/traefik-gateway": "changes"}},
                              "routes": {"failing": {"traefik-a/app": "NotAllowedByListeners"}}})
    verdicts = evaluate({"status": status}, expect)
    text = markdown("two-traefik-gateway", "kind", verdicts, {"status": status})
    section = text[text.index("## Gateway API"):text.index("## Timeline")]
    assert ("| Gateway traefik-a/traefik-gateway | 100.64.0.1 → 100.64.0.2 | Accepted=True, Programmed=True, listener web: "
            "Accepted=True, listener web: Programmed=True, listener web: attachedRoutes=1 | 2 | %s, %s (traefik) | fail: 2 changes "
            "in 10s (max 0): 100.64.0.1 ↔ 100.64.0.2 |" % (POD_B, POD_A)) in section
    assert ("| HTTPRoute traefik-a/app, parent %s | - | Accepted=False (NotAllowedByListeners), ResolvedRefs=True | 1 | traefik | "
            "fail: parent %s: 1 changes in 10s (max 0); not Accepted: Accepted=False (NotAllowedByListeners), written by traefik |"
            % (PARENT, PARENT)) in section
    timeline = text[text.index("## Timeline"):]
    assert "### Gateway traefik-a/traefik-gateway" in timeline and "### HTTPRoute traefik-a/app" in timeline
    assert re.search(r"\| addresses 100\.64\.0\.1 -> 100\.64\.0\.2 \| written by %s \[by address\] \(traefik Update\) \|"
                     % re.escape(POD_B), timeline)
    assert ("**parent %s: Accepted=True -> Accepted=False (NotAllowedByListeners)** | written by one of %s, %s [undecided] "
            "(traefik Update)" % (PARENT, POD_A, POD_B)) in timeline
    axes = merge({"status": status}).axes
    assert sorted(axes) == ["Gateway traefik-a/traefik-gateway", "HTTPRoute traefik-a/app"]
    assert "PASS" in text.splitlines()[2]


def test_report_html_draws_a_gateway_api_section() -> None:
    status = two_traefiks_status()
    verdicts = evaluate({"status": status}, validate_expect({}))
    page = render(report("two-traefik-gateway", "kind", verdicts, {"status": status}))
    assert '<h2 id="gateway-api">Gateway API</h2>' in page
    assert 'id="gateway-traefik-a-traefik-gateway"' in page and 'id="httproute-traefik-a-app"' in page
    assert page.count('data-ingress="Gateway ') == 0  # not drawn as an Ingress
    assert "Accepted=False (NotAllowedByListeners)" in page and POD_B in page


def test_gateways_expected_where_the_watch_served_the_kind_but_saw_none_are_unmet() -> None:
    """Issue 34 on kind's shared cluster: the CRDs an earlier scenario applied stay, the lab created no Gateway."""
    status = {"ingresses": {}, "timeline": [], "gateways": {}, "routes": {}, "unserved": []}
    verdicts = evaluate({"status": status}, validate_expect({"gateways": {}}))
    assert [(v.check, v.subject, v.observed, v.met) for v in verdicts if v.check in ("gateways", "routes")] == [
        ("gateways", "(could not run)", "fail: no Gateway watched: the lab's namespaces hold no Gateway", False)]
