"""A write's query options, checked as kube-apiserver's handlers check them before they
decode the body (meta/v1 validation's ValidateCreateOptions, ValidateUpdateOptions,
ValidatePatchOptions and ValidateDeleteOptions): every bad option in one 422
`<Kind>Options.meta.k8s.io "" is invalid`. Reads (get, list, watch) take no such options,
and ignore them."""

from __future__ import annotations

from kubesim import errors
from kubesim.errors import FieldError, GoLiteral
from kubesim.query_options import first_values

FIELD_MANAGER_MAX = 128
_OPTIONS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}
_FIELD_VALIDATIONS = ("", "Ignore", "Strict", "Warn")
_PROPAGATIONS = ("Foreground", "Background", "Orphan")


def field_manager_errors(manager: str) -> list[FieldError]:
    """ValidateFieldManager: at most 128 bytes, every rune printable."""
    found = []
    if len(manager.encode()) > FIELD_MANAGER_MAX:
        why = f"must have at most {FIELD_MANAGER_MAX} bytes"
        found.append(FieldError("TooLong", "fieldManager", manager, why))
    at = 0  # Go ranges over a string by byte offset
    for ch in manager:
        if not ch.isprintable():  # Python's printable is Go's unicode.IsPrint
            why = f"invalid character U+{ord(ch):04X} (at position {at})"
            found.append(FieldError("Invalid", "fieldManager", manager, why))
        at += len(ch.encode())
    return found


def dry_run_errors(values: list[str]) -> list[FieldError]:
    """ValidateDryRun: "All" is the only dry run there is (`?dryRun=` is one empty value)."""
    if all(v == "All" for v in values):
        return []
    shown = GoLiteral("[]string{" + ", ".join(errors.render_value(v) for v in values) + "}")
    return [errors.unsupported("dryRun", shown, ("All",))]


def dry_run(values: list[str]) -> bool:
    return bool(values)  # checked: every value is "All"


def check_write(verb: str, query: dict[str, list[str]], *, apply: bool = False) -> None:
    """Refuse a create's, update's or patch's bad options: the manager (required by an apply),
    `force` (an apply's only), the dry run, the field validation, in Go's order."""
    options = first_values(query)  # a string option: the first of repeated values, as in Go
    manager = options.get("fieldManager", "")
    found: list[FieldError] = []
    if verb == "patch" and not apply and "force" in query:
        found.append(
            FieldError("Forbidden", "force", None, "may not be specified for non-apply patch")
        )
    if apply and not manager:
        found.append(FieldError("Required", "fieldManager", None, "is required for apply patch"))
    found += field_manager_errors(manager)
    found += dry_run_errors(query.get("dryRun", []))
    validation = options.get("fieldValidation", "")
    if validation not in _FIELD_VALIDATIONS:
        found.append(errors.unsupported("fieldValidation", validation, _FIELD_VALIDATIONS))
    if found:
        raise errors.invalid(_OPTIONS[verb], "meta.k8s.io", "", found)


def check_delete(propagation: object, dry_runs: list[str]) -> None:
    """ValidateDeleteOptions' propagation policy and dry run (from the body, else the query)."""
    found: list[FieldError] = []
    if propagation is not None and propagation not in _PROPAGATIONS:
        supported = 'supported values: "Foreground", "Background", "Orphan", "nil"'
        found.append(FieldError("Unsupported", "propagationPolicy", propagation, supported))
    found += dry_run_errors(dry_runs)
    if found:
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", found)
