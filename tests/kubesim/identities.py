"""Clients that act as someone other than the admin: a ServiceAccount's token from the
TokenRequest API, no credentials at all, or a token that proves nothing; and kubeconfig
files that present such a token, for processes."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from opsboard.core.identities import with_token, write_kubeconfig


def service_account_token(api: client.ApiClient, namespace: str, name: str) -> str:
    """Create the ServiceAccount (if missing) and a token for it, as `kubectl create token`."""
    core = client.CoreV1Api(api)
    try:
        core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
    except client.ApiException as exc:
        if exc.status != 409:
            raise
    answer = core.create_namespaced_service_account_token(
        name, namespace, {"spec": {"expirationSeconds": 3600}}
    )
    return str(answer.status.token)


def kubeconfig_with_token(admin: Path, token: str, *, user: str, path: Path) -> Path:
    """Writes to `path` a kubeconfig for the cluster of the `admin` kubeconfig that
    presents `token` as `user`, and returns `path`."""
    config = yaml.safe_load(admin.read_text())
    write_kubeconfig(path, with_token(config, token, user=user))
    return path


@contextmanager
def client_with_token(api: client.ApiClient, token: str | None) -> Iterator[client.ApiClient]:
    """A client for the same server and CA that presents `token` (none when None) and no
    client certificate (a real cluster's admin kubeconfig often has one)."""
    conf = copy.deepcopy(api.configuration)
    conf.cert_file = conf.key_file = None
    conf.refresh_api_key_hook = None  # it would put the kubeconfig's own token back
    conf.api_key = {"authorization": f"Bearer {token}"} if token else {}
    conf.api_key_prefix = {}
    other = client.ApiClient(conf)
    try:
        yield other
    finally:
        other.close()


@contextmanager
def cluster_objects(api: client.ApiClient) -> Iterator[list[tuple[str, str]]]:
    """Cluster-scoped RBAC objects a test makes, deleted afterwards: append (kind, name)."""
    made: list[tuple[str, str]] = []
    try:
        yield made
    finally:
        rbac = client.RbacAuthorizationV1Api(api)
        for kind, name in made:
            delete = (
                rbac.delete_cluster_role
                if kind == "ClusterRole"
                else rbac.delete_cluster_role_binding
            )
            try:
                delete(name)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise


def rules_without(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> list[Any]:
    """The role's rules with `verb` on `group`/`resource` taken away, everything else kept."""
    out = []
    for rule in copy.deepcopy(rules):
        if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
            others = [r for r in rule["resources"] if r != resource]
            if others:
                out.append({**rule, "resources": others})
            rest = [v for v in rule["verbs"] if v != verb]
            if rest:
                out.append({**rule, "resources": [resource], "verbs": rest})
            continue
        out.append(rule)
    return out


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def status_of(exc: client.ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body
