"""What an update may not change: the 422s kube-apiserver gives, word for word, and the
updates it still allows. A write kubesim accepted where a cluster refuses would pass here
and fail in production."""

from __future__ import annotations

import re
from typing import Any

from kubernetes import client

from tests.kubesim.support import Raw, raw, workload

Api = client.ApiClient
MERGE = "application/merge-patch+json"
WHEN_SET = "Forbidden: field is immutable when `immutable` is set"


def _create(api: Api, path: str, body: dict[str, Any]) -> None:
    resp = raw(api, "POST", path, body=body)
    assert resp.status == 201, resp.data


def _patch(api: Api, path: str, body: dict[str, Any] | list[Any]) -> Raw:
    kind = "application/json-patch+json" if isinstance(body, list) else MERGE
    return raw(api, "PATCH", path, body=body, content_type=kind)


def _refused(resp: Raw) -> str:
    assert resp.status == 422, resp.data
    body = resp.json()
    assert body["reason"] == "Invalid"
    return str(body["message"])


def test_a_workload_selector_is_immutable(kube_api_client: Api, namespace: str) -> None:
    apps = f"/apis/apps/v1/namespaces/{namespace}"
    _create(
        kube_api_client,
        f"{apps}/deployments",
        workload("Deployment", "web", {"matchLabels": {"app": "web"}}),
    )
    both = {
        "spec": {
            "selector": {"matchLabels": {"app": "web", "tier": "a"}},
            "template": {"metadata": {"labels": {"tier": "a"}}},
        }
    }
    assert _refused(_patch(kube_api_client, f"{apps}/deployments/web", both)) == (
        'Deployment.apps "web" is invalid: spec.selector: Invalid value: '
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"a"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    )
    # A selector that no longer matches its template: both errors, the immutable one last.
    alone = {"spec": {"selector": {"matchLabels": {"app": "other"}}}}
    assert _refused(_patch(kube_api_client, f"{apps}/deployments/web", alone)) == (
        'Deployment.apps "web" is invalid: [spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"web"}: `selector` does not match template `labels`, '
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string"
        '{"app":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
        "field is immutable]"
    )
    by_expression = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["rs"]}]}
    _create(kube_api_client, f"{apps}/replicasets", workload("ReplicaSet", "rs", by_expression))
    swap = [{"op": "replace", "path": "/spec/selector", "value": {"matchLabels": {"app": "rs"}}}]
    assert _refused(_patch(kube_api_client, f"{apps}/replicasets/rs", swap)) == (
        'ReplicaSet.apps "rs" is invalid: spec.selector: Invalid value: '
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"rs"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    )
    _create(
        kube_api_client,
        f"{apps}/daemonsets",
        workload("DaemonSet", "ds", {"matchLabels": {"app": "ds"}}),
    )
    narrower = {"spec": {"selector": by_expression | {"matchLabels": None}}}
    narrower["spec"]["selector"]["matchExpressions"][0]["values"] = ["ds"]
    assert _refused(_patch(kube_api_client, f"{apps}/daemonsets/ds", narrower)) == (
        'DaemonSet.apps "ds" is invalid: spec.selector: Invalid value: '
        "v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement"
        '{Key:"app", Operator:"In", Values:[]string{"ds"}}}}: field is immutable'
    )
    # The same selector written again is no change, and the rest of the spec stays mutable.
    same = {"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 2}}
    assert _patch(kube_api_client, f"{apps}/deployments/web", same).status == 200


def test_a_statefulset_spec_changes_only_in_its_mutable_fields(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/statefulsets"
    _create(kube_api_client, path, workload("StatefulSet", "db", {"matchLabels": {"app": "db"}}))
    forbidden = (
        'StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    for change in (
        {"spec": {"serviceName": "other"}},
        {"spec": {"podManagementPolicy": "Parallel", "replicas": 1}},
    ):
        assert _refused(_patch(kube_api_client, f"{path}/db", change)) == forbidden
    partition = {"rollingUpdate": {"partition": 1}}
    allowed = {"spec": {"replicas": 1, "minReadySeconds": 3, "updateStrategy": partition}}
    resp = _patch(kube_api_client, f"{path}/db", allowed)
    assert resp.status == 200, resp.data
    assert resp.json()["spec"]["updateStrategy"] == {"type": "RollingUpdate"} | partition


def test_an_immutable_configmap_or_secret_keeps_its_data(
    kube_api_client: Api, namespace: str
) -> None:
    core = f"/api/v1/namespaces/{namespace}"
    _create(kube_api_client, f"{core}/configmaps", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    assert _patch(kube_api_client, f"{core}/configmaps/c", {"immutable": True}).status == 200
    cases = {
        '{"data": {"a": "2"}}': f'ConfigMap "c" is invalid: data: {WHEN_SET}',
        '{"binaryData": {"b": "Mg=="}}': f'ConfigMap "c" is invalid: binaryData: {WHEN_SET}',
        '{"immutable": false, "data": {"b": "2"}}': (
            f'ConfigMap "c" is invalid: [immutable: {WHEN_SET}, data: {WHEN_SET}]'
        ),
    }
    for body, said in cases.items():
        resp = raw(
            kube_api_client, "PATCH", f"{core}/configmaps/c", body=body.encode(), content_type=MERGE
        )
        assert _refused(resp) == said
    labelled = _patch(kube_api_client, f"{core}/configmaps/c", {"metadata": {"labels": {"a": "1"}}})
    assert labelled.status == 200, labelled.data
    secret = {"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "MQ=="}}
    _create(kube_api_client, f"{core}/secrets", secret)
    assert _refused(_patch(kube_api_client, f"{core}/secrets/s", {"type": "other"})) == (
        'Secret "s" is invalid: type: Invalid value: "other": field is immutable'
    )
    assert _patch(kube_api_client, f"{core}/secrets/s", {"immutable": True}).status == 200
    # stringData is data by the time it is validated
    assert _refused(_patch(kube_api_client, f"{core}/secrets/s", {"stringData": {"a": "2"}})) == (
        f'Secret "s" is invalid: data: {WHEN_SET}'
    )


def test_a_pod_update_changes_only_images_and_a_few_fields(
    kube_api_client: Api, namespace: str
) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
    }
    _create(kube_api_client, pods, pod)
    image = {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{pods}/p",
        body=image,
        content_type="application/strategic-merge-patch+json",
    )
    assert resp.status == 200, resp.data
    env = [{"op": "add", "path": "/spec/containers/0/env", "value": [{"name": "A", "value": "1"}]}]
    # kube-apiserver adds a diff of the two specs on the lines after this one
    assert _refused(_patch(kube_api_client, f"{pods}/p", env)).startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)"
    )
    deadline = _patch(kube_api_client, f"{pods}/p", {"spec": {"activeDeadlineSeconds": 600}})
    assert deadline.status == 200, deadline.data


POD_FORBIDDEN = (
    'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative)"
)
TOKEN_VOLUME = (
    '{{Name: "kube-api-access-*", VolumeSource: {Projected: &{Sources: {{ServiceAccountToken: '
    '&{ExpirationSeconds: 3607, Path: "token"}}, {ConfigMap: &{LocalObjectReference: {Name: '
    '"kube-root-ca.crt"}, Items: {{Key: "ca.crt", Path: "ca.crt"}}}}, {DownwardAPI: &{Items: '
    '{{Path: "namespace", FieldRef: &{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}}}, '
    "DefaultMode: &420}}}}"
)


def _diff_of(message: str) -> str:
    """The refusal with go-cmp's randomly chosen non-breaking spaces made plain, and the
    token volume's random suffix starred."""
    return re.sub(r"kube-api-access-\w+", "kube-api-access-*", message.replace("\u00a0", " "))


def test_a_refused_pod_update_shows_the_diff_of_the_two_specs(
    kube_api_client: Api, namespace: str
) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    _create(kube_api_client, pods, pod)
    change = {
        "spec": {"containers": [{"name": "c", "workingDir": "/x"}], "nodeSelector": {"a": "b"}}
    }
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{pods}/p",
        body=change,
        content_type="application/strategic-merge-patch+json",
    )
    assert _diff_of(_refused(resp)) == "\n".join(
        [
            POD_FORBIDDEN,
            "  core.PodSpec{",
            f"  \tVolumes:        {TOKEN_VOLUME},",
            "  \tInitContainers: nil,",
            "  \tContainers: []core.Container{",
            "  \t\t{",
            "  \t\t\t... // 2 identical fields",
            "  \t\t\tCommand:    nil,",
            "  \t\t\tArgs:       nil,",
            '- \t\t\tWorkingDir: "",',
            '+ \t\t\tWorkingDir: "/x",',
            "  \t\t\tPorts:      nil,",
            "  \t\t\tEnvFrom:    nil,",
            "  \t\t\t... // 17 identical fields",
            "  \t\t},",
            "  \t},",
            "  \tEphemeralContainers:           nil,",
            '  \tRestartPolicy:                 "Always",',
            "  \tTerminationGracePeriodSeconds: &30,",
            "  \tActiveDeadlineSeconds:         nil,",
            '  \tDNSPolicy:                     "ClusterFirst",',
            "- \tNodeSelector:                  nil,",
            '+ \tNodeSelector:                  map[string]string{"a": "b"},',
            '  \tServiceAccountName:            "default",',
            "  \tAutomountServiceAccountToken:  nil,",
            "  \t... // 22 identical fields",
            "  }",
            "",
        ]
    )
    # a changed count of containers is refused on its own, before any diff
    more = {"spec": {"containers": [{"name": "d", "image": "busybox"}]}}
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{pods}/p",
        body=more,
        content_type="application/strategic-merge-patch+json",
    )
    assert _refused(resp) == (
        'Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove '
        "containers"
    )


def test_a_changed_uid_fails_a_put_s_precondition_and_is_immutable_to_a_patch(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    _create(kube_api_client, path, {"metadata": {"name": "c"}, "data": {"k": "v"}})
    current = raw(kube_api_client, "GET", f"{path}/c").json()
    uid = current["metadata"]["uid"]
    current["metadata"]["uid"] = "1234"

    put = raw(kube_api_client, "PUT", f"{path}/c", body=current)
    assert put.status == 409, put.data
    assert put.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "c": StorageError: invalid object, Code: '
        f"4, Key: /registry/configmaps/{namespace}/c, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: 1234, UID in object meta: {uid}"
    )
    patched = _patch(kube_api_client, f"{path}/c", {"metadata": {"uid": "1234"}})
    assert _refused(patched) == (
        'ConfigMap "c" is invalid: metadata.uid: Invalid value: "1234": field is immutable'
    )
    assert raw(kube_api_client, "GET", f"{path}/c").json()["metadata"]["uid"] == uid
