"""The update strategies of the three workloads, validated as v1.28 does, word for word.
The classic case: a merge patch to `type: Recreate` keeps the defaulted rollingUpdate, and
a real server refuses it; kubesim accepted it."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.support import Raw, raw, workload

Api = client.ApiClient
MERGE = "application/merge-patch+json"
ZERO = 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'


def _made(api: Api, namespace: str, kind: str, name: str) -> str:
    """Creates the workload; returns its path."""
    collection = f"/apis/apps/v1/namespaces/{namespace}/{kind.lower()}s"
    resp = raw(api, "POST", collection, body=workload(kind, name))
    assert resp.status == 201, resp.data
    return f"{collection}/{name}"


def _patch(api: Api, path: str, strategy: dict[str, Any], field: str) -> Raw:
    return raw(api, "PATCH", path, body={"spec": {field: strategy}}, content_type=MERGE)


def _refusal(resp: Raw, kind: str, name: str) -> str:
    assert resp.status == 422, resp.data
    message = str(resp.json()["message"])
    prefix = f'{kind}.apps "{name}" is invalid: '
    assert message.startswith(prefix), message
    return message.removeprefix(prefix)


def test_a_deployment_s_strategy(kube_api_client: Api, namespace: str) -> None:
    path = _made(kube_api_client, namespace, "Deployment", "web")

    def refused(strategy: dict[str, Any]) -> str:
        return _refusal(_patch(kube_api_client, path, strategy, "strategy"), "Deployment", "web")

    # The defaulted rollingUpdate stays under a merge patch of the type alone.
    assert refused({"type": "Recreate"}) == (
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` "
        "is 'Recreate'"
    )
    assert refused({"type": "Nope", "rollingUpdate": None}) == (
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Nope", '
        'RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", '
        '"RollingUpdate"'
    )
    assert refused({"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}) == (
        f"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: {ZERO}: may not be 0 "
        "when `maxSurge` is 0"
    )
    recreate = _patch(
        kube_api_client, path, {"type": "Recreate", "rollingUpdate": None}, "strategy"
    )
    assert recreate.status == 200, recreate.data
    assert recreate.json()["spec"]["strategy"] == {"type": "Recreate"}


def test_a_statefulset_s_update_strategy(kube_api_client: Api, namespace: str) -> None:
    path = _made(kube_api_client, namespace, "StatefulSet", "db")

    def refused(strategy: dict[str, Any]) -> str:
        resp = _patch(kube_api_client, path, strategy, "updateStrategy")
        return _refusal(resp, "StatefulSet", "db")

    assert refused({"type": "OnDelete"}) == (
        "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy"
        "{Partition:0, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for "
        "updateStrategy 'RollingUpdate'"
    )
    assert refused({"type": "Nope", "rollingUpdate": None}) == (
        'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Nope", '
        "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' "
        "or 'OnDelete'"
    )
    assert refused({"rollingUpdate": {"partition": -1}}) == (
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than "
        "or equal to 0"
    )
    on_delete = {"type": "OnDelete", "rollingUpdate": None}
    assert _patch(kube_api_client, path, on_delete, "updateStrategy").status == 200


@pytest.mark.parametrize(
    ("strategy", "refusal"),
    [
        (
            {"type": "Nope", "rollingUpdate": None},
            'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Nope", '
            "RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "
            '"RollingUpdate", "OnDelete"',
        ),
        (
            {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString"
            '{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
        ),
        (
            {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 "
            "when maxSurge is 0",
        ),
    ],
    ids=["unknown type", "both set", "both zero"],
)
def test_a_daemonset_s_update_strategy(
    kube_api_client: Api, namespace: str, strategy: dict[str, Any], refusal: str
) -> None:
    path = _made(kube_api_client, namespace, "DaemonSet", "agent")
    resp = _patch(kube_api_client, path, strategy, "updateStrategy")
    assert _refusal(resp, "DaemonSet", "agent") == refusal


def test_a_daemonset_on_delete_keeps_its_rolling_update_unchecked(
    kube_api_client: Api, namespace: str
) -> None:
    path = _made(kube_api_client, namespace, "DaemonSet", "agent")
    zero = {"type": "OnDelete", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}
    resp = _patch(kube_api_client, path, zero, "updateStrategy")
    assert resp.status == 200, resp.data
    assert resp.json()["spec"]["updateStrategy"] == zero
