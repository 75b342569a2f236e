# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdicts of the verify window's timed actions (lab_actions' result), of the data planes
read through the window (ingress_dataplane's, stale addresses told apart when a rollout replaced
those pods), and the reachability results merged from the one-shot and the continuous probes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.dataplane import dataplane_outcomes, rollout_pods
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.reachability import probe_runs
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import VerifyError, ingress_references, validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[5]
POD = "one/ingress-ingress-nginx-controller-7d4b9c6f8-k2x9z"


def action(name: str, ok: bool, kind: str = "rollout", **extra: Any) -> Obj:
    return dict({"name": name, "kind": kind, "ok": ok, "error": None if ok else "Deployment one/gone not found",
                 "detail": "pod IPs 10.244.1.5 -> 10.244.2.7" if ok else ""}, **extra)


ACTIONS = {"actions": [
    action("ingress-nginx stops syncing", True, "freeze_sync"),
    action("the shop ships", True, before=["10.244.1.5", "10.244.1.6"], after=["10.244.2.7", "10.244.2.8"]),
    action("a rollout of nothing", False),
], "failed_actions": 1}


def verdicts(results: Obj, expect: Obj, check: str) -> list[tuple[str, str, str, bool]]:
    return [(v.subject, v.expected, v.observed, v.met) for v in evaluate(results, expect) if v.check == check]


# ---------------------------------------------------------------- actions


def test_every_action_must_work_unless_expected_to_fail() -> None:
    assert verdicts({"actions": ACTIONS}, {}, "actions") == [
        ("ingress-nginx stops syncing", "pass", "pass: pod IPs 10.244.1.5 -> 10.244.2.7", True),
        ("the shop ships", "pass", "pass: pod IPs 10.244.1.5 -> 10.244.2.7", True),
        ("a rollout of nothing", "pass", "fail: Deployment one/gone not found", False),
    ]


def test_an_action_expected_to_fail_is_met_only_by_that_failure() -> None:
    expect = {"actions": {"failing": {"a rollout of nothing": "not found"}}}
    assert verdicts({"actions": ACTIONS}, expect, "actions")[2] == (
        "a rollout of nothing", "fail: not found", "fail: Deployment one/gone not found", True)
    wrong_reason = {"actions": {"failing": {"a rollout of nothing": "timed out"}}}
    assert verdicts({"actions": ACTIONS}, wrong_reason, "actions")[2][3] is False
    passed_instead = {"actions": {"failing": {"the shop ships": "."}}}
    assert verdicts({"actions": ACTIONS}, passed_instead, "actions")[1] == (
        "the shop ships", "fail: .", "pass: pod IPs 10.244.1.5 -> 10.244.2.7", False)


def test_an_action_expected_to_fail_that_did_not_run_is_unmet() -> None:
    """A typo in lab_expect.actions.failing must not pass silently."""
    expect = {"actions": {"failing": {"the shop shipz": "."}}}
    assert verdicts({"actions": ACTIONS}, expect, "actions")[-1] == (
        "the shop shipz", "fail: .", "fail: not observed (no such action ran)", False)


def test_an_action_without_detail_says_done_and_no_actions_no_verdicts() -> None:
    assert verdicts({"actions": {"actions": [action("x", True, detail="")]}}, {}, "actions") == [("x", "pass", "pass: done", True)]
    assert verdicts({"actions": {}}, {}, "actions") == []


def test_rollout_pods_maps_each_replaced_address_to_its_rollout() -> None:
    assert rollout_pods(ACTIONS) == {"10.244.1.5": ("the shop ships", ["10.244.1.5", "10.244.1.6"]),
                                     "10.244.1.6": ("the shop ships", ["10.244.1.5", "10.244.1.6"])}
    failed = {"actions": [action("ship", False, before=["10.244.1.5"])]}
    scale = {"actions": [action("scale", True, kind="scale", before=["10.244.1.5"])]}
    assert rollout_pods(failed) == {} and rollout_pods(scale) == {} and rollout_pods({}) == {}


# ---------------------------------------------------------------- dataplane


def dataplane(*findings: Obj, converged: float | None = None) -> Obj:
    out: Obj = {"passed": not findings, "findings": list(findings),
                "pods": {POD: {"backends": [{"ingress": "one/shop"}, {"ingress": "one/cart"}]}}}
    if converged is not None:
        out["converged_after"] = converged
    return out


STALE = {"kind": "stale", "pod": POD, "ingress": "one/shop", "address": "10.244.1.5:80", "since": "2026-11-26T12:00:11Z"}
MISSING = {"kind": "missing", "pod": POD, "ingress": "one/shop", "address": "10.244.2.7:80"}


def test_a_stale_address_of_a_pod_a_rollout_replaced_is_named_so() -> None:
    outcomes = dataplane_outcomes(dataplane(STALE, MISSING), ACTIONS)
    assert outcomes["one/shop"] == (False, "missing in %s: 10.244.2.7:80; stale in %s: 10.244.1.5:80 (a pod replaced by the shop "
                                           "ships) (last seen ready 2026-11-26T12:00:11Z)" % (POD, POD))
    assert outcomes["one/cart"] == (True, "every replica routes to the ready endpoints")
    # without a rollout that had those pods, stale is only stale
    other = dict(STALE, address="10.244.9.9:80", since=None)
    assert dataplane_outcomes(dataplane(other), ACTIONS)["one/shop"] == (False, "stale in %s: 10.244.9.9:80" % POD)
    assert dataplane_outcomes(dataplane(STALE), {})["one/shop"][1] == "stale in %s: 10.244.1.5:80 (last seen ready %s)" % (
        POD, STALE["since"])


def test_a_stale_ipv6_address_is_matched_without_its_brackets() -> None:
    """ingress_dataplane writes an IPv6 target as [address]:port; pod IPs have no brackets."""
    actions = {"actions": [action("the shop ships", True, before=["fd00:10:244::5"])]}
    stale = dict(STALE, address="[fd00:10:244::5]:80", since=None)
    assert dataplane_outcomes(dataplane(stale), actions)["one/shop"] == (
        False, "stale in %s: [fd00:10:244::5]:80 (a pod replaced by the shop ships)" % POD)


def test_the_pass_text_says_how_long_after_the_last_action_the_data_planes_converged() -> None:
    timeline = [
        {"time": "2026-11-26T12:00:21.000Z", "ingress": "one/shop", "finding": "stale", "addresses": ["10.244.1.5:80"]},
        {"time": "2026-11-26T12:00:40.000Z", "ingress": "one/shop", "finding": "converged", "addresses": ["10.244.2.7:80"]},
    ]
    actions = {"actions": [
        dict(action("the shop ships", True), started="2026-11-26T12:00:20.000Z"),
        dict(action("the on-call restarts ingress-nginx", True, "restart_controller"), started="2026-11-26T12:00:34.500Z"),
        # started after the data planes converged: not what they followed
        dict(action("too late", True, "scale"), started="2026-11-26T12:00:50.000Z"),
    ]}
    result = dict(dataplane(), timeline=timeline)
    assert dataplane_outcomes(result, actions) == {
        "one/shop": (True, "every replica routes to the ready endpoints "
                           "(diverged, then converged 5.5 s after 'the on-call restarts ingress-nginx' started)"),
        # never diverged: nothing to time
        "one/cart": (True, "every replica routes to the ready endpoints")}
    assert dataplane_outcomes(result, {})["one/shop"] == (
        True, "every replica routes to the ready endpoints (diverged, then converged at 2026-11-26T12:00:40.000Z)")


def test_unread_findings_name_their_ingresses_and_why() -> None:
    unread = {"kind": "unread", "pod": "", "ingresses": ["two/web"], "reason": "no controller found in the cluster serves it"}
    assert dataplane_outcomes(dataplane(unread), {})["two/web"] == (
        False, "unread in no pod: no controller found in the cluster serves it")


def test_dataplane_verdicts_pass_fail_and_expected_failures() -> None:
    results = {"dataplane": dataplane(STALE), "actions": ACTIONS}
    assert verdicts(results, {}, "dataplane") == [
        ("one/cart", "pass", "pass: every replica routes to the ready endpoints", True),
        ("one/shop", "pass", "fail: stale in %s: 10.244.1.5:80 (a pod replaced by the shop ships) (last seen ready %s)" % (
            POD, STALE["since"]), False)]
    expect = {"dataplane": {"failing": {"one/shop": "replaced by the shop ships"}}}
    assert [v[3] for v in verdicts(results, expect, "dataplane")] == [True, True]
    wrong = {"dataplane": {"failing": {"one/shop": "missing in"}}}
    assert [v[3] for v in verdicts(results, wrong, "dataplane")] == [True, False]
    converged = {"dataplane": dataplane(), "actions": ACTIONS}
    assert [v[3] for v in verdicts(converged, expect, "dataplane")] == [True, False]  # expected to diverge, converged
    assert verdicts({"dataplane": {}}, {}, "dataplane") == []


def test_the_stale_endpoints_scenario_expectation_matches_what_the_report_writes() -> None:
    scenario = yaml.safe_load((ROOT / "scenarios/stale-endpoints.yml").read_text())
    actions = {"actions": [action(scenario["lab_actions"][1]["name"], True, before=["10.244.1.5", "10.244.1.6"])]}
    results = {"dataplane": dataplane(STALE, MISSING), "actions": actions}
    (shop,) = [v for v in verdicts(results, scenario["lab_expect"], "dataplane") if v[0] == "one/shop"]
    assert shop[3], shop


def test_expectations_for_actions_and_dataplane_are_validated() -> None:
    expect = {"actions": {"failing": {"ship": "not found"}}, "dataplane": {"failing": {"one/shop": "stale"}, "interval": 1}}
    assert validate_expect(expect) == expect
    assert ("lab_expect.dataplane.failing[one/shop]", "one/shop") in ingress_references(expect)
    with pytest.raises(VerifyError, match=r"lab_expect\.actions: expected only the keys failing, got \['expected'\]"):
        validate_expect({"actions": {"expected": {}}})
    with pytest.raises(VerifyError, match=r"lab_expect\.dataplane\.failing\[one/shop\]: '\(' is not a valid regular expression"):
        validate_expect({"dataplane": {"failing": {"one/shop": "("}}})


# ---------------------------------------------------------------- one-shot and continuous probes


def test_probe_runs_take_the_continuous_result_where_the_one_shot_was_skipped() -> None:
    one_shot = [{"passed": True, "reason": ""}, {"skipped": True}, {"skipped": True}, {"skipped": True}]
    continuous = [{"skipped": True}, {"passed": False, "reason": "12 of 300 requests failed"}, {"skipped": True}]
    assert probe_runs(one_shot, continuous) == [
        {"passed": True, "reason": ""},
        {"passed": False, "reason": "12 of 300 requests failed"},
        {"skipped": True},  # both skipped: the one-shot's
        {"skipped": True},  # no continuous result for it
    ]
    assert probe_runs([], continuous) == []


def test_reachability_verdicts_judge_the_continuous_probes() -> None:
    probes = [{"name": "once", "ingress": "one/shop"}, {"name": "through the window", "ingress": "one/shop", "rate": 5, "failing": "failed"}]
    results = {"reachability": [{"passed": True}, {"skipped": True}],
               "reachability_continuous": [{"skipped": True}, {"passed": False, "reason": "12 of 300 requests failed"}]}
    assert verdicts(results, {"reachability": probes}, "reachability") == [
        ("once", "pass", "pass", True),
        ("through the window", "fail: failed", "fail: 12 of 300 requests failed", True)]
    # without the continuous results the skipped one-shot entry is what is judged (and it did not pass)
    assert verdicts({"reachability": results["reachability"]}, {"reachability": probes}, "reachability")[1][3] is False
