"""What a request asks to do, read from its path as kube-apiserver's RequestInfoFactory
reads it: authorization decides on this before the path is known to name anything."""

from __future__ import annotations

from urllib.parse import unquote

from kubesim import query_options
from kubesim.authn import UserInfo
from kubesim.rbac import Attributes
from kubesim.selectors import exact_name

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


def attributes(user: UserInfo, method: str, path: str, query: dict[str, str]) -> Attributes:
    parts = [unquote(p) for p in path.split("/") if p]
    plain = Attributes(user, method.lower(), False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return plain
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return plain
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] in ("watch", "proxy") and len(rest) >= 2:
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in ("status", "finalize"):
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if query_options.bool_option(query, "watch") else "list"
        name = exact_name(query.get("fieldSelector")) or ""
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user,
        verb,
        True,
        path=path,
        group=group,
        version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )
