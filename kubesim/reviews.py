"""The create-only kinds that ask the server a question instead of storing an object:
access reviews (`kubectl auth can-i`, `--list`), who-am-I, token reviews and TokenRequest
(`kubectl create token`). Each answers the request's object with its status filled in."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from kubesim import errors
from kubesim.authn import AUDIENCES, DEFAULT_EXPIRATION, MIN_EXPIRATION, UserInfo
from kubesim.errors import FieldError
from kubesim.rbac import Attributes

if TYPE_CHECKING:
    from kubesim.access import Access

AUTHZ = "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
REVIEWS = {
    f"selfsubjectaccessreviews.{AUTHZ}",
    f"subjectaccessreviews.{AUTHZ}",
    f"localsubjectaccessreviews.{AUTHZ}",
    f"selfsubjectrulesreviews.{AUTHZ}",
    f"selfsubjectreviews.{AUTHN}",
    f"tokenreviews.{AUTHN}",
}


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _answer(body: dict[str, Any], kind: str, group: str, status: dict[str, Any]) -> dict[str, Any]:
    meta = dict(body.get("metadata") or {})
    meta["creationTimestamp"] = None
    return {
        "kind": kind,
        "apiVersion": f"{group}/v1",
        "metadata": meta,
        "spec": body.get("spec") or {},
        "status": status,
    }


def _access_status(access: Access, user: UserInfo, spec: dict[str, Any]) -> dict[str, Any]:
    res, url = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None:
        attrs = Attributes(
            user,
            res.get("verb", ""),
            True,
            group=res.get("group", ""),
            version=res.get("version", ""),
            resource=res.get("resource", ""),
            subresource=res.get("subresource", ""),
            namespace=res.get("namespace", ""),
            name=res.get("name", ""),
        )
    else:
        url = url or {}
        attrs = Attributes(user, url.get("verb", ""), False, path=url.get("path", ""))
    allowed, reason = access.authorizer.authorize(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def _require_attributes(kind: str, spec: dict[str, Any]) -> None:
    res, url = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (res is None) == (url is None):
        detail = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        raise errors.invalid(
            kind,
            AUTHZ,
            "",
            [FieldError("Required", "spec.resourceAttributes", detail=detail)],
        )


def review(
    access: Access, user: UserInfo, resource: str, namespace: str | None, body: dict[str, Any]
) -> dict[str, Any]:
    spec = body.get("spec") or {}
    plural = resource.split(".")[0]
    if plural == "selfsubjectaccessreviews":
        _require_attributes("SelfSubjectAccessReview", spec)
        return _answer(body, "SelfSubjectAccessReview", AUTHZ, _access_status(access, user, spec))
    if plural in ("subjectaccessreviews", "localsubjectaccessreviews"):
        kind = "SubjectAccessReview" if plural[0] == "s" else "LocalSubjectAccessReview"
        _require_attributes(kind, spec)
        if namespace is not None:
            res = spec.get("resourceAttributes") or {}
            if res.get("namespace", namespace) != namespace:
                raise errors.bad_request(
                    f"spec.resourceAttributes.namespace must match namespace: {namespace}"
                )
            spec = spec | {"resourceAttributes": res | {"namespace": namespace}}
        subject = UserInfo(
            spec.get("user", ""),
            tuple(spec.get("groups") or ()),
            spec.get("uid", ""),
            {k: tuple(v) for k, v in (spec.get("extra") or {}).items()},
        )
        return _answer(body, kind, AUTHZ, _access_status(access, subject, spec))
    if plural == "selfsubjectrulesreviews":
        ns = spec.get("namespace", "")
        if not ns:
            raise errors.bad_request("no namespace on request")
        rules, urls, error = access.authorizer.rules_for(user, ns)
        status: dict[str, Any] = {
            "resourceRules": rules,
            "nonResourceRules": urls,
            "incomplete": bool(error),
        }
        if error:
            status["evaluationError"] = error
        return _answer(body, "SelfSubjectRulesReview", AUTHZ, status)
    if plural == "selfsubjectreviews":
        answer = _answer(body, "SelfSubjectReview", AUTHN, {"userInfo": user.to_dict()})
        del answer["spec"]
        return answer
    # tokenreviews
    token = spec.get("token", "")
    found = access.authenticator.service_account(token) if token else None
    if found is None and token and token == access.authenticator.admin_token:
        found = access.authenticator.admin
    token_status: dict[str, Any] = {"user": {}}
    if found is not None:
        token_status = {
            "authenticated": True,
            "user": found.to_dict(),
            "audiences": list(AUDIENCES),
        }
    elif token:
        token_status["error"] = "[invalid bearer token, token lookup failed]"
    return _answer(body, "TokenReview", AUTHN, token_status)


def token_request(
    access: Access, namespace: str, name: str, body: dict[str, Any]
) -> dict[str, Any]:
    """POST serviceaccounts/NAME/token: a token for the ServiceAccount, as `kubectl create
    token` asks for it."""
    sa = access.store.get("serviceaccounts", namespace, name)
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds") or DEFAULT_EXPIRATION
    problem = None
    if seconds < MIN_EXPIRATION:
        problem = "may not specify a duration less than 10 minutes"
    elif seconds > 1 << 32:
        problem = "may not specify a duration larger than 2^32 seconds"
    if problem:
        raise errors.invalid(
            "TokenRequest",
            AUTHN,
            "",  # the request's own name, which kubectl leaves empty
            [FieldError("Invalid", "spec.expirationSeconds", seconds, problem)],
        )
    audiences = list(spec.get("audiences") or AUDIENCES)
    bound = spec.get("boundObjectRef")
    token, expires = access.authenticator.issue(
        sa, audiences=audiences, expiration_seconds=int(seconds), bound=bound
    )
    moment = datetime.datetime.fromtimestamp(expires, datetime.UTC)
    return {
        "kind": "TokenRequest",
        "apiVersion": f"{AUTHN}/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _now()},
        "spec": {
            "audiences": audiences,
            "expirationSeconds": int(seconds),
            "boundObjectRef": bound,
        },
        "status": {"token": token, "expirationTimestamp": moment.strftime("%Y-%m-%dT%H:%M:%SZ")},
    }


def is_review(resource: str) -> bool:
    return resource in REVIEWS
