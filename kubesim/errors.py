"""API errors as kube-apiserver reports them: a Status object with code, reason and message.

Messages follow k8s.io/apimachinery/pkg/api/errors word for word, because clients (and
people) match on them.
"""

from __future__ import annotations

from typing import Any

from kubesim.gojson import go_quote


class ApiError(Exception):
    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # omitempty: an error that never became a Status has no reason
            body["reason"] = self.reason
        body["code"] = self.code
        if self.details is not None:
            body["details"] = self.details
        return body


def qualified(resource: str) -> tuple[str, str]:
    """Split "deployments.apps" into ("deployments", "apps")."""
    plural, _, group = resource.partition(".")
    return plural, group


def _details(resource: str, name: str | None) -> dict[str, Any]:
    plural, group = qualified(resource)
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = plural
    return d


def not_found(resource: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource} "{name}" not found', _details(resource, name))


def resource_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(resource: str, name: str) -> ApiError:
    return ApiError(
        409, "AlreadyExists", f'{resource} "{name}" already exists', _details(resource, name)
    )


def conflict(resource: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {resource} "{name}": {why}',
        _details(resource, name),
    )


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def stale(resource: str, name: str) -> ApiError:
    return conflict(resource, name, STALE)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def forbidden(resource: str, name: str, why: str) -> ApiError:
    return ApiError(
        403, "Forbidden", f'{resource} "{name}" is forbidden: {why}', _details(resource, name)
    )


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def too_large(limit: int) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def unsupported_media(accepted: list[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
        {"retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def internal(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def unconverted(message: str) -> ApiError:
    """A plain Go error that reached kube-apiserver's responder as it was (ErrorToAPIStatus's
    default): a 500 with no reason and no details, its text as the message."""
    return ApiError(500, "", message)


def unavailable(message: str = "the server is currently unable to handle the request") -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


class FieldError:
    """One cause of a 422 Invalid, rendered like field.Error.Error()."""

    __slots__ = ("detail", "field", "kind", "value")

    def __init__(self, kind: str, field: str, value: Any = None, detail: str = "") -> None:
        self.kind = kind  # "Invalid" | "Required" | "Unsupported" | "NotFound" | "Forbidden" ...
        self.field = field
        self.value = value
        self.detail = detail

    _REASONS = {
        "Invalid": ("FieldValueInvalid", "Invalid value"),
        "Required": ("FieldValueRequired", "Required value"),
        "Unsupported": ("FieldValueNotSupported", "Unsupported value"),
        "Forbidden": ("FieldValueForbidden", "Forbidden"),
        "TooLong": ("FieldValueTooLong", "Too long"),
        "TooMany": ("FieldValueTooMany", "Too many"),
        "Duplicate": ("FieldValueDuplicate", "Duplicate value"),
        "NotFound": ("FieldValueNotFound", "Not found"),
        "TypeInvalid": ("FieldValueTypeInvalid", "Invalid value"),
    }

    def body(self) -> str:
        label = self._REASONS[self.kind][1]
        if self.kind in ("Required", "Forbidden", "TooLong", "TooMany"):
            return f"{label}: {self.detail}" if self.detail else label
        s = f"{label}: {render_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def text(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, Any]:
        return {"reason": self._REASONS[self.kind][0], "message": self.body(), "field": self.field}


class GoLiteral:
    """A value rendered verbatim in a field error, for Go values like `0x0` or a map."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def render_value(value: Any) -> str:
    """Go's %#v-ish rendering that field.Invalid uses: strings quoted, numbers bare."""
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return (
            repr(value)
            if isinstance(value, float) and not value.is_integer()
            else str(int(value) if isinstance(value, float) else value)
        )
    if isinstance(value, dict):
        return '"object"'
    if isinstance(value, list):
        return '"array"'
    return str(value)


def unsupported(path: str, value: Any, supported: tuple[str, ...]) -> FieldError:
    """field.NotSupported: the value, and the values the field takes."""
    detail = "supported values: " + ", ".join(render_value(s) for s in supported)
    return FieldError("Unsupported", path, value, detail)


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    qkind = f"{kind}.{group}" if group else kind
    texts = [e.text() for e in errors]
    agg = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    details: dict[str, Any] = {"name": name} if name else {}  # omitempty
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [e.cause() for e in errors]
    return ApiError(422, "Invalid", f'{qkind} "{name}" is invalid: {agg}', details)


def patch_invalid(value: Any, why: str) -> ApiError:
    """A patch whose result the kind's Go type cannot hold: patch.go's NewInvalid with neither
    kind nor name (hence the message's leading ` ""`), the offending value under "patch"."""
    cause = FieldError("Invalid", "patch", value, why)
    return ApiError(422, "Invalid", f' "" is invalid: {cause.text()}', {"causes": [cause.cause()]})
