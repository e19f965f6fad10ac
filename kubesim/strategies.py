"""The update strategies of Deployments, StatefulSets and DaemonSets, validated as v1.28's
pkg/apis/apps/validation does, word for word.

The classic mistake these catch: `kubectl patch deploy d -p '{"spec":{"strategy":
{"type":"Recreate"}}}'` merges into the defaulted rollingUpdate and a real server refuses
it. An emulator that accepted it would let a manifest pass here and fail in production.
"""

from __future__ import annotations

from typing import Any

from kubesim.errors import FieldError, GoLiteral, render_value, unsupported

Obj = dict[str, Any]

# Go's %#v prints a struct's pointer fields as addresses; any address reads the same.
_ADDRESS = "0xc000a2c000"


def deployment_strategy_errors(spec: Obj) -> list[FieldError]:
    kind, rolling, path = _parts(spec, "strategy")
    if kind == "Recreate":
        if rolling is not None:
            detail = "may not be specified when strategy `type` is 'Recreate'"
            return [FieldError("Forbidden", f"{path}.rollingUpdate", detail=detail)]
        return []
    if kind == "RollingUpdate":
        rolling = _dict(rolling)
        limits = _dict(rolling)
        unavailable, surge = limits.get("maxUnavailable"), limits.get("maxSurge")
        if _amount(unavailable) == 0 and _amount(surge) == 0:
            value = _int_or_string(unavailable)
            detail = "may not be 0 when `maxSurge` is 0"
            return [FieldError("Invalid", f"{path}.rollingUpdate.maxUnavailable", value, detail)]
        return []
    value = _struct("apps.DeploymentStrategy", kind, rolling, "apps.RollingUpdateDeployment")
    return [unsupported(path, value, ("Recreate", "RollingUpdate"))]


def statefulset_strategy_errors(spec: Obj) -> list[FieldError]:
    kind, rolling, path = _parts(spec, "updateStrategy")
    if kind == "OnDelete":
        if rolling is not None:
            value = _rolling_statefulset(_dict(rolling))
            detail = "only allowed for updateStrategy 'RollingUpdate'"
            return [FieldError("Invalid", f"{path}.rollingUpdate", value, detail)]
        return []
    if kind == "RollingUpdate":
        partition = _dict(rolling).get("partition")
        if isinstance(partition, int) and partition < 0:
            detail = "must be greater than or equal to 0"
            return [FieldError("Invalid", f"{path}.rollingUpdate.partition", partition, detail)]
        return []
    if not kind:
        return [FieldError("Required", path)]
    value = _struct(
        "apps.StatefulSetUpdateStrategy", kind, rolling, "apps.RollingUpdateStatefulSetStrategy"
    )
    return [FieldError("Invalid", path, value, "must be 'RollingUpdate' or 'OnDelete'")]


def daemonset_strategy_errors(spec: Obj) -> list[FieldError]:
    kind, rolling, path = _parts(spec, "updateStrategy")
    if kind == "OnDelete":
        return []  # a rollingUpdate left beside it is kept, and not checked
    if kind == "RollingUpdate":
        if rolling is None:
            return [FieldError("Required", f"{path}.rollingUpdate")]
        limits = _dict(rolling)
        unavailable, surge = limits.get("maxUnavailable"), limits.get("maxSurge")
        if _amount(unavailable) and _amount(surge):
            detail = "may not be set when maxUnavailable is non-zero"
            value = _int_or_string(surge)
            return [FieldError("Invalid", f"{path}.rollingUpdate.maxSurge", value, detail)]
        if not _amount(unavailable) and not _amount(surge):
            detail = "cannot be 0 when maxSurge is 0"
            return [FieldError("Required", f"{path}.rollingUpdate.maxUnavailable", detail=detail)]
        return []
    value = _struct("apps.DaemonSetUpdateStrategy", kind, rolling, "apps.RollingUpdateDaemonSet")
    return [unsupported(path, value, ("RollingUpdate", "OnDelete"))]


def _parts(spec: Obj, field: str) -> tuple[Any, Any, str]:
    """The strategy's type, its rollingUpdate (None when absent), and its path."""
    strategy = _dict(spec.get(field))
    return strategy.get("type"), strategy.get("rollingUpdate"), f"spec.{field}"


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _amount(value: Any) -> int:
    """getIntOrPercentValue: an int, or a percentage's number; absent is 0."""
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return int(value[:-1])
    return value if isinstance(value, int) else 0


def _int_or_string(value: Any) -> GoLiteral:
    if isinstance(value, str):
        return GoLiteral(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{render_value(value)}}}")
    number = value if isinstance(value, int) else 0
    return GoLiteral(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')


def _pointer(go_type: str, value: Any) -> str:
    return f"(*{go_type})({'nil' if value is None else _ADDRESS})"


def _struct(go_type: str, kind: Any, rolling: Any, rolling_type: str) -> GoLiteral:
    shown = render_value(kind if isinstance(kind, str) else "")
    return GoLiteral(f"{go_type}{{Type:{shown}, RollingUpdate:{_pointer(rolling_type, rolling)}}}")


def _rolling_statefulset(rolling: Obj) -> GoLiteral:
    partition = rolling.get("partition") if isinstance(rolling.get("partition"), int) else 0
    unavailable = _pointer("intstr.IntOrString", rolling.get("maxUnavailable"))
    return GoLiteral(
        f"apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, "
        f"MaxUnavailable:{unavailable}}}"
    )
