# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Comparing a target's answers with the baseline's, request by request and field by field.

- Fields: status, Location, the backend (namespace/Service) that answered, the path and query it
  received, every request header it received (`received.<Name>`), the response headers a rule may
  set (`header.<name>`); for a repeated request (a burst, a canary weight) the distinct statuses and
  backends instead. Pods are shown, not compared: which replica answers is the load balancer's choice.
- Noise: the baseline answers each request twice; a field that differs between those two is
  noise for that request and is not reported as a difference.
- Served by neither: a request no rule serves on either side (404 on both, no backend) is not
  "the same"; a baseline that serves none of the corpus makes the whole rehearsal fail.
- Everywhere: a received header that differs in every request both sides served (a data plane's
  own headers, such as ingress-nginx's X-Request-ID) is reported once, not per request.
- Not faithful: a request whose rule uses what the baseline's data plane cannot do as upstream's
  image does, or whose Ingress a capture could not rebuild whole, is not compared, with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import DataPlaneReader, Router
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain, unexplained
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import HostTLS, Request, Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address, Observation, request_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.routes import choose, describe
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.route_precedence import Match
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.curl import curl_line

Obj = dict[str, Any]
OUTCOMES = ("same", "differ", "neither", "noise", "not_faithful")


def fields(answer: Observation, request: Request) -> dict[str, str]:
    """The compared fields of one answer, as strings ("" when absent)."""
    if request.repeat > 1:
        out = {"statuses": ",".join(sorted(answer.statuses)), "backends": ",".join(sorted(answer.backends))}
    else:
        out = {"status": str(answer.status) if answer.status is not None else "error: " + answer.error,
               "location": answer.location, "backend": answer.backend, "path": answer.path}
    for name, value in answer.received.items():
        if name not in ("User-Agent", "Content-Length"):  # what the client sent, the same everywhere
            out["received." + name] = value
    for name, value in answer.headers.items():
        out["header." + name] = value
    return out


def _diff(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k, "") != b.get(k, ""))


def curl(request: Request, address: Address) -> str:
    """The one curl line that sends this request to that data plane as the rehearsal did."""
    return curl_line(request_of(request, address, as_sent=False), request.repeat)


@dataclass
class Plane:
    name: str
    address: Address
    routes: tuple[Match, ...] | None = None  # a Gateway's: the matches of its HTTPRoutes (None: not a Gateway)
    routers: tuple[Router, ...] = ()  # the routers it says it built (dataplanes.DataPlane.routers), refused ones too
    reader: DataPlaneReader | None = None  # its type's reader: which of them takes a request, and how it says one

    def record(self, request: Request) -> Router | None:
        """The router (location, ...) that takes REQUEST in its own account; None when it has none or none takes it."""
        if self.reader is None or self.reader.take is None or not self.routers:
            return None
        return self.reader.take(self.routers, request.scheme, request.host, request.target, request.method, request.headers)

    def said(self, record: Router | None) -> str:
        if not self.routers or self.reader is None or self.reader.describe is None:
            return "not read"
        return self.reader.describe(record) if record is not None else "none of its routes"


def compare(corpus: Sequence[Request], rules_of: Sequence[Rule | None], answers: dict[str, list[list[Observation]]],
            baseline: Plane, targets: Sequence[Plane], regex_hosts: dict[str, list[str]],
            unfaithful: dict[int, str], tls_hosts: dict[str, HostTLS] | None = None,
            default_backends: tuple[tuple[str, str], ...] = ()) -> Obj:
    """The rehearsal's comparison (UNFAITHFUL: request index → why it is not compared): per target, one row per
    request with its outcome, the fields that
    differ with their causes and the curl lines that reproduce them; counts; the headers that differ
    everywhere; and whether the baseline served anything at all."""
    base = answers[baseline.name]
    baseline_served = sum(1 for samples in base if any(a.served for a in samples))
    out: Obj = {"baseline": baseline.name, "requests": len(corpus), "baseline_served": baseline_served, "targets": {}}
    for target in targets:
        # whether the target serves each rule's own path: a variant it does not serve says more then
        serves_rule = {(r.ingress, r.host, r.rule): answers[target.name][i][0].served
                       for i, r in enumerate(corpus) if r.kind == "path"}
        rows = []
        for i, req in enumerate(corpus):
            rows.append(_row(i, req, rules_of[i], base[i], answers[target.name][i][0], baseline, target,
                             regex_hosts, unfaithful.get(i), serves_rule.get((req.ingress, req.host, req.rule), True),
                             (tls_hosts or {}).get(req.host, HostTLS()), default_backends))
        everywhere = _everywhere(rows)
        # A field that is noise in every request the baseline served (a random request id) says nothing of
        # one request: such a request counts as noise only for its other noisy fields.
        always = _always_noisy(rows)
        for row in rows:
            row["differences"] = [d for d in row["differences"] if d["field"] not in everywhere]
            if row["outcome"] in ("differ", "noise") and not row["differences"]:
                row["outcome"] = "noise" if set(row["noise"]) - always else "same"
        counts = {o: sum(1 for r in rows if r["outcome"] == o) for o in OUTCOMES}
        out["targets"][target.name] = {"counts": counts, "rows": rows, "noisy_everywhere": sorted(always),
                                       "everywhere": [everywhere[k] for k in sorted(everywhere)]}
    return out


def _row(index: int, req: Request, rule: Rule | None, samples: list[Observation], answer: Observation, baseline: Plane,
         target: Plane, regex_hosts: dict[str, list[str]], unfaithful: str | None, serves_rule: bool = True,
         tls: HostTLS = HostTLS(), default_backends: tuple[tuple[str, str], ...] = ()) -> Obj:
    first = samples[0]
    b1 = fields(first, req)
    noise = sorted(set().union(*(_diff(b1, fields(s, req)) for s in samples[1:]))) if len(samples) > 1 else []
    t = fields(answer, req)
    row: Obj = {"index": index, "id": req.id, "ingress": req.ingress, "host": req.host, "target": req.target,
                "kind": req.kind, "rule": req.rule, "method": req.method, "annotation": req.annotation,
                "baseline": first.as_dict(), "answer": answer.as_dict(), "noise": noise, "differences": [],
                "curl": {baseline.name: curl(req, baseline.address), target.name: curl(req, target.address)}}
    if not unfaithful and (first.stand_in or answer.stand_in):
        unfaithful = ("the backend stand-in answered by itself (echo-basic's own %s), not echoing: no backend says what "
                      "arrived, not compared" % req.target.split("?")[0])
    if unfaithful:
        row.update(outcome="not_faithful", reason=unfaithful)
        return row
    if not any(s.served for s in samples) and not answer.served and first.status == answer.status:
        row["outcome"] = "neither"
        return row
    differing = [f for f in _diff(b1, t) if f not in noise
                 # what a backend received is compared where both sides reached one (else `backend` says it)
                 and (not f.startswith("received.") or (first.backend and answer.backend))]
    regex_ingresses = tuple(regex_hosts.get(req.host, ()))
    # what took the request on each side, in each data plane's own account (its rendered configuration, its routers)
    records = (baseline.record(req), target.record(req)) if differing else (None, None)
    if differing:
        row["records"] = {baseline.name: baseline.said(records[0]), target.name: target.said(records[1])}
    taken = None
    if target.routes is not None:
        taken = choose(target.routes, req.host, req.target, req.method, req.headers)
        row["target_route"] = describe(taken) if taken else "none of its HTTPRoutes' rules"
    causes = {f: explain(Context(request=req, rule=rule, field=f, target=target.name, regex_ingresses=regex_ingresses,
                                 baseline_served=any(s.served for s in samples), target_served=answer.served,
                                 target_serves_rule=serves_rule, tls=tls,
                                 status_differs=bool({"status", "statuses"} & set(differing)),
                                 target_redirected=answer.status is not None and 300 <= answer.status < 400,
                                 gateway_target=target.routes is not None, target_route=taken,
                                 baseline_backend=first.backend, target_backend=answer.backend,
                                 default_backends=default_backends, routers=target.routers,
                                 refused_routers=tuple(r for r in target.routers if r.refused),
                                 baseline_record=records[0], target_record=records[1],
                                 records=tuple(row.get("records", {}).items()))) for f in differing}
    # backend, path and Location follow from the status: where only the status's cause is known, it is theirs too
    known = [causes[f] for f in ("status", "statuses") if f in causes and not unexplained(causes[f])]
    for f in differing:
        cause = known[0] if known and unexplained(causes[f]) and f in ("backend", "path", "location", "backends") else causes[f]
        row["differences"].append({"field": f, "baseline": b1.get(f, ""), "target": t.get(f, ""),
                                   "responsible": cause.responsible, "cause": cause.text, "cause_kind": cause.kind})
    row["outcome"] = "differ" if differing else ("noise" if noise else "same")
    return row


def _always_noisy(rows: list[Obj]) -> set[str]:
    served = [r for r in rows if r["outcome"] != "not_faithful" and r["baseline"]["backend"]]
    if len(served) < 2:
        return set()
    return set.intersection(*(set(r["noise"]) for r in served))


def _everywhere(rows: list[Obj]) -> dict[str, Obj]:
    """Received headers that differ in every request both sides' backends answered (at least two)."""
    both = [r for r in rows if r["outcome"] in ("differ", "same", "noise") and r["baseline"]["backend"]
            and r["answer"]["backend"]]
    if len(both) < 2:
        return {}
    counts: dict[str, int] = {}
    example: dict[str, Obj] = {}
    for r in both:
        for d in r["differences"]:
            if d["field"].startswith("received."):
                counts[d["field"]] = counts.get(d["field"], 0) + 1
                example.setdefault(d["field"], d)
    return {f: {"field": f, "baseline": example[f]["baseline"], "target": example[f]["target"],
                "responsible": example[f]["responsible"], "cause": example[f]["cause"], "requests": n}
            for f, n in counts.items() if n == len(both)}
