"""Labels and subdomain names, label keys and label values as k8s.io/apimachinery's validation words
its complaints: object validation and label selectors both quote them."""

from __future__ import annotations

import re

LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
QUALIFIED_MSG = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def qualified_name_errors(key: str) -> list[str]:
    """IsQualifiedName: an optional subdomain prefix and '/', then a name part."""
    parts = key.split("/")
    if len(parts) > 2:
        return [QUALIFIED_MSG]
    prefix, name = parts if len(parts) == 2 else (None, parts[0])
    errors = []
    if prefix is not None and not prefix:
        errors.append("prefix part must be non-empty")
    elif prefix is not None and not SUBDOMAIN.match(prefix):
        errors.append("prefix part " + SUBDOMAIN_MSG)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.match(name):
        errors.append(NAME_PART_MSG)
    return errors


def dns_label_errors(value: str) -> list[str]:
    """IsDNS1123Label: container, volume and port-free names."""
    errors = ["must be no more than 63 characters"] if len(value) > 63 else []
    if LABEL.match(value):
        return errors
    return [*errors, "must not contain dots" if SUBDOMAIN.match(value) else LABEL_MSG]


def dns_subdomain_errors(value: str) -> list[str]:
    """IsDNS1123Subdomain: the names of most objects (a ConfigMap, a Secret)."""
    errors = ["must be no more than 253 characters"] if len(value) > 253 else []
    return errors + ([] if SUBDOMAIN.match(value) else [SUBDOMAIN_MSG])


_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def config_key_errors(key: str) -> list[str]:
    """IsConfigMapKey: a ConfigMap's or Secret's key, no longer than a subdomain, and not one
    that would climb out of the directory it is mounted in."""
    errors = ["must be no more than 253 characters"] if len(key) > 253 else []
    if not _CONFIG_KEY.match(key):
        errors.append(CONFIG_KEY_MSG)
    if key in (".", ".."):
        errors.append(f"must not be '{key}'")
    elif key.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def label_value_errors(value: str) -> list[str]:
    """IsValidLabelValue."""
    errors = ["must be no more than 63 characters"] if len(value) > 63 else []
    return errors + ([] if LABEL_VALUE.match(value) else [LABEL_VALUE_MSG])
