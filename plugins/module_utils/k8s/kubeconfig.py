# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubeconfig files: which ones kubectl and kind consider, which one kind writes into, the files
merged as kubectl merges them, and why they name no cluster to talk to."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KubeconfigError, one_line
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj

# What to do when a kubeconfig's entry cannot be used (a certificate file gone, no server).
LOADER_HINT = "fix the file or set kubeconfig and context to those of a running cluster"
# What to do when the kubeconfig names no cluster, or names one that is not there.
CREATE_HINT = ("create the cluster first (ansible-playbook playbooks/lab.yml), or set kubeconfig and context "
               "to those of a running cluster")


def kubeconfig_paths(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The kubeconfig files kubectl (and kind) consider: the explicit path alone; else the
    $KUBECONFIG entries, empty ones and repeats dropped; else ~/.kube/config."""
    if explicit:
        return [explicit]
    env = os.environ if environ is None else environ
    entries: list[str] = []
    for entry in (env.get("KUBECONFIG") or "").split(os.pathsep):
        if entry and entry not in entries:
            entries.append(entry)
    if entries:
        return entries
    home = env.get("HOME") or os.path.expanduser("~")
    return [os.path.join(home, ".kube", "config")]


def kubeconfig_path_for_merge(
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    is_file: Callable[[str], bool] = os.path.isfile,
) -> str:
    """The file kind writes a new cluster's credentials into, as kind's pathForMerge picks it:
    with one candidate that one; else the first candidate that is an existing file; else the
    last candidate. So KUBECONFIG=a:b with only b present gives b."""
    candidates = kubeconfig_paths(explicit, environ)
    if len(candidates) == 1:
        return candidates[0]
    for path in candidates:
        if is_file(path):
            return path
    return candidates[-1]


@dataclass(frozen=True)
class Kubeconfig:
    """Kubeconfig files merged as kubectl merges them, read once: each cluster, context and user from
    the first file that names it, with that file's directory (its relative paths resolve there), and
    the context to use (the one asked for, else the first current-context set)."""

    paths: list[str]
    asked: str | None
    context: str
    entries: dict[str, tuple[Obj, str]]

    def entry(self, section: str, name: Any) -> tuple[Obj, str]:
        """(the body of the SECTION entry named NAME, its file's directory); empty when there is none."""
        return self.entries.get("%s/%s" % (section, name), ({}, ""))

    def unusable(self, why: str) -> KubeconfigError:
        return unusable(self.paths, self.asked, why)


def unusable(paths: list[str], context: str | None, why: str) -> KubeconfigError:
    """`cannot use kubeconfig PATHS (context C): WHY`, the one line for a kubeconfig that names no usable cluster."""
    return KubeconfigError("cannot use kubeconfig %s (context %s): %s" % (os.pathsep.join(paths), context or "(current)", why))


def read_kubeconfig(paths: list[str], context: str | None) -> Kubeconfig:
    """The kubeconfig file(s) at `paths` merged, for `context` (None: the current context). When
    they name no cluster for it, a KubeconfigError whose one line says why and what to do. Only
    what the files say is checked here, not whether its cluster answers."""
    existing = [p for p in paths if os.path.isfile(p)]
    if not existing:
        what = "the file does not exist" if len(paths) == 1 else "none of these files exists"
        raise unusable(paths, context, "%s; %s" % (what, CREATE_HINT))
    entries: dict[str, tuple[Obj, str]] = {}
    contexts: list[str] = []
    current = ""
    for path in existing:
        try:
            with open(path, encoding="utf-8") as handle:
                doc = yaml.safe_load(handle)
        except (OSError, UnicodeDecodeError, YAMLError) as exc:
            raise unusable(paths, context, "%s cannot be read as YAML (%s); fix or remove it" % (path, one_line(exc))) from exc
        if doc is None:
            continue  # an empty file: kubectl skips it too
        if not isinstance(doc, dict):
            raise unusable(paths, context, "%s is not a kubeconfig (expected a mapping with clusters, contexts and users)" % path)
        base = os.path.dirname(os.path.abspath(path))
        for section in ("clusters", "contexts", "users"):
            for item in doc.get(section) or []:
                if isinstance(item, dict) and item.get("name"):
                    entries.setdefault("%s/%s" % (section, item["name"]), (dict(item.get(section[:-1]) or {}), base))
        contexts += [str(c.get("name")) for c in doc.get("contexts") or [] if isinstance(c, dict) and c.get("name")]
        current = current or str(doc.get("current-context") or "")
    if not contexts:
        raise unusable(paths, context, "it has no contexts (a deleted cluster's context is removed from it); %s" % CREATE_HINT)
    wanted = context or current
    if not wanted:
        raise unusable(paths, context, "it names no current context and none was given; set context to one of %s "
                                       "(or run kubectl --kubeconfig %s config use-context NAME)"
                       % (", ".join(contexts), os.pathsep.join(paths)))
    if wanted not in contexts:
        raise unusable(paths, context, "it has no context %s (it has %s): the cluster was deleted, or the context is "
                                       "misspelt; %s" % (wanted, ", ".join(contexts), CREATE_HINT))
    return Kubeconfig(paths, context, wanted, entries)
