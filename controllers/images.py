"""The one home of the image-reference grammar: the controllers, the CRDs (a `pattern`
in each) and the dashboard's form all validate images with it."""

from __future__ import annotations

import re

# A Docker/OCI image reference (distribution's grammar): [registry[:port]/]path[:tag][@digest].
# Written for both Python's re and Go's RE2, so the CRDs can carry the same pattern.
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_PATTERN = rf"^(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*(?::{_TAG})?(?:@{_DIGEST})?$"
_IMAGE_RE = re.compile(IMAGE_PATTERN)
# distribution's NameTotalLengthMax: a registry refuses a longer name (the registry and the
# repository path, before the tag), though Kubernetes itself takes an image of any length.
NAME_MAX = 255


def image_name(image: str) -> str:
    """The reference without its @digest and :tag: "registry:5000/team/app"."""
    name = image.partition("@")[0]
    head, colon, tag = name.rpartition(":")
    return head if colon and "/" not in tag else name


def name_too_long(image: str) -> str | None:
    """Why a registry would refuse `image` for its length, in a few words; None if it fits."""
    length = len(image_name(image))
    if length <= NAME_MAX:
        return None
    return f"its name before the tag is {length} characters; a registry takes at most {NAME_MAX}"


def is_valid_image(image: str) -> bool:
    """Whether `image` is a well-formed image reference (not whether it exists)."""
    return (
        len(image) <= 4096 and name_too_long(image) is None and _IMAGE_RE.match(image) is not None
    )
