# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Gateway API target of a rehearsal: a cluster's Ingresses translated by ingress2gateway (the
pinned binary, its ingress-nginx provider), retargeted at the rehearsal's own Gateway implementation,
with the translator's notes kept on the objects they are about.

- Input: the selected Ingresses, the Services they name and the IngressClasses, written to a file
  (`--input-file`): the translator never reads the cluster itself.
- Output: one Gateway per class and namespace (listener per host, port 80) and one HTTPRoute per
  host. The class is replaced by the rehearsal's GatewayClass and each listener's port by the port
  its implementation serves (Traefik: its `web` entry point), since ingress2gateway names the class
  after the IngressClass and listens where ingress-nginx's Service did.
- Notes: what it printed for a person (WARN and INFO boxes: a rewrite with capture groups it could
  not convert, case-insensitive regex matches, URL normalisation, TLS it did not translate). Each is
  kept as JSON in the annotation NOTES_ANNOTATION of the object it names, or of the Gateways when it
  names none, so the rehearsal that later replays through that Gateway reads them from the cluster
  and sets them beside the requests they explain.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import GROUP as CRD_GROUP

Obj = dict[str, Any]
Runner = Callable[[list[str]], "tuple[int, str, str]"]

NOTES_ANNOTATION = "kindlab.ingress/translation-notes"
TRANSLATOR_ANNOTATION = "kindlab.ingress/translated-by"
_BOX = re.compile(r"^\u250c\u2500\s*(?P<severity>[A-Z]+)\b")
_FIELD = re.compile(r"^(?P<key>source|object):\s*(?P<value>.*)$")


class TranslationError(KindlabError):
    """ingress2gateway failed, or printed what is not Gateway API objects."""


@dataclass(frozen=True)
class Note:
    severity: str  # WARN, INFO, ERROR
    message: str
    source: str = ""  # INGRESS-NGINX, STANDARD_EMITTER
    object: str = ""  # "HTTPRoute: shop/app-rewrite-example-test"; "" for a note about the whole translation

    def as_dict(self) -> Obj:
        return asdict(self)


def parse_notes(stderr: str) -> list[Note]:
    """The boxes ingress2gateway prints on stderr (`┌─ WARN ─…`, lines `│  text`, `└─`), one Note each."""
    notes: list[Note] = []
    severity: str | None = None
    lines: list[str] = []
    fields: dict[str, str] = {}
    for raw in stderr.splitlines():
        line = raw.strip()
        box = _BOX.match(line)
        if box:
            severity, lines, fields = box.group("severity"), [], {}
            continue
        if severity is None:
            continue
        if line.startswith("\u2514"):
            notes.append(Note(severity, " ".join(lines), fields.get("source", ""), fields.get("object", "")))
            severity = None
            continue
        text = line.lstrip("\u2502").strip()
        field = _FIELD.match(text)
        if field:
            fields[field.group("key")] = field.group("value")
        elif text:
            lines.append(text)
    return notes


def _error_of(stderr: str) -> str:
    """The error ingress2gateway gives before its usage text, on one line."""
    head = stderr.split("\nUsage:", 1)[0]
    text = re.sub(r"\s*#\s*", " ", " ".join(line.strip() for line in head.splitlines() if line.strip()))
    return text.strip() or "no message"


def _backends(spec: Obj) -> list[Obj]:
    out = [spec["defaultBackend"]] if spec.get("defaultBackend") else []
    for rule in spec.get("rules") or []:
        out += [p.get("backend") or {} for p in (rule.get("http") or {}).get("paths") or []]
    return out


def with_port_numbers(ingress: Obj, services: Sequence[Obj]) -> Obj:
    """The Ingress with each backend's port name replaced by the number of that Service port. ingress2gateway
    v1.2.0 resolves names so from a cluster, but from a file it reads the Services only after the Ingresses
    have consumed the input (providers/ingressnginx/resource_reader.go, readResourcesFromFile), finds none,
    and fails on every named port; a name no Service port has is left for it to refuse."""
    ns = str((ingress.get("metadata") or {}).get("namespace"))
    ports = {(str(s["metadata"]["name"]), str(p.get("name"))): p.get("port")
             for s in services if s["metadata"].get("namespace") == ns for p in (s.get("spec") or {}).get("ports") or []}
    out: Obj = json.loads(json.dumps(ingress))
    for backend in _backends(out.get("spec") or {}):
        service = backend.get("service") or {}
        name = (service.get("port") or {}).get("name")
        number = ports.get((str(service.get("name")), str(name))) if name else None
        if number:
            service["port"] = {"number": number}
    return out


def input_objects(ingresses: Sequence[Obj], services: Sequence[Obj], classes: Sequence[Obj]) -> list[Obj]:
    """What the translator reads: the Ingresses (named ports as numbers, see with_port_numbers), the Services
    of their namespaces, the IngressClasses; each without status and server-set metadata (it needs neither)."""
    def clean(obj: Obj, api_version: str, kind: str) -> Obj:
        meta = obj.get("metadata") or {}
        keep = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
        return {"apiVersion": api_version, "kind": kind, "metadata": keep, "spec": obj.get("spec") or {}}
    return ([clean(c, "networking.k8s.io/v1", "IngressClass") for c in classes]
            + [clean(s, "v1", "Service") for s in services]
            + [clean(with_port_numbers(i, services), "networking.k8s.io/v1", "Ingress") for i in ingresses])


def argv_for(binary: str, input_path: str, ingress_class: str) -> list[str]:
    return [binary, "print", "--providers", "ingress-nginx", "--ingress-nginx-ingress-class", ingress_class,
            "--input-file", input_path, "--all-namespaces", "--no-color", "--output", "yaml"]


def run_translator(binary: str, objects: Sequence[Obj], ingress_class: str, run: Runner) -> tuple[list[Obj], list[Note]]:
    """Run ingress2gateway on OBJECTS; its Gateway API objects and its notes."""
    fd, path = tempfile.mkstemp(prefix="kindlab-ingress2gateway-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w") as handle:
            yaml.safe_dump_all(list(objects), handle, sort_keys=False)
        rc, out, err = run(argv_for(binary, path, ingress_class))
    finally:
        os.unlink(path)
    if rc != 0:
        raise TranslationError("ingress2gateway (%s) failed with exit code %d: %s" % (binary, rc, _error_of(err)))
    try:
        # nothing of the class to translate: it prints this sentence, not an empty document
        produced = [o for o in yaml.safe_load_all(out) if o and o != "No resources found"]
    except YAMLError as exc:
        raise TranslationError("ingress2gateway (%s) printed no YAML: %s" % (binary, exc)) from None
    wrong = [o.get("kind") if isinstance(o, dict) else o for o in produced
             if not isinstance(o, dict) or not str(o.get("apiVersion", "")).startswith(CRD_GROUP + "/")]
    if wrong:
        raise TranslationError("ingress2gateway (%s) printed objects other than Gateway API ones: %s" % (binary, wrong))
    return produced, parse_notes(err)


def _ref(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return "%s: %s/%s" % (obj.get("kind"), meta.get("namespace"), meta.get("name"))


def retarget(produced: Sequence[Obj], notes: Sequence[Note], gateway_class: str, listener_port: int,
             translator: str, tls_listener_port: int) -> list[Obj]:
    """The objects to apply: the rehearsal's class and listener ports (HTTPS listeners on TLS_LISTENER_PORT,
    the others on LISTENER_PORT, and each route's parentRef port moved with its listener's), no status, the
    notes on the objects they name (notes naming none on every Gateway)."""
    moved: dict[tuple[str, int], int] = {}  # (Gateway namespace/name, the translator's port) → the rehearsal's
    for obj in produced:
        if obj.get("kind") == "Gateway":
            for listener in obj["spec"].get("listeners") or []:
                port = tls_listener_port if listener.get("protocol") in ("HTTPS", "TLS") else listener_port
                moved[(_ref(obj).split(" ", 1)[-1], int(listener.get("port") or 0))] = port
    by_ref: dict[str, list[Obj]] = {}
    general = [n.as_dict() for n in notes if not n.object]
    for n in notes:
        if n.object:
            by_ref.setdefault(n.object.replace(" ", ""), []).append(n.as_dict())
    out = []
    for obj in produced:
        obj = json.loads(json.dumps(obj))  # a copy: the translator's output stays as it printed it
        obj.pop("status", None)
        meta = obj.setdefault("metadata", {})
        annotations = meta.setdefault("annotations", {})
        annotations[TRANSLATOR_ANNOTATION] = translator
        own = by_ref.get(_ref(obj).replace(" ", ""), [])
        if obj.get("kind") == "Gateway":
            obj["spec"]["gatewayClassName"] = gateway_class
            for listener in obj["spec"].get("listeners") or []:
                listener["port"] = tls_listener_port if listener.get("protocol") in ("HTTPS", "TLS") else listener_port
            own = own + general
        namespace = str(meta.get("namespace") or "")
        for parent in (obj.get("spec") or {}).get("parentRefs") or []:
            if parent.get("port") is not None:
                gateway = "%s/%s" % (parent.get("namespace") or namespace, parent.get("name"))
                parent["port"] = moved.get((gateway, int(parent["port"])), parent["port"])
        if own:
            annotations[NOTES_ANNOTATION] = json.dumps(own, sort_keys=True)
        out.append(obj)
    return out


def notes_of(obj: Obj) -> list[Obj]:
    """The translator's notes an object carries ([] for an object no translation made)."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(NOTES_ANNOTATION)
    if not text:
        return []
    try:
        notes = json.loads(text)
    except ValueError:
        return []
    return [n for n in notes if isinstance(n, dict)] if isinstance(notes, list) else []


def find_binary(value: str, option: str = "binary") -> str:
    """The translator to run: a path, or a name on PATH; an error naming OPTION when neither exists."""
    found = value if os.sep in value else shutil.which(value)
    if not found or not os.access(found, os.X_OK):
        raise OptionError("%s: expected the ingress2gateway binary (a path or a name on PATH; the lab's is built "
                          "by `kindlab-twin build binaries ingress2gateway`), got %r, which is not an executable" % (option, value))
    return found


# The Ingress a note is about: "... from Ingress shop/app: ...", or (its annotation notes) "... from shop/app: ..."
_REF = r"[a-z0-9][-a-z0-9.]*/[a-z0-9][-a-z0-9.]*"
_FROM_INGRESS = re.compile(r"\bIngress (?P<ref>%s)|\bfrom (?P<from>%s):" % (_REF, _REF))


def note_text(note: Obj) -> str:
    return "%s: %s" % (note.get("severity", ""), note.get("message", ""))


def set_beside_requests(body: Obj, notes: Sequence[tuple[tuple[str, ...], Obj]]) -> None:
    """The translator's notes in one target's comparison: those about the whole translation once
    (`translation_notes`), the others on each differing request of a host their object routes (its
    `translation_notes`, and its differences' causes), unless the note names another Ingress."""
    body["translation_notes"] = [note_text(n) for hosts, n in notes if not hosts]
    for row in body["rows"]:
        if not row.get("differences"):
            continue
        own: list[str] = []
        for hosts, n in notes:
            named = _FROM_INGRESS.search(str(n.get("message", "")))
            if hosts and row["host"] in hosts and (named is None or (named.group("ref") or named.group("from")) == row["ingress"]) \
                    and note_text(n) not in own:  # it repeats a note per rule of the Ingress
                own.append(note_text(n))
        if own:
            row["translation_notes"] = own
            # in the cause too, where an expectation's `cause` can name it and every report shows it
            for d in row["differences"]:
                d["cause"] += "".join(" [the translator said: %s]" % n for n in own)
