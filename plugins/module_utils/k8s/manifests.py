# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes objects read from YAML files (a team's manifests, the output of `helm template` or `kustomize build`),
answered as a read-only client answers `get` and `list`: what reads a cluster reads them the same way.

- PATH is a file or a directory (its *.yaml, *.yml and *.json files, sorted, not descending); every document of
  every file is an object, `kind: List` items included; empty documents are skipped.
- An object without a namespace is in `default`, as kubectl applies it; cluster-scoped kinds have none.
- Secrets are never kept (credentials stay where they are).
- A kind none of the manifests holds is answered as a cluster without its CRD answers (KindNotServed) where it is
  a CRD's (Gateway API); a built-in kind is answered with an empty list.
A document that is not a Kubernetes object raises a ManifestError naming the file and the document.
"""
from __future__ import annotations

import copy
import os
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import GROUP as GATEWAY_GROUP

Obj = dict[str, Any]

SUFFIXES = (".yaml", ".yml", ".json")
CLUSTER_SCOPED = {"Namespace", "IngressClass", "GatewayClass", "ClusterRole", "ClusterRoleBinding", "Node",
                  "CustomResourceDefinition"}
_CRD_GROUPS = (GATEWAY_GROUP + "/",)
NEVER_KEPT = {"Secret"}


class ManifestError(OptionError):
    """The manifests cannot be read as Kubernetes objects; the message names the file and the object."""


def files_of(path: str) -> list[str]:
    if os.path.isdir(path):
        found = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(SUFFIXES))
        if not found:
            raise ManifestError("%s: no %s file in this directory" % (path, ", ".join("*" + s for s in SUFFIXES)))
        return found
    if not os.path.isfile(path):
        raise ManifestError("%s: no such file or directory" % path)
    return [path]


def _objects(doc: Any, where: str) -> list[Obj]:
    if not isinstance(doc, dict):
        raise ManifestError("%s: expected a Kubernetes object (a mapping with apiVersion, kind and metadata.name), got %s"
                            % (where, type(doc).__name__))
    if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list)):
        out = []
        for i, item in enumerate(doc.get("items") or []):
            out += _objects(item, "%s items[%d]" % (where, i))
        return out
    missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
    if missing or not isinstance(name, str) or not name:
        raise ManifestError("%s: expected a Kubernetes object, without %s" % (where, ", ".join(missing + ([] if name else ["metadata.name"]))))
    obj = copy.deepcopy(doc)
    if obj["kind"] not in CLUSTER_SCOPED:
        obj["metadata"].setdefault("namespace", "default")
    return [obj]


def read(path: str) -> list[tuple[str, Obj]]:
    """Every object of the manifests at PATH (Secrets left out), each with the file it came from."""
    out: list[tuple[str, Obj]] = []
    for name in files_of(path):
        try:
            with open(name, encoding="utf-8") as handle:
                docs = list(yaml.safe_load_all(handle))
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError("%s: cannot be read (%s)" % (name, exc)) from None
        except YAMLError as exc:
            raise ManifestError("%s: not YAML: %s" % (name, (str(exc).splitlines() or [""])[0])) from None
        for i, doc in enumerate(docs):
            if doc is not None:
                out += [(name, o) for o in _objects(doc, "%s document %d" % (name, i + 1)) if o["kind"] not in NEVER_KEPT]
    return out


class ManifestClient:
    """A read-only client over OBJECTS: get and list as k8s.client.Client answers them (copies)."""

    def __init__(self, objects: list[Obj], source: str) -> None:
        self.objects = objects
        self.source = source

    def where(self) -> str:
        return "the manifests %s" % self.source

    def _served(self, api_version: str, kind: str) -> None:
        if api_version.startswith(_CRD_GROUPS) and not any(o["apiVersion"].startswith(_CRD_GROUPS) for o in self.objects):
            raise KindNotServed("%s %s: no Gateway API object in %s" % (api_version, kind, self.source))

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        self._served(api_version, kind)
        return next((copy.deepcopy(o) for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name
                     and o["metadata"].get("namespace") == namespace), None)

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[Obj]:
        if label_selector or field_selector:
            raise ManifestError("%s: a label or field selector is not read from manifests (select by namespace)" % self.source)
        self._served(api_version, kind)
        return [copy.deepcopy(o) for o in self.objects
                if o["kind"] == kind and namespace in (None, o["metadata"].get("namespace"))]
