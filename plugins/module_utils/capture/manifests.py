# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A capture of a team's manifests instead of a live cluster: the Ingresses, Services, IngressClasses and Gateway API
objects of YAML files (plain YAML, `helm template` or `kustomize build` output) read as the cluster capture reads a
cluster (k8s.manifests.ManifestClient under capture.cluster.read_cluster), so a rehearsal can run in CI with no
cluster at all.

The diagnosis's expectations of live status (who writes an Ingress's status, which address) are left out: files have
none. Manifests rarely hold the ingress-nginx that serves them: when they hold none, the capture adds the chart's own,
its defaults but for the class, which is the IngressClass of the manifests that names ingress-nginx's controller,
else the class most of their Ingresses name (nginx when they name none); that is the rehearsal's baseline.
Refused before anything is written, in one line naming the file and the object: manifests with no Ingress, an
Ingress whose backend is a Service they do not define, a file that is not Kubernetes YAML."""
from __future__ import annotations

from collections import Counter
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.cluster import read_cluster
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.scenario import Capture, CaptureError, capture, check
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import DEFAULT_TYPE, type_of_class
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.manifests import ManifestClient, read
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import backends_of

Obj = dict[str, Any]

# Where the chart's own ingress-nginx runs when the manifests hold none (the chart's default release and namespace).
BASELINE = {"namespace": "ingress-nginx", "release": "ingress-nginx"}


def check_manifests(found: list[tuple[str, Obj]], namespaces: list[str], path: str) -> None:
    """Refuse manifests that hold no Ingress (of NAMESPACES), or an Ingress naming a Service they do not define."""
    ingresses = [(f, o) for f, o in found if o["kind"] == "Ingress"
                 and (not namespaces or o["metadata"]["namespace"] in namespaces)]
    if not ingresses:
        raise CaptureError("manifests: %s holds no Ingress%s" % (path, " in %s" % ", ".join(namespaces) if namespaces else ""))
    services = {key_of(o) for _f, o in found if o["kind"] == "Service"}
    for where, ing in ingresses:
        for ref in backends_of(ing):
            wanted = "%s/%s" % (ing["metadata"]["namespace"], ref.service)
            if ref.service and wanted not in services:
                raise CaptureError("%s: Ingress %s: its backend %s names Service %s, which the manifests do not define"
                                   % (where, key_of(ing), ref.where, wanted))


def baseline_class(found: list[tuple[str, Obj]]) -> str:
    """The class the chart's ingress-nginx takes: an ingress-nginx IngressClass of the manifests, else the class most
    of their Ingresses name, else nginx."""
    ours = sorted(o["metadata"]["name"] for _f, o in found if o["kind"] == "IngressClass"
                  and type_of_class(str((o.get("spec") or {}).get("controller") or "")) == DEFAULT_TYPE)
    if ours:
        return str(ours[0])
    named = Counter(str((o.get("spec") or {}).get("ingressClassName")
                        or ((o.get("metadata") or {}).get("annotations") or {}).get(CLASS_ANNOTATION) or "")
                    for _f, o in found if o["kind"] == "Ingress")
    named.pop("", None)
    return sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if named else "nginx"


def capture_manifests(path: str, namespaces: list[str], scenario: str, anonymize: bool = False) -> Capture:
    """The lab definition the manifests at PATH make (see the module docstring)."""
    try:
        found = read(path)
    except OptionError as exc:
        raise CaptureError("manifests: %s" % exc) from None
    check_manifests(found, namespaces, path)
    result = capture(read_cluster(ManifestClient([o for _f, o in found], path), namespaces), scenario, anonymize)
    lab = result.lab
    # What the diagnosis expects of a cluster's live status (who writes it, which address) says nothing of files,
    # which have none: only what the manifests themselves say is kept (two Ingresses on one host and path).
    lab["lab_expect"] = {k: v for k, v in lab["lab_expect"].items() if k == "conflicts"}
    said = [n for n in result.unexpressed if not n.startswith("lab_expect holds")]
    said.append("lab_expect holds no status or address expectations: manifests have no live status")
    result.unexpressed = said
    lab["lab_capture_report"] = list(said)
    if not any(c.get("type") == DEFAULT_TYPE for c in lab["lab_controllers"]):
        name = baseline_class(found)
        lab["lab_controllers"].append(dict(BASELINE, type=DEFAULT_TYPE, values={"controller": {
            "admissionWebhooks": {"enabled": False}, "ingressClassResource": {"name": name}, "ingressClass": name}}))
        lab["lab_namespaces"] = sorted(set(lab["lab_namespaces"]) | {BASELINE["namespace"]})
        note = ("the manifests hold no ingress-nginx: the chart's own serves class %s (release %s in namespace %s), the "
                "rehearsal's baseline" % (name, BASELINE["release"], BASELINE["namespace"]))
        result.unexpressed.append(note)
        lab["lab_capture_report"].append(note)
    check(lab)
    return result
