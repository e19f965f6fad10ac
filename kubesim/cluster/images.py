"""Image references: parsing, normalising to what containerd reports, and pull outcomes."""

from __future__ import annotations

import fnmatch
import hashlib
import re

# distribution/reference: [domain/]path[:tag][@digest], lower-case path components.
_REFERENCE = re.compile(
    r"^(?:(?P<domain>(?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+(?::[0-9]+)?|localhost(?::[0-9]+)?)/)?"
    r"(?P<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[a-f0-9]{64}))?$"
)


def is_valid(image: str) -> bool:
    return bool(image) and _REFERENCE.match(image) is not None


def normalize(image: str) -> str:
    """docker.io/library/memcached:1.4.36-alpine, as containerd reports `image`."""
    match = _REFERENCE.match(image)
    if match is None:
        return image
    domain, path, tag, digest = match.group("domain", "path", "tag", "digest")
    if domain is None or ("." not in domain and ":" not in domain and domain != "localhost"):
        path = f"{domain}/{path}" if domain else path
        domain = "docker.io"
        if "/" not in path:
            path = f"library/{path}"
    if digest:
        return f"{domain}/{path}@{digest}"
    return f"{domain}/{path}:{tag or 'latest'}"


def image_id(image: str) -> str:
    """A stable repo digest for the image, like `imageID` on a real node."""
    name = normalize(image).rsplit("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    digest = hashlib.sha256(normalize(image).encode()).hexdigest()
    return f"{repo}@sha256:{digest}"


def is_missing(image: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatchcase(image, p) or fnmatch.fnmatchcase(normalize(image), p) for p in patterns
    )


def pull_error(image: str) -> str:
    """The message containerd gives for a tag or repository the registry does not have."""
    ref = normalize(image)
    return (
        f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
        f"{ref}: not found"
    )
