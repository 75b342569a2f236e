# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The images a lab deploys: one map, defaulting to the pins in _versions, overridable.

`lab_images` names every image the lab runs (MetalLB's controller and speaker, the ingress-nginx
controller, Traefik, the test app). A user on a restricted network points them at a private mirror, or at
images already on the machine, and may have the kind provider load them into the nodes
(`lab_images_load`). This module is the one place the defaults are derived; the renderers take
the parsed map.
"""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    INGRESS_NGINX_CONTROLLER_DIGEST,
    INGRESS_NGINX_IMAGE,
    METALLB_CONTROLLER_IMAGE,
    METALLB_SPEAKER_IMAGE,
    TEST_APP_IMAGE,
    TRAEFIK_IMAGE,
)

# The default of every key: the pinned images (the controller with the digest its chart pins).
DEFAULT_IMAGES: dict[str, str] = {
    "metallb_controller": METALLB_CONTROLLER_IMAGE,
    "metallb_speaker": METALLB_SPEAKER_IMAGE,
    "ingress_nginx_controller": INGRESS_NGINX_IMAGE + "@" + INGRESS_NGINX_CONTROLLER_DIGEST,
    "test_app": TEST_APP_IMAGE,
    "traefik": TRAEFIK_IMAGE,
}

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


def parse_images(raw: Any, where: str = "lab_images") -> dict[str, str]:
    """The image map with the pinned defaults filled in; errors name `<where>.<key>`."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ImageError("%s: expected a mapping of %s to image references, got %r" % (where, ", ".join(DEFAULT_IMAGES), raw))
    unknown = sorted(set(raw) - set(DEFAULT_IMAGES))
    if unknown:
        raise ImageError("%s.%s: expected one of the keys %s" % (where, unknown[0], ", ".join(DEFAULT_IMAGES)))
    images = dict(DEFAULT_IMAGES)
    for key, value in raw.items():
        if value is None:
            continue  # an unset key keeps its pin
        if not valid_image(value):
            raise ImageError("%s.%s: expected %s, got %r" % (where, key, EXPECTED, value))
        images[key] = value
    return images


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


def ingress_nginx_image_values(ref: str) -> dict[str, Any]:
    """Chart values that make ingress-nginx's chart render exactly `ref`: with
    controller.image.repository set, the chart renders <repository>:<tag>, then @<digest> when
    the digest is not empty (an empty digest clears the chart's pinned one)."""
    repository, tag, digest = split_image(ref)
    return {"controller": {"image": {"repository": repository, "tag": tag, "digest": digest}}}
