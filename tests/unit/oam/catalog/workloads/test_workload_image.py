"""The ``image`` property of every workload type (docs/transform.md#shared-workload-properties)."""

from __future__ import annotations

import pytest
from oamkit.workloads import error, handler_error, main_container, objects

from oam_operator.oam.catalog.workloads.image import parse_image

DIGEST = "sha256:" + "a" * 64
TYPES = ["webservice", "worker", "statefulset", "daemonset", "cronjob"]


def props(type_name: str, image: object) -> dict[str, object]:
    out: dict[str, object] = {"image": image}
    if type_name == "cronjob":
        out["schedule"] = "0 2 * * *"
    return out


@pytest.mark.parametrize(
    "image",
    [
        "nginx:1.25",
        "ghcr.io/example/app:v1.0.0",
        "localhost:5000/team/app:2024.01-rc_1",
        "registry.example.com:443/a/b/c:TAG",
        f"nginx@{DIGEST}",
        f"nginx:latest@{DIGEST}",  # a digest pins the image whatever the tag says
        f"ghcr.io/example/app:v1@{DIGEST}",
        "[::1]:5000/app:v1",
    ],
)
def test_pinned_images_are_accepted_and_used_as_written(image: str) -> None:
    for type_name in TYPES:
        assert main_container(objects(type_name, props(type_name, image))[0])["image"] == image


@pytest.mark.parametrize("type_name", TYPES)
def test_latest_and_untagged_images_are_refused_by_every_type(type_name: str) -> None:
    assert handler_error(type_name, props(type_name, "nginx:latest")) == (
        'image "nginx:latest" rejected: :latest tag not allowed; use an explicit version tag or digest'
    )
    assert handler_error(type_name, props(type_name, "nginx")) == (
        'image "nginx" rejected: no tag or digest specified; use an explicit version tag or digest'
    )
    assert handler_error(type_name, {} if type_name != "cronjob" else {"schedule": "0 2 * * *"}) == (
        "required property 'image' missing or not a string"
    )


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ("localhost:5000/app", "no tag or digest specified"),  # a port is not a tag
        ("docker.io/library/nginx", "no tag or digest specified"),
        ("Nginx:1.0", "could not parse reference: Nginx:1.0"),  # repositories are lower case
        ("nginx:", "could not parse reference: nginx:"),
        ("nginx:bad tag", "could not parse reference: nginx:bad tag"),
        ("a:1.0", "could not parse reference: a:1.0"),  # a repository has at least 2 characters
        ("nginx@sha256:abc", "could not parse reference: nginx@sha256:abc"),
        ("nginx@md5:" + "a" * 64, "could not parse reference: nginx@md5:" + "a" * 64),
        ("exa mple.com/app:v1", "could not parse reference: exa mple.com/app:v1"),
        ("example.com:port/app:v1", "could not parse reference: example.com:port/app:v1"),
        ("", "could not parse reference: "),
        ("nginx:" + "1" * 129, "could not parse reference: nginx:" + "1" * 129),
    ],
)
def test_image_messages(image: str, message: str) -> None:
    text = handler_error("webservice", {"image": image})
    if message.startswith("could not"):
        assert text == f'image "{image}" rejected: {message}'
    else:
        assert text == f'image "{image}" rejected: {message}; use an explicit version tag or digest'


def test_image_must_be_a_string() -> None:
    assert handler_error("worker", {"image": 5}) == "required property 'image' missing or not a string"
    assert error("worker", {"image": 5}) == 'component "c" (type "worker"): properties.image: expected string, got int'


def test_parse_image_reports_tag_and_digest() -> None:
    assert parse_image("nginx:1.0") is not None and parse_image("nginx:1.0").tag == "1.0"  # type: ignore[union-attr]
    ref = parse_image(f"nginx@{DIGEST}")
    assert ref is not None and ref.digest and ref.tag == ""
    assert parse_image("UPPER/case:1") is None
