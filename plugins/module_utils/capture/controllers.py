# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controllers a capture finds, as the lab's lab_controllers: each one a registered type recognises
becomes a chart release whose values render the same effective args (the type's args_to_values, then its
capture_values: kind, replicas, RBAC, IngressClass, Service type). The release is the one whose chart names
the workload as the cluster does; a type's secret flags are dropped from its args; where the lab's args
still differ from the cluster's, flag by flag, is said."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CapturePart, ClusterState, InstallPart, container_argv, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import controllers as discovery
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]


def release_of(how: InstallPart, workload: Obj) -> tuple[str, bool]:
    """The release whose chart names the workload as the cluster does: helm's instance label, then
    the workload's name's prefixes at each dash, shortest first (plain manifests name the Deployment after a
    release the chart would: ingress-nginx-controller ← ingress-nginx). (release, names match)."""
    ns, name = str(meta(workload).get("namespace")), str(meta(workload).get("name"))
    template = ((workload.get("spec") or {}).get("template") or {}).get("metadata") or {}
    label = ((meta(workload).get("labels") or {}).get("app.kubernetes.io/instance")
             or (template.get("labels") or {}).get("app.kubernetes.io/instance"))
    parts = name.split("-")
    candidates = ([label] if label else []) + ["-".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for release in candidates:
        try:
            if how.effective_config({}, release, ns, None).deployment == (ns, name):
                return release, True
        except how.value_errors:
            continue
    return (label or name), False


def _without_secrets(argv: list[str], secret_flags: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """ARGV without the type's secret flags (`--f=v`, or `--f v`); and the flags dropped."""
    kept: list[str] = []
    dropped: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name, eq, _value = arg.lstrip("-").partition("=")
        if arg.startswith("-") and name in secret_flags:
            dropped.append("--" + name)
            skip = not eq
            continue
        kept.append(arg)
    return kept, dropped


def _differences(capture: CapturePart, how: InstallPart, values: Obj, release: str, namespace: str, live: list[str]) -> list[str]:
    """Where the lab's args (rendered from VALUES) differ from the cluster's, flag by flag."""
    want = capture.effective_args(live, namespace, None)
    got = capture.effective_args(how.effective_config(values, release, namespace, None).args, namespace, None)
    return ["--%s: the cluster runs %r, the lab %r" % (flag, want.get(flag), got.get(flag))
            for flag in sorted(set(want) | set(got)) if want.get(flag) != got.get(flag)]


def capture_controllers(state: ClusterState, found: list[discovery.FoundWorkload]) -> tuple[list[Obj], list[Obj], list[str]]:
    """(lab_controllers entries, one record per controller, what could not be expressed)."""
    entries: list[Obj] = []
    records: list[Obj] = []
    notes: list[str] = []
    taken: set[str] = set()
    for f in found:
        ctype, ref = f.type, key_of(f.workload)
        ns = str(meta(f.workload).get("namespace"))
        capture, how = ctype.capture, ctype.install
        if capture is None or how is None:
            # (a lab can hold only a controller it can install, read back from the cluster's args)
            notes.append("controller %s: type %s cannot be captured (%s)"
                         % (ref, ctype.name, "the lab cannot install it" if how is None else "its args are not read back"))
            continue
        release, same_names = release_of(how, f.workload)
        if not same_names:
            notes.append("controller %s: no release of the %s chart names its workload so; the lab's release is %r"
                         % (ref, ctype.name, release))
        argv, secret = _without_secrets(container_argv(f.container, ns), capture.secret_flags)
        notes += ["controller %s: %s is a secret and stays in the cluster" % (ref, flag) for flag in secret]
        values, unexpressed = capture.args_to_values(argv, release, ns, None)
        notes += ["controller %s: %s" % (ref, text) for text in unexpressed]
        values, more = capture.capture_values(state, f.workload, f.container, values, release, taken)
        notes += ["controller %s: %s" % (ref, text) for text in more]
        differences = _differences(capture, how, values, release, ns, argv)
        notes += ["controller %s: args differ in the lab: %s" % (ref, text) for text in differences]
        entries.append({"namespace": ns, "type": ctype.name, "release": release, "values": values})
        records.append({"workload": ref, "kind": f.workload.get("kind"), "type": ctype.name, "release": "%s/%s" % (ns, release),
                        "differences": differences,
                        "problems": [p for c in f.controllers for p in c.problems]})
    return entries, records, notes
