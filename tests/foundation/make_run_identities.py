"""What `make run` on kubesim must show about identities: the processes run as the
ServiceAccounts of a cluster install, with exactly the grants of k8s/rbac."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = "system:serviceaccount:opsboard:opsboard-operator"
# What every authenticated user may do (system:basic-user), not the operator's own grants.
BASIC = {
    "selfsubjectreviews.authentication.k8s.io",
    "selfsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectrulesreviews.authorization.k8s.io",
}

Grants = dict[str, set[str]]  # "deployments.apps" -> verbs


def role_grants(path: Path) -> Grants:
    """The resource rules of the ClusterRole in `path`, as kubectl auth can-i --list keys them."""
    grants: Grants = {}
    role = yaml.safe_load(path.read_text())
    for rule in role["rules"]:
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                base, slash, sub = resource.partition("/")  # kubectl: "memcacheds.g/status"
                key = (f"{base}.{group}" if group else base) + slash + sub
                grants.setdefault(key, set()).update(rule["verbs"])
    return grants


def listed_grants(kubeconfig: Path, user: str, namespace: str) -> Grants:
    out = subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", "auth", "can-i", "--list", f"--as={user}",
         f"--namespace={namespace}"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    grants: Grants = {}
    for line in out.splitlines()[1:]:
        resource, _, rest = line.partition(" ")
        if not resource or resource in BASIC:
            continue  # a row of non-resource URLs starts with blanks
        verbs = rest[rest.rindex("[") + 1 : rest.rindex("]")].split()
        grants.setdefault(resource, set()).update(verbs)
    return grants


def assert_operator_grants_are_the_roles(kubeconfig: Path) -> None:
    want = role_grants(ROOT / "k8s" / "rbac" / "role.yaml")
    have = listed_grants(kubeconfig, OPERATOR, "default")
    missing = sorted((r, v) for r, verbs in want.items() for v in verbs - have.get(r, set()))
    extra = sorted((r, v) for r, verbs in have.items() for v in verbs - want.get(r, set()))
    assert not missing and not extra, (
        f"{OPERATOR} may not {missing} though k8s/rbac/role.yaml grants it; "
        f"may {extra} though role.yaml does not"
    )
    in_own_namespace = listed_grants(kubeconfig, OPERATOR, "opsboard")
    assert in_own_namespace.get("leases.coordination.k8s.io") == {"get", "create", "update"}


def assert_kubectl_rolls_out(kubeconfig: Path) -> None:
    def kubectl(*args: str) -> str:
        done = subprocess.run(
            ["kubectl", f"--kubeconfig={kubeconfig}", *args],
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    assert kubectl("create", "deployment", "web", "--image=nginx:1.23.1").strip() == (
        "deployment.apps/web created"
    )
    assert 'deployment "web" successfully rolled out' in kubectl(
        "rollout", "status", "deploy/web", "--timeout=60s"
    )
    operator = kubeconfig.with_name("kubeconfig-operator")
    whoami = subprocess.run(
        ["kubectl", f"--kubeconfig={operator}", "auth", "whoami"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert OPERATOR in whoami
