# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubeconfig files: which ones kubectl and kind consider, which one kind writes into, and why
they name no cluster to talk to."""
from __future__ import annotations

import os
from typing import Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import one_line

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


def kubeconfig_problem(paths: list[str], context: str | None) -> str | None:
    """Why the kubeconfig file(s) at `paths` (merged as kubectl merges them) name no cluster for
    `context` (None: the current context), as one line with what to do; None when they do.
    Only what the file says is checked here, not whether its cluster answers."""
    if yaml is None:  # the client needs PyYAML: it would not have imported
        return None
    shown = os.pathsep.join(paths)
    head = "cannot use kubeconfig %s (context %s): " % (shown, context or "(current)")
    existing = [p for p in paths if os.path.isfile(p)]
    if not existing:
        what = "the file does not exist" if len(paths) == 1 else "none of these files exists"
        return head + "%s; %s" % (what, CREATE_HINT)
    contexts: list[str] = []
    current = ""
    for path in existing:
        try:
            with open(path, encoding="utf-8") as handle:
                doc = yaml.safe_load(handle)
        except (OSError, UnicodeDecodeError, YAMLError) as exc:
            return head + "%s cannot be read as YAML (%s); fix or remove it" % (path, one_line(exc))
        if doc is None:
            continue  # an empty file: kubectl skips it too
        if not isinstance(doc, dict):
            return head + "%s is not a kubeconfig (expected a mapping with clusters, contexts and users)" % path
        contexts += [str(c.get("name")) for c in doc.get("contexts") or [] if isinstance(c, dict) and c.get("name")]
        current = current or str(doc.get("current-context") or "")
    if not contexts:
        return head + "it has no contexts (a deleted cluster's context is removed from it); %s" % CREATE_HINT
    wanted = context or current
    if not wanted:
        return head + ("it names no current context and none was given; set context to one of %s "
                       "(or run kubectl --kubeconfig %s config use-context NAME)" % (", ".join(contexts), shown))
    if wanted not in contexts:
        return head + ("it has no context %s (it has %s): the cluster was deleted, or the context is misspelt; %s"
                       % (wanted, ", ".join(contexts), CREATE_HINT))
    return None
