"""RBAC authorization as kube-apiserver decides it (plugin/pkg/auth/authorizer/rbac).

`system:masters` may do anything (the privileged-group authorizer); everyone else is allowed
what a rule of a role bound to them allows: ClusterRoleBindings first, then the
RoleBindings of the request's namespace. ClusterRoles with an aggregationRule hold the rules
of the ClusterRoles their selectors pick, as the aggregation controller writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesim.authn import MASTERS, UserInfo
from kubesim.errors import ApiError
from kubesim.selectors import match_labels_dict

if TYPE_CHECKING:
    from kubesim.store import Store

ROLES = "roles.rbac.authorization.k8s.io"
ROLE_BINDINGS = "rolebindings.rbac.authorization.k8s.io"
CLUSTER_ROLES = "clusterroles.rbac.authorization.k8s.io"
CLUSTER_ROLE_BINDINGS = "clusterrolebindings.rbac.authorization.k8s.io"
RBAC_RESOURCES = (ROLES, ROLE_BINDINGS, CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS)

Rule = dict[str, Any]


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (k8s.io/apiserver's authorizer.Attributes)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


# --- rule matching (k8s.io/component-helpers/auth/rbac/validation) ----------------------------


def _verb_matches(rule: Rule, verb: str) -> bool:
    verbs = rule.get("verbs") or ()
    return "*" in verbs or verb in verbs


def _group_matches(rule: Rule, group: str) -> bool:
    groups = rule.get("apiGroups") or ()
    return "*" in groups or group in groups


def _resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for r in rule.get("resources") or ():
        if r == "*" or r == combined:
            return True
        if subresource and r == "*/" + subresource:
            return True
    return False


def _name_matches(rule: Rule, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    if attrs.resource_request:
        combined = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
        return (
            _verb_matches(rule, attrs.verb)
            and _group_matches(rule, attrs.group)
            and _resource_matches(rule, combined, attrs.subresource)
            and _name_matches(rule, attrs.name)
        )
    return _verb_matches(rule, attrs.verb) and _url_matches(rule, attrs.path)


# --- subjects ---------------------------------------------------------------------------------


def _applies(user: UserInfo, subject: dict[str, Any], namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or namespace
        return bool(ns) and user.name == f"system:serviceaccount:{ns}:{name}"
    return False


def _describe_subject(subject: dict[str, Any], namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        ns = subject.get("namespace") or namespace
        return f'ServiceAccount "{subject.get("name")}/{ns}"'
    return f'{subject.get("kind")} "{subject.get("name")}"'


# --- the policy: a consistent snapshot of the four RBAC kinds ---------------------------------


@dataclass
class _Policy:
    roles: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    cluster_roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster_bindings: list[dict[str, Any]] = field(default_factory=list)
    bindings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    aggregated: dict[str, list[Rule]] = field(default_factory=dict)

    def cluster_role_rules(self, name: str) -> list[Rule] | None:
        if name in self.aggregated:
            return self.aggregated[name]
        role = self.cluster_roles.get(name)
        return None if role is None else list(role.get("rules") or [])


def aggregate_rules(cluster_roles: dict[str, dict[str, Any]], name: str) -> list[Rule]:
    """The rules the aggregation controller gives ClusterRole `name`: those of every other
    ClusterRole a selector of its aggregationRule picks, in name order, without repeats."""
    selectors = (cluster_roles[name].get("aggregationRule") or {}).get("clusterRoleSelectors")
    rules: list[Rule] = []
    for other in sorted(cluster_roles):
        if other == name:
            continue
        labels = cluster_roles[other]["metadata"].get("labels") or {}
        if any(match_labels_dict(s, labels) for s in selectors or ()):
            for rule in cluster_roles[other].get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
    return rules


def _build(objects: dict[str, list[dict[str, Any]]]) -> _Policy:
    p = _Policy()
    for r in objects[ROLES]:
        p.roles[(r["metadata"]["namespace"], r["metadata"]["name"])] = r
    for r in objects[CLUSTER_ROLES]:
        p.cluster_roles[r["metadata"]["name"]] = r
    p.cluster_bindings = sorted(objects[CLUSTER_ROLE_BINDINGS], key=lambda b: b["metadata"]["name"])
    for b in sorted(objects[ROLE_BINDINGS], key=lambda b: b["metadata"]["name"]):
        p.bindings.setdefault(b["metadata"]["namespace"], []).append(b)
    for name, role in p.cluster_roles.items():
        if role.get("aggregationRule"):
            p.aggregated[name] = aggregate_rules(p.cluster_roles, name)
    return p


@dataclass(frozen=True)
class _Grant:
    source: str  # how the rule reached the user, as kube-apiserver words its allow reason
    rule: Rule


class Authorizer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._policy = _Policy()
        self._seen = -1

    def policy(self) -> _Policy:
        writes = self.store.writes_to(RBAC_RESOURCES)
        if writes != self._seen:
            writes, objects = self.store.snapshot(RBAC_RESOURCES)
            self._policy, self._seen = _build(objects), writes
        return self._policy

    def _visit(self, user: UserInfo, namespace: str) -> tuple[list[_Grant], list[str]]:
        """Every rule granted to `user` in `namespace` (cluster-wide when empty), with the
        errors met on the way (a binding to a role that does not exist)."""
        p = self.policy()
        grants: list[_Grant] = []
        errors: list[str] = []
        for b in p.cluster_bindings:
            subject = next((s for s in b.get("subjects") or () if _applies(user, s, "")), None)
            if subject is None:
                continue
            ref = b.get("roleRef") or {}
            rules = p.cluster_role_rules(ref.get("name", ""))
            if rules is None or ref.get("kind") != "ClusterRole":
                errors.append(
                    f'clusterrole.rbac.authorization.k8s.io "{ref.get("name")}" not found'
                )
                continue
            source = (
                f'ClusterRoleBinding "{b["metadata"]["name"]}" of ClusterRole "{ref.get("name")}" '
                f"to {_describe_subject(subject, '')}"
            )
            grants.extend(_Grant(source, r) for r in rules)
        if namespace:
            for b in p.bindings.get(namespace, ()):
                subject = next(
                    (s for s in b.get("subjects") or () if _applies(user, s, namespace)), None
                )
                if subject is None:
                    continue
                ref = b.get("roleRef") or {}
                kind, name = ref.get("kind"), ref.get("name", "")
                if kind == "Role":
                    role = p.roles.get((namespace, name))
                    rules = None if role is None else list(role.get("rules") or [])
                    missing = f'role.rbac.authorization.k8s.io "{name}" not found'
                else:
                    rules = p.cluster_role_rules(name)
                    missing = f'clusterrole.rbac.authorization.k8s.io "{name}" not found'
                if rules is None:
                    errors.append(missing)
                    continue
                source = (
                    f'RoleBinding "{b["metadata"]["name"]}/{namespace}" of {kind} "{name}" '
                    f"to {_describe_subject(subject, namespace)}"
                )
                grants.extend(_Grant(source, r) for r in rules)
        return grants, errors

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason), the reason worded as kube-apiserver's."""
        if MASTERS in attrs.user.groups:
            return True, ""
        grants, errors = self._visit(attrs.user, attrs.namespace)
        for g in grants:
            if rule_allows(attrs, g.rule):
                return True, f"RBAC: allowed by {g.source}"
        return False, _rbac_reason(errors)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[Rule], str]:
        """SelfSubjectRulesReview: (resourceRules, nonResourceRules, evaluationError)."""
        grants, errors = self._visit(user, namespace)
        resource_rules: list[Rule] = []
        url_rules: list[Rule] = []
        for g in grants:
            rule = g.rule
            if rule.get("resources"):
                entry = {
                    "verbs": list(rule.get("verbs") or []),
                    "apiGroups": list(rule.get("apiGroups") or []),
                    "resources": list(rule.get("resources") or []),
                }
                if rule.get("resourceNames"):
                    entry["resourceNames"] = list(rule["resourceNames"])
                resource_rules.append(entry)
            if rule.get("nonResourceURLs"):
                url_rules.append(
                    {
                        "verbs": list(rule.get("verbs") or []),
                        "nonResourceURLs": list(rule["nonResourceURLs"]),
                    }
                )
        return resource_rules, url_rules, _aggregate(errors)

    def require(self, attrs: Attributes) -> None:
        allowed, reason = self.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)


def _aggregate(errors: list[str]) -> str:
    unique = list(dict.fromkeys(errors))
    if not unique:
        return ""
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _rbac_reason(errors: list[str]) -> str:
    return f"RBAC: {_aggregate(errors)}" if errors else ""


def forbidden_message(attrs: Attributes) -> str:
    """responsewriters.forbiddenMessage, word for word."""
    who = attrs.user.name
    if not attrs.resource_request:
        return f'User "{who}" cannot {attrs.verb} path "{attrs.path}"'
    resource = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return f'User "{who}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" {where}'


def forbidden(attrs: Attributes, reason: str = "") -> ApiError:
    """The 403 kube-apiserver answers when authorization denies a request."""
    why = forbidden_message(attrs).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if reason:
        why = f"{why}: {reason}"
    details: dict[str, Any] = {}
    if not attrs.resource_request:
        message = f"forbidden: {why}"
    else:
        qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
        message = (
            f'{qualified} "{attrs.name}" is forbidden: {why}'
            if attrs.name
            else f"{qualified} is forbidden: {why}"
        )
        if attrs.name:
            details["name"] = attrs.name
        if attrs.group:
            details["group"] = attrs.group
        details["kind"] = attrs.resource
    return ApiError(403, "Forbidden", message, details)
