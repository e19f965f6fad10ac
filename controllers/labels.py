"""Label keys and values as Kubernetes validates them (k8s.io/apimachinery's
IsQualifiedName and IsValidLabelValue), written for Python's re and RE2 alike: a CRD's
pattern, the operators' checks and the dashboard's form share them."""

from __future__ import annotations

import re

DNS_SUBDOMAIN = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
QUALIFIED_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
LABEL_KEY_PATTERN = rf"^(?:{DNS_SUBDOMAIN}/)?{QUALIFIED_NAME}$"
LABEL_VALUE_PATTERN = r"^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$"
NAME_MAX = 63  # a key's name part, and a value
PREFIX_MAX = 253  # a key's prefix, a DNS subdomain

_KEY_RE = re.compile(LABEL_KEY_PATTERN)
_VALUE_RE = re.compile(LABEL_VALUE_PATTERN)


def key_problem(key: str) -> str | None:
    """Why `key` is not a label key, or None."""
    prefix, _, name = key.rpartition("/")
    if len(name) > NAME_MAX or len(prefix) > PREFIX_MAX or not _KEY_RE.match(key):
        return "not a valid label key"
    return None


def value_problem(value: str) -> str | None:
    """Why `value` is not a label value, or None."""
    if len(value) > NAME_MAX or not _VALUE_RE.match(value):
        return "not a valid label value"
    return None
