"""What an update may not change, as kube-apiserver's ValidateXUpdate refuses it (422).

A write kubesim accepted but a real cluster refuses (a new Deployment selector, a changed
ConfigMap marked immutable) would pass every test here and fail in production, so these
checks follow pkg/apis/{core,apps}/validation word for word. Go compares with
apiequality.Semantic, for which a nil and an empty map or list are equal; `_same` does too.
"""

from __future__ import annotations

from typing import Any

from kubesim.errors import FieldError, GoLiteral, render_value
from kubesim.podspec_diff import pod_spec_diff

Obj = dict[str, Any]

IMMUTABLE = "field is immutable"
WHEN_SET = "field is immutable when `immutable` is set"
_SELECTOR_KEPT = ("deployments.apps", "replicasets.apps", "daemonsets.apps")
_STS_MUTABLE = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
)
STS_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
    "forbidden"
)
POD_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)
_POD_MUTABLE = (
    "activeDeadlineSeconds",
    "tolerations",
    "terminationGracePeriodSeconds",
    "schedulingGates",
)


def update_errors(resource: str, new: Obj, old: Obj) -> tuple[list[FieldError], list[FieldError]]:
    """(errors Go lists before the object's own validation, errors it lists after)."""
    if resource in ("configmaps", "secrets"):
        return _frozen_data(resource, new, old), []
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if resource in _SELECTOR_KEPT:
        # Each strategy's ValidateUpdate appends this after validating the whole object.
        if not _same(spec.get("selector"), old_spec.get("selector")):
            value = label_selector_literal(spec.get("selector"))
            return [], [FieldError("Invalid", "spec.selector", value, IMMUTABLE)]
    elif resource == "statefulsets.apps":
        if not _same(_without(spec, _STS_MUTABLE), _without(old_spec, _STS_MUTABLE)):
            return [], [FieldError("Forbidden", "spec", detail=STS_FORBIDDEN)]
    elif resource == "pods":
        for field in ("containers", "initContainers"):
            # ValidateContainerUpdates: a changed count stops the update's checks
            if len(spec.get(field) or []) != len(old_spec.get(field) or []):
                why = "pod updates may not add or remove containers"
                return [], [FieldError("Forbidden", f"spec.{field}", detail=why)]
        errors, stop = _deadline_update(spec.get("activeDeadlineSeconds"), old_spec)
        munged = _pod_munged(spec, old_spec)
        if not stop and not _same(munged, old_spec):
            # Go names the difference on further lines: a cmp.Diff of the two specs
            why = f"{POD_FORBIDDEN}\n{pod_spec_diff(old_spec, munged)}"
            errors.append(FieldError("Forbidden", "spec", detail=why))
        return [], errors
    return [], []


def _deadline_update(new: Any, old_spec: Obj) -> tuple[list[FieldError], bool]:
    """ValidatePodUpdate's activeDeadlineSeconds: set it, or lower it, never raise or unset
    it; (the errors, and whether Go stops there)."""
    old, path = old_spec.get("activeDeadlineSeconds"), "spec.activeDeadlineSeconds"
    if isinstance(new, int):
        if not 0 <= new <= 2**31 - 1:
            why = "must be between 0 and 2147483647, inclusive"
            return [FieldError("Invalid", path, new, why)], True
        if isinstance(old, int) and old < new:
            why = "must be less than or equal to previous value"
            return [FieldError("Invalid", path, new, why)], True
    elif new is None and old is not None:
        why = "must not update from a positive integer to nil value"
        return [FieldError("Invalid", path, "null", why)], False  # a nil pointer prints as "null"
    return [], False


def _frozen_data(resource: str, new: Obj, old: Obj) -> list[FieldError]:
    """ValidateConfigMapUpdate / ValidateSecretUpdate (stringData is data by now)."""
    errors: list[FieldError] = []
    if resource == "secrets" and new.get("type") != old.get("type"):
        errors.append(FieldError("Invalid", "type", new.get("type") or "", IMMUTABLE))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errors.append(FieldError("Forbidden", "immutable", detail=WHEN_SET))
        fields = ("data", "binaryData") if resource == "configmaps" else ("data",)
        errors += [
            FieldError("Forbidden", field, detail=WHEN_SET)
            for field in fields
            if not _same(new.get(field), old.get(field))
        ]
    return errors


def _pod_munged(spec: Obj, old_spec: Obj) -> Obj:
    """The new pod spec with what an update may change set back to the old values."""
    munged = {k: v for k, v in spec.items() if k not in _POD_MUTABLE}
    munged |= {k: old_spec[k] for k in _POD_MUTABLE if k in old_spec}
    for field in ("containers", "initContainers"):
        new_list, old_list = spec.get(field) or [], old_spec.get(field) or []
        if not new_list:
            munged.pop(field, None)  # Go rebuilds the list by appending: none is nil
        elif len(new_list) == len(old_list):
            munged[field] = [
                {**c, "image": o.get("image")} if "image" in o else c
                for c, o in zip(new_list, old_list, strict=True)
            ]
    return munged


def _without(spec: Obj, keys: tuple[str, ...]) -> Obj:
    return {k: v for k, v in spec.items() if k not in keys}


def _same(a: Any, b: Any) -> bool:
    return bool(_semantic(a) == _semantic(b))


def _semantic(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


def label_selector_literal(selector: Any) -> GoLiteral:
    """A *metav1.LabelSelector as field.Invalid prints it (%#v of the struct)."""
    selector = selector if isinstance(selector, dict) else {}
    labels = selector.get("matchLabels")
    if isinstance(labels, dict):
        pairs = ", ".join(f"{render_value(k)}:{render_value(v)}" for k, v in sorted(labels.items()))
        match_labels = f"map[string]string{{{pairs}}}"
    else:
        match_labels = "map[string]string(nil)"
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        items = ", ".join(_requirement(e) for e in exprs if isinstance(e, dict))
        match_exprs = f"[]v1.LabelSelectorRequirement{{{items}}}"
    else:
        match_exprs = "[]v1.LabelSelectorRequirement(nil)"
    return GoLiteral(
        f"v1.LabelSelector{{MatchLabels:{match_labels}, MatchExpressions:{match_exprs}}}"
    )


def _requirement(expr: Obj) -> str:
    values = expr.get("values")
    if isinstance(values, list):
        shown = "[]string{" + ", ".join(render_value(v) for v in values) + "}"
    else:
        shown = "[]string(nil)"
    key, op = render_value(expr.get("key", "")), render_value(expr.get("operator", ""))
    return f"v1.LabelSelectorRequirement{{Key:{key}, Operator:{op}, Values:{shown}}}"
