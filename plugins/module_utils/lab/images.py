# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The images a lab deploys (lab_images): one map by key, defaulting to the pins, overridable.

A user on a restricted network points them at a private mirror, or at images already on the
machine, and may have the kind provider load them into the nodes (lab_images_load). The lab's
own images (MetalLB's controller and speaker, the test app) are listed here; each controller
type declares its keys and pins in its own package (ControllerType.default_images), so a new
type brings its images without a change here. The renderers take the parsed map.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._images import EXPECTED, ImageError, valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    ECHO_APP_IMAGE,
    METALLB_CONTROLLER_IMAGE,
    METALLB_SPEAKER_IMAGE,
    TEST_APP_IMAGE,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry

# The images of the lab itself, whatever controllers it runs.
LAB_IMAGES: dict[str, str] = {
    "metallb_controller": METALLB_CONTROLLER_IMAGE,
    "metallb_speaker": METALLB_SPEAKER_IMAGE,
    "test_app": TEST_APP_IMAGE,
    "echo": ECHO_APP_IMAGE,  # workloads with app: echo
}


def default_images() -> dict[str, str]:
    """Every key of lab_images with its pin: the lab's own, then each controller type's."""
    images = dict(LAB_IMAGES)
    for how in registry.installable().values():
        images.update(how.default_images)
    return images


def parse_images(raw: Any, where: str = "lab_images") -> dict[str, str]:
    """The image map with the pinned defaults filled in; errors name `<where>.<key>`."""
    defaults = default_images()
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ImageError("%s: expected a mapping of %s to image references, got %r" % (where, ", ".join(defaults), raw))
    unknown = sorted(set(raw) - set(defaults))
    if unknown:
        raise ImageError("%s.%s: expected one of the keys %s" % (where, unknown[0], ", ".join(defaults)))
    images = dict(defaults)
    for key, value in raw.items():
        if value is None:
            continue  # an unset key keeps its pin
        if not valid_image(value):
            raise ImageError("%s.%s: expected %s, got %r" % (where, key, EXPECTED, value))
        images[key] = value
    return images
