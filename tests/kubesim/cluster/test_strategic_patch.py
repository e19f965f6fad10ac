"""Strategic merge patch directives as kube-apiserver v1.28 applies them (strategicpatch's
mergeMap): the object each leaves, or its error, word for word."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.kubesim.support import Raw, raw, workload

Api = client.ApiClient
SMP = "application/strategic-merge-patch+json"


def _deployment(api: Api, namespace: str, name: str) -> str:
    """A Deployment with a map, a struct, scalar and merge lists to patch; returns its path."""
    body = workload("Deployment", name)
    spec = body["spec"]
    spec["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    pod = spec["template"]["spec"]
    pod["containers"][0] |= {
        "args": ["a", "b", "c"],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    }
    term = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
    pod |= {
        "nodeSelector": {"disk": "ssd", "zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": term}
                ]
            }
        },
    }
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    resp = raw(api, "POST", path, body=body)
    assert resp.status == 201, resp.data
    return f"{path}/{name}"


def _patch(api: Api, path: str, pod_spec: dict[str, Any] | None = None, **spec: Any) -> Raw:
    """A strategic merge patch of the Deployment's spec, or of its pod spec."""
    if pod_spec is not None:
        spec["template"] = {"spec": pod_spec}
    return raw(api, "PATCH", path, body={"spec": spec}, content_type=SMP)


def _container(api: Api, path: str, **fields: Any) -> Raw:
    return _patch(api, path, {"containers": [{"name": "c", **fields}]})


def _pod_spec(resp: Raw) -> dict[str, Any]:
    assert resp.status == 200, resp.data
    spec: dict[str, Any] = resp.json()["spec"]["template"]["spec"]
    return spec


def _failed(resp: Raw, code: int, message: str) -> None:
    """A Status kube-apiserver answered: a 400 BadRequest, or a plain Go error's bare 500."""
    assert resp.status == code, resp.data
    body = resp.json()
    assert (body["message"], body.get("reason", ""), body.get("details")) == (
        message,
        "BadRequest" if code == 400 else "",
        None,
    )


def test_patch_delete_leaves_an_empty_map(kube_api_client: Api, namespace: str) -> None:
    path = _deployment(kube_api_client, namespace, "del")
    spec = _pod_spec(_patch(kube_api_client, path, {"nodeSelector": {"$patch": "delete"}}))
    assert "nodeSelector" not in spec
    # a struct is emptied, not removed: a pointer to an empty struct stays
    assert (
        _pod_spec(_patch(kube_api_client, path, {"affinity": {"$patch": "delete"}}))["affinity"]
        == {}
    )
    resp = _patch(kube_api_client, path, strategy={"rollingUpdate": {"$patch": "delete"}})
    assert resp.json()["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": "25%",
        "maxUnavailable": "25%",
    }
    # an empty map, not a missing one
    resp = _patch(kube_api_client, path, template={"metadata": {"labels": {"$patch": "delete"}}})
    assert (resp.status, resp.json()["message"]) == (
        422,
        'Deployment.apps "del" is invalid: spec.template.metadata.labels: Invalid value: '
        "map[string]string{}: `selector` does not match template `labels`",
    )
    resp = _patch(kube_api_client, path, selector={"matchLabels": {"$patch": "delete"}})
    empty = (
        "v1.LabelSelector{MatchLabels:map[string]string{}, "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    assert (resp.status, resp.json()["message"]) == (
        422,
        f'Deployment.apps "del" is invalid: [spec.selector: Invalid value: {empty}: empty '
        f"selector is invalid for deployment, spec.selector: Invalid value: {empty}: field is "
        "immutable]",
    )


def test_patch_replace_takes_the_map_as_sent(kube_api_client: Api, namespace: str) -> None:
    path = _deployment(kube_api_client, namespace, "repl")
    sent = {"nodeSelector": {"$patch": "replace", "x": "y"}}
    assert _pod_spec(_patch(kube_api_client, path, sent))["nodeSelector"] == {"x": "y"}
    # a map the object does not have yet is taken without the maps that carry a directive
    sent = {"dnsConfig": {"$patch": "replace", "nameservers": ["10.0.0.1"]}}
    assert "dnsConfig" not in _pod_spec(_patch(kube_api_client, path, sent))


def test_retain_keys_clears_the_others_and_checks_its_form(
    kube_api_client: Api, namespace: str
) -> None:
    path = _deployment(kube_api_client, namespace, "retain")
    resp = _patch(kube_api_client, path, strategy={"$retainKeys": ["type"], "type": "Recreate"})
    assert resp.json()["spec"]["strategy"] == {"type": "Recreate"}
    for strategy in (
        {"$retainKeys": "type", "type": "Recreate"},  # not a list
        {"$retainKeys": ["rollingUpdate"], "type": "Recreate"},  # sets a key it does not keep
    ):
        resp = _patch(kube_api_client, path, strategy=strategy)
        _failed(resp, 400, "invalid patch format of retainKeys")


def test_delete_from_primitive_list(kube_api_client: Api, namespace: str) -> None:
    path = _deployment(kube_api_client, namespace, "prim")
    resp = _container(kube_api_client, path, **{"$deleteFromPrimitiveList/args": ["b"]})
    assert _pod_spec(resp)["containers"][0]["args"] == ["a", "c"]
    # a value that is not a list deletes nothing
    resp = _container(kube_api_client, path, **{"$deleteFromPrimitiveList/args": "a"})
    assert _pod_spec(resp)["containers"][0]["args"] == ["a", "c"]
    resp = _container(kube_api_client, path, **{"$deleteFromPrimitiveListargs": ["a"]})
    _failed(resp, 400, "invalid patch format of primitive list")
    # a list of objects without a merge key cannot be deleted from
    resp = _patch(kube_api_client, path, {"$deleteFromPrimitiveList/tolerations": [{"key": "k"}]})
    _failed(resp, 500, "cannot merge lists without merge key for struct")


def test_set_element_order(kube_api_client: Api, namespace: str) -> None:
    path = _deployment(kube_api_client, namespace, "order")

    def env_names(resp: Raw) -> list[str]:
        return [e["name"] for e in _pod_spec(resp)["containers"][0]["env"]]

    order = {"$setElementOrder/env": [{"name": "B"}, {"name": "A"}]}
    assert env_names(_container(kube_api_client, path, **order)) == ["B", "A"]
    # the items it does not list keep the live list's order around those it does
    order = {"$setElementOrder/env": [{"name": "A"}]}
    assert env_names(_container(kube_api_client, path, **order)) == ["B", "A"]
    resp = _container(
        kube_api_client,
        path,
        **{"$setElementOrder/env": [{"name": "A"}, {"name": "B"}]},
        env=[{"name": "B", "value": "x"}, {"name": "A", "value": "y"}],
    )
    _failed(
        resp,
        500,
        "The order in patch list:\n[map[name:B value:x] map[name:A value:y]]\n doesn't match "
        "$setElementOrder list:\n[map[name:A] map[name:B]]\n",
    )
    resp = _container(kube_api_client, path, **{"$setElementOrder/env": "A"})
    _failed(resp, 500, "expected a []interface {}, but received a string")
    resp = _container(kube_api_client, path, **{"$setElementOrder/env": [{"value": "B"}]})
    _failed(resp, 500, "map: map[value:B] does not contain declared merge key: name")
    resp = _container(kube_api_client, path, **{"$setElementOrderenv": []})
    _failed(resp, 400, "invalid patch format of setElementOrder list")


def test_set_element_order_looks_its_field_up_in_the_go_struct(
    kube_api_client: Api, namespace: str
) -> None:
    path = _deployment(kube_api_client, namespace, "lookup")
    for sent, struct in (
        ({"$setElementOrder/foo": []}, "Deployment"),
        ({"spec": {"$setElementOrder/foo": ["a"]}}, "DeploymentSpec"),
        ({"spec": {"template": {"spec": {"$setElementOrder/foo": []}}}}, "PodSpec"),
    ):
        resp = raw(kube_api_client, "PATCH", path, body=sent, content_type=SMP)
        _failed(resp, 500, f'unable to find api field in struct {struct} for the json field "foo"')
    resp = _container(kube_api_client, path, **{"$setElementOrder/foo": [{"name": "a"}]})
    _failed(resp, 500, 'unable to find api field in struct Container for the json field "foo"')
    resp = _container(kube_api_client, path, resources={"$setElementOrder/foo": []})
    _failed(
        resp,
        500,
        'unable to find api field in struct ResourceRequirements for the json field "foo"',
    )
    # Go's json matches a field's name ignoring case when no name matches exactly
    resp = _container(kube_api_client, path, **{"$setElementOrder/ENV": [{"name": "A"}]})
    assert resp.status == 200, resp.data
    # a map has no fields to look up, and a map field is no list
    resp = _patch(
        kube_api_client, path, template={"metadata": {"labels": {"$setElementOrder/a": []}}}
    )
    _failed(resp, 500, "merging an object in json but data type is not struct, instead is: map")
    resp = _patch(kube_api_client, path, {"$setElementOrder/hostAliases": []})
    assert resp.status == 200, resp.data
    resp = _patch(kube_api_client, path, {"$setElementOrder/overhead": []})
    _failed(resp, 500, "expected slice or array type, but got: struct")
    cm = f"/api/v1/namespaces/{namespace}/configmaps"
    resp = raw(kube_api_client, "POST", cm, body={"metadata": {"name": "lookup"}})
    assert resp.status == 201, resp.data
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{cm}/lookup",
        body={"$setElementOrder/foo": []},
        content_type=SMP,
    )
    _failed(resp, 500, 'unable to find api field in struct ConfigMap for the json field "foo"')
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{path}/scale",
        body={"spec": {"$setElementOrder/foo": []}},
        content_type=SMP,
    )
    _failed(resp, 500, 'unable to find api field in struct ScaleSpec for the json field "foo"')


def test_a_list_without_the_merge_strategy_keeps_directives_as_fields(
    kube_api_client: Api, namespace: str
) -> None:
    path = _deployment(kube_api_client, namespace, "atomic")
    # tolerations are replaced whole, so `$patch` is one more (unknown) field of the item
    resp = _patch(kube_api_client, path, {"tolerations": [{"key": "k", "$patch": "delete"}]})
    assert _pod_spec(resp)["tolerations"] == [{"key": "k"}]
    assert resp.headers.get("Warning") == (
        '299 - "unknown field \\"spec.template.spec.tolerations[0].$patch\\""'
    )
    resp = _container(kube_api_client, path, args=[{"$patch": "replace"}])
    sent = (
        "map[spec:map[template:map[spec:map[containers:[map[args:[map[$patch:replace]] name:c]]]]]]"
    )
    assert (resp.status, resp.json()["message"]) == (
        422,
        f' "" is invalid: patch: Invalid value: "{sent}": unrecognized type: string',
    )


def test_an_unknown_directive_is_printed_with_its_go_type(
    kube_api_client: Api, namespace: str
) -> None:
    path = _deployment(kube_api_client, namespace, "frob")
    for directive, shown, printed in (
        (5, "%!s(int64=5)", "5"),
        (None, "%!s(<nil>)", "<nil>"),
        (["a", True], "[a %!s(bool=true)]", "[a true]"),
    ):
        resp = _patch(kube_api_client, path, {"nodeSelector": {"$patch": directive}})
        _failed(resp, 500, f"unknown patch type: {shown} in map: map[$patch:{printed}]")
