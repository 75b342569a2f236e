from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import chart as nginx
from ansible_collections.kindlab.ingress.plugins.module_utils._images import ImageError, parse_load, split_image
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import default_images, parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import (
    INGRESS_NGINX_CONTROLLER_DIGEST,
    METALLB_CONTROLLER_IMAGE,
    TEST_APP_IMAGE,
)

DIGEST = "sha256:" + "ab" * 32
DEFAULTS = default_images()


def test_defaults_are_the_pins() -> None:
    images = parse_images({})
    assert images == DEFAULTS
    assert images["metallb_controller"] == METALLB_CONTROLLER_IMAGE and images["test_app"] == TEST_APP_IMAGE
    # The controller default is what chart 4.15.1 renders with its own values.
    assert images["ingress_nginx_controller"] == nginx.effective_config({}, "ingress", "one").image
    assert images["ingress_nginx_controller"].endswith("@" + INGRESS_NGINX_CONTROLLER_DIGEST)


def test_an_override_replaces_one_key_and_keeps_the_others() -> None:
    images = parse_images({"test_app": "registry.example.com:5000/mirror/nginx:1.29.3", "metallb_speaker": None})
    assert images["test_app"] == "registry.example.com:5000/mirror/nginx:1.29.3"
    assert images["metallb_speaker"] == DEFAULTS["metallb_speaker"]


@pytest.mark.parametrize("raw, message", [
    ({"nginx": "nginx:1"}, "lab_images.nginx: expected one of the keys metallb_controller, metallb_speaker"),
    ({"test_app": "Nginx:1"}, "lab_images.test_app: expected an image reference"),
    ({"test_app": "nginx:1 --privileged"}, "lab_images.test_app: expected an image reference"),
    ({"metallb_controller": "quay.io/metallb/controller@sha256:123"}, "lab_images.metallb_controller: expected"),
    ({"ingress_nginx_controller": 7}, "lab_images.ingress_nginx_controller: expected an image reference"),
    (["nginx:1"], "lab_images: expected a mapping"),
])
def test_bad_maps_name_the_key(raw, message) -> None:
    with pytest.raises(ImageError, match=message.replace(".", r"\.")):
        parse_images(raw)


def test_split_image() -> None:
    assert split_image("nginx") == ("nginx", "latest", "")
    assert split_image("localhost:5000/a/b:v1@" + DIGEST) == ("localhost:5000/a/b", "v1", DIGEST)
    with pytest.raises(ImageError, match="expected an image reference"):
        split_image("a b")


def test_load_true_means_every_image_a_list_is_checked() -> None:
    images = parse_images({"test_app": "nginx:1.29.3", "metallb_speaker": "nginx:1.29.3"})
    assert parse_load(True, images) == [DEFAULTS["metallb_controller"], "nginx:1.29.3", DEFAULTS["echo"],
                                        DEFAULTS["ingress_nginx_controller"], DEFAULTS["traefik"]]
    assert parse_load(False, images) == [] and parse_load(None, images) == [] and parse_load([], images) == []
    assert parse_load(["nginx:1.29.3", "nginx:1.29.3", "busybox:1.37"], images) == ["nginx:1.29.3", "busybox:1.37"]
    with pytest.raises(ImageError, match=r"lab_images_load\[1\]: expected an image reference"):
        parse_load(["nginx:1.29.3", ""], images)
    with pytest.raises(ImageError, match="lab_images_load: expected true"):
        parse_load("all", images)


@pytest.mark.parametrize("ref", [
    "registry.example.com/mirror/ingress-nginx/controller:v1.15.1",
    "registry.example.com/mirror/ingress-nginx/controller:v1.15.1@" + DIGEST,
    "controller-local:dev",
])
def test_chart_values_render_exactly_the_reference(ref) -> None:
    """repository/tag/digest as the chart's image template reads them (an empty digest drops the pinned one)."""
    values = nginx.image_values(ref)
    assert set(values["controller"]["image"]) == {"repository", "tag", "digest"}
    assert nginx.effective_config(values, "ingress", "one").image == ref
