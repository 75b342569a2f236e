# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ingress_migration module's flow: every option checked, then the Ingresses read, the
corpus generated, the data planes found, the corpus replayed through each, compared and judged.
It sends HTTP requests to the data planes and changes nothing in the cluster, unless told to prove fixes (`fix`,
meant for a rehearsal cluster): then each target's objects are edited there (migration/prove.py)."""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.stand_ins import NOT_REBUILT_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.credentials import read_credentials, secrets_asked
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import corpus as corpus_mod
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import Plane, compare
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.sides import DataPlane, DataPlaneSpec, parse_all, resolve
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import CLASS_BY_ANNOTATION, MAKES_MIDDLEWARES, table_for
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import INGRESS_ROUTE_API, MIDDLEWARE_API, Behaviour, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import prove as prove_mod
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import behaviours
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import API_VERSION as GATEWAY_API_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import SAME_KEYS, answered, judge, parse_expected
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import provenance
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.provenance import Origin
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import replay
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.translate import set_beside_requests
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_controllers, servers_of
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import backend_pods
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.snapshot import read_state
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection, list_ingresses, parse_selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import parent_gateway

if TYPE_CHECKING:
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Params

Obj = dict[str, Any]


def served_by(client: Any, ingresses: list[Obj], baseline: DataPlaneSpec, named: bool) -> tuple[list[Obj], list[str]]:
    """The Ingresses a controller in the baseline's namespace claims (the collection's reading of each
    controller type's rules, as ingress_diagnose makes it), and why the others are left out. An Ingress
    selected by name that the baseline does not serve is an error: there is nothing to compare. A
    baseline given by address alone cannot be asked: every Ingress is kept."""
    if not baseline.namespace:
        return ingresses, []
    controllers = [c for c in find_controllers(read_state(client, Selection())) if c.namespace == baseline.namespace]
    kept, skipped = [], []
    for ing in ingresses:
        if servers_of(ing, controllers):
            kept.append(ing)
            continue
        why = "%s: no controller in the baseline's namespace %s claims it (%s)" % (
            key_of(ing), baseline.namespace, ", ".join(c.ref for c in controllers) or "no controller found there")
        if named:
            raise OptionError("names: %s is not served by the baseline: %s" % (key_of(ing), why))
        skipped.append(why)
    return kept, skipped


def not_compared(corpus: list[corpus_mod.Request], rules_of: list[corpus_mod.Rule | None], ingresses: list[Obj],
                 gaps: dict[str, str]) -> dict[int, str]:
    """Request index → why it is not compared: its rule uses an annotation the baseline's data plane does not
    do as upstream's does (GAPS), or its Ingress was rebuilt from a capture without something it routes by
    (the capture's NOT_REBUILT_ANNOTATION: an annotation that stayed in the cluster, an ExternalName Service)."""
    missing: dict[str, str] = {}
    for ing in ingresses:
        text = ((ing.get("metadata") or {}).get("annotations") or {}).get(NOT_REBUILT_ANNOTATION)
        if text:
            try:
                said = json.loads(text)
            except ValueError:
                said = [text]
            missing[key_of(ing)] = "; ".join(str(s) for s in (said if isinstance(said, list) else [said]))
    out = {}
    for i, (req, rule) in enumerate(zip(corpus, rules_of)):
        reasons = []
        hit = sorted(a for a in (rule.annotations if rule else {}) if a in gaps)
        if hit:
            reasons.append("baseline not faithful, not compared: " + "; ".join("%s: %s" % (a, gaps[a]) for a in hit))
        if req.ingress in missing:
            reasons.append("not rebuilt from the capture, not compared: " + missing[req.ingress])
        if reasons:
            out[i] = "; ".join(reasons)
    return out


def known_credentials(client: Any, ingresses: list[Obj]) -> dict[str, tuple[str, str]]:
    """Ingress -> (user, password) of the credential Secret it asks for, where the lab generated that Secret (a
    rehearsal rebuilt from a capture): its requests carry them. Another cluster's credentials are never known."""
    out = {}
    for ing in ingresses:
        meta = ing.get("metadata") or {}
        annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        for secret in secrets_asked([(str(meta.get("namespace")), annotations)]):
            found = read_credentials(client, secret)
            if found:
                out[key_of(ing)] = found
                break
    return out


def _slim(comparison: Obj) -> Obj:
    """Rows without differences keep their outcome, their request and what both answered in short
    (`answered`: status and backend), not the whole answers (the result stays small)."""
    for body in comparison["targets"].values():
        for row in body["rows"]:
            if row["outcome"] in ("same", "neither"):
                row["answered"] = answered(row["baseline"])
                for k in ("baseline", "answer", "curl"):
                    row.pop(k, None)
    return comparison


def _objects_of(client: Any, plane: DataPlane, ingresses: list[str]) -> Objects:
    """A target's own objects as the cluster holds them now: a Gateway target's Gateways and the HTTPRoutes attached to
    them and the Services of the Ingresses' namespaces; for every target, the rehearsed Ingresses (an Ingress provider
    reads them; a default backend is named there);
    for a target whose fixes make Traefik Middlewares and IngressRoutes, those of the Ingresses' namespaces."""
    out = Objects()
    for name in ingresses:
        ns, _slash, short = name.partition("/")
        found = client.get("networking.k8s.io/v1", "Ingress", short, ns)
        if found is not None:
            out.ingresses[name] = found
    if plane.name in MAKES_MIDDLEWARES:
        for ns in sorted({name.partition("/")[0] for name in ingresses}):
            out.middlewares.update({key_of(m): m for m in client.list(MIDDLEWARE_API, "Middleware", namespace=ns)})
            out.ingress_routes.update({key_of(r): r for r in client.list(INGRESS_ROUTE_API, "IngressRoute", namespace=ns)})
    if plane.gateways:
        for gw in plane.gateways:
            ns, _slash, short = gw.partition("/")
            found = client.get(GATEWAY_API_VERSION, "Gateway", short, ns)
            if found is not None:
                out.gateways[gw] = found
        out.routes = {key_of(r): r for r in client.list(GATEWAY_API_VERSION, "HTTPRoute")
                      if any(parent_gateway(str((r.get("metadata") or {}).get("namespace")), p) in plane.gateways
                             for p in (r.get("spec") or {}).get("parentRefs") or [])}
        for ns in sorted({name.partition("/")[0] for name in ingresses}):
            out.services.update({key_of(s): s for s in client.list("v1", "Service", namespace=ns)})
    return out


def mark_ties(body: Obj, plane: Plane, corpus: list[corpus_mod.Request]) -> Obj:
    """Marks the rows whose request the target's own account says is taken by one of routers tied at one priority
    (`tied`: those routers' names, sorted; empty when one router takes it): which one Traefik tries first is not
    defined, so their answer may change whenever it reloads, fix or not, even where it answered the same."""
    for row in body["rows"]:
        record = plane.record(corpus[row["index"]])
        others = [v for k, v in record.settings if k == "tied with"] if record is not None else []
        row["tied"] = sorted([record.name] + others) if record is not None and others else []
    return body


def prove_fixes(client: Any, params: Params, comparison: Obj, verdict: Obj, corpus: list[corpus_mod.Request],
                rules_of: list[corpus_mod.Rule | None], answers: dict[str, list[list[Any]]], planes: tuple[Any, ...],
                compare_one: Any) -> Obj:
    """Each target's behaviours fixed and proven in the cluster (migration/prove.py), its migrated manifests written to
    params['migrated_dir']/<target>. PLANES: (baseline, targets, target specs); COMPARE_ONE(target, its answers): its
    comparison body against the baseline's first answers."""
    baseline, targets, specs = planes
    grouped = behaviours({"comparison": comparison, "verdict": verdict})
    out: Obj = {}
    for plane, spec in zip(targets, specs):
        table = table_for(plane.name, bool(plane.gateways))
        if table is None:
            out[plane.name] = {"attempts": [], "kept": 0, "remain": len(grouped.get(plane.name) or []),
                               "no_table": "no table of fixes for this target's type"}
            continue
        rows = {r["index"]: r for r in comparison["targets"][plane.name]["rows"]}
        found = [Behaviour(plane.name, b["responsible"], b["cause"], tuple(rows[i] for i in b["indices"]),
                           tuple(rules_of[i] for i in b["indices"])) for b in grouped.get(plane.name) or []]
        names = [key_of(i) for i in params["_ingresses"]]

        def replay_target(spec: DataPlaneSpec = spec) -> Obj:
            now = resolve(client, spec)
            fresh = replay([(now.name, now.address, 1)], corpus, workers=params["workers"])
            provenance.check(fresh, corpus, [Origin(now.name, now.address, now.pods, now.marker)], backend_pods(client))
            body: Obj = compare_one(now, {baseline.name: answers[baseline.name], now.name: fresh[now.name]})
            return mark_ties(body, Plane(now.name, now.address, now.routes, now.routers, now.reader), corpus)

        def apply(obj: Obj) -> None:
            client.apply(prove_mod.manifest(obj))

        def delete(obj: Obj) -> None:
            meta = obj.get("metadata") or {}
            client.delete(str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("name")), meta.get("namespace"))

        def read(plane: DataPlane = plane) -> Objects:
            return _objects_of(client, plane, names)
        target = prove_mod.Target(plane.name, table, read, apply, delete, replay_target)
        started = time.monotonic()
        original = read()
        proven = prove_mod.prove(target, found, dict(comparison["targets"][plane.name]))
        body = proven.pop("comparison")
        proven.update(counts=body["counts"], seconds=round(time.monotonic() - started, 3),
                      still_differ=[r["id"] for r in body["rows"] if r["outcome"] == "differ"],
                      still_tied=[r["id"] for r in body["rows"] if r.get("tied")])
        if params.get("migrated_dir"):
            made = [k.split(" ", 1)[1] for k in proven["keeps"] if k.startswith("Ingress ") and k.split(" ", 1)[1] not in names]
            mine = _objects_of(client, plane, names + made)  # with the Ingresses a kept fix made (a host split off)
            if plane.gateways:  # a Gateway target is moved to by its Gateways and HTTPRoutes, not by Ingresses
                mine.ingresses = {}
            proven["migrated"] = prove_mod.write_migrated(os.path.join(params["migrated_dir"], plane.name), mine,
                                                          proven["keeps"], plane.name in CLASS_BY_ANNOTATION, proven["removed"])
        edited = sorted(k.split(" ", 1) for k in list(proven["keeps"]) + proven["removed"]
                        if k.startswith(("Ingress ", "Middleware ", "IngressRoute ")))
        if not plane.gateways and edited:
            # every Ingress target reads the same Ingresses: the next one starts from them as the rehearsal built them
            now = _objects_of(client, plane, names + [key for kind, key in edited if kind == "Ingress"])
            for kind, key in edited:
                if key in original.pool(kind):
                    apply(original.pool(kind)[key])
                elif key in now.pool(kind):
                    delete(now.pool(kind)[key])
            proven["restored"] = ("its kept fixes were undone once its migrated manifests were written: the other Ingress "
                                  "targets read the same Ingresses")
        out[plane.name] = proven
    return out


def rehearse(client: Any, params: Params) -> Obj:
    started = time.monotonic()
    selection = parse_selection(params["namespaces"], params["names"], params["label_selector"])
    base_spec, target_specs = parse_all(params["baseline"], params["targets"])
    expected = parse_expected(params["expected"])
    same = parse_expected(params["same"], "same", SAME_KEYS)
    allowed = parse_expected(params.get("allowed"), "allowed")
    samples = params["samples"]
    if samples < 1:
        raise OptionError("samples: expected at least 1 (2 tells noise from differences), got %r" % samples)
    ingresses = list_ingresses(client, selection)
    if not ingresses:
        raise KindlabError("namespaces: no Ingress selected in %s: nothing to rehearse"
                           % (", ".join(selection.namespaces) or "any namespace"))
    extra = corpus_mod.scenario_requests(params["requests"], ingresses)  # names an Ingress that exists, or fails here
    baseline = resolve(client, base_spec)
    targets = [resolve(client, t) for t in target_specs]
    ingresses, skipped = served_by(client, ingresses, base_spec, bool(params["names"]))
    if not ingresses:
        raise KindlabError("baseline: the baseline serves none of the selected Ingresses: %s" % "; ".join(skipped))
    timings: Obj = {}
    t0 = time.monotonic()
    served = {key_of(i) for i in ingresses}
    for i, r in enumerate(extra):
        if r.ingress not in served:
            raise OptionError("requests[%d].ingress: %s is not served by the baseline: %s"
                              % (i, r.ingress, "; ".join(w for w in skipped if w.startswith(r.ingress + ":"))))
    corpus = corpus_mod.generate(ingresses, known_credentials(client, ingresses)) + extra
    rules_of = corpus_mod.rules_of(corpus, ingresses)
    timings["corpus"] = round(time.monotonic() - t0, 3)
    unfaithful = not_compared(corpus, rules_of, ingresses, dict(baseline.unfaithful))
    t0 = time.monotonic()
    planes = [(baseline.name, baseline.address, samples)] + [(t.name, t.address, 1) for t in targets]
    answers = replay(planes, corpus, workers=params["workers"])
    timings["replay"] = round(time.monotonic() - t0, 3)
    provenance.check(answers, corpus, [Origin(p.name, p.address, p.pods, p.marker) for p in [baseline] + targets],
                     backend_pods(client))
    comparison = compare(corpus, rules_of, answers, Plane(baseline.name, baseline.address, None, baseline.routers, baseline.reader),
                         [Plane(t.name, t.address, t.routes, t.routers, t.reader) for t in targets], corpus_mod.regex_hosts(ingresses), unfaithful,
                         corpus_mod.tls_hosts(ingresses), corpus_mod.default_backend_services(ingresses))
    for t in targets:
        if t.notes:
            set_beside_requests(comparison["targets"][t.name], t.notes)
        mark_ties(comparison["targets"][t.name], Plane(t.name, t.address, t.routes, t.routers, t.reader), corpus)
    verdict = judge(comparison, expected, same, allowed)
    fixes: Obj = {}
    if params.get("fix"):
        t0 = time.monotonic()
        base_plane = Plane(baseline.name, baseline.address, None, baseline.routers, baseline.reader)

        def compare_one(now: DataPlane, fresh: dict[str, list[list[Any]]]) -> Obj:
            body = compare(corpus, rules_of, fresh, base_plane, [Plane(now.name, now.address, now.routes, now.routers, now.reader)],
                           corpus_mod.regex_hosts(ingresses), unfaithful, corpus_mod.tls_hosts(ingresses),
                           corpus_mod.default_backend_services(ingresses))
            return dict(body["targets"][now.name])
        fixes = prove_fixes(client, dict(params, _ingresses=ingresses), comparison, verdict, corpus, rules_of, answers,
                            (baseline, targets, target_specs), compare_one)
        timings["fixes"] = round(time.monotonic() - t0, 3)
    timings["total"] = round(time.monotonic() - started, 3)
    sent = sum(max(1, r.repeat) for r in corpus) * (samples + len(targets))
    return {
        "changed": False,
        "passed": verdict["passed"],
        "verdict": verdict,
        "baseline": {"name": baseline.name, "at": baseline.described,
                     "not_faithful": dict(baseline.unfaithful)},
        "targets": {t.name: t.described for t in targets},
        # What each data plane says it refused to build (its own account), or why it could not be read.
        "refused": {p.name: {"routers": [asdict(r) for r in p.routers if r.refused], "unread": p.routers_unread}
                    for p in [baseline] + targets if p.routers or p.routers_unread},
        "ingresses": [key_of(i) for i in ingresses],
        "not_served": skipped,
        "corpus": [r.as_dict() for r in corpus],
        "comparison": _slim(comparison),
        "fixes": fixes,
        "requests_sent": sent,
        "samples": samples,
        "seconds": timings,
    }
