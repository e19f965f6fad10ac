"""The change form's fields for each container's resources: its CPU and memory requests (what
a node must have free, and what a quota counts) and limits (past its memory limit, the
container is OOMKilled), each on that container's resources field in the CR ("spec.resources", a
BookStore database's "spec.bookDB.resources"). They are what the Diagnosis names for pods
that fit on no node, that a quota refuses, or that are killed for memory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from controllers.base import Controller
from controllers.resources import QUANTITY_RE, parse_quantity
from opsboard.dashboard.kinds import value_at

NOT_IN_A_NAME = re.compile(r"\W")  # of a form field's name, from a container's
# (resource, part, the form field's stem), in the order the form shows them. The memory
# limit's stem is the field's name from before requests were in the form.
_SHOWN = (("cpu", "requests", "cpu_request"), ("memory", "requests", "memory_request"),
          ("cpu", "limits", "cpu_limit"), ("memory", "limits", "memory"))  # fmt: skip
_HELP = {
    ("cpu", "requests"): "Cores, like 250m or 1.",
    ("cpu", "limits"): "Cores, like 500m or 2.",
    ("memory", "requests"): "Bytes, like 64Mi.",
    ("memory", "limits"): "Bytes, like 128Mi or 1Gi.",
}


@dataclass(frozen=True)
class ResourceField:
    container: str
    first: bool  # the CR's first container: the part its size and image set
    resource: str  # "cpu", "memory"
    part: str  # "requests", "limits"
    resources_path: str  # "spec.resources"

    @property
    def path(self) -> str:
        """The CR's field it sets: "spec.resources.limits.memory"."""
        return f"{self.resources_path}.{self.part}.{self.resource}"

    @property
    def legend(self) -> str:
        """What its container's fields are shown under: "Resources of mongodb"."""
        return "Resources" if self.first else f"Resources of {self.container}"

    @property
    def help(self) -> str:
        """What its container's fields mean, said once under them."""
        return (
            "Each pod's container is scheduled with its requests (a node must have them free, "
            "and a quota counts them), slowed past its CPU limit and killed past its memory "
            "limit (OOMKilled). Empty removes one. A change rolls the pods out. Sets "
            f"{self.resources_path} only."
        )

    @property
    def what(self) -> str:
        """Its label's words: "memory limit", "CPU request"."""
        resource = "CPU" if self.resource == "cpu" else self.resource
        return f"{resource} {'limit' if self.part == 'limits' else 'request'}"


def resource_fields(controller: Controller) -> dict[str, ResourceField]:
    """The form's resource fields by name: `cpu_request`, `memory_request`, `cpu_limit` and
    `memory` (the memory limit) for the first container; each with `_<container>` for each
    other."""
    fields = {}
    for i, (container, path) in enumerate(controller.fields.resources):
        suffix = "" if i == 0 else "_" + NOT_IN_A_NAME.sub("_", container)
        for resource, part, stem in _SHOWN:
            fields[stem + suffix] = ResourceField(container, i == 0, resource, part, path)
    return fields


def quantity_field(schema: dict[str, Any], field: ResourceField) -> forms.CharField:
    """A quantity in the CRD's grammar; empty removes it. Shown with its container's other
    fields, under their legend (`ResourceField.legend`)."""
    grammar = re.compile(schema.get("pattern") or QUANTITY_RE.pattern)
    example = "250m or 1" if field.resource == "cpu" else "128Mi or 1Gi"
    unit = "cores, with m for thousandths" if field.resource == "cpu" else "bytes with a unit"

    def validate(quantity: str) -> None:
        if not grammar.search(quantity):
            raise ValidationError(
                f"Not a quantity: write a number of {unit}, like {example}.", code="invalid"
            )

    return forms.CharField(
        label=field.what[0].upper() + field.what[1:],
        required=False,
        max_length=64,
        help_text=_HELP[field.resource, field.part],
        validators=[validate],
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )


def over_limit(
    fields: dict[str, ResourceField], values: dict[str, Any], spec: dict[str, Any]
) -> dict[str, ValidationError]:
    """Field name → its error, where a container's request would be above its limit (the API
    server refuses such a pod): each value the form's where it has the field, else the CR's;
    the error on the request when it is the one asked, else on the limit."""

    def now(path: str) -> str | None:
        found = value_at({"spec": spec}, path)
        return None if found is None else str(found)

    def value(name: str | None, path: str) -> str | None:
        return values.get(name) if name in values else now(path)

    errors = {}
    by_path = {f.path: name for name, f in fields.items()}
    for name, field in fields.items():
        if field.part != "requests":
            continue
        limit_path = field.path.replace(".requests.", ".limits.")
        limit_name = by_path.get(limit_path)
        request, limit = value(name, field.path), value(limit_name, limit_path)
        if not request or not limit or not _above(request, limit):
            continue
        if limit_name is None or now(field.path) != request:
            errors[name] = ValidationError(
                f"Above the {field.resource} limit {limit} ({limit_path}): a request must be at "
                "most the limit. Give a smaller request, or a larger limit.",
                code="above_limit",
            )
        else:
            errors[limit_name] = ValidationError(
                f"Below the {field.resource} request {request} ({field.path}): a limit must be "
                "at least the request. Give a larger limit, or a smaller request.",
                code="below_request",
            )
    return errors


def _above(request: str, limit: str) -> bool:
    try:
        return parse_quantity(request) > parse_quantity(limit)
    except ValueError:  # the CR's own, written past no schema: the operator says so
        return False
