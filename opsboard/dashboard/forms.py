"""Forms: list filters, and the size/image/resources/devices/storage patch form built from
the CRD's schema, so bad input is refused with an inline message before anything is sent to
the cluster."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from controllers.base import Controller
from controllers.images import IMAGE_PATTERN, NAME_MAX, image_name
from controllers.labels import key_problem, value_problem
from controllers.resources import QUANTITY_RE, parse_quantity
from controllers.wording import count
from opsboard.dashboard.claims import shrink_refusal
from opsboard.dashboard.kinds import KindInfo, value_at
from opsboard.dashboard.resource_fields import (
    NOT_IN_A_NAME,
    over_limit,
    quantity_field,
    resource_fields,
)
from opsboard.dashboard.selectors import ATTENTION, HEALTHS, SORTS
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject

_COLUMN_SORT = re.compile(r"col-\d{1,2}")
# A size with no maximum in the schema still gets one: nobody means a million replicas.
DEFAULT_MAX_SIZE = 1000


class ListFilterForm(forms.Form):
    namespace = forms.CharField(required=False, max_length=253)
    health = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any health"),
            *((h, h) for h in HEALTHS),
            ("stale", "Stale status"),
            (ATTENTION, "Needs attention"),
        ],
    )
    search = forms.CharField(required=False, max_length=300, label="Name or label=value")
    # A built-in column, or a printer column's "col-N" (the kind decides if it is sortable).
    sort = forms.CharField(required=False, max_length=20)

    def clean_sort(self) -> str:
        """An unknown sort falls back to the name: a stale link must not drop the filters."""
        sort = self.cleaned_data["sort"] or "name"
        key = sort.lstrip("-")
        return sort if key in SORTS or _COLUMN_SORT.fullmatch(key) else "name"


@dataclass
class FieldGroup:
    legend: str  # "" for a field shown alone
    help: str
    fields: list[forms.BoundField]
    path: str = ""  # the CR's field the group's fields are under


class PatchForm(forms.Form):
    """Fields named after what they change: `size`, `image`, each container's resources
    (`cpu_request`, `memory_request`, `cpu_limit`, `memory`: the first container's;
    `memory_<container>` and so on each other's), `size_<container>` and `image_<container>`
    (how many pods run a container the CR counts apart, and its image: a BookStore's
    mongodb), `node_port` (its Service's, a WebServer's; empty removes it),
    `node_selector` (the labels of the nodes its pods run on, a Ptemplate's), `devices` (how
    many each pod requests, a Ptemplate's) and `storage` (each claim's size), present if the
    kind has them."""

    def __init__(self, *args: Any, info: KindInfo, cr: KubeObject, **kwargs: Any) -> None:
        controller = info.controller
        self.resources = resource_fields(controller)
        self.paths = form_paths(info)
        # What the mirror holds now: the form starts from it and sends only what differs.
        self.current = {f: value_at({"spec": cr.spec or {}}, p) for f, p in self.paths.items()}
        for name in [*self.resources, "storage"]:
            if self.current.get(name) is not None:
                self.current[name] = str(self.current[name])  # a quantity may be a number
        self.spec = cr.spec or {}
        self.status = cr.status or {}  # its claims, which a storage size may not go below
        kwargs["initial"] = self.current
        super().__init__(*args, **kwargs)
        self.info = info
        part = controller.fields.part
        if controller.fields.size:
            size = _size_field(info.field_schema(controller.fields.size))
            self.fields["size"] = _of_part(size, part, "replicas", controller.fields.size)
        if controller.fields.image:
            image = _image_field(info.field_schema(controller.fields.image))
            self.fields["image"] = _of_part(image, part, "image", controller.fields.image)
        for name, resource in self.resources.items():
            self.fields[name] = quantity_field(info.field_schema(resource.path), resource)
        for name, (container, path) in replicas_fields(controller).items():
            self.fields[name] = _replicas_field(info.field_schema(path), container, path)
        for name, (container, path) in images_fields(controller).items():
            image = _image_field(info.field_schema(path))
            self.fields[name] = _labelled(image, f"Image of {container}", path)
        if controller.fields.node_port:
            schema = info.field_schema(controller.fields.node_port)
            self.fields["node_port"] = _node_port_field(schema, controller.fields.node_port)
        if selector := controller.fields.node_selector:
            schema = info.field_schema(selector)
            self.fields["node_selector"] = _node_selector_field(schema, selector)
        if devices := self.paths.get("devices"):
            self.fields["devices"] = _devices_field(info.field_schema(devices), devices)
        if controller.fields.storage:
            self.fields["storage"] = _storage_field(
                info.field_schema(controller.fields.storage),
                controller.fields.storage,
                required=self.current["storage"] is not None,
            )

    def groups(self) -> list[FieldGroup]:
        """The fields as shown: each alone, but a container's resources together, under one
        legend and one help ("App resources", "Resources of mongodb")."""
        groups: list[FieldGroup] = []
        for bound in self:
            resource = self.resources.get(bound.name)
            if resource is None:
                groups.append(FieldGroup("", "", [bound]))
            elif groups and groups[-1].path == resource.resources_path:
                groups[-1].fields.append(bound)
            else:
                part = self.info.controller.fields.part
                legend = f"{part} resources" if part and resource.first else resource.legend
                groups.append(FieldGroup(legend, resource.help, [bound], resource.resources_path))
        return groups

    def refuse(self, refusals: dict[str, str]) -> None:
        """Fields the cluster would refuse to change: read-only (still sent, at the current
        value, so the rest of the form works), with the refusal in place of the help."""
        for name, why in refusals.items():
            if name in self.fields:
                self.fields[name].widget.attrs["readonly"] = True
                self.fields[name].help_text = why

    def refused_as_is(self, fields: tuple[str, ...]) -> None:
        """Marks the fields whose current value the cluster refuses, though the change left
        them as they were (patching.Review.untouched): they are to be set right with it."""
        for name, path in self.paths.items():
            if path in fields and name in self.fields:
                self.add_error(
                    name, "The cluster refuses this value as it stands: give a valid one."
                )

    def clean_storage(self) -> str | None:
        size = self.cleaned_data.get("storage") or None
        path = self.paths.get("storage") or ""
        if size and (why := shrink_refusal(path, size, {"status": self.status})):
            raise ValidationError(why, code="shrinks")
        return size

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name in self.resources:
            if name in cleaned:
                cleaned[name] = cleaned[name] or None  # empty removes it
        valid = {name: cleaned[name] for name in self.resources if name in cleaned}
        for name, error in over_limit(self.resources, valid, self.spec).items():
            self.add_error(name, error)
        if not self.errors and not self.changes():
            raise forms.ValidationError("Nothing to change: these are the current values.")
        return cleaned

    def changes(self, reviewed: list[str] | None = None) -> dict[str, Any]:
        """{"spec.size": 5} from the cleaned data: only the fields that differ; or, once
        reviewed, exactly the `reviewed` paths, so that a field someone else changed since
        the review is not sent back at its old value."""
        return {
            path: v
            for f, v in self.cleaned_data.items()
            if (path := self.paths.get(f))
            and (path in reviewed if reviewed is not None else v != self.current.get(f))
        }


def form_paths(info: KindInfo) -> dict[str, str]:
    """The change form's fields → the CR's field each sets, for those the kind has."""
    controller = info.controller
    paths = {"size": controller.fields.size, "image": controller.fields.image}
    paths |= {name: field.path for name, field in resource_fields(controller).items()}
    paths |= {name: path for name, (_, path) in replicas_fields(controller).items()}
    paths |= {name: path for name, (_, path) in images_fields(controller).items()}
    paths |= {"node_port": controller.fields.node_port}
    paths |= {"node_selector": controller.fields.node_selector}
    paths |= {"devices": info.devices_path, "storage": controller.fields.storage}
    return {name: path for name, path in paths.items() if path}


def changeable(info: KindInfo) -> str:
    """What the kind's change form sets, for its heading: "size, image or resources"."""
    names = list(dict.fromkeys(_heading_word(name) for name in form_paths(info)))
    return " or ".join(filter(None, [", ".join(names[:-1]), *names[-1:]]))


_HEADING = {"size": "size", "image": "image", "node_port": "NodePort",
            "node_selector": "node selector", "devices": "devices", "storage": "storage"}  # fmt: skip


def _heading_word(name: str) -> str:
    """A form field's word in the heading: a container's own size or image (size_mongodb)
    is a size or an image, and a field not named in _HEADING is one of the resources."""
    return _HEADING.get(name) or _HEADING.get(name.partition("_")[0]) or "resources"


def replicas_fields(controller: Controller) -> dict[str, tuple[str, str]]:
    """The form's fields for how many pods run a container, where the CR has a field of its
    own for it (`CrFields.replicas`): `size_<container>` → (container, path)."""
    return _by_container("size", controller.fields.replicas)


def images_fields(controller: Controller) -> dict[str, tuple[str, str]]:
    """The form's fields for a container's image, where the CR has a field of its own for it
    (`CrFields.images`): `image_<container>` → (container, path)."""
    return _by_container("image", controller.fields.images)


def _by_container(stem: str, paths: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, str]]:
    return {
        f"{stem}_{NOT_IN_A_NAME.sub('_', container)}": (container, path)
        for container, path in paths
    }


def form_field_named(info: KindInfo, text: str) -> str:
    """The CR field in `text` (a Diagnosis's advice) that the change form sets, or sets
    part of ("spec.resources.requests", whose cpu and memory it has); "" if none."""
    named = set(form_paths(info).values())
    for field in resource_fields(info.controller).values():
        named |= {field.resources_path, f"{field.resources_path}.{field.part}"}
    for path in sorted(named, key=lambda p: (-len(p), p)):  # the most precise first
        if re.search(rf"(?<![\w.]){re.escape(path)}(?!\w|\.\w)", text):
            return path
    return ""


def _of_part(field: forms.Field, part: str, what: str, path: str) -> forms.Field:
    """The field labelled for the part of the CR it changes ("App replicas"), if not all."""
    return _labelled(field, f"{part} {what}", path) if part else field


def _labelled(field: forms.Field, label: str, path: str) -> forms.Field:
    """The field labelled for what of the CR it changes ("Image of mongodb"), saying so."""
    field.label = label
    field.help_text = f"{field.help_text} Sets {path} only."
    return field


def _count_field(
    schema: dict[str, Any], *, label: str, more: str, example: int
) -> forms.IntegerField:
    """A whole number within the schema's bounds (and a maximum where it states none)."""
    minimum = schema.get("minimum", 0)
    maximum = schema.get("maximum", DEFAULT_MAX_SIZE)
    return forms.IntegerField(
        label=label,
        min_value=minimum,
        max_value=maximum,
        help_text=f"A whole number from {minimum} to {maximum}{more}",
        # Text, not type=number: the browser would drop "three" silently; we explain instead.
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}),
        error_messages={"invalid": f"Enter a whole number, like {example}."},
    )


def _size_field(schema: dict[str, Any]) -> forms.IntegerField:
    return _count_field(schema, label="Size (replicas)", more=".", example=3)


def _replicas_field(schema: dict[str, Any], container: str, path: str) -> forms.IntegerField:
    more = f": how many pods of {container} run. Sets {path} only."
    return _count_field(schema, label=f"Replicas of {container}", more=more, example=1)


def _node_port_field(schema: dict[str, Any], path: str) -> forms.IntegerField:
    """The Service's NodePort; empty removes it, for the cluster to choose one."""
    field = _count_field(schema, label="NodePort", more="", example=30080)
    field.required = False
    field.help_text = (
        f"The port every node opens for the Service, from {field.min_value} to "
        f"{field.max_value}; another Service may not hold it. Empty lets the cluster choose "
        f"one. Sets {path} only."
    )
    return field


class LabelsField(forms.Field):
    """A map of labels written as `key=value, key=value`, cleaned to a dict; empty is None
    (the field removed), where the schema allows none."""

    widget = forms.TextInput(
        attrs={"autocomplete": "off", "spellcheck": "false", "class": "long-text"}
    )

    def __init__(self, *, min_labels: int, max_labels: int | None, **kwargs: Any) -> None:
        super().__init__(required=min_labels > 0, **kwargs)
        self.min_labels, self.max_labels = min_labels, max_labels

    def prepare_value(self, value: Any) -> Any:
        # By key: a map's order means nothing (PostgreSQL's jsonb keeps its own).
        if isinstance(value, dict):
            return ", ".join(f"{key}={label}" for key, label in sorted(value.items()))
        return value

    def to_python(self, value: Any) -> dict[str, str] | None:
        labels: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in str(value or "").split(","))):
            key, sep, label = (part.strip() for part in item.partition("="))
            if not sep:
                raise ValidationError(
                    f"“{item}” is not key=value: write each label as key=value, like "
                    "hardware=fpga, separated by commas.", code="not_a_label",
                )  # fmt: skip
            if why := key_problem(key):
                raise ValidationError(f"“{key}” is {why}: {_KEY_GRAMMAR}", code="key")
            if why := value_problem(label):
                raise ValidationError(f"“{label}” (for {key}) is {why}: {_VALUE_GRAMMAR}",
                                      code="value")  # fmt: skip
            if labels.get(key, label) != label:
                raise ValidationError(f"{key} is given twice; give it once.", code="twice")
            labels[key] = label
        if not labels:
            return None
        if len(labels) < self.min_labels:
            raise ValidationError(f"Give at least {count(self.min_labels, 'label')}.",
                                  code="min")  # fmt: skip
        if self.max_labels is not None and len(labels) > self.max_labels:
            raise ValidationError(f"This kind takes at most {count(self.max_labels, 'label')};"
                                  f" these are {len(labels)}.", code="max")  # fmt: skip
        return labels


_KEY_GRAMMAR = (
    "a key is a name of up to 63 letters, digits, '-', '_' or '.', beginning and ending with a "
    "letter or digit, optionally after a DNS prefix and '/' (example.com/fpga)."
)
_VALUE_GRAMMAR = (
    "a value is up to 63 letters, digits, '-', '_' or '.', beginning and ending with a letter "
    "or digit, or empty."
)


def _node_selector_field(schema: dict[str, Any], path: str) -> LabelsField:
    field = LabelsField(
        min_labels=int(schema.get("minProperties", 0)),
        max_labels=schema.get("maxProperties"),
        label="Node selector",
        help_text=(
            "The labels a node must have for the pods to run there, as key=value separated by "
            "commas, like hardware=fpga. The pods move to the nodes it selects; a label left "
            f"out is removed. Sets {path} only."
        ),
    )
    field.error_messages["required"] = (
        "Give at least one label, like hardware=fpga: the pods run only on nodes that have it."
    )
    return field


def _devices_field(schema: dict[str, Any], path: str) -> forms.IntegerField:
    more = (
        ": how many devices each pod requests; a pod runs only on a node with that many free. "
        f"The pods roll out. Sets {path} only."
    )
    return _count_field(schema, label="Devices per pod", more=more, example=1)


def _storage_field(schema: dict[str, Any], path: str, *, required: bool) -> forms.CharField:
    grammar = re.compile(schema.get("pattern") or QUANTITY_RE.pattern)

    def validate(size: str) -> None:
        if not grammar.search(size) or not QUANTITY_RE.match(size):
            raise ValidationError(
                "Not a storage size: write a number of bytes with a unit, like 2Gi or 500Mi.",
                code="invalid",
            )
        if parse_quantity(size) <= 0:
            raise ValidationError("A volume needs a size above zero, like 1Gi.", code="zero")

    return forms.CharField(
        label="Volume size (each claim)",
        required=required,
        max_length=schema.get("maxLength", 64),
        help_text=(
            "What each PersistentVolumeClaim requests, like 2Gi. Raising it grows the claims "
            "(their StorageClass must allow expansion); a claim cannot shrink, so it cannot go "
            f"below what they hold. Sets {path} only."
        ),
        validators=[validate],
        error_messages={"required": "Give a size, like 2Gi: a claim's size cannot be removed."},
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )


def _image_field(schema: dict[str, Any]) -> forms.CharField:
    return forms.CharField(
        label="Image",
        # No max_length: the browser would cut a longer paste short without a word (and the
        # cut reference might be valid); the validator says what is wrong instead.
        help_text="An image reference: [registry/]name:tag or name@sha256:digest.",
        widget=forms.TextInput(attrs={"spellcheck": "false", "class": "long-text"}),
        validators=[
            _image_reference(
                # When the CRD states none.
                pattern=schema.get("pattern") or IMAGE_PATTERN,
                limit=schema.get("maxLength", 255),
            )
        ],
    )


def _image_reference(*, pattern: str, limit: int) -> Callable[[str], None]:
    """One message for the first thing wrong: a registry's limit on the name, the schema's
    on the whole reference, then its grammar."""
    grammar = re.compile(pattern)

    def validate(image: str) -> None:
        if (length := len(image_name(image))) > NAME_MAX:
            raise ValidationError(
                f"This image's name (the registry and repository path, before the tag) is "
                f"{length} characters long; a registry accepts at most {NAME_MAX}. "
                "Use an image with a shorter repository path.",
                code="image_name_too_long",
            )
        if len(image) > limit:
            raise ValidationError(
                f"This image reference is {len(image)} characters long; this kind accepts at "
                f"most {limit}. Use a shorter reference (a tag rather than a long digest).",
                code="max_length",
            )
        if not grammar.search(image):
            raise ValidationError(
                "Not a valid image reference (e.g. registry/name:tag).", code="invalid"
            )

    return validate


class AuditFilterForm(forms.Form):
    # The number the diagnosis and the change history cite an entry by ("change #10").
    entry = forms.IntegerField(required=False, min_value=1, label="Entry #")
    user = forms.CharField(required=False, max_length=150)
    kind = forms.CharField(required=False, max_length=100)
    namespace = forms.CharField(required=False, max_length=253)
    name = forms.CharField(required=False, max_length=253, label="Object name")
    since = forms.DateTimeField(required=False, help_text="e.g. 2026-11-22 17:00")
    until = forms.DateTimeField(required=False)


class RunFilterForm(forms.Form):
    controller = forms.CharField(required=False, max_length=63)
    namespace = forms.CharField(required=False, max_length=253)
    name = forms.CharField(required=False, max_length=253, label="Object name")
    outcome = forms.ChoiceField(
        required=False, choices=[("", "Any outcome"), *ReconcileRun.Outcome.choices]
    )
    min_ms = forms.FloatField(required=False, min_value=0, label="Slower than (ms)")
    max_ms = forms.FloatField(required=False, min_value=0, label="Faster than (ms)")
    since = forms.DateTimeField(required=False)
