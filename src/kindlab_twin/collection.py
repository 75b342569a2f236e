"""The kindlab.ingress collection's controller-type modules, for the twin's emulations.

Each controller's rules (its flags, which Ingresses it claims, what it publishes, its sort
order) are written once, in the collection (plugins/module_utils/controllers/); the twin
emulates what they say. The collection is found as ansible finds it: a directory holding
ansible_collections/kindlab/ingress on ANSIBLE_COLLECTIONS_PATH, else this repository's
development link (.collections, made by `make setup`).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

_LINK = Path(__file__).resolve().parents[2] / ".collections"


def _collection_roots() -> list[str]:
    roots = []
    for var in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS"):
        roots += [p for p in os.environ.get(var, "").split(os.pathsep) if p]
    return [os.path.expanduser(p) for p in roots] + [str(_LINK)]


def _make_importable() -> None:
    for root in _collection_roots():
        if os.path.isdir(os.path.join(root, "ansible_collections", "kindlab", "ingress", "plugins")):
            if root not in sys.path:
                sys.path.append(root)
            return
    raise ImportError("kindlab-twin needs the kindlab.ingress collection: no ansible_collections/kindlab/ingress "
                      "under ANSIBLE_COLLECTIONS_PATH or %s (run `make setup`)" % _LINK)


_make_importable()

# The imports above must run first: they make the collection importable.
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import binary as nginx_binary  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import objects  # noqa: E402
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import selection  # noqa: E402

__all__ = ["base", "nginx_binary", "objects", "registry", "selection"]
