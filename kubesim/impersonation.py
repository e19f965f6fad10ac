"""Impersonation headers (`kubectl --as`, `--as-group`), as kube-apiserver's
WithImpersonation filter honours them: each user, group, extra and uid asked for needs the
`impersonate` verb on it, else a 403 naming the first one refused."""

from __future__ import annotations

from email.message import Message
from urllib.parse import unquote

from kubesim.authn import (
    ANONYMOUS,
    AUTHENTICATED,
    UNAUTHENTICATED,
    UserInfo,
    split_service_account,
)
from kubesim.errors import ApiError
from kubesim.rbac import Attributes, Authorizer, forbidden

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA = "Impersonate-Extra-"


def _requests(headers: Message) -> list[tuple[str, str, str, str]]:
    """(resource, namespace, name, subresource) per thing asked for, user first."""
    out: list[tuple[str, str, str, str]] = []
    user = headers.get(USER)
    groups = headers.get_all(GROUP) or []
    extras = [
        (key[len(EXTRA) :].lower(), value)
        for key in dict.fromkeys(headers.keys())
        if key.lower().startswith(EXTRA.lower())
        for value in headers.get_all(key) or []
    ]
    uid = headers.get(UID)
    if not user and (groups or extras or uid):
        raise ApiError(
            500,
            "InternalError",
            f"requested {groups or [e[1] for e in extras] or [uid]} without impersonating a user",
        )
    if user:
        sa = split_service_account(user)
        if sa is not None:
            out.append(("serviceaccounts", sa[0], sa[1], ""))
        else:
            out.append(("users", "", user, ""))
    out.extend(("groups", "", g, "") for g in groups)
    out.extend(("userextras", "", value, unquote(key)) for key, value in extras)
    if uid:
        out.append(("uids", "", uid, ""))
    return out


def impersonate(requestor: UserInfo, headers: Message, authz: Authorizer) -> UserInfo:
    """The user the request acts as: the requestor, or whom it may impersonate."""
    asked = _requests(headers)
    if not asked:
        return requestor
    groups_given = bool(headers.get_all(GROUP))
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, tuple[str, ...]] = {}
    for resource, namespace, name, sub in asked:
        attrs = Attributes(
            requestor,
            "impersonate",
            True,
            group="authentication.k8s.io" if resource in ("userextras", "uids") else "",
            resource=resource,
            subresource=sub,
            namespace=namespace,
            name=name,
        )
        if resource == "serviceaccounts":
            username = f"system:serviceaccount:{namespace}:{name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
        elif resource == "users":
            username = name
        elif resource == "groups":
            groups.append(name)
        elif resource == "userextras":
            extra[sub] = (*extra.get(sub, ()), name)
        else:
            uid = name
        allowed, reason = authz.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)
    if username != ANONYMOUS:
        if not {AUTHENTICATED, UNAUTHENTICATED} & set(groups):
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(username, tuple(groups), uid, extra)
