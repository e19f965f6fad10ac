"""Workload specs refused as v1.28 refuses them, every error in its order: a patch that breaks
several fields at once names them as the real server does, each kind words an empty or
invalid selector its own way, and deadlines and counts are checked where Go checks them."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.kubesim.support import raw, workload

Api = client.ApiClient
SMP = "application/strategic-merge-patch+json"
KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")


def _path(namespace: str, kind: str) -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/{kind.lower()}s"


def _refusal(api: Api, namespace: str, body: dict[str, Any]) -> str:
    resp = raw(api, "POST", f"{_path(namespace, body['kind'])}?dryRun=All", body=body)
    assert resp.status == 422, resp.data
    return str(resp.json()["message"])


def _selector(labels: str = "(nil)", exprs: str = "(nil)") -> str:
    return (
        f"v1.LabelSelector{{MatchLabels:map[string]string{labels}, "
        f"MatchExpressions:[]v1.LabelSelectorRequirement{exprs}}}"
    )


def test_a_patch_names_what_it_broke_in_the_servers_order(
    kube_api_client: Api, namespace: str
) -> None:
    body = workload("Deployment", "d")
    path = _path(namespace, "Deployment")
    assert raw(kube_api_client, "POST", path, body=body).status == 201
    patch = {
        "spec": {
            "replicas": -1,
            "minReadySeconds": -1,
            "progressDeadlineSeconds": -1,
            "selector": {"matchLabels": {"app": "other"}},
            "template": {"spec": {"activeDeadlineSeconds": 5}},
        }
    }
    resp = raw(kube_api_client, "PATCH", f"{path}/d", body=patch, content_type=SMP)
    selector = _selector(labels='{"app":"other"}')
    assert (resp.status, resp.json()["message"]) == (
        422,
        'Deployment.apps "d" is invalid: [spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0, spec.template.metadata.labels: Invalid value: "
        'map[string]string{"app":"d"}: `selector` does not match template `labels`, '
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicaSet is not Supported, spec.minReadySeconds: Invalid value: -1: must be greater "
        "than or equal to 0, spec.progressDeadlineSeconds: Invalid value: -1: must be greater "
        "than or equal to 0, spec.progressDeadlineSeconds: Invalid value: -1: must be greater "
        "than minReadySeconds, spec.selector: Invalid value: "
        f"{selector}: field is immutable]",
    )


def test_an_empty_selector_is_refused_in_each_kinds_words(
    kube_api_client: Api, namespace: str
) -> None:
    for kind in KINDS:
        body = workload(kind, "w", selector={"matchLabels": {}})
        named = "deployment" if kind in ("Deployment", "ReplicaSet") else kind.lower()
        assert _refusal(kube_api_client, namespace, body) == (
            f'{kind}.apps "w" is invalid: spec.selector: Invalid value: {_selector("{}")}: '
            f"empty selector is invalid for {named}"
        )


NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_the_templates_labels_and_annotations_are_checked_under_spec_template(
    kube_api_client: Api, namespace: str
) -> None:
    # Go's path for them leaves out `metadata`, unlike the selector mismatch's
    mismatch = (
        'spec.template.metadata.labels: Invalid value: map[string]string{"-k":"-v", '
        '"app":"other"}: `selector` does not match template `labels`'
    )
    labels = (
        f'spec.template.labels: Invalid value: "-k": {NAME_PART}, '
        f'spec.template.labels: Invalid value: "-v": {LABEL_VALUE}'
    )
    # an annotation's key is a qualified name whatever its case
    annotations = f'spec.template.annotations: Invalid value: "Bad Key": {NAME_PART}'
    image = "spec.template.spec.containers[0].image: Required value"
    expected = {
        "Deployment": [mismatch, labels, annotations, image],
        "ReplicaSet": [mismatch, labels, annotations, image],
        "StatefulSet": [mismatch, labels, annotations],  # its pod spec goes unchecked
        "DaemonSet": [mismatch, labels, annotations, image],
    }
    for kind in KINDS:
        body = workload(kind, "w")
        template = body["spec"]["template"]
        template["metadata"] = {
            "labels": {"app": "other", "-k": "-v"},
            "annotations": {"Bad Key": "x", "UPPER/Case": "y"},
        }
        template["spec"]["containers"][0]["image"] = ""
        assert _refusal(kube_api_client, namespace, body) == (
            f'{kind}.apps "w" is invalid: [{", ".join(expected[kind])}]'
        ), kind
    body = workload("Deployment", "w")
    body["spec"]["template"]["metadata"]["labels"]["k"] = "v" * 64
    assert _refusal(kube_api_client, namespace, body) == (
        f'Deployment.apps "w" is invalid: spec.template.labels: Invalid value: "{"v" * 64}": '
        "must be no more than 63 characters"
    )


def test_an_invalid_selector_stops_the_template_checks(
    kube_api_client: Api, namespace: str
) -> None:
    exprs = [{"key": "app", "operator": "Foo", "values": ["w"]}]
    shown = _selector(
        exprs='{v1.LabelSelectorRequirement{Key:"app", Operator:"Foo", Values:[]string{"w"}}}'
    )
    operator = 'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid '
    operator += "selector operator"
    after = {
        "Deployment": f", spec.selector: Invalid value: {shown}: invalid label selector]",
        "ReplicaSet": f", spec.selector: Invalid value: {shown}: invalid label selector]",
        "StatefulSet": f", spec.selector: Invalid value: {shown}]",
        # a DaemonSet checks its template whatever the selector
        "DaemonSet": ", spec.template.spec.containers[0].image: Required value]",
    }
    for kind in KINDS:
        body = workload(kind, "w", selector={"matchExpressions": exprs})
        body["spec"]["template"]["spec"]["containers"][0]["image"] = ""
        assert _refusal(kube_api_client, namespace, body) == (
            f'{kind}.apps "w" is invalid: [{operator}{after[kind]}'
        )


def test_counts_and_deadlines_are_checked_where_each_kind_checks_them(
    kube_api_client: Api, namespace: str
) -> None:
    negative = "Invalid value: -1: must be greater than or equal to 0"
    both = f"[spec.minReadySeconds: {negative}, spec.revisionHistoryLimit: {negative}]"
    expected = {
        "Deployment": both,
        "ReplicaSet": f"spec.minReadySeconds: {negative}",  # it has no history limit
        "StatefulSet": f"spec.minReadySeconds: {negative}",
        "DaemonSet": both,
    }
    bounds = "spec.template.spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 "
    bounds += "and 2147483647, inclusive, "
    for kind in KINDS:
        body = workload(kind, "w")
        body["spec"] |= {"minReadySeconds": -1, "revisionHistoryLimit": -1}
        assert _refusal(kube_api_client, namespace, body) == (
            f'{kind}.apps "w" is invalid: {expected[kind]}'
        )
        body = workload(kind, "w")
        body["spec"]["template"]["spec"]["activeDeadlineSeconds"] = -1
        owner = {"Deployment": "ReplicaSet"}.get(kind, kind)
        forbidden = "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds "
        forbidden += f"in {owner} is not Supported"
        # a StatefulSet's pod spec is not checked
        shown = forbidden if kind == "StatefulSet" else f"[{bounds}{forbidden}]"
        assert _refusal(kube_api_client, namespace, body) == f'{kind}.apps "w" is invalid: {shown}'
    body = workload("Deployment", "w")
    body["spec"]["minReadySeconds"] = 600  # as long as the default progress deadline
    assert _refusal(kube_api_client, namespace, body) == (
        'Deployment.apps "w" is invalid: spec.progressDeadlineSeconds: Invalid value: 600: must '
        "be greater than minReadySeconds"
    )


def test_a_pods_deadline_may_be_set_or_lowered_only(kube_api_client: Api, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = {
        "metadata": {"name": "p"},
        "spec": {"activeDeadlineSeconds": 100, "containers": [{"name": "c", "image": "busybox"}]},
    }
    assert raw(kube_api_client, "POST", path, body=pod).status == 201
    for deadline, why in (
        (200, "Invalid value: 200: must be less than or equal to previous value"),
        (None, 'Invalid value: "null": must not update from a positive integer to nil value'),
    ):
        patch = {"spec": {"activeDeadlineSeconds": deadline}}
        resp = raw(kube_api_client, "PATCH", f"{path}/p", body=patch, content_type=SMP)
        assert (resp.status, resp.json()["message"]) == (
            422,
            f'Pod "p" is invalid: spec.activeDeadlineSeconds: {why}',
        )
