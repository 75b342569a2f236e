# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ingress_migration module's flow: every option checked, then the Ingresses read, the
corpus generated, the data planes found, the corpus replayed through each, compared and judged.
Read-only: it sends HTTP requests to the data planes and changes nothing in the cluster."""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.lab import NOT_REBUILT_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.credentials import read_credentials, secrets_asked
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import corpus as corpus_mod
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import Plane, compare
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.dataplanes import DataPlaneSpec, parse_all, resolve
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

if TYPE_CHECKING:
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params

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
    verdict = judge(comparison, expected, same, allowed)
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
        "requests_sent": sent,
        "samples": samples,
        "seconds": timings,
    }


def failure_message(result: Obj) -> str:
    v = result["verdict"]
    parts = []
    if v["baseline_idle"]:
        parts.append("the baseline served none of the %d requests: nothing was compared (is it the baseline's address?)"
                     % len(result["corpus"]))
    for d in v["unexpected"][:10]:
        parts.append("unexpected: %s %s %s %s: %r vs %r (%s)" % (d["target"], d["ingress"], d["request"], d["field"],
                                                                 d["baseline"], d["answer"], d["cause"]))
    for e in v["unseen"]:
        parts.append("expected difference not seen: %s" % e)
    for e in v["unseen_same"]:
        parts.append("expected same answer not seen: %s" % e)
    return "ingress_migration: " + "; ".join(parts)


def run_ingress_migration(params: Params, module: Module) -> Obj:
    result = rehearse(module.client(), params)
    if params["fail_on_difference"] and not result["passed"]:
        raise CheckFailed(failure_message(result), **result)
    return result
