# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image references: their grammar, split into repository, tag and digest, and the list a lab
loads into kind's nodes (lab_images_load). The lab's image map itself (lab_images: its keys and
pinned defaults) is lab/images.py's.
"""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError

# [host[:port]/]path[:tag][@sha256:<64 hex>], the distribution reference grammar in short.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_HOST = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?"
_IMAGE_RE = re.compile(
    r"^(?P<name>(?:%s/)?%s(?:/%s)*)(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
    % (_HOST, _COMPONENT, _COMPONENT)
)
EXPECTED = "an image reference such as registry.example.com/path/name:tag (optionally @sha256:<64 hex digits>)"


class ImageError(OptionError):
    """An image map or image reference is invalid; the message names the field."""


def split_image(ref: str) -> tuple[str, str, str]:
    """(repository, tag, digest) of a reference; the tag defaults to latest, as docker's does,
    and the digest is "" when there is none."""
    match = _IMAGE_RE.match(ref)
    if match is None:
        raise ImageError("%r: expected %s" % (ref, EXPECTED))
    return match.group("name"), match.group("tag") or "latest", match.group("digest") or ""


def valid_image(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 512 and _IMAGE_RE.match(value) is not None


def parse_load(raw: Any, images: dict[str, str], where: str = "lab_images_load") -> list[str]:
    """What to `kind load docker-image`: true loads every image of the map, false or [] none,
    a list names image references (duplicates dropped, order kept)."""
    if raw is None or raw is False:
        return []
    if raw is True:
        refs = list(images.values())
    elif isinstance(raw, list):
        refs = raw
    else:
        raise ImageError("%s: expected true (every image of lab_images), false, or a list of image references, got %r"
                         % (where, raw))
    out: list[str] = []
    for i, ref in enumerate(refs):
        if not valid_image(ref):
            raise ImageError("%s[%d]: expected %s, got %r" % (where, i, EXPECTED, ref))
        if ref not in out:
            out.append(ref)
    return out
