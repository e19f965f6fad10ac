"""On a real cluster, the API server's own count of one operator's requests.

The operator under measurement signs in as a ServiceAccount of its stack's namespace
(cluster-admin, a token from the TokenRequest API), and FlowSchemas of API Priority and
Fairness, on the exempt priority level (never queued), sort that account's requests by
kind: watches, Leases, Event writes, other writes and the rest. The server counts each
schema's requests (`apiserver_flowcontrol_dispatched_requests_total`): what the operator
asked, and nobody else — the control plane's and the bench's own requests are another
user's. kubesim's request log gives the same on the emulator.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from bench.kube import WRITE_VERBS, ApiError, KubeApi, metric_samples

ACCOUNT = "operator"
TOKEN_SECONDS = 24 * 3600  # longer than any run
_WRITES = sorted(WRITE_VERBS)
_ALL: dict[str, Any] = {"apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                        "namespaces": ["*"]}  # fmt: skip
# In the order the server tries them: a request counts under the first that matches.
KINDS: dict[str, dict[str, Any]] = {
    "watches": {"resourceRules": [{**_ALL, "verbs": ["watch"]}]},
    "leases": {
        "resourceRules": [
            {**_ALL, "verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}
        ]
    },
    "event writes": {
        "resourceRules": [
            {**_ALL, "verbs": _WRITES, "apiGroups": ["", "events.k8s.io"], "resources": ["events"]}
        ]
    },
    "other writes": {"resourceRules": [{**_ALL, "verbs": _WRITES}]},
    "reads": {
        "resourceRules": [{**_ALL, "verbs": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    },
}
# Lower is tried first: before every built-in schema a ServiceAccount could match (only
# exempt's and probes', 1 and 2, come earlier: system:masters and health checks).
FIRST_PRECEDENCE = 10
_METRIC = "apiserver_flowcontrol_dispatched_requests_total"


def install(api: KubeApi, namespace: str, kubeconfig: Path, out: Path) -> Path | None:
    """The operator's account in `namespace`, its schemas, and a copy of `kubeconfig` that
    signs in as it, written to `out`. None where the server does not sort requests by
    FlowSchema (no API Priority and Fairness, or turned off): the operator then keeps the
    caller's identity and nothing is counted."""
    version = _flowcontrol_version(api)
    if version is None:
        return None
    api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                body={"metadata": {"name": ACCOUNT}})  # fmt: skip
    api.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", body={
        "metadata": {"name": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": namespace}],
    })  # fmt: skip
    subject = {
        "kind": "ServiceAccount",
        "serviceAccount": {"name": ACCOUNT, "namespace": namespace},
    }
    for precedence, (kind, rules) in enumerate(KINDS.items(), FIRST_PRECEDENCE):
        api.request("POST", f"/apis/{version}/flowschemas", body={
            "metadata": {"name": schema_name(namespace, kind)},
            "spec": {"matchingPrecedence": precedence,
                     "priorityLevelConfiguration": {"name": "exempt"},
                     "rules": [{"subjects": [subject], **rules}]},
        })  # fmt: skip
    if not _taken_in(api, version, [schema_name(namespace, kind) for kind in KINDS]):
        return None
    token = api.request(
        "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{ACCOUNT}/token",
        body={"spec": {"expirationSeconds": TOKEN_SECONDS}},
    )["status"]["token"]  # fmt: skip
    out.write_text(yaml.safe_dump(signed_in_as(yaml.safe_load(kubeconfig.read_text()), token)))
    out.chmod(0o600)
    return out


def uninstall(api: KubeApi, namespace: str) -> None:
    """What install made outside the namespace (its deletion takes the account)."""
    paths = [f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{namespace}"]
    if version := _flowcontrol_version(api):
        paths += [f"/apis/{version}/flowschemas/{schema_name(namespace, k)}" for k in KINDS]
    for path in paths:
        try:
            api.request("DELETE", path)
        except ApiError as exc:
            if exc.status != 404:
                raise


def schema_name(namespace: str, kind: str) -> str:
    return f"{namespace}-{kind.replace(' ', '-')}"


def signed_in_as(config: dict[str, Any], token: str) -> dict[str, Any]:
    """`config` (a kubeconfig) with its current context's user replaced by `token`."""
    context = next(c["context"] for c in config["contexts"]
                   if c["name"] == config["current-context"])  # fmt: skip
    users = [u for u in config.get("users", []) if u["name"] != context["user"]]
    return {**config, "users": [*users, {"name": context["user"], "user": {"token": token}}]}


def counts(metrics: str, namespace: str) -> Counter[str]:
    """The server's count so far of each kind of the operator's requests (KINDS' names),
    from its /metrics text."""
    kinds = {schema_name(namespace, kind): kind for kind in KINDS}
    counted: Counter[str] = Counter()
    for sample in metric_samples(metrics, _METRIC):
        if (kind := kinds.get(sample.labels.get("flow_schema", ""))) is not None:
            counted[kind] += int(sample.value)
    return counted


def _taken_in(api: KubeApi, version: str, names: list[str], timeout: float = 15.0) -> bool:
    """Whether the server's API Priority and Fairness took the schemas in: it marks each
    with a Dangling condition. A server with it turned off may serve the API all the same,
    mark none and count nothing, which would read as an operator that asks nothing."""
    deadline = time.monotonic() + timeout
    while not all(_marked(api, f"/apis/{version}/flowschemas/{name}") for name in names):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _marked(api: KubeApi, path: str) -> bool:
    conditions = api.request("GET", path).get("status", {}).get("conditions", [])
    return any(c.get("type") == "Dangling" and c.get("status") == "False" for c in conditions)


def _flowcontrol_version(api: KubeApi) -> str | None:
    """The newest flowcontrol API the server serves (v1 from Kubernetes 1.29)."""
    for version in ("flowcontrol.apiserver.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1beta3"):
        try:
            api.request("GET", f"/apis/{version}")
        except ApiError as exc:
            if exc.status == 404:
                continue
            raise
        return version
    return None
