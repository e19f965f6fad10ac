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


def is_valid_image(image: str) -> bool:
    """Whether `image` is a well-formed image reference (not whether it exists)."""
    return len(image) <= 4096 and _IMAGE_RE.match(image) is not None
