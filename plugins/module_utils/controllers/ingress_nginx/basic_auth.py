# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx's basic auth as an Ingress asks for it: `auth-type: basic` with the Secret named by
`auth-secret` (`name`, or `namespace/name`), its users written as `auth-secret-type` says (`auth-file`,
the default: htpasswd lines under the key `auth`; `auth-map`: one key per user, its hash the value), and the
realm `auth-realm`. Traefik's ingress-nginx provider reads the same four annotations.

Only `basic` is rebuilt: `digest` needs an htdigest file bound to the realm, and the other auth annotations
(auth-url, auth-snippet, ...) name services or code, which stay in the cluster."""
from __future__ import annotations

from typing import Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CredentialSecret
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import ANNOTATION_PREFIX as PREFIX

ANNOTATIONS = tuple(PREFIX + a for a in ("auth-type", "auth-secret", "auth-secret-type", "auth-realm"))
FORMATS = ("auth-file", "auth-map")


def credential_secrets(namespace: str, annotations: Mapping[str, str]) -> list[CredentialSecret]:
    """The Secret a basic-auth Ingress in NAMESPACE checks requests against ([] when it asks for none, or for
    what is not rebuilt: another auth type, a secret type ingress-nginx does not know)."""
    if str(annotations.get(PREFIX + "auth-type", "")).strip().lower() != "basic":
        return []
    ref = str(annotations.get(PREFIX + "auth-secret", "")).strip()
    kind = str(annotations.get(PREFIX + "auth-secret-type", "") or "auth-file").strip()
    parts = ref.split("/")
    if not ref or len(parts) > 2 or not all(parts) or kind not in FORMATS:
        return []
    ns, name = (parts[0], parts[1]) if len(parts) == 2 else (namespace, parts[0])
    return [CredentialSecret(ns, name, kind, tuple(a for a in ANNOTATIONS if a in annotations))]
