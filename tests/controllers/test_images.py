from __future__ import annotations

import pytest

from controllers.images import is_valid_image


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
