# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Proving fixes in the rehearsal cluster: each behaviour's fix applied, the corpus replayed, the fix kept or undone.

For each behaviour that changes on a target (most requests first) its type's table (migration/fixes) proposes a
fix. The fix's objects are applied to the rehearsal cluster, then the whole corpus is replayed through the target
until no request differs by the behaviour any more, held over STABLE replays, or SETTLE seconds pass (the data plane
takes a moment to pick a change up). The fix is kept when none of its behaviour's requests differs by it (closed:
they all answer the same; or its cause gone: some still differ, by another cause, which is another behaviour) and
no request that answered the same before differs now (a request the target's own account says routers tied at one
priority take may change with any reload, and is not counted; nor is one that stays changed once the fix is undone:
the fix then gets a second try); otherwise it is undone (its objects applied back as they were, those it
created deleted, those it removed made again) and recorded as not closed or as changing other requests (which
ones). A behaviour whose every request an earlier kept fix made answer the same is recorded as closed by it; one left
without a fix of its own that the fixes kept after it settled (the final replay: all its requests the same, or none
differing by its cause) as closed, or its cause gone, by a later fix. A fix
that failed where tied routers took some of its requests gets one more try at the end when a fix was kept since (the
router the tie gave may have lacked what it set: a canary Ingress's router beside the main one). The baseline is never
touched and never replayed again: its answers are the first replay's. What is kept is written out as the
migrated manifests: the target's objects, each annotated with the behaviours its fixes keep.
"""
from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import (
    KEEPS_ANNOTATION, Behaviour, Fix, Objects, Table)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import fields

Obj = dict[str, Any]
SETTLE = 10.0  # seconds a data plane gets to pick a fix up (Traefik took 2-4 s on kind)
_POLL = 1.5
STABLE = 3  # replays in a row with the same outcomes before a fix is judged
_ANSWERED = ("same", "noise", "neither")  # outcomes that do not differ
CLOSED, CAUSE_GONE, EARLIER, NOT_CLOSED, REGRESSED, IMPOSSIBLE, UNKNOWN, REFUSED = (
    "closed", "its cause gone, another remains", "closed by an earlier fix", "not closed", "changed other requests",
    "no setting of the target reproduces it", "no fix known", "refused by the API server")
# A behaviour with no fix of its own (none known, or one undone) that the fixes kept after it settled all the same.
LATER, LATER_GONE = "closed by a later fix", "its cause gone after a later fix, another remains"
KEPT = (CLOSED, CAUSE_GONE, EARLIER, LATER, LATER_GONE)
_SETTLED_LATER = (UNKNOWN, NOT_CLOSED, REGRESSED)


class FixError(KindlabError):
    """A fix could not be applied or undone in the rehearsal cluster."""


@dataclass
class Target:
    """What proving needs of one target: how to read its objects, apply and delete one, replay and compare."""
    name: str
    table: Table
    read: Callable[[], Objects]
    apply: Callable[[Obj], None]
    delete: Callable[[Obj], None]
    replay: Callable[[], Obj]  # the whole corpus through the target, compared with the baseline's first answers


def _outcomes(body: Obj) -> dict[int, str]:
    return {r["index"]: r["outcome"] for r in body["rows"]}


def _by(row: Obj, b: Behaviour) -> bool:
    """Whether ROW still differs by B: its differences folded as the report groups them (report.behaviours) are B's."""
    diffs = row.get("differences") or []
    return row["outcome"] == "differ" and bool(diffs) and (
        "; ".join(dict.fromkeys(d["responsible"] for d in diffs)), " / ".join(dict.fromkeys(d["cause"] for d in diffs))
    ) == (b.responsible, b.cause)


def _current(objects: Objects, obj: Obj) -> Obj | None:
    return objects.pool(str(obj.get("kind"))).get(key_of(obj))


def _settle(target: Target, done: Callable[[Obj], bool], sleep: Callable[[float], None], settle: float) -> Obj:
    """Replays until the answers are done and have held for STABLE replays in a row, or SETTLE seconds pass. A data
    plane part-way through a change can answer as wanted for a moment (seen on Traefik: a route moved between listeners
    is gone for a second before it is back), so one good replay proves nothing."""
    deadline = time.monotonic() + settle
    body = target.replay()
    held = 1
    while (not done(body) or held < STABLE) and time.monotonic() < deadline:
        sleep(_POLL)
        again = target.replay()
        held = held + 1 if _outcomes(again) == _outcomes(body) else 1
        body = again
    return body


def _do(target: Target, fix: Fix) -> None:
    for obj in fix.objects:
        target.apply(obj)
    for obj in fix.removes:
        target.delete(obj)


def _undo(target: Target, previous: list[tuple[Obj, Obj | None]]) -> None:
    """Each object of a fix back as it was before it (one it removed, made again); one the fix created, deleted."""
    for obj, was in previous:
        if was is None:
            target.delete(obj)
        else:
            target.apply(was)


def prove(target: Target, behaviours: Sequence[Behaviour], first: Obj, sleep: Callable[[float], None] = time.sleep,
          settle: float = SETTLE) -> Obj:
    """Each behaviour's fix tried in turn on TARGET (FIRST: its comparison before any fix). Returns the attempts, the
    comparison after the last kept fix, and the objects each kept fix wrote with the behaviours they keep."""
    now = _outcomes(first)
    body = first
    tied = {r["index"] for r in first["rows"] if r.get("tied")}
    attempts: list[Obj] = []
    keeps: dict[str, list[str]] = {}  # "Kind ns/name" -> behaviours its fixes keep
    removed: list[str] = []  # "Kind ns/name" a kept fix deleted
    fixed_by: dict[int, Fix] = {}  # a request that differed -> the kept fix after which it answered the same
    queue = list(behaviours)
    # a behaviour whose fix failed where tied routers took some of its requests (the router Traefik tried may lack what
    # the fix set: a canary Ingress's router beside the main one), tried once more at the end if a fix was kept since
    again: dict[int, tuple[Obj, int]] = {}  # id(behaviour) -> (its attempt, how many fixes were kept when it failed)
    behaviour_of: dict[int, Behaviour] = {}  # id(attempt) -> its behaviour
    for b in queue:
        attempt: Obj = {"responsible": b.responsible, "cause": b.cause, "requests": len(b.rows),
                        # what its requests differ in (status, path, received.<Header>, ...): what a re-check compares
                        "fields": sorted(fields(b))}
        started = time.monotonic()
        if id(b) in again:
            failed, kept_then = again.pop(id(b))
            if kept_then == sum(1 for a in attempts if a["outcome"] in KEPT):
                continue  # nothing changed since: it would fail the same way
            attempt["second_try"] = "tied routers took some of its requests when it was first tried (%s)" % failed["outcome"]
            attempts[attempts.index(failed)] = attempt
        else:
            attempts.append(attempt)
        behaviour_of[id(attempt)] = b
        if all(r["index"] in fixed_by and now.get(r["index"]) in _ANSWERED for r in b.rows):
            by = list({id(fixed_by[r["index"]]): fixed_by[r["index"]] for r in b.rows}.values())
            example = next(r for r in body["rows"] if r["index"] == b.rows[0]["index"])
            attempt.update(outcome=EARLIER, says="; ".join(f.says for f in by), objects=[n for f in by for n in f.names()],
                           curl=list(example.get("curl", {}).values()))
            for name in attempt["objects"]:
                keeps.setdefault(name, []).append(b.key)
            continue
        fix: Fix | None = target.table(b, target.read())
        if fix is None:
            attempt.update(outcome=UNKNOWN, says="no entry of %s's table of fixes covers it" % target.name)
            continue
        attempt["says"] = fix.says
        if fix.impossible:
            attempt.update(outcome=IMPOSSIBLE, why=fix.impossible)
            continue
        before = target.read()
        previous = [(o, _current(before, o)) for o in fix.objects + fix.removes]
        own = [r["index"] for r in b.rows]
        attempt["objects"] = fix.names()
        if fix.removes:
            attempt["removes"] = fix.removed()

        def closed(candidate: Obj, own: list[int] = own) -> bool:
            out = _outcomes(candidate)
            return all(out.get(i) in _ANSWERED for i in own)

        def gone(candidate: Obj, own: list[int] = own, b: Behaviour = b) -> bool:
            """No request of B differs by B any more (some may by another cause: another behaviour's)."""
            return not any(_by(r, b) for r in candidate["rows"] if r["index"] in own)

        def back(candidate: Obj) -> bool:
            """The answers as before the fix, but for those tied routers decide or that changed by themselves."""
            loose = tied | {r["index"] for r in candidate["rows"] if r.get("tied")}
            out = _outcomes(candidate)
            return all(out.get(i) == o for i, o in now.items() if i not in loose)

        try:
            _do(target, fix)
        except KindlabError as exc:  # the cluster refuses the fix's objects: said, and what went in is taken back
            attempt.update(outcome=REFUSED, why=str(exc))
            _undo(target, previous)
            attempt["seconds"] = round(time.monotonic() - started, 1)
            continue
        for _try in range(2):  # a second try only when what it seemed to break stayed broken without it
            if _try:
                _do(target, fix)
            after = _settle(target, gone, sleep, settle)
            # a request its target's own account says tied routers take may change with any reload: not this fix's doing
            changed = [r for r in after["rows"] if now.get(r["index"]) in _ANSWERED and r["outcome"] == "differ"]
            regressed = [r for r in changed if not r.get("tied") and r["index"] not in tied]
            if len(changed) > len(regressed):
                attempt["tied_changed"] = [r["id"] for r in changed if r not in regressed][:20]
            if gone(after) and not regressed:
                break
            _undo(target, previous)
            body = _settle(target, back, sleep, settle)
            # what still differs with the fix undone changed by itself (a data plane that decides otherwise after each
            # reload): not counted against the fix, which gets a second try
            unsteady = [r for r in regressed if _outcomes(body).get(r["index"]) == "differ"]
            if not (gone(after) and unsteady):
                break
            attempt["unsteady"] = [r["id"] for r in unsteady][:20]
            tied |= {r["index"] for r in unsteady}
        if gone(after) and not regressed:
            out = _outcomes(after)
            attempt["outcome"] = CLOSED if closed(after) else CAUSE_GONE
            if not closed(after):
                attempt["remaining"] = _remaining(r for r in after["rows"] if r["index"] in own and r["outcome"] == "differ")
            example = next(r for r in after["rows"] if r["index"] == own[0])
            attempt["curl"] = list(example.get("curl", {}).values())
            for name in fix.names():
                keeps.setdefault(name, []).append(b.key)
            removed += [name for name in fix.removed() if name not in removed]
            # a request tied routers still take answers the same by chance, not by this fix; one they took before (which
            # may have answered the same by chance then) and that one router takes now, by it, unless an earlier fix
            # untied it already
            fixed_by.update({r["index"]: fix for r in after["rows"] if r["outcome"] in _ANSWERED and not r.get("tied")
                             and (now.get(r["index"]) == "differ" or r["index"] in tied and r["index"] not in fixed_by)})
            now, body = out, after
            tied |= {r["index"] for r in after["rows"] if r.get("tied")}
            attempt["seconds"] = round(time.monotonic() - started, 1)
            continue
        attempt["outcome"] = REGRESSED if regressed else NOT_CLOSED
        still = [r for r in after["rows"] if r["index"] in own and _by(r, b)]
        attempt["still_differ"] = len(still)
        attempt["still"] = [_said(r) for r in still][:10]  # what they answered with the fix in place
        attempt["changed"] = [r["id"] for r in regressed][:20]
        if not back(body):
            attempt["undone"] = "the answers after undoing it are not those before it (see the final comparison)"
        attempt["seconds"] = round(time.monotonic() - started, 1)
        if "second_try" not in attempt and any(i in tied for i in own):
            again[id(b)] = (attempt, sum(1 for a in attempts if a["outcome"] in KEPT))
            queue.append(b)
    _settled_later(attempts, behaviour_of, body, fixed_by, keeps)
    return {"attempts": attempts, "comparison": body, "keeps": keeps, "removed": removed,
            "kept": sum(1 for a in attempts if a["outcome"] in KEPT),
            "remain": sum(1 for a in attempts if a["outcome"] not in KEPT)}


def _said(row: Obj) -> str:
    """ROW's request and how its answers differ: "<id>: <field> <baseline> / <target>, ..."."""
    return "%s: %s" % (row["id"], ", ".join("%s %s / %s" % (d["field"], d.get("baseline") or "-", d.get("target") or "-")
                                            for d in row.get("differences") or []))


def _remaining(rows: Iterable[Obj]) -> list[str]:
    """What the ROWS that still differ differ by: each one's responsible, as the report groups them."""
    return sorted({"; ".join(dict.fromkeys(d["responsible"] for d in r["differences"])) for r in rows})


def _settled_later(attempts: list[Obj], behaviour_of: dict[int, Behaviour], body: Obj, fixed_by: dict[int, Fix],
                   keeps: dict[str, list[str]]) -> None:
    """Each behaviour left without a fix of its own (none known, or its fix undone) that the final replay (BODY, after
    the last kept fix) shows settled by fixes kept after it: every request now answers the same (closed by a later
    fix), or none differs by its cause any more while some still differ by another (its cause gone after a later
    fix). Named: the fixes after which its requests answered the same, else every fix kept after it. Only where one
    router takes each request: a tie's answer is chance. The fixes' objects are said to keep it too."""
    final = {r["index"]: r for r in body["rows"]}
    for attempt in attempts:
        b = behaviour_of.get(id(attempt))
        if b is None or attempt["outcome"] not in _SETTLED_LATER:
            continue
        mine = [final[r["index"]] for r in b.rows if r["index"] in final]
        by = [(f.says, f.names()) for f in {id(fixed_by[r["index"]]): fixed_by[r["index"]] for r in mine if r["index"] in fixed_by}.values()]
        # none of its requests answers the same by a fix (they still differ, by another cause): the fixes kept after it
        by = by or [(a["says"], a["objects"]) for a in attempts[attempts.index(attempt) + 1:] if a["outcome"] in (CLOSED, CAUSE_GONE)]
        if len(mine) != len(b.rows) or not by or any(r.get("tied") or _by(r, b) for r in mine):
            continue
        was = attempt["outcome"] + (": %s" % attempt["says"] if attempt["outcome"] != UNKNOWN else "")
        still = [r for r in mine if r["outcome"] not in _ANSWERED]
        attempt.update(outcome=LATER_GONE if still else LATER, says="; ".join(says for says, _names in by),
                       objects=list(dict.fromkeys(n for _says, names in by for n in names)),
                       curl=list(mine[0].get("curl", {}).values()), before_it="%s when it was tried" % was)
        for key in ("why", "changed", "still_differ", "still", "undone"):
            attempt.pop(key, None)
        if still:
            attempt["remaining"] = _remaining(still)
        for name in attempt["objects"]:
            keeps.setdefault(name, []).append(b.key)


_SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")


def manifest(obj: Obj, keeps: Sequence[str] = ()) -> Obj:
    """OBJ as a team applies it: without its status and the fields the API server sets; KEEPS in its annotation."""
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_FIELDS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k != "kubectl.kubernetes.io/last-applied-configuration"}
    if keeps:
        annotations[KEEPS_ANNOTATION] = json.dumps(list(keeps))
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    return out


def class_named(obj: Obj, by_annotation: bool) -> Obj:
    """An Ingress the rehearsal made name its IngressClass by the class annotation (CLASS_NAMED_ANNOTATION, see
    migration/rehearsal_lab.py) as the migrated manifests name it: BY_ANNOTATION, by that annotation still (what the target
    was proven with); else by spec.ingressClassName again, as the capture did. Any other object as it is."""
    annotations = dict((obj.get("metadata") or {}).get("annotations") or {})
    if obj.get("kind") != "Ingress" or CLASS_NAMED_ANNOTATION not in annotations:
        return obj
    out = copy.deepcopy(obj)
    named = annotations.pop(CLASS_NAMED_ANNOTATION)
    if not by_annotation:
        out["spec"] = dict(out.get("spec") or {}, ingressClassName=named)
        annotations.pop(CLASS_ANNOTATION, None)
    out["metadata"]["annotations"] = annotations
    return out


REMOVED_FILE = "removed.txt"  # not YAML: `kubectl apply -f DIR` leaves it alone


def write_migrated(directory: str, objects: Objects, keeps: dict[str, list[str]], class_by_annotation: bool = False,
                   removed: Sequence[str] = ()) -> list[str]:
    """The target's objects after its kept fixes, one file each under DIRECTORY (made afresh), each Ingress naming its
    class as the capture did, or by the class annotation where the target reads only that (CLASS_BY_ANNOTATION); and
    REMOVED_FILE naming the objects a kept fix deleted (REMOVED), which applying the others does not. Returns the paths."""
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        if old.endswith(".yaml") or old == REMOVED_FILE:
            os.remove(os.path.join(directory, old))
    paths = []
    if removed:
        path = os.path.join(directory, REMOVED_FILE)
        with open(path, "w", encoding="utf-8") as f:
            f.write("# Delete these when applying the manifests beside this file: a kept fix replaced them.\n")
            f.writelines("%s\n" % name for name in removed)
        paths.append(path)
    for kind in ("Gateway", "HTTPRoute", "Middleware", "IngressRoute", "Ingress"):
        pool = objects.pool(kind)
        for name in sorted(pool):
            path = os.path.join(directory, "%s-%s.yaml" % (kind.lower(), name.replace("/", "-")))
            with open(path, "w", encoding="utf-8") as f:
                yaml.safe_dump(manifest(class_named(pool[name], class_by_annotation), keeps.get("%s %s" % (kind, name), [])), f,
                               sort_keys=False)
            paths.append(path)
    return paths
