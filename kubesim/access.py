"""Who may do what: kubesim's authentication, impersonation and authorization, in the
order kube-apiserver's filters apply them, plus the bootstrap RBAC policy."""

from __future__ import annotations

import contextlib
import copy
from email.message import Message
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kubesim import impersonation, requestinfo
from kubesim.authn import Authenticator, UserInfo
from kubesim.errors import ApiError
from kubesim.rbac import CLUSTER_ROLES, Attributes, Authorizer, aggregate_rules, forbidden

if TYPE_CHECKING:
    from kubesim.store import Store

BOOTSTRAP_POLICY = Path(__file__).with_name("bootstrap_policy.yaml")
_KIND_RESOURCES = {
    "ClusterRole": "clusterroles.rbac.authorization.k8s.io",
    "ClusterRoleBinding": "clusterrolebindings.rbac.authorization.k8s.io",
}


class Access:
    def __init__(self, store: Store, auth_dir: Path | None) -> None:
        self.store = store
        self.authenticator = Authenticator(store, auth_dir)
        self.authorizer = Authorizer(store)

    def start(self) -> None:
        """Create the bootstrap policy; keep aggregated ClusterRoles' rules written."""
        self.bootstrap()
        self.store.subscribe(self._aggregate, (CLUSTER_ROLES,))
        self._aggregate("MODIFIED", CLUSTER_ROLES, {})

    def _aggregate(self, event: str, resource: str, obj: dict[str, Any]) -> None:
        """The clusterrole-aggregation controller: write into each ClusterRole with an
        aggregationRule the rules of the ClusterRoles it selects (authorization already
        reads them so; this makes `kubectl get clusterrole -o yaml` show them)."""
        if resource != CLUSTER_ROLES:
            return
        _, objects = self.store.snapshot((CLUSTER_ROLES,))
        roles = {r["metadata"]["name"]: r for r in objects[CLUSTER_ROLES]}
        for name, role in roles.items():
            if not role.get("aggregationRule"):
                continue
            rules = aggregate_rules(roles, name)
            if (role.get("rules") or []) != rules:
                new = copy.deepcopy(role)  # the snapshot's objects are the store's own
                new["rules"] = rules
                with contextlib.suppress(ApiError):  # changed or gone meanwhile: next event
                    self.store.update(CLUSTER_ROLES, new)

    def bootstrap(self) -> None:
        """Create the default roles and bindings that are missing, as kube-apiserver's RBAC
        post-start hook does (existing ones, perhaps edited, are left as they are)."""
        for obj in yaml.safe_load_all(BOOTSTRAP_POLICY.read_text()):
            with contextlib.suppress(ApiError):  # exists already
                self.store.create(_KIND_RESOURCES[obj["kind"]], obj)

    def admit(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: Message,
        certified: UserInfo | None = None,
    ) -> tuple[UserInfo, Attributes]:
        """The user a request acts as and what it asks; 401 or 403 when it may not.
        `certified`: whom the connection's client certificate names, which comes first as
        in kube-apiserver's union of authenticators (x509 before tokens)."""
        user = certified or self.authenticator.authenticate(headers.get("Authorization"))
        user = impersonation.impersonate(user, headers, self.authorizer)
        attrs = requestinfo.attributes(user, method, path, query)
        allowed, reason = self.authorizer.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)
        return user, attrs
