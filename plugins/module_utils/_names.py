# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes object names: the rules of k8s.io/apimachinery/pkg/util/validation, in one place.

- DNS-1123 label (Namespaces, most names inside a namespace): lower-case letters, digits and
  '-', starting and ending with a letter or digit, at most 63 characters.
- DNS-1123 subdomain (Deployments, ConfigMaps, IngressClasses, ...): such labels joined by '.',
  at most 253 characters.
- DNS-1035 label (Services): a DNS-1123 label that starts with a letter. Kubernetes 1.34 added
  the RelaxedServiceNameValidation gate (KEP-5311) to accept DNS-1123 labels; it is alpha, off by
  default, in the 1.35 the lab runs.
"""
from __future__ import annotations

import re
from typing import Any

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# Matched with fullmatch: `$` would also accept a trailing newline.
DNS1123_LABEL_RE = re.compile(_LABEL)
DNS1123_SUBDOMAIN_RE = re.compile(r"%s(\.%s)*" % (_LABEL, _LABEL))
DNS1035_LABEL_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

DNS1123_LABEL = "a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)"
DNS1123_SUBDOMAIN = ("a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending "
                     "with a letter or digit, at most 253 characters)")
DNS1035_LABEL = "a DNS-1035 label (a lower-case letter, then lower-case letters, digits and '-', at most 63 characters)"


def is_dns1123_label(name: Any) -> bool:
    return isinstance(name, str) and len(name) <= 63 and bool(DNS1123_LABEL_RE.fullmatch(name))


def is_dns1123_subdomain(name: Any) -> bool:
    return isinstance(name, str) and len(name) <= 253 and bool(DNS1123_SUBDOMAIN_RE.fullmatch(name))


def is_dns1035_label(name: Any) -> bool:
    return isinstance(name, str) and len(name) <= 63 and bool(DNS1035_LABEL_RE.fullmatch(name))
