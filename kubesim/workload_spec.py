"""The specs of Deployments, ReplicaSets, StatefulSets and DaemonSets, validated as v1.28's
pkg/apis/apps/validation does, in its order and words: replicas, the selector (its labels and
expressions, that it selects something, that it parses), the pod template (only when the
selector parses), the strategy and the counts.

Each kind orders these its own way, and words an empty selector after itself (a ReplicaSet
borrows the Deployment's words); a StatefulSet's pod spec is left unchecked, as v1.28 leaves
it."""

from __future__ import annotations

from typing import Any

from kubesim import names, podspec, strategies
from kubesim.errors import FieldError, GoLiteral, unsupported
from kubesim.immutable import label_selector_literal
from kubesim.selectors import match_labels_dict

Obj = dict[str, Any]
_NON_NEGATIVE = "must be greater than or equal to 0"
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_workload(resource: str, spec: Obj) -> list[FieldError]:
    if resource == "daemonsets.apps":
        return _daemonset(spec)
    errors: list[FieldError] = []
    if resource == "statefulsets.apps":  # its spec's validation begins with them
        errors += strategies.statefulset_strategy_errors(spec)
    errors += _non_negative(spec, "replicas")
    if resource != "deployments.apps":
        errors += _non_negative(spec, "minReadySeconds")
    kind = {"statefulsets.apps": "statefulset"}.get(resource, "deployment")
    selector_errors = _required_selector(spec.get("selector"), kind)
    errors += selector_errors
    if _parses(spec.get("selector")):
        errors += _template(resource, spec)
    elif resource == "statefulsets.apps":  # it names the selector, and says no more
        errors.append(FieldError("Invalid", "spec.selector", _selector(spec), ""))
    else:
        value = _selector(spec)
        errors.append(FieldError("Invalid", "spec.selector", value, "invalid label selector"))
    if resource == "deployments.apps":
        errors += strategies.deployment_strategy_errors(spec)
        errors += _deployment_counts(spec)
    return errors


def _non_negative(spec: Obj, field: str) -> list[FieldError]:
    value = spec.get(field)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [FieldError("Invalid", f"spec.{field}", value, _NON_NEGATIVE)]
    return []


def _selector(spec: Obj) -> GoLiteral:
    return label_selector_literal(spec.get("selector"))


def _required_selector(selector: Any, kind: str) -> list[FieldError]:
    """A selector is required, valid, and not empty (an empty one would select every pod)."""
    if selector is None:
        return [FieldError("Required", "spec.selector")]
    errors = selector_errors(selector, "spec.selector")
    if _empty(selector):
        why = f"empty selector is invalid for {kind}"
        errors.append(FieldError("Invalid", "spec.selector", label_selector_literal(selector), why))
    return errors


def _empty(selector: Any) -> bool:
    return isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    )


def _parses(selector: Any) -> bool:
    """metav1.LabelSelectorAsSelector succeeds (what ValidateLabelSelector accepts)."""
    return not selector_errors(selector, "spec.selector")


def selector_errors(selector: Any, path: str) -> list[FieldError]:
    """ValidateLabelSelector: the matchLabels as labels (key, then value, keys sorted where Go
    walks its map at random), then each expression's operator, key and values."""
    if not isinstance(selector, dict):
        return []
    errors: list[FieldError] = []
    labels = selector.get("matchLabels")
    for key, value in sorted(labels.items()) if isinstance(labels, dict) else ():
        where = f"{path}.matchLabels"
        errors += [FieldError("Invalid", where, key, m) for m in names.qualified_name_errors(key)]
        if isinstance(value, str):
            errors += [
                FieldError("Invalid", where, value, m) for m in names.label_value_errors(value)
            ]
    exprs = selector.get("matchExpressions")
    for i, expr in enumerate(exprs if isinstance(exprs, list) else ()):
        if isinstance(expr, dict):
            errors += _requirement(expr, f"{path}.matchExpressions[{i}]")
    return errors


def _requirement(expr: Obj, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    op, values = expr.get("operator") or "", expr.get("values") or []
    if op in ("In", "NotIn") and not values:
        why = "must be specified when `operator` is 'In' or 'NotIn'"
        errors.append(FieldError("Required", f"{path}.values", None, why))
    elif op in ("Exists", "DoesNotExist") and values:
        why = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        errors.append(FieldError("Forbidden", f"{path}.values", None, why))
    elif op not in _OPERATORS:
        errors.append(
            FieldError("Invalid", f"{path}.operator", op, "not a valid selector operator")
        )
    key = str(expr.get("key") or "")
    errors += [
        FieldError("Invalid", f"{path}.key", key, m) for m in names.qualified_name_errors(key)
    ]
    for j, value in enumerate(values if isinstance(values, list) else ()):
        if isinstance(value, str):
            where = f"{path}.values[{j}]"
            errors += [
                FieldError("Invalid", where, value, m) for m in names.label_value_errors(value)
            ]
    return errors


def _template_labels(spec: Obj) -> Any:
    return ((spec.get("template") or {}).get("metadata") or {}).get("labels")


def _mismatch(spec: Obj) -> list[FieldError]:
    """The template's labels must be selected (an empty selector selects all)."""
    selector, labels = spec.get("selector"), _template_labels(spec)
    if _empty(selector) or match_labels_dict(selector, labels or {}):
        return []
    why = "`selector` does not match template `labels`"
    return [FieldError("Invalid", "spec.template.metadata.labels", go_labels(labels), why)]


def _template(resource: str, spec: Obj) -> list[FieldError]:
    """ValidatePodTemplateSpecForReplicaSet / ...ForStatefulSet: the labels match, the pod
    spec (not a StatefulSet's), restartPolicy Always, no activeDeadlineSeconds."""
    errors = _mismatch(spec) + _template_metadata(spec)
    tpl_spec = (spec.get("template") or {}).get("spec") or {}
    if resource != "statefulsets.apps":
        errors += podspec.validate_pod_spec(tpl_spec, "spec.template.spec")
    policy = tpl_spec.get("restartPolicy")
    if policy is not None and policy != "Always":  # after the template's own checks
        errors.append(unsupported("spec.template.spec.restartPolicy", policy, ("Always",)))
    errors += _no_deadline(tpl_spec, "StatefulSet" if "stateful" in resource else "ReplicaSet")
    return errors


_ANNOTATIONS_LIMIT = 256 * 1024


def _template_metadata(spec: Obj) -> list[FieldError]:
    """ValidatePodTemplateSpec's labels and annotations, reported under `spec.template.labels`
    and `spec.template.annotations` (Go's path leaves out `metadata`). Go walks the maps in
    random order; kubesim sorts them."""
    meta = (spec.get("template") or {}).get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    errors: list[FieldError] = []
    for key, value in sorted(labels.items()) if isinstance(labels, dict) else ():
        where = "spec.template.labels"
        errors += [FieldError("Invalid", where, key, m) for m in names.qualified_name_errors(key)]
        if isinstance(value, str):
            errors += [
                FieldError("Invalid", where, value, m) for m in names.label_value_errors(value)
            ]
    if not isinstance(annotations, dict):
        return errors
    where = "spec.template.annotations"
    for key in sorted(annotations):
        # a qualified name, whatever its case
        errors += [
            FieldError("Invalid", where, key, m) for m in names.qualified_name_errors(key.lower())
        ]
    size = sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str))
    if size > _ANNOTATIONS_LIMIT:
        errors.append(
            FieldError("TooLong", where, "", f"must have at most {_ANNOTATIONS_LIMIT} bytes")
        )
    return errors


def _no_deadline(tpl_spec: Obj, kind: str) -> list[FieldError]:
    if tpl_spec.get("activeDeadlineSeconds") is None:
        return []
    why = f"activeDeadlineSeconds in {kind} is not Supported"
    return [FieldError("Forbidden", "spec.template.spec.activeDeadlineSeconds", None, why)]


def _deployment_counts(spec: Obj) -> list[FieldError]:
    errors = _non_negative(spec, "minReadySeconds") + _non_negative(spec, "revisionHistoryLimit")
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool):
        errors += _non_negative(spec, "progressDeadlineSeconds")
        ready = spec.get("minReadySeconds")
        if deadline <= (ready if isinstance(ready, int) else 0):
            why = "must be greater than minReadySeconds"
            errors.append(FieldError("Invalid", "spec.progressDeadlineSeconds", deadline, why))
    return errors


def _daemonset(spec: Obj) -> list[FieldError]:
    """ValidateDaemonSetSpec: no selector is only a mismatch; the template always checked."""
    selector = spec.get("selector")
    errors = selector_errors(selector, "spec.selector")
    if not errors:
        if selector is None:
            why = "`selector` does not match template `labels`"
            value = go_labels(_template_labels(spec))
            errors.append(FieldError("Invalid", "spec.template.metadata.labels", value, why))
        else:
            errors += _mismatch(spec)
    if _empty(selector):
        why = "empty selector is invalid for daemonset"
        errors.append(FieldError("Invalid", "spec.selector", _selector(spec), why))
    errors += _template_metadata(spec)
    tpl_spec = (spec.get("template") or {}).get("spec") or {}
    errors += podspec.validate_pod_spec(tpl_spec, "spec.template.spec")
    policy = tpl_spec.get("restartPolicy")
    if policy is not None and policy != "Always":
        errors.append(unsupported("spec.template.spec.restartPolicy", policy, ("Always",)))
    errors += _no_deadline(tpl_spec, "DaemonSet")
    errors += _non_negative(spec, "minReadySeconds")
    errors += strategies.daemonset_strategy_errors(spec)
    errors += _non_negative(spec, "revisionHistoryLimit")
    return errors


def go_labels(labels: Obj | None) -> GoLiteral:
    """A map[string]string as %#v prints it (keys sorted)."""
    if labels is None:
        return GoLiteral("map[string]string(nil)")
    inner = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
    return GoLiteral(f"map[string]string{{{inner}}}")
