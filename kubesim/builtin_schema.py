"""The fields of built-in kinds, read from the official client's generated models.

kube-apiserver decodes built-in objects into Go structs, so fields it does not know are
dropped (with a warning) or, under `fieldValidation=Strict`, rejected. kubesim does the
same by walking the object along the `openapi_types`/`attribute_map` of the kubernetes
client's models, which are generated from the same OpenAPI definitions.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from typing import Any

from kubesim import protobuf
from kubesim.gojson import go_quote
from kubesim.quantity import canonical_quantity

MODELS = {
    "pods": "V1Pod",
    "services": "V1Service",
    "endpoints": "V1Endpoints",
    "configmaps": "V1ConfigMap",
    "secrets": "V1Secret",
    "events": "CoreV1Event",
    "namespaces": "V1Namespace",
    "nodes": "V1Node",
    "persistentvolumeclaims": "V1PersistentVolumeClaim",
    "persistentvolumes": "V1PersistentVolume",
    "resourcequotas": "V1ResourceQuota",
    "limitranges": "V1LimitRange",
    "serviceaccounts": "V1ServiceAccount",
    "deployments.apps": "V1Deployment",
    "replicasets.apps": "V1ReplicaSet",
    "statefulsets.apps": "V1StatefulSet",
    "daemonsets.apps": "V1DaemonSet",
    "controllerrevisions.apps": "V1ControllerRevision",
    "leases.coordination.k8s.io": "V1Lease",
    "events.events.k8s.io": "EventsV1Event",
    "endpointslices.discovery.k8s.io": "V1EndpointSlice",
    "networkpolicies.networking.k8s.io": "V1NetworkPolicy",
    "poddisruptionbudgets.policy": "V1PodDisruptionBudget",
    "storageclasses.storage.k8s.io": "V1StorageClass",
    "validatingwebhookconfigurations.admissionregistration.k8s.io": (
        "V1ValidatingWebhookConfiguration"
    ),
    "roles.rbac.authorization.k8s.io": "V1Role",
    "rolebindings.rbac.authorization.k8s.io": "V1RoleBinding",
    "clusterroles.rbac.authorization.k8s.io": "V1ClusterRole",
    "clusterrolebindings.rbac.authorization.k8s.io": "V1ClusterRoleBinding",
}
_LIST = re.compile(r"^List\[(.+)\]$")
_DICT = re.compile(r"^Dict\[str, (.+)\]$")
_import_lock = threading.Lock()


@functools.cache
def _models() -> Any:
    with _import_lock:
        return importlib.import_module("kubernetes.client.models")


def warm_up() -> None:
    """Import the models ahead of the first write (it takes about half a second)."""
    threading.Thread(target=_models, name="kubesim-models", daemon=True).start()


@functools.cache
def _fields(model: str) -> dict[str, str] | None:
    cls = getattr(_models(), model, None)
    types = getattr(cls, "openapi_types", None)
    names = getattr(cls, "attribute_map", None)
    if not isinstance(types, dict) or not isinstance(names, dict):
        return None
    return {names[k]: t for k, t in types.items() if k in names}


_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"


@functools.cache
def _quantity_fields() -> dict[str, frozenset[str]]:
    """Each Go struct's resource.Quantity fields, alone or as a map's values (limits, hard,
    sizeLimit), by the struct's name: from the protobuf schema, which names the type where
    the client's models only say "str"."""
    found: dict[str, set[str]] = {}
    for message, fields in protobuf.schema().items():
        for name, kind, _ in fields.values():
            if kind in (_QUANTITY, f"map:string:{_QUANTITY}"):
                found.setdefault(message.rpartition(".")[2], set()).add(name)
    return {struct: frozenset(names) for struct, names in found.items()}


def _as_quantity(value: Any) -> Any:
    """What a Quantity decodes from (a string, or a bare JSON number: `cpu: 1` in YAML) and
    encodes to: its canonical string ("0.5" and 0.5 are "500m"). Anything else, or a string
    that is no quantity, is left for the type check and validation to refuse."""
    if isinstance(value, dict):
        return {key: _as_quantity(item) for key, item in value.items()}
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    try:
        return canonical_quantity(value)
    except ValueError:
        return value


class TypeMismatch(Exception):
    """A value of the wrong JSON type, worded like Go's json.UnmarshalTypeError."""

    def __init__(self, value: Any, struct: str, path: str, go_type: str) -> None:
        super().__init__(
            f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
            f"{struct}.{path} of type {go_type}"
        )
        self.value = value
        self.go_type = go_type

    def unstructured(self) -> str:
        """The same mismatch as runtime.DefaultUnstructuredConverter words it, which is what
        a strategic merge patch's result goes through instead of json.Unmarshal."""
        source = _go_kind(self.value)
        if self.go_type.startswith("[]"):
            return f"cannot restore slice from {source}"
        if self.go_type.startswith("map["):
            return f"cannot restore map from {source}"
        if self.go_type.startswith("v1."):
            return f"cannot restore struct from: {source}"
        # Go converts an int64 to a string, and a float64 to an int type, before it checks
        if (source, self.go_type) == ("int64", "string") or (
            source == "float64" and self.go_type.startswith("int")
        ):
            return f"cannot convert {source} to {self.go_type}"
        return f"unrecognized type: {self.go_type}"


def prune(resource: str, obj: dict[str, Any]) -> list[str]:
    """Drop the fields the kind does not have; return their paths ("spec.foo").

    Raises TypeMismatch for the first value whose JSON type the field cannot hold.
    """
    model = MODELS.get(resource)
    if model is None:
        return []
    unknown: list[str] = []
    _walk(model, obj, "", "", unknown)
    return unknown


def prune_metadata(obj: dict[str, Any]) -> list[str]:
    """The ObjectMeta of a custom resource gets the same treatment as a built-in's."""
    unknown: list[str] = []
    meta = obj.get("metadata")
    _check("V1ObjectMeta", meta, "", "metadata")
    _walk("V1ObjectMeta", meta, "metadata", "", unknown, "metadata")
    return unknown


_PRIMITIVES = {
    "str": "string",
    "int": "int64",
    "bool": "bool",
    "float": "float64",
    "datetime": "v1.Time",
    "bytes": "[]uint8",
}


def _go_kind(value: Any) -> str:
    """The reflect.Kind of a JSON value decoded into interface{}, integers kept as int64."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "slice" if isinstance(value, list) else "map"


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# The generated models say "int"; Kubernetes uses int32 except for these fields.
_INT64 = {
    "generation",
    "observedGeneration",
    "deletionGracePeriodSeconds",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "tolerationSeconds",
    "runAsUser",
    "runAsGroup",
    "fsGroup",
    "expirationSeconds",
    "revision",
    "progressDeadlineSeconds",
    "gracePeriodSeconds",
    "count",
}


@functools.cache
def _go_type(type_name: str, field: str = "") -> str:
    if m := _LIST.match(type_name):
        return "[]" + _go_type(m.group(1))
    if m := _DICT.match(type_name):
        return "map[string]" + _go_type(m.group(1))
    if type_name == "int":
        return "int64" if field in _INT64 else "int32"
    if type_name in _PRIMITIVES:
        return _PRIMITIVES[type_name]
    return "v1." + re.sub(
        r"^(Core|Events|Discovery|Storage|Rbac)?V\d+(beta\d+|alpha\d+)?", "", type_name
    )


_PRIMITIVE_OK = {
    "str": lambda v: isinstance(v, str),
    "datetime": lambda v: isinstance(v, str),
    "bytes": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "int": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}
_LIST_OF, _DICT_OF, _MODEL, _PRIMITIVE, _ANY = range(5)


@functools.cache
def _shape(type_name: str) -> tuple[int, str]:
    """What a type name stands for, worked out once per name: objects are walked for
    every write, and the regular expressions were most of that walk's time."""
    if m := _LIST.match(type_name):
        return _LIST_OF, m.group(1)
    if m := _DICT.match(type_name):
        return _DICT_OF, m.group(1)
    if type_name in _PRIMITIVE_OK:
        return _PRIMITIVE, type_name
    if type_name[:1].isupper():
        return _MODEL, type_name
    return _ANY, type_name  # "object": int-or-string, raw JSON


def _check(type_name: str, value: Any, struct: str, path: str) -> None:
    if value is None:
        return
    shape, _ = _shape(type_name)
    if shape == _PRIMITIVE:
        ok = _PRIMITIVE_OK[type_name](value)
    elif shape == _LIST_OF:
        ok = isinstance(value, list)
    elif shape == _ANY:
        ok = True
    else:
        ok = isinstance(value, dict)
    if not ok:
        field = path.rpartition(".")[2]
        raise TypeMismatch(value, struct, path, _go_type(type_name, field))


def _walk(
    type_name: str, value: Any, path: str, struct: str, unknown: list[str], go_path: str = ""
) -> None:
    shape, inner = _shape(type_name)
    if shape == _LIST_OF:
        if isinstance(value, list):
            for i, item in enumerate(value):
                _check(inner, item, struct, go_path)
                _walk(inner, item, f"{path}[{i}]", struct, unknown, go_path)
        return
    if shape == _DICT_OF:
        if isinstance(value, dict):
            for key, item in value.items():
                _check(inner, item, struct, go_path)
                _walk(inner, item, f"{path}[{key}]", struct, unknown, go_path)
        return
    if shape != _MODEL or not isinstance(value, dict):
        return
    fields = _fields(type_name)
    if fields is None:  # not a model of the client
        return
    struct = _go_type(type_name)[3:]
    quantities = _quantity_fields().get(struct, frozenset())
    for key in list(value):
        sub = f"{path}.{key}" if path else key
        if key not in fields:
            unknown.append(sub)
            del value[key]
            continue
        sub_go = f"{go_path}.{key}" if go_path else key
        if key in quantities:
            value[key] = _as_quantity(value[key])
        _check(fields[key], value[key], struct, sub_go)
        _walk(fields[key], value[key], sub, struct, unknown, sub_go)


# --- strategicpatch's struct lookups ------------------------------------------------------------


class NoSuchField(Exception):
    """forkedjson.LookupPatchMetadataForStruct's error: the JSON key names no field of the Go
    type (or the type is no struct), in its words."""


_GO_KINDS = {_LIST_OF: "slice", _DICT_OF: "map"}
_PRIMITIVE_KINDS = {
    "str": "string",
    "bool": "bool",
    "float": "float64",
    "datetime": "struct",
    "bytes": "slice",
}


def struct_field(type_name: str | None, key: str) -> str | None:
    """The client type name of the field a JSON key names in a Go struct, matched as Go's
    json package matches (exactly, else ignoring case); None where kubesim cannot tell the
    Go type (raw JSON, int-or-string, a type the client has no model for)."""
    if type_name is None:
        return None
    shape, _ = _shape(type_name)
    if shape == _MODEL:
        fields = _fields(type_name)
        if fields is None:
            return None
        if key in fields:
            return fields[key]
        for name, field_type in fields.items():
            if name.lower() == key.lower():
                return field_type
        raise NoSuchField(
            f"unable to find api field in struct {_go_type(type_name)[3:]} for the json field "
            f"{go_quote(key)}"
        )
    if shape == _ANY:
        return None
    kind = _GO_KINDS.get(shape) or _PRIMITIVE_KINDS.get(type_name) or _go_type(type_name)
    raise NoSuchField(f"merging an object in json but data type is not struct, instead is: {kind}")


def slice_element(type_name: str | None, key: str) -> str | None:
    """The items' type of the list field a JSON key names (LookupPatchMetadataForSlice).
    Go follows a pointer and refuses any other type that is no list, naming the kind of the
    struct it looked in. Maps are never pointers; the client's models do not tell the other
    pointers apart, so only a map is refused (as a field of a struct, not of a pointer)."""
    field_type = struct_field(type_name, key)
    if field_type is None:
        return None
    shape, inner = _shape(field_type)
    if shape == _DICT_OF:
        raise NoSuchField("expected slice or array type, but got: struct")
    return inner if shape == _LIST_OF else None
