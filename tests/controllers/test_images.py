from __future__ import annotations

import pytest

from controllers.images import image_name, is_valid_image
from controllers.problems import spec_problem


@pytest.mark.parametrize(
    "image",
    [
        "nginx",
        "nginx:1.23.1",
        "memcached:1.4.36-alpine",
        "library/nginx:latest",
        "registry.example.com:5000/team/app:v1",
        "localhost:5000/app",
        "ghcr.io/org/app@sha256:" + "a" * 64,
        "memcached:does-not-exist",
    ],
)
def test_is_valid_image_accepts_image_references(image: str) -> None:
    assert is_valid_image(image)


@pytest.mark.parametrize(
    "image", ["UPPER CASE:bad", "", "Nginx", "nginx:", "nginx::1", "a b", ":tag", "nginx:-x"]
)
def test_is_valid_image_rejects_malformed_references(image: str) -> None:
    assert not is_valid_image(image)


def test_a_name_of_255_characters_with_a_tag_is_valid_and_one_more_is_not() -> None:
    name = "registry.example.com/" + "a" * 234
    assert len(name) == 255 and is_valid_image(f"{name}:v1")
    assert not is_valid_image(f"{name}a:v1")


@pytest.mark.parametrize(
    ("image", "name"),
    [
        ("nginx", "nginx"),
        ("localhost:5000/app", "localhost:5000/app"),
        ("localhost:5000/app:v1", "localhost:5000/app"),
        ("ghcr.io/org/app:v1@sha256:" + "a" * 64, "ghcr.io/org/app"),
    ],
)
def test_image_name_drops_the_tag_and_digest_but_not_the_registry_port(
    image: str, name: str
) -> None:
    assert image_name(image) == name


def test_a_spec_image_too_long_for_a_registry_is_a_problem_that_says_so() -> None:
    problem = spec_problem(image="r.io/" + "a" * 300 + ":v1", size=1, size_field="spec.size")
    assert problem and "name before the tag is 305 characters" in problem[1]
