"""A reconcile's last error, classified for a person: what the API said, and what to change.

Pure: the text of the error as the run log keeps it in, a classification out. The 403
wording is kube-apiserver's ("User "u" cannot patch resource "deployments" in API group
"apps" in the namespace "n""), which kubesim's RBAC copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from controllers.refusals import (
    CLAIM,
    NOT_GRANTED,
    QUOTA,
    claim_advice,
    webhook_advice,
)

# The ClusterRole that k8s/rbac/role.yaml grants the operators' ServiceAccount (the
# default of OPSBOARD_OPERATOR_CLUSTER_ROLE).
OPERATOR_CLUSTER_ROLE = "opsboard-operator"

_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]+)" cannot (?P<verb>[\w-]+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?(?: in the namespace "(?P<namespace>[^"]+)")?'
)
# A 403's first words: 'services "web" is forbidden', 'deployments.apps is forbidden'.
_FORBIDDEN_OBJECT = re.compile(
    r'^(?P<resource>[a-z0-9-]+)(?:\.[a-z0-9.-]+)?(?: "(?P<name>[^"]*)")? is forbidden'
)
_STATUS = re.compile(r"^(?P<call>[A-Z]+ \S+): (?P<code>\d{3})\b ?(?P<message>.*)$", re.S)
# kube-apiserver's 422: 'Deployment.apps "web" is invalid: spec.selector: Invalid value: …'.
_INVALID = re.compile(
    r'^(?:(?P<kind>[\w.]+) "(?P<name>[^"]+)" )?is invalid: (?P<field>[\w.\[\]-]+): '
    r"(?P<message>.+)",
    re.S,
)
# One field error: "Invalid value: <the value, Go-printed>: <why>"; a long value is elided.
_VALUE = re.compile(
    r"^(?P<label>(?:Invalid|Unsupported|Duplicate) value): (?P<value>.+): (?P<why>[^:]+)$", re.S
)
_LONG_VALUE = 40
IMMUTABLE = "field is immutable"
# A Service's NodePort taken by another Service: a conflict that clears when that one goes.
PORT_TAKEN = re.compile(
    r"nodePort: Invalid value: (?P<port>\d+): provided port is already allocated"
)
_CLIP = 300
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
class ClaimFields:
    """What the advice for a refused claim names: the CR's field that sets its size, and
    the claim's StorageClass (as the mirror has it)."""

    storage: str | None = None
    storage_class: str | None = None


@dataclass(frozen=True)
class ClassifiedError:
    # "Forbidden", "Webhook", "Conflict", "Invalid", "Unreachable", "ServerError", "Error"
    code: str
    what: str  # one line: what went wrong
    todo: str  # one line: what to do about it
    verb: str = ""
    resource: str = ""
    group: str = ""
    # A 422's object (kind, name) as the API server named it, the field it refused and why.
    refused: tuple[str, str] = ("", "")
    # A 403's object as the API server named it: (resource, name), the name "" for a create
    # RBAC refused (it names none).
    denied: tuple[str, str] = ("", "")
    field: str = ""
    why: str = ""
    port: int = 0  # a NodePort another Service holds


def clip(text: str, limit: int = _CLIP) -> str:
    """`text` cut to `limit` characters at a word boundary, with an ellipsis if cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,:;") + "…"


def _field_error(message: str) -> tuple[str, str]:
    """A field error's text with a long value elided, and its last words (why)."""
    found = _VALUE.match(message)
    if found is None:
        return message, message
    value = found["value"]
    shown = value if len(value) <= _LONG_VALUE else value[:_LONG_VALUE] + "…"
    return f"{found['label']}: {shown}: {found['why']}", found["why"].strip()


def _forbidden(
    message: str, call: str, role_name: str, namespace: str, claims: ClaimFields
) -> ClassifiedError:
    found = _FORBIDDEN.search(message)
    if found is None:
        return ClassifiedError(
            "Forbidden",
            clip(f"The API server refused {call}: 403 {message}"),
            _refusal_todo(message, role_name, namespace, claims),
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
    todo = f'Add verb "{verb}" for resource "{resource}" in apiGroup "{group}" to {role}, '
    todo += "then apply it."
    if user.startswith("system:serviceaccount:"):
        bind = _binding(user, role_name, found["namespace"])
        todo += f" If it has it, {user} is not bound to it: {bind}"
    return ClassifiedError(
        "Forbidden",
        f"403 Forbidden: {who} {user} lacks verb {verb} on resource {resource} "
        f"in API group {shown_group}.",
        todo,
        verb=verb,
        resource=resource,
        group=group,
    )


def _refusal_todo(message: str, role_name: str, namespace: str, claims: ClaimFields) -> str:
    """A 403 whose wording is not RBAC's for a resource: a path RBAC refuses, or admission's
    (a ResourceQuota, PodSecurity, a webhook, a claim's StorageClass), which no grant
    changes."""
    if NOT_GRANTED.search(message):  # RBAC's, for a non-resource URL
        return f"Grant the operator's identity this call in the ClusterRole {role_name}."
    if CLAIM.search(message):  # a claim grown (BookStore's dbSize) or created
        advice = claim_advice(
            namespace, message, claims.storage, storage_class=claims.storage_class
        )
        return f"{advice} No grant changes this."
    where = f"-n {namespace} " if namespace else ""
    if quota := QUOTA.search(message):
        return (
            f"Raise ResourceQuota {quota[1]} (kubectl {where}describe resourcequota "
            f"{quota[1]}) or delete what fills it; no grant changes this."
        )
    return (
        "An admission check refused the write (PodSecurity, a LimitRange, a policy), as "
        "its message says: change what refuses it; no grant changes this."
    )


def _binding(user: str, role_name: str, namespace: str | None) -> str:
    """The kubectl command that binds the ClusterRole to a ServiceAccount: in the namespace
    refused, or cluster-wide for a cluster-scoped call (a list across namespaces)."""
    account = user.removeprefix("system:serviceaccount:")
    where = f"-n {namespace} create rolebinding" if namespace else "create clusterrolebinding"
    return f"kubectl {where} {role_name} --clusterrole={role_name} --serviceaccount={account}"


def _invalid(
    code: int, call: str, message: str, *, kind: str, namespace: str, then: str
) -> ClassifiedError:
    """A 400/422. The API server names the object it refused: the CR (a controller writes
    only its status) or, most often, a child, whose fields are not the CR's: the advice
    then says what to do about that child."""
    found = _INVALID.search(message)
    if found is None:
        return ClassifiedError(
            "Invalid",
            clip(f"{code} Invalid on {call}: {message}"),
            f"Read the reconcile log below; {then}.",
        )
    field, (detail, why) = found["field"], _field_error(found["message"].strip())
    refused_kind, name = (found["kind"] or "").split(".", 1)[0], found["name"] or ""
    said = ClassifiedError("Invalid", "", "", refused=(refused_kind, name), field=field, why=why)
    if not refused_kind or refused_kind == kind or not kind:
        return replace(
            said,
            what=clip(f"{code} Invalid on {call}: {field}: {detail}"),
            todo=f"Change {field} to a value the schema accepts; {then}.",
        )
    child = f"{refused_kind} {name}"
    if taken := PORT_TAKEN.search(message):
        port = int(taken["port"])
        return replace(
            said,
            code="PortTaken",
            what=f"NodePort {port} is already in use by another Service, so the API server "
            f"refused {child} ({call}).",
            todo=f"Set another NodePort in this {kind}'s spec, or remove it to let the cluster "
            f"choose one; {then}.",
            port=port,
        )
    if why == IMMUTABLE:
        todo = (
            f"The {field} of an existing {refused_kind} cannot be changed: delete {child} "
            f"(kubectl -n {namespace} delete {refused_kind.lower()} {name}) and the operator "
            f"creates it anew, or rename this {kind}."
        )
    else:
        todo = (
            f"The operator builds {child} from this {kind}'s spec: change what in the spec "
            f"sets its {field}; {then}."
        )
    return replace(
        said,
        what=clip(f"{code} Invalid: the API server refused {child} ({call}): {field}: {detail}"),
        todo=todo,
    )


def classify_error(
    text: str,
    *,
    role: str = OPERATOR_CLUSTER_ROLE,
    permanent: bool = False,
    kind: str = "",
    namespace: str = "",
    claims: ClaimFields = ClaimFields(),
) -> ClassifiedError:
    """What the last error of a run means. Unknown texts are passed on as they are.
    `permanent`: the run ended in a PermanentError, which the engine does not retry.
    `kind`, `namespace`: the CR's, to tell a refused write of a child from one of the CR;
    `claims`: what a refused claim's advice names."""
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
                clip(f"The API server could not be reached: {text}"),
                f"Check that the cluster is up and that KUBECONFIG points at it; {then}.",
            )
        return ClassifiedError(
            "Error",
            clip(f"The last reconcile failed: {text}"),
            f"Read the reconcile log below; {then}.",
        )
    call, code, message = status["call"], int(status["code"]), status["message"].strip()
    if said := webhook_advice(message, "this write"):
        return ClassifiedError(
            "Webhook",
            clip(f"The API server refused {call}: {code} {message}"),
            f"{said} {then[0].upper() + then[1:]}.",
        )
    if code == 403:
        forbidden = _forbidden(message, call, role, namespace, claims)
        if denied := _FORBIDDEN_OBJECT.match(message):
            forbidden = replace(forbidden, denied=(denied["resource"], denied["name"] or ""))
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
        return _invalid(code, call, message, kind=kind, namespace=namespace, then=then)
    if code == 429 or code >= 500:
        return ClassifiedError(
            "ServerError",
            clip(f"{code} from the API server on {call}: {message}"),
            f"The API server is overloaded or failing; {then}.",
        )
    return ClassifiedError(
        "Error",
        clip(f"{code} on {call}: {message}"),
        f"Read the reconcile log below; {then}.",
    )
