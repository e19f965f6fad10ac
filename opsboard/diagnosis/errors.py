"""A reconcile's last error, classified for a person: what the API said, and what to change.

Pure: the text of the error as the run log keeps it in, a classification out. The 403
wording is kube-apiserver's ("User "u" cannot patch resource "deployments" in API group
"apps" in the namespace "n""), which kubesim's RBAC copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# The ClusterRole that k8s/rbac/role.yaml grants the operators' ServiceAccount (the
# default of OPSBOARD_OPERATOR_CLUSTER_ROLE).
OPERATOR_CLUSTER_ROLE = "opsboard-operator"

_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]+)" cannot (?P<verb>[\w-]+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
)
_STATUS = re.compile(r"^(?P<call>[A-Z]+ \S+): (?P<code>\d{3})\b ?(?P<message>.*)$", re.S)
_INVALID = re.compile(r"is invalid: (?P<field>[\w.\[\]-]+): (?P<message>.+)", re.S)
_UNREACHABLE = (
    "Connection refused",
    "Max retries exceeded",
    "timed out",
    "NewConnectionError",
    "Name or service not known",
    "Connection reset",
    "RemoteDisconnected",
)


@dataclass(frozen=True)
class ClassifiedError:
    code: str  # "Forbidden", "Conflict", "Invalid", "Unreachable", "ServerError", "Error"
    what: str  # one line: what went wrong
    todo: str  # one line: what to do about it
    verb: str = ""
    resource: str = ""
    group: str = ""


def _forbidden(message: str, call: str, role_name: str) -> ClassifiedError:
    found = _FORBIDDEN.search(message)
    if found is None:
        return ClassifiedError(
            "Forbidden",
            f"The API server refused {call}: 403 {message}"[:300],
            f"Grant the operator's identity this call in the ClusterRole {role_name}.",
        )
    user, verb, resource = found["user"], found["verb"], found["resource"]
    group = found["group"] or ""
    shown_group = group or 'core ("")'
    who = "the operator's ServiceAccount" if user.startswith("system:serviceaccount:") else "user"
    role = (
        f"the ClusterRole {role_name} (k8s/rbac/role.yaml)"
        if user.startswith("system:serviceaccount:")
        else "a role bound to that user"
    )
    return ClassifiedError(
        "Forbidden",
        f"403 Forbidden: {who} {user} lacks verb {verb} on resource {resource} "
        f"in API group {shown_group}.",
        f'Add verb "{verb}" for resource "{resource}" in apiGroup "{group}" to {role}, '
        f"then apply it.",
        verb=verb,
        resource=resource,
        group=group,
    )


def classify_error(
    text: str, *, role: str = OPERATOR_CLUSTER_ROLE, permanent: bool = False
) -> ClassifiedError:
    """What the last error of a run means. Unknown texts are passed on as they are.
    `permanent`: the run ended in a PermanentError, which the engine does not retry."""
    text = text.strip()
    then = (
        "it is not retried until the object changes or someone presses Reconcile now"
        if permanent
        else "the engine retries with backoff"
    )
    status = _STATUS.match(text)
    if status is None:
        if any(marker in text for marker in _UNREACHABLE):
            return ClassifiedError(
                "Unreachable",
                f"The API server could not be reached: {text}"[:300],
                f"Check that the cluster is up and that KUBECONFIG points at it; {then}.",
            )
        return ClassifiedError(
            "Error",
            f"The last reconcile failed: {text}"[:300],
            f"Read the reconcile log below; {then}.",
        )
    call, code, message = status["call"], int(status["code"]), status["message"].strip()
    if code == 403:
        forbidden = _forbidden(message, call, role)
        return (
            replace(forbidden, todo=f"{forbidden.todo} {then[0].upper() + then[1:]}.")
            if permanent
            else forbidden
        )
    if code == 409:
        return ClassifiedError(
            "Conflict",
            f"409 Conflict on {call}: the object changed while the reconcile ran.",
            "Nothing to do unless it repeats: the next run starts from the fresh object.",
        )
    if code in (400, 422):
        invalid = _INVALID.search(message)
        field, detail = (invalid["field"], invalid["message"]) if invalid else ("", message)
        return ClassifiedError(
            "Invalid",
            f"{code} Invalid on {call}: {field + ': ' if field else ''}{detail}"[:300],
            f"Change {field or 'the spec'} to a value the schema accepts; "
            "the operator retries once the object changes.",
        )
    if code == 429 or code >= 500:
        return ClassifiedError(
            "ServerError",
            f"{code} from the API server on {call}: {message}"[:300],
            f"The API server is overloaded or failing; {then}.",
        )
    return ClassifiedError(
        "Error",
        f"{code} on {call}: {message}"[:300],
        f"Read the reconcile log below; {then}.",
    )
