"""The identities a cluster install runs opsboard as, for `make run` on kubesim.

In a cluster (k8s/deploy) the watcher and the workers run as the `opsboard-operator`
ServiceAccount and the web as `opsboard-web`, each with exactly the grants of k8s/rbac and
k8s/deploy/web-rbac.yaml. `make run` does the same on its embedded cluster: bootstrap, as the
admin, applies those ServiceAccounts and roles and writes one kubeconfig per identity with a
token from the TokenRequest API, so a grant missing from k8s/rbac fails here as it would there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from opsboard.core import manifests

NAMESPACE = "opsboard"  # k8s/deploy/kustomization.yaml's namespace
TOKEN_SECONDS = 7 * 24 * 3600  # renewed at every start of `make run`


@dataclass(frozen=True)
class Identity:
    account: str
    kubeconfig: str  # file name, next to the admin's kubeconfig


OPERATOR = Identity("opsboard-operator", "kubeconfig-operator")
WEB = Identity("opsboard-web", "kubeconfig-web")


def rbac_documents(k8s: Path) -> list[dict[str, Any]]:
    """k8s/rbac and the web's RBAC from k8s/deploy, in the install's namespace."""
    docs = [*manifests.documents((k8s / "rbac").glob("*.yaml"))]
    docs += manifests.documents([k8s / "deploy" / "web-rbac.yaml"])
    for doc in docs:
        if doc["kind"] in ("ServiceAccount", "Role", "RoleBinding"):
            doc["metadata"].setdefault("namespace", NAMESPACE)
        for subject in doc.get("subjects") or ():
            if subject.get("kind") == "ServiceAccount":
                subject["namespace"] = NAMESPACE
    return docs


def install(api: client.ApiClient, k8s: Path, admin_kubeconfig: Path) -> list[str]:
    """Apply the install's RBAC, then write a kubeconfig for each identity beside the admin's."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    done = manifests.apply(api, [namespace], update=False)
    done += manifests.apply(api, rbac_documents(k8s), update=True)
    admin = yaml.safe_load(admin_kubeconfig.read_text())
    for identity in (OPERATOR, WEB):
        token = request_token(api, identity.account)
        path = admin_kubeconfig.with_name(identity.kubeconfig)
        write_kubeconfig(path, with_token(admin, token, user=identity.account))
        done.append(f"wrote {path} (system:serviceaccount:{NAMESPACE}:{identity.account})")
    return done


def request_token(api: client.ApiClient, account: str) -> str:
    answer = client.CoreV1Api(api).create_namespaced_service_account_token(
        account,
        NAMESPACE,
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=TOKEN_SECONDS)
        ),
    )
    if answer.status is None or not answer.status.token:
        raise RuntimeError(f"the TokenRequest for {account} came back without a token")
    return str(answer.status.token)


def with_token(kubeconfig: dict[str, Any], token: str, *, user: str) -> dict[str, Any]:
    """The same cluster and context as `kubeconfig`, as the user the token proves."""
    context = next(c for c in kubeconfig["contexts"] if c["name"] == kubeconfig["current-context"])
    cluster = next(c for c in kubeconfig["clusters"] if c["name"] == context["context"]["cluster"])
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {
                "name": user,
                "context": {"cluster": cluster["name"], "user": user, "namespace": NAMESPACE},
            }
        ],
        "current-context": user,
        "preferences": {},
    }


def write_kubeconfig(path: Path, config: dict[str, Any]) -> None:
    partial = path.with_name(f".{path.name}.tmp")
    partial.touch(mode=0o600)
    partial.write_text(yaml.safe_dump(config, sort_keys=False))
    partial.replace(path)
