"""An env var's valueFrom source, validated as v1.28 does: each source's own fields (a
ConfigMap's or Secret's name and key, a fieldRef's path, a resourceFieldRef's resource and
divisor), then that there is exactly one, in pods and the templates that check their pods."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.kubesim.support import raw, workload

Api = client.ApiClient
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
CONFIG_KEY = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
QUALIFIED = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with "
    "an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
FIELD_PATHS = (
    '"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", '
    '"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", '
    '"status.podIPs"'
)
RESOURCES = (
    '"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", '
    '"requests.ephemeral-storage", "requests.memory"'
)
ENV = [
    {"name": "CM", "valueFrom": {"configMapKeyRef": {"key": "bad key"}}},
    {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "s"}}},
    {"name": "PATH1", "valueFrom": {"fieldRef": {"fieldPath": "spec.restartPolicy"}}},
    {"name": "PATH2", "valueFrom": {"fieldRef": {"fieldPath": "metadata.foo"}}},
    {"name": "LABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['a/b/c']"}}},
    {"name": "V2", "valueFrom": {"fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}}},
    {"name": "IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}},
    {"name": "GPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}},
    {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "2"}}},
    {"name": "TWO", "valueFrom": {"configMapKeyRef": {"name": "cm"}, "secretKeyRef": {}}},
]


def _errors(prefix: str) -> list[tuple[str, str]]:
    """The 422's causes for ENV in a container at `prefix`, in the server's order."""
    env = f"{prefix}.containers[0].env"
    return [
        (f"{env}[0].valueFrom.configMapKeyRef.name", f'Invalid value: "": {SUBDOMAIN}'),
        (f"{env}[0].valueFrom.configMapKeyRef.key", f'Invalid value: "bad key": {CONFIG_KEY}'),
        (f"{env}[1].valueFrom.secretKeyRef.key", "Required value"),
        (
            f"{env}[2].valueFrom.fieldRef.fieldPath",
            f'Unsupported value: "spec.restartPolicy": supported values: {FIELD_PATHS}',
        ),
        (
            f"{env}[3].valueFrom.fieldRef.fieldPath",
            'Invalid value: "metadata.foo": error converting fieldPath: field label not '
            "supported: metadata.foo",
        ),
        (f"{env}[4].valueFrom.fieldRef", f'Invalid value: "a/b/c": {QUALIFIED}'),
        (
            f"{env}[5].valueFrom.fieldRef.fieldPath",
            'Invalid value: "metadata.name": error converting fieldPath: unsupported pod '
            "version: v2",
        ),
        (
            f"{env}[6].valueFrom.fieldRef",
            "Forbidden: may not be set when feature gate 'PodHostIPs' is not enabled",
        ),
        (
            f"{env}[7].valueFrom.resourceFieldRef.resource",
            f'Unsupported value: "limits.gpu": supported values: {RESOURCES}',
        ),
        (
            f"{env}[8].valueFrom.resourceFieldRef.divisor",
            'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are supported with '
            "the cpu resource",
        ),
        (f"{env}[9].valueFrom.configMapKeyRef.key", "Required value"),
        (f"{env}[9].valueFrom.secretKeyRef.name", f'Invalid value: "": {SUBDOMAIN}'),
        (f"{env}[9].valueFrom.secretKeyRef.key", "Required value"),
        (
            f"{env}[9].valueFrom",
            'Invalid value: "": may not have more than one field specified at a time',
        ),
    ]


def _refused(api: Api, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = raw(api, "POST", f"{path}?dryRun=All", body=body)
    assert resp.status == 422, resp.data
    refusal: dict[str, Any] = resp.json()
    return refusal


def _pod(env: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "env": env}]},
    }


def test_a_pods_env_sources_are_checked_field_by_field(
    kube_api_client: Api, namespace: str
) -> None:
    refusal = _refused(kube_api_client, f"/api/v1/namespaces/{namespace}/pods", _pod(ENV))
    expected = _errors("spec")
    assert [(c["field"], c["message"]) for c in refusal["details"]["causes"]] == expected
    shown = ", ".join(f"{field}: {message}" for field, message in expected)
    assert refusal["message"] == f'Pod "p" is invalid: [{shown}]'


def test_pod_templates_check_env_sources_but_a_statefulsets_does_not(
    kube_api_client: Api, namespace: str
) -> None:
    for kind in ("Deployment", "DaemonSet", "StatefulSet"):
        body = workload(kind, "w")
        body["spec"]["template"]["spec"]["containers"][0]["env"] = ENV
        path = f"/apis/apps/v1/namespaces/{namespace}/{kind.lower()}s"
        if kind == "StatefulSet":  # v1.28 checks no more of its pods than their labels
            resp = raw(kube_api_client, "POST", f"{path}?dryRun=All", body=body)
            assert resp.status == 201, resp.data
            continue
        causes = _refused(kube_api_client, path, body)["details"]["causes"]
        assert [(c["field"], c["message"]) for c in causes] == _errors("spec.template.spec")


def test_a_field_ref_defaults_to_v1_and_a_divisor_shows_as_zero(
    kube_api_client: Api, namespace: str
) -> None:
    env = [
        {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['A_B']"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.hugepages-2Mi"}}},
    ]
    path = f"/api/v1/namespaces/{namespace}/pods?dryRun=All"
    resp = raw(kube_api_client, "POST", path, body=_pod(env))
    assert resp.status == 201, resp.data
    assert [e["valueFrom"] for e in resp.json()["spec"]["containers"][0]["env"]] == [
        {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
        {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['A_B']"}},
        {"resourceFieldRef": {"resource": "limits.hugepages-2Mi", "divisor": "0"}},
    ]
