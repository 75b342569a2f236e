# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Proving fixes (migration/prove.py) against a fake data plane whose answers follow the objects applied to it."""
from __future__ import annotations

import json
import os

import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import prove
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import KEEPS_ANNOTATION, Behaviour, Fix, Objects


def _route(name, value):
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": "shop", "uid": "u", "resourceVersion": "7"},
            "spec": {"value": value}, "status": {"parents": []}}


class FakePlane:
    """Routes shop/a and shop/b; request 0 answers the same when a's value is 'fixed', request 1 when b's value is
    'plain', and request 2 differs when a's value is 'fixed' and b's is 'bad' (a fix of a that breaks it)."""

    def __init__(self, b_value="plain", lag=0):
        self.objects = {"shop/a": _route("a", "broken"), "shop/b": _route("b", b_value)}
        self.lag = lag  # replays that still show the state before the last apply
        self.seen = dict(self.objects)
        self.applied, self.deleted = [], []

    def read(self):
        return Objects(routes={k: json.loads(json.dumps(v)) for k, v in self.objects.items()})

    def apply(self, obj):
        self.applied.append(obj)
        self.objects["shop/" + obj["metadata"]["name"]] = obj
        self.pending = self.lag

    def delete(self, obj):
        self.deleted.append(obj)
        self.objects.pop("shop/" + obj["metadata"]["name"], None)

    def replay(self):
        if getattr(self, "pending", 0):
            self.pending -= 1
        else:
            self.seen = dict(self.objects)
        a = self.seen["shop/a"]["spec"]["value"]
        b = self.seen["shop/b"]["spec"]["value"]
        outcomes = ["same" if a == "fixed" else "differ", "same" if b == "plain" else "differ",
                    "differ" if (a == "fixed" and b == "bad") else "same"]
        causes = [("rule", "cause"), ("b", "b's"), ("c", "a and b together")]
        if a == "half":  # request 0 still differs, by another cause
            outcomes[0], causes[0] = "differ", ("slash", "trailing slash")
        return {"counts": {}, "rows": [{"index": i, "id": "r%d" % i, "outcome": o,
                                        "differences": [{"field": "status", "responsible": causes[i][0], "cause": causes[i][1]}]
                                        if o == "differ" else [],
                                        "curl": {"base": "curl base %d" % i, "t": "curl t %d" % i}}
                                       for i, o in enumerate(outcomes)]}


def _behaviour(index, responsible="rule", cause="cause"):
    return Behaviour("t", responsible, cause, ({"index": index, "id": "r%d" % index},), (None,))


def _target(plane, table):
    return prove.Target("t", table, plane.read, plane.apply, plane.delete, plane.replay)


def _fix_a(_b, objects):
    route = objects.edited("HTTPRoute", "shop/a")
    route["spec"]["value"] = "fixed"
    return Fix("fix a", (route,))


def test_a_fix_that_closes_its_behaviour_is_kept_and_said_so():
    plane = FakePlane()
    out = prove.prove(_target(plane, _fix_a), [_behaviour(0)], plane.replay(), sleep=lambda s: None)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.CLOSED
    assert attempt["objects"] == ["HTTPRoute shop/a"] and attempt["curl"] == ["curl base 0", "curl t 0"]
    assert out["kept"] == 1 and out["remain"] == 0
    assert out["keeps"] == {"HTTPRoute shop/a": ["rule: cause"]}
    assert plane.objects["shop/a"]["spec"]["value"] == "fixed"


def test_a_fix_is_judged_only_once_the_answers_hold():
    # the data plane shows the old state for two replays after the apply: the fix is still proven, not given up
    plane = FakePlane(lag=2)
    out = prove.prove(_target(plane, _fix_a), [_behaviour(0)], plane.replay(), sleep=lambda s: None, settle=5)
    assert out["attempts"][0]["outcome"] == prove.CLOSED


def test_a_fix_that_changes_other_requests_is_undone_and_names_them():
    plane = FakePlane(b_value="bad")
    out = prove.prove(_target(plane, _fix_a), [_behaviour(0)], plane.replay(), sleep=lambda s: None, settle=0.05)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.REGRESSED and attempt["changed"] == ["r2"]
    assert plane.objects["shop/a"]["spec"]["value"] == "broken"  # applied back as it was
    assert out["kept"] == 0 and out["remain"] == 1 and out["keeps"] == {}


def test_a_fix_that_does_not_close_is_undone_and_a_new_object_deleted():
    plane = FakePlane()

    def useless(_b, objects):
        return Fix("add c", (_route("c", "x"),))
    out = prove.prove(_target(plane, useless), [_behaviour(0)], plane.replay(), sleep=lambda s: None, settle=0.05)
    assert out["attempts"][0]["outcome"] == prove.NOT_CLOSED and out["attempts"][0]["still_differ"] == 1
    [still] = out["attempts"][0]["still"]  # which request, and what it answered with the fix in place
    assert still.startswith("r0: ") and " / " in still
    assert [d["metadata"]["name"] for d in plane.deleted] == ["c"] and "shop/c" not in plane.objects


def test_impossible_and_unknown_are_recorded_without_touching_the_cluster():
    plane = FakePlane()

    def table(b, _objects):
        return None if b.responsible == "unknown" else Fix("none", impossible="RE2 has no lookahead")
    out = prove.prove(_target(plane, table), [_behaviour(0, "regex"), _behaviour(0, "unknown")], plane.replay(),
                      sleep=lambda s: None)
    assert [a["outcome"] for a in out["attempts"]] == [prove.IMPOSSIBLE, prove.UNKNOWN]
    assert out["attempts"][0]["why"] == "RE2 has no lookahead"
    assert plane.applied == [] and out["remain"] == 2


def test_migrated_manifests_drop_what_the_server_set_and_say_what_they_keep(tmp_path):
    plane = FakePlane()
    stale = tmp_path / "t" / "old.yaml"
    stale.parent.mkdir()
    stale.write_text("{}")
    paths = prove.write_migrated(str(tmp_path / "t"), plane.read(), {"HTTPRoute shop/a": ["rule: cause"]})
    assert sorted(os.path.basename(p) for p in paths) == ["httproute-shop-a.yaml", "httproute-shop-b.yaml"]
    assert not stale.exists()
    a = yaml.safe_load(open(paths[0]))
    assert "status" not in a and "uid" not in a["metadata"] and "resourceVersion" not in a["metadata"]
    assert json.loads(a["metadata"]["annotations"][KEEPS_ANNOTATION]) == ["rule: cause"]
    assert "annotations" not in yaml.safe_load(open(paths[1]))["metadata"]


def test_a_fix_that_removes_its_cause_while_another_remains_is_kept_and_names_what_remains():
    plane = FakePlane()

    def half(_b, objects):
        route = objects.edited("HTTPRoute", "shop/a")
        route["spec"]["value"] = "half"
        return Fix("half a", (route,))
    out = prove.prove(_target(plane, half), [_behaviour(0)], plane.replay(), sleep=lambda s: None)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.CAUSE_GONE and attempt["remaining"] == ["slash"]
    assert out["kept"] == 1 and plane.objects["shop/a"]["spec"]["value"] == "half"


def test_a_request_tied_routers_decide_is_not_counted_against_a_fix():
    """Seen on kind: translated routes tied at one priority on Traefik answer one way or the other after each reload."""
    plane = FakePlane(b_value="bad")
    replay = plane.replay

    def tied_replay():
        body = replay()
        body["rows"][2]["tied"] = True  # the target's own account: request 2 is taken by one of tied routers
        return body
    target = prove.Target("t", _fix_a, plane.read, plane.apply, plane.delete, tied_replay)
    out = prove.prove(target, [_behaviour(0)], tied_replay(), sleep=lambda s: None)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.CLOSED and attempt["tied_changed"] == ["r2"]


def test_what_changes_by_itself_after_a_reload_is_not_counted_against_the_fix():
    """Seen on kind: a translated route's answer flipped after a reload whatever the fix; undone, it stayed flipped."""
    plane = FakePlane()
    replay = plane.replay

    def flapping():
        body = replay()
        if plane.applied:  # from the first reload on, request 2 answers otherwise, fix or not
            body["rows"][2].update(outcome="differ", differences=[{"field": "backend", "responsible": "x", "cause": "y"}])
        return body
    target = prove.Target("t", _fix_a, plane.read, plane.apply, plane.delete, flapping)
    out = prove.prove(target, [_behaviour(0)], flapping(), sleep=lambda s: None, settle=0.05)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.CLOSED and attempt["unsteady"] == ["r2"]
    assert [o["spec"]["value"] for o in plane.applied] == ["fixed", "broken", "fixed"]  # tried, undone, tried again


def test_a_fix_the_api_server_refuses_is_said_and_taken_back():
    from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError

    plane = FakePlane()

    def two(_b, objects):
        good = objects.edited("HTTPRoute", "shop/b")
        good["spec"]["value"] = "other"
        bad = objects.edited("HTTPRoute", "shop/a")
        bad["spec"]["value"] = "invalid"
        return Fix("two", (good, bad))
    apply = plane.apply

    def strict(obj):
        if obj["spec"]["value"] == "invalid":
            raise KindlabError("apply HTTPRoute shop/a failed: must be an absolute path")
        apply(obj)
    target = prove.Target("t", two, plane.read, strict, plane.delete, plane.replay)
    out = prove.prove(target, [_behaviour(0)], plane.replay(), sleep=lambda s: None)
    attempt = out["attempts"][0]
    assert attempt["outcome"] == prove.REFUSED and "absolute path" in attempt["why"]
    assert plane.objects["shop/b"]["spec"]["value"] == "plain"  # what went in before the refusal is taken back
    assert out["remain"] == 1


def test_a_migrated_ingress_names_its_class_as_the_team_did_where_the_rehearsal_named_it_by_the_annotation(tmp_path):
    """A rehearsal with Traefik's own provider names the baseline's IngressClass by the class annotation (migration/rehearsal_lab.py);
    the migrated manifests give spec.ingressClassName back and drop both annotations, and leave any other Ingress as
    it is."""
    renamed = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "a", "namespace": "shop", "annotations": {
                   "kubernetes.io/ingress.class": "nginx", "kindlab.ingress/ingress-class-name": "internal",
                   "nginx.ingress.kubernetes.io/use-regex": "true"}},
               "spec": {"rules": [{"host": "a.example.test"}]}}
    kept = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "b", "namespace": "shop", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {}}
    objects = Objects(ingresses={"shop/a": renamed, "shop/b": kept})
    paths = prove.write_migrated(str(tmp_path), objects, {})
    a, b = (yaml.safe_load(open(p)) for p in sorted(paths))
    assert a["spec"] == {"ingressClassName": "internal", "rules": [{"host": "a.example.test"}]}
    assert a["metadata"]["annotations"] == {"nginx.ingress.kubernetes.io/use-regex": "true"}
    assert b["metadata"]["annotations"] == {"kubernetes.io/ingress.class": "nginx"} and b["spec"] == {}
    assert renamed["metadata"]["annotations"]["kindlab.ingress/ingress-class-name"] == "internal"  # the cluster's own copy untouched
    # Traefik's own provider was proven reading the annotation: its manifests keep it, without the rehearsal's mark
    written = prove.write_migrated(str(tmp_path / "own"), Objects(ingresses={"shop/a": renamed}), {}, class_by_annotation=True)
    [a] = [yaml.safe_load(open(p)) for p in written]
    assert "ingressClassName" not in a["spec"] and a["metadata"]["annotations"] == {
        "kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/use-regex": "true"}


def test_the_migrated_manifests_hold_the_middlewares_a_fix_made(tmp_path):
    middleware = {"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware", "metadata": {"name": "api-rewrite", "namespace": "shop"},
                  "spec": {"replacePathRegex": {"regex": "(?i)^/api", "replacement": "/"}}}
    objects = Objects(middlewares={"shop/api-rewrite": middleware})
    assert objects.pool("Middleware") is objects.middlewares and objects.pool("Secret") == {}
    [path] = prove.write_migrated(str(tmp_path), objects, {"Middleware shop/api-rewrite": ["rewrite: cause"]})
    assert os.path.basename(path) == "middleware-shop-api-rewrite.yaml"
    written = yaml.safe_load(open(path))
    assert written["spec"] == middleware["spec"] and json.loads(written["metadata"]["annotations"][KEEPS_ANNOTATION]) == ["rewrite: cause"]


def test_an_attempt_names_the_fields_its_requests_differ_in_by_its_behaviour():
    # what a re-check by hand compares besides the status: here the header a basic auth must not pass on
    row = {"index": 0, "id": "r0", "differences": [
        {"field": "received.Authorization", "responsible": "rule", "cause": "cause"},
        {"field": "status", "responsible": "rule", "cause": "cause"},
        {"field": "path", "responsible": "slash", "cause": "trailing slash"}]}
    plane = FakePlane()
    # a behaviour is a row's differences folded (summary.behaviours): every field of its rows is its
    out = prove.prove(_target(plane, _fix_a), [Behaviour("t", "rule; slash", "cause / trailing slash", (row,), (None,))],
                      plane.replay(), sleep=lambda s: None)
    assert out["attempts"][0]["fields"] == ["path", "received.Authorization", "status"]


def _fix_a_removing_c(_b, objects):
    route = objects.edited("HTTPRoute", "shop/a")
    route["spec"]["value"] = "fixed"
    return Fix("fix a, c gone", (route,), removes=(objects.edited("HTTPRoute", "shop/c"),))


def test_a_kept_fix_deletes_what_it_removes_and_a_behaviour_it_closed_too_is_closed_by_it():
    plane = FakePlane()
    plane.objects["shop/c"] = _route("c", "stale")
    out = prove.prove(_target(plane, _fix_a_removing_c), [_behaviour(0), _behaviour(0, "canary-header", "header")],
                      plane.replay(), sleep=lambda s: None)
    first, second = out["attempts"]
    assert first["outcome"] == prove.CLOSED and first["removes"] == ["HTTPRoute shop/c"] and "shop/c" not in plane.objects
    assert out["removed"] == ["HTTPRoute shop/c"]
    # the second behaviour's request answers the same since the first fix: said so, the table not asked again
    assert second["outcome"] == prove.EARLIER and second["says"] == "fix a, c gone" and second["objects"] == ["HTTPRoute shop/a"]
    assert second["curl"] == ["curl base 0", "curl t 0"] and out["keeps"] == {"HTTPRoute shop/a": ["rule: cause", "canary-header: header"]}
    assert out["kept"] == 2 and out["remain"] == 0 and len(plane.applied) == 1


def test_a_request_that_answered_the_same_before_any_fix_is_not_closed_by_an_earlier_fix():
    plane = FakePlane()
    calls = []

    def table(b, objects):
        calls.append(b.responsible)
        return _fix_a(b, objects) if b.responsible == "rule" else None
    out = prove.prove(_target(plane, table), [_behaviour(0), _behaviour(1, "b", "b's")], plane.replay(), sleep=lambda s: None)
    assert [a["outcome"] for a in out["attempts"]] == [prove.CLOSED, prove.UNKNOWN] and calls == ["rule", "b"]


def test_an_undone_fix_makes_what_it_removed_again():
    plane = FakePlane()
    plane.objects["shop/c"] = _route("c", "stale")

    def useless(_b, objects):
        return Fix("c gone", (), removes=(objects.edited("HTTPRoute", "shop/c"),))
    out = prove.prove(_target(plane, useless), [_behaviour(0)], plane.replay(), sleep=lambda s: None, settle=0.05)
    assert out["attempts"][0]["outcome"] == prove.NOT_CLOSED and out["removed"] == []
    assert plane.objects["shop/c"]["spec"]["value"] == "stale"  # applied back as it was


def test_the_migrated_manifests_name_what_a_kept_fix_removed_beside_them(tmp_path):
    route = {"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute", "metadata": {"name": "checkout-canary", "namespace": "shop"},
             "spec": {"routes": [{"kind": "Rule", "match": "Host(`pay.example.test`)", "services": [{"name": "c", "port": 80}]}]}}
    objects = Objects(ingress_routes={"shop/checkout-canary": route})
    paths = prove.write_migrated(str(tmp_path), objects, {"IngressRoute shop/checkout-canary": ["canary: cause"]},
                                 removed=["Ingress shop/checkout-canary"])
    assert sorted(os.path.basename(p) for p in paths) == ["ingressroute-shop-checkout-canary.yaml", prove.REMOVED_FILE]
    lines = (tmp_path / prove.REMOVED_FILE).read_text().splitlines()
    assert lines[0].startswith("#") and lines[1:] == ["Ingress shop/checkout-canary"]
    # written again without removals, the old list goes
    prove.write_migrated(str(tmp_path), objects, {})
    assert not (tmp_path / prove.REMOVED_FILE).exists()


def test_a_request_tied_routers_took_is_closed_by_the_fix_after_which_one_router_takes_it():
    # request 1 differed with tied routers, then answered the same by chance before any fix; the fix of request 0
    # leaves one router for it: the behaviour of request 1 is closed by that fix, its table not asked
    plane = FakePlane()
    first = plane.replay()
    first["rows"][1].update(outcome="differ", tied=True, differences=[{"field": "backend", "responsible": "b", "cause": "b's"}])
    calls = []

    def table(b, objects):
        calls.append(b.responsible)
        return _fix_a(b, objects)
    out = prove.prove(_target(plane, table), [_behaviour(0), _behaviour(1, "b", "b's")], first, sleep=lambda s: None)
    assert [a["outcome"] for a in out["attempts"]] == [prove.CLOSED, prove.EARLIER] and calls == ["rule"]


def test_a_tied_request_stays_closed_by_the_fix_that_untied_it_not_by_a_later_one():
    """Seen on kind: the canary's header closed by the canary's IngressRoute was said closed by the body-size fix kept
    after it (every fix kept after the untie claimed the request again)."""
    plane = FakePlane()
    first = plane.replay()
    first["rows"][1].update(outcome="differ", tied=True, differences=[{"field": "backend", "responsible": "b", "cause": "b's"}])

    def table(b, objects):
        route = objects.edited("HTTPRoute", "shop/a")
        route["spec"]["value"] = "half" if b.responsible == "rule" else "fixed"
        return Fix("fix %s" % b.responsible, (route,))
    behaviours = [_behaviour(0), _behaviour(0, "slash", "trailing slash"), _behaviour(1, "b", "b's")]
    out = prove.prove(_target(plane, table), behaviours, first, sleep=lambda s: None)
    assert [a["outcome"] for a in out["attempts"]] == [prove.CAUSE_GONE, prove.CLOSED, prove.EARLIER]
    assert out["attempts"][2]["says"] == "fix rule"


class TiedPlane(FakePlane):
    """Request 1 (tied routers take it) answers the same only once b is 'plain' and a is 'fixed': the router the tie
    gives it lacks b's fix until a's fix leaves one router (seen on kind: a body-size Middleware on the main Ingress's
    router, the canary Ingress's router taking the request)."""

    def replay(self):
        body = super().replay()
        row = body["rows"][1]
        if self.seen["shop/a"]["spec"]["value"] != "fixed":
            row.update(outcome="differ", tied=True, differences=[{"field": "status", "responsible": "b", "cause": "b's"}])
        return body


def test_a_fix_that_failed_where_tied_routers_took_its_requests_gets_a_second_try_after_a_later_fix():
    plane = TiedPlane(b_value="old")

    def table(b, objects):
        if b.responsible == "b":
            route = objects.edited("HTTPRoute", "shop/b")
            route["spec"]["value"] = "plain"
            return Fix("fix b", (route,))
        return _fix_a(b, objects)
    first = plane.replay()
    out = prove.prove(_target(plane, table), [_behaviour(1, "b", "b's"), _behaviour(0)], first, sleep=lambda s: None, settle=0.05)
    assert [a["responsible"] for a in out["attempts"]] == ["b", "rule"]
    b_try, rule = out["attempts"]
    assert rule["outcome"] == prove.CLOSED and b_try["outcome"] in prove.KEPT and "second_try" in b_try
    # failed again with nothing kept since: not tried a third time, nor a second one
    plane = TiedPlane(b_value="old")
    out = prove.prove(_target(plane, lambda b, o: table(b, o) if b.responsible == "b" else None),
                      [_behaviour(1, "b", "b's"), _behaviour(0)], plane.replay(), sleep=lambda s: None, settle=0.05)
    assert [a["outcome"] for a in out["attempts"]] == [prove.NOT_CLOSED, prove.UNKNOWN] and "second_try" not in out["attempts"][0]


def test_a_behaviour_without_a_fix_of_its_own_that_a_later_fix_settled_is_closed_by_it():
    # request 0 differs by two behaviours' account before any fix: the first has no fix known, the second's fix (a)
    # makes it answer the same; the report then says the first is closed by that later fix, and its objects keep both
    plane = FakePlane()

    def table(b, objects):
        return None if b.responsible == "unknown" else _fix_a(b, objects)
    out = prove.prove(_target(plane, table), [_behaviour(0, "unknown", "no table entry"), _behaviour(0)], plane.replay(),
                      sleep=lambda s: None)
    first = out["attempts"][0]
    assert first["outcome"] == prove.LATER and first["says"] == "fix a" and first["before_it"] == "no fix known when it was tried"
    assert first["objects"] == ["HTTPRoute shop/a"] and first["curl"] == ["curl base 0", "curl t 0"]
    assert out["kept"] == 2 and out["remain"] == 0
    assert out["keeps"] == {"HTTPRoute shop/a": ["rule: cause", "unknown: no table entry"]}


def test_a_later_fix_that_leaves_another_cause_settles_only_the_cause_and_a_tie_settles_nothing():
    plane = FakePlane()

    def table(b, objects):
        if b.responsible != "rule":
            return None
        route = objects.edited("HTTPRoute", "shop/a")
        route["spec"]["value"] = "half"  # request 0 still differs, by the trailing slash
        return Fix("half a", (route,))
    out = prove.prove(_target(plane, table), [_behaviour(0, "unknown", "no table entry"), _behaviour(0)], plane.replay(),
                      sleep=lambda s: None)
    # no request answers the same, but none differs by its cause any more: its cause gone after the fix kept after it
    first = out["attempts"][0]
    assert first["outcome"] == prove.LATER_GONE and first["says"] == "half a" and first["remaining"] == ["slash"]

    plane = FakePlane()
    first = plane.replay()

    def tied_replay(real=plane.replay):
        body = real()
        body["rows"][0]["tied"] = ["r-a", "r-b"]
        return body
    target = prove.Target("t", lambda b, o: None if b.responsible == "unknown" else _fix_a(b, o), plane.read, plane.apply,
                          plane.delete, tied_replay)
    out = prove.prove(target, [_behaviour(0, "unknown", "no table entry"), _behaviour(1, "b", "b's")], first,
                      sleep=lambda s: None, settle=0.05)
    assert out["attempts"][0]["outcome"] == prove.UNKNOWN


def test_a_behaviour_a_later_fix_settled_in_part_has_its_cause_gone_and_names_what_remains():
    plane = FakePlane(b_value="other")  # request 1 differs by b's own cause, which no fix here touches
    both = Behaviour("t", "unknown", "no table entry", ({"index": 0, "id": "r0"}, {"index": 1, "id": "r1"}), (None, None))
    out = prove.prove(_target(plane, lambda b, o: None if b.responsible == "unknown" else _fix_a(b, o)),
                      [both, _behaviour(0)], plane.replay(), sleep=lambda s: None)
    first = out["attempts"][0]
    assert first["outcome"] == prove.LATER_GONE and first["remaining"] == ["b"] and first["says"] == "fix a"
    assert out["kept"] == 2
