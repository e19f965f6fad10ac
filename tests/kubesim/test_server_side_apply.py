"""Server-side apply's field ownership as kube-apiserver v1.28 keeps it: an apply that changes
a field another manager owns is refused (409) unless forced, and the fields an applier alone
owned and dropped from its configuration leave the object. The answers are the rig's (a real
v1.28 control plane); run with OPSBOARD_TEST_KUBECONFIG to check them there."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


def _send(
    api: Api, method: str, path: str, body: Any, manager: str, ctype: str, *, force: bool = False
) -> tuple[int, dict[str, Any]]:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    resp = raw(api, method, path + query, body=json.dumps(body).encode(), content_type=ctype)
    return resp.status, dict(resp.json())


def _ok(api: Api, method: str, path: str, body: Any, manager: str, ctype: str, **kw: Any) -> Any:
    status, obj = _send(api, method, path, body, manager, ctype, **kw)
    assert status in (200, 201), obj
    return obj


def _refused(api: Api, path: str, body: Any, manager: str) -> dict[str, Any]:
    status, answer = _send(api, "PATCH", path, body, manager, APPLY)
    assert status == 409, answer
    return answer


def _managed(obj: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """(manager, operation) -> fieldsV1, without the real controllers'."""
    return {
        (e["manager"], e["operation"]): e["fieldsV1"]
        for e in obj["metadata"].get("managedFields") or []
        if e["manager"] != "kube-controller-manager"
    }


def _cm(data: dict[str, str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "c"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def _conflict(message: str, *causes: tuple[str, str]) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Conflict",
        "details": {
            "causes": [
                {"reason": "FieldManagerConflict", "message": m, "field": f} for m, f in causes
            ]
        },
        "code": 409,
    }


def _deployment(replicas: int | None, *containers: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": containers}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}


def _k(**keys: Any) -> str:
    return "k:" + json.dumps(keys, separators=(",", ":"))


def test_an_apply_that_changes_another_manager_s_field_gets_409_conflict(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    _ok(kube_api_client, "POST", path, _cm({"key": "v1"}), "A", "application/json")
    answer = _refused(kube_api_client, f"{path}/c", _cm({"key": "v2"}), "B")
    assert answer == _conflict(
        'Apply failed with 1 conflict: conflict with "A" using v1: .data.key',
        ('conflict with "A" using v1', ".data.key"),
    )
    # Nothing was written; the official client sees the same 409.
    core = client.CoreV1Api(kube_api_client)
    assert core.read_namespaced_config_map("c", namespace).data == {"key": "v1"}
    try:
        core.patch_namespaced_config_map(
            "c", namespace, _cm({"key": "v2"}), field_manager="B", _content_type=APPLY
        )
    except client.ApiException as exc:
        assert (exc.status, json.loads(str(exc.body))["reason"]) == (409, "Conflict")
    else:
        raise AssertionError("the conflicting apply was accepted")


def test_several_conflicts_are_listed_per_manager_in_the_message(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = _cm({"k1": "1", "k2": "2", "z": "z"}, {"l": "x"})
    _ok(kube_api_client, "POST", path, created, "A", "application/json")
    _ok(kube_api_client, "PATCH", f"{path}/c", {"data": {"k3": "3"}}, "C", MERGE)
    applied = _cm({"k1": "9", "k2": "9", "k3": "9", "z": "z"}, {"l": "y"})
    answer = _refused(kube_api_client, f"{path}/c", applied, "B")
    # The message lists managers sorted; the causes come in the server's map order.
    causes = sorted(answer["details"].pop("causes"), key=lambda c: (c["message"], c["field"]))
    assert answer == {
        **_conflict(
            "Apply failed with 4 conflicts: "
            'conflicts with "A" using v1:\n- .data.k1\n- .data.k2\n- .metadata.labels.l\n'
            'conflicts with "C" using v1:\n- .data.k3'
        ),
        "details": {},
    }
    assert [(c["message"], c["field"]) for c in causes] == [
        ('conflict with "A" using v1', ".data.k1"),
        ('conflict with "A" using v1', ".data.k2"),
        ('conflict with "A" using v1', ".metadata.labels.l"),
        ('conflict with "C" using v1', ".data.k3"),
    ]


def test_a_forced_apply_takes_the_fields_and_the_same_value_is_shared(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = _cm({"k1": "1", "k2": "2", "z": "z"})
    _ok(kube_api_client, "POST", path, created, "A", "application/json")
    _refused(kube_api_client, f"{path}/c", _cm({"k1": "9", "z": "z"}), "B")
    forced = _ok(
        kube_api_client, "PATCH", f"{path}/c", _cm({"k1": "9", "z": "z"}), "B", APPLY, force=True
    )
    assert forced["data"] == {"k1": "9", "k2": "2", "z": "z"}
    assert _managed(forced) == {
        ("A", "Update"): {"f:data": {".": {}, "f:k2": {}, "f:z": {}}},
        ("B", "Apply"): {"f:data": {"f:k1": {}, "f:z": {}}},
    }


def test_an_apply_conflicts_with_another_applier_and_an_update_never_conflicts(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    _ok(kube_api_client, "PATCH", f"{path}/c", _cm({"k1": "1", "z": "z"}), "B", APPLY)
    answer = _refused(kube_api_client, f"{path}/c", _cm({"k1": "8"}), "D")
    assert answer == _conflict(
        'Apply failed with 1 conflict: conflict with "B": .data.k1',
        ('conflict with "B"', ".data.k1"),
    )
    # A merge patch takes the field from the applier instead.
    updated = _ok(kube_api_client, "PATCH", f"{path}/c", {"data": {"k1": "7"}}, "E", MERGE)
    assert _managed(updated) == {
        ("B", "Apply"): {"f:data": {"f:z": {}}},
        ("E", "Update"): {"f:data": {"f:k1": {}}},
    }
    # A manager's own Update entry is another manager to its applies.
    answer = _refused(kube_api_client, f"{path}/c", _cm({"k1": "6"}), "E")
    assert answer["message"] == 'Apply failed with 1 conflict: conflict with "E" using v1: .data.k1'


def test_a_deployment_s_replicas_and_image_conflict_with_their_owners(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    container = {"name": "c", "image": "nginx:1.25"}
    _ok(kube_api_client, "POST", path, _deployment(1, container), "creator", "application/json")
    newer = {"name": "c", "image": "nginx:1.26", "ports": [{"containerPort": 80}]}
    answer = _refused(kube_api_client, f"{path}/d", _deployment(3, newer), "B")
    owner = 'conflict with "creator" using apps/v1'
    image = '.spec.template.spec.containers[name="c"].image'
    assert answer == _conflict(
        'Apply failed with 2 conflicts: conflicts with "creator" using apps/v1:\n'
        f"- .spec.replicas\n- {image}",
        (owner, ".spec.replicas"),
        (owner, image),
    )
    forced = _ok(
        kube_api_client, "PATCH", f"{path}/d", _deployment(3, newer), "B", APPLY, force=True
    )
    spec = _managed(forced)[("creator", "Update")]["f:spec"]
    assert "f:replicas" not in spec
    assert "f:image" not in spec["f:template"]["f:spec"]["f:containers"][_k(name="c")]
    # The scale subresource's manager is named with it.
    scale = {"spec": {"replicas": 6}}
    _ok(kube_api_client, "PATCH", f"{path}/d/scale", scale, "S", MERGE)
    answer = _refused(kube_api_client, f"{path}/d", _deployment(5, newer), "B")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "S" with subresource "scale" using '
        "apps/v1: .spec.replicas"
    )


def test_fields_an_applier_drops_are_removed_unless_another_manager_owns_them(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    first = _cm({"a": "1", "b": "2", "s": "s", "u": "u"}, {"x": "1", "y": "2"})
    _ok(kube_api_client, "PATCH", f"{path}/c", first, "B", APPLY)
    _ok(kube_api_client, "PATCH", f"{path}/c", _cm({"s": "s"}), "A", APPLY)  # shares s
    _ok(kube_api_client, "PATCH", f"{path}/c", {"data": {"u": "v"}}, "U", MERGE)  # takes u
    dropped = _ok(kube_api_client, "PATCH", f"{path}/c", _cm({"a": "1"}, {"x": "1"}), "B", APPLY)
    assert dropped["data"] == {"a": "1", "s": "s", "u": "v"}
    assert dropped["metadata"]["labels"] == {"x": "1"}
    assert _managed(dropped) == {
        ("A", "Apply"): {"f:data": {"f:s": {}}},
        ("B", "Apply"): {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}},
        ("U", "Update"): {"f:data": {"f:u": {}}},
    }
    bare = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    emptied = _ok(kube_api_client, "PATCH", f"{path}/c", bare, "B", APPLY)
    assert emptied["data"] == {"s": "s", "u": "v"}
    assert "labels" not in emptied["metadata"]
    assert ("B", "Apply") not in _managed(emptied)


def test_containers_and_env_items_an_applier_drops_are_removed(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    main = {"name": "c", "image": "nginx:1.25", "env": env}
    side = {"name": "side", "image": "busybox"}
    _ok(kube_api_client, "PATCH", f"{path}/d", _deployment(2, main, side), "B", APPLY)
    _ok(kube_api_client, "PATCH", f"{path}/d", {"spec": {"replicas": 4}}, "U", MERGE)
    fewer = {"name": "c", "image": "nginx:1.25", "env": env[:1]}
    got = _ok(kube_api_client, "PATCH", f"{path}/d", _deployment(None, fewer), "B", APPLY)
    assert got["spec"]["replicas"] == 4  # the merge patch's manager owns it now
    (container,) = got["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["env"]) == ("c", env[:1])
    containers = _managed(got)[("B", "Apply")]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert containers == {
        _k(name="c"): {
            ".": {},
            "f:env": {_k(name="A"): {".": {}, "f:name": {}, "f:value": {}}},
            "f:image": {},
            "f:name": {},
        }
    }
    bare = {"name": "c", "image": "nginx:1.25"}
    got = _ok(kube_api_client, "PATCH", f"{path}/d", _deployment(None, bare), "B", APPLY)
    (container,) = got["spec"]["template"]["spec"]["containers"]
    assert "env" not in container


def _scale(replicas: int | None) -> dict[str, Any]:
    spec = {} if replicas is None else {"replicas": replicas}
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "d"},
        "spec": spec,
    }


def _entries(obj: dict[str, Any]) -> list[tuple[str, str, str, bool, Any]]:
    """(manager, operation, subresource, has a time, fieldsV1) in the server's order."""
    return [
        (e["manager"], e["operation"], e.get("subresource", ""), "time" in e, e["fieldsV1"])
        for e in obj["metadata"].get("managedFields") or []
        if e["manager"] != "kube-controller-manager"
    ]


REPLICAS = {"f:spec": {"f:replicas": {}}}


def _get(api: Api, path: str) -> dict[str, Any]:
    resp = raw(api, "GET", path)
    assert resp.status == 200, resp.data
    return dict(resp.json())


def test_an_apply_to_the_scale_subresource_conflicts_with_the_owners_of_replicas(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    container = {"name": "c", "image": "nginx:1.25"}
    _ok(kube_api_client, "POST", path, _deployment(1, container), "creator", "application/json")
    d, scale = f"{path}/d", f"{path}/d/scale"
    # The owners are the Scale's, under autoscaling/v1: an Update is named with that version.
    answer = _refused(kube_api_client, scale, _scale(3), "scaler")
    assert answer == _conflict(
        'Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: '
        ".spec.replicas",
        ('conflict with "creator" using autoscaling/v1', ".spec.replicas"),
    )
    # The same value is shared. The Scale gives the creator's share back as an entry of its
    # own, without a time (the creator's identity twice, until the next write's decoding
    # keeps the last: the deployment controller's may come first, so that share is checked
    # on a custom resource's Scale below).
    _ok(kube_api_client, "PATCH", scale, _scale(1), "scaler", APPLY)
    got = _get(kube_api_client, d)
    assert _entries(got)[0] == ("scaler", "Apply", "scale", False, REPLICAS)
    (creator,) = [e for e in _entries(got) if e[:4] == ("creator", "Update", "", True)]
    assert "f:replicas" not in creator[4]["f:spec"]
    assert {e["apiVersion"] for e in got["metadata"]["managedFields"]} == {"apps/v1"}
    # The next apply conflicts with no one: the creator is gone from replicas; and a
    # main-resource applier conflicts with the scale's.
    moved = _ok(kube_api_client, "PATCH", scale, _scale(2), "scaler", APPLY)
    assert moved["spec"] == {"replicas": 2}
    got = _get(kube_api_client, d)
    assert [e[:4] for e in _entries(got)] == [
        ("scaler", "Apply", "scale", False),
        ("creator", "Update", "", True),
    ]
    answer = _refused(kube_api_client, d, _deployment(5, container), "applier")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "scaler" with subresource "scale": '
        ".spec.replicas"
    )


def test_a_forced_apply_to_the_scale_takes_replicas_and_an_update_there_is_named_with_it(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    container = {"name": "c", "image": "nginx:1.25"}
    _ok(kube_api_client, "PATCH", f"{path}/d", _deployment(1, container), "applier", APPLY)
    scale = f"{path}/d/scale"
    answer = _refused(kube_api_client, scale, _scale(4), "scaler")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "applier": .spec.replicas'
    )
    _ok(kube_api_client, "PATCH", scale, _scale(4), "scaler", APPLY, force=True)
    got = _get(kube_api_client, f"{path}/d")
    assert got["spec"]["replicas"] == 4
    assert _managed(got)[("scaler", "Apply")] == REPLICAS
    assert "f:replicas" not in _managed(got)[("applier", "Apply")]["f:spec"]
    # An Update of the Scale takes them, and conflicts as the Scale's Update.
    _ok(kube_api_client, "PATCH", scale, {"spec": {"replicas": 6}}, "hpa", MERGE)
    answer = _refused(kube_api_client, scale, _scale(7), "scaler")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using '
        "autoscaling/v1: .spec.replicas"
    )


def test_an_apply_to_the_scale_of_untracked_replicas_conflicts_with_before_first_apply(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    container = {"name": "c", "image": "nginx:1.25"}
    created = _ok(
        kube_api_client, "POST", path, _deployment(2, container), "creator", "application/json"
    )
    (entry,) = created["metadata"]["managedFields"]
    del entry["fieldsV1"]["f:spec"]["f:replicas"]  # no one owns replicas
    _ok(kube_api_client, "PATCH", f"{path}/d", {"metadata": {"managedFields": [entry]}}, "x", MERGE)
    scale = f"{path}/d/scale"
    # An Update of the Scale is not tracked: nothing owned the Scale's fields.
    _ok(kube_api_client, "PATCH", scale, {"spec": {"replicas": 3}}, "hpa", MERGE)
    got = _get(kube_api_client, f"{path}/d")
    assert [e[:2] for e in _entries(got)] == [("creator", "Update")]
    # An apply first gives them to before-first-apply.
    answer = _refused(kube_api_client, scale, _scale(4), "scaler")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" with subresource '
        '"scale" using autoscaling/v1: .spec.replicas'
    )
    # An applier that drops replicas it alone owned removes them: the Scale's 0. With an
    # empty spec its entry stays, and keeps replicas; without a spec it goes.
    _ok(kube_api_client, "PATCH", scale, _scale(4), "scaler", APPLY, force=True)
    dropped = _ok(kube_api_client, "PATCH", scale, _scale(None), "scaler", APPLY)
    assert dropped["spec"] == {}
    got = _get(kube_api_client, f"{path}/d")
    assert got["spec"]["replicas"] == 0
    assert _entries(got)[0] == ("scaler", "Apply", "scale", False, REPLICAS)
    _ok(kube_api_client, "PATCH", scale, _scale(5), "scaler", APPLY)
    bare = {k: v for k, v in _scale(None).items() if k != "spec"}
    _ok(kube_api_client, "PATCH", scale, bare, "scaler", APPLY)
    got = _get(kube_api_client, f"{path}/d")
    assert (got["spec"]["replicas"], [e[:2] for e in _entries(got)]) == (0, [("creator", "Update")])


def test_v1_28_fails_an_apply_that_changes_a_custom_resource_s_scale(
    kube_api_client: Api, memcacheds: str
) -> None:
    """v1.28's fieldmanager converts a custom resource's Scale as a custom resource, and
    fails (500) where it must: an apply there that changes replicas, or finds them untracked.
    A conflict is still a 409, and the same value is shared."""
    group_version = memcacheds.split("/")[2] + "/v1alpha1"
    cr = {"apiVersion": group_version, "kind": "Memcached", "metadata": {"name": "d"},
          "spec": {"size": 2}}  # fmt: skip
    _ok(kube_api_client, "POST", memcacheds, cr, "creator", "application/json")
    scale = f"{memcacheds}/d/scale"
    answer = _refused(kube_api_client, scale, _scale(3), "scaler")
    assert answer["message"] == (
        'Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.replicas'
    )
    for force in (True, False):
        if force:
            status, failed = _send(
                kube_api_client, "PATCH", scale, _scale(3), "scaler", APPLY, force=True
            )
        else:  # the same value: shared, and the creator's share comes back on its own
            _ok(kube_api_client, "PATCH", scale, _scale(2), "scaler", APPLY)
            got = _get(kube_api_client, f"{memcacheds}/d")
            size = {"f:spec": {"f:size": {}}}
            assert [e for e in _entries(got) if e[4] == size] == [
                ("scaler", "Apply", "scale", False, size),
                ("creator", "Update", "", False, size),
            ]
            # which the next write's decoding loses: the apply changes replicas alone
            status, failed = _send(kube_api_client, "PATCH", scale, _scale(4), "scaler", APPLY)
        assert (status, failed) == (500, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "failed to convert new object (/d; autoscaling/v1, Kind=Scale) to proper "
            "version: request to convert CR to an invalid group/version: autoscaling/v1",
            "code": 500,
        })  # fmt: skip
    assert _get(kube_api_client, f"{memcacheds}/d")["spec"]["size"] == 2
    # Untracked replicas: the apply fails before it starts.
    entries = [{"manager": "x", "operation": "Update", "apiVersion": group_version,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:image": {}}}}]  # fmt: skip
    _ok(
        kube_api_client,
        "PATCH",
        f"{memcacheds}/d",
        {"metadata": {"managedFields": entries}},
        "x",
        MERGE,
    )
    status, failed = _send(kube_api_client, "PATCH", scale, _scale(2), "scaler", APPLY)
    assert (status, failed["message"]) == (500, (
        "failed to create manager for existing fields: failed to convert live object (/; "
        "autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid "
        "group/version: autoscaling/v1"
    ))  # fmt: skip


def test_an_apply_to_an_object_no_one_owns_conflicts_with_before_first_apply(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    _ok(
        kube_api_client,
        "POST",
        path,
        _cm({"a": "1", "b": "2"}, {"l": "1"}),
        "creator",
        "application/json",
    )
    _ok(kube_api_client, "PATCH", f"{path}/c", {"metadata": {"managedFields": []}}, "x", MERGE)
    # The server first gives every field to before-first-apply, as an Update from nothing.
    answer = _refused(kube_api_client, f"{path}/c", _cm({"a": "9"}), "B")
    assert answer == _conflict(
        'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
        ('conflict with "before-first-apply" using v1', ".data.a"),
    )
    got = _ok(kube_api_client, "PATCH", f"{path}/c", _cm({"a": "1"}), "B", APPLY)
    assert _managed(got) == {
        ("B", "Apply"): {"f:data": {"f:a": {}}},
        ("before-first-apply", "Update"): {
            "f:data": {".": {}, "f:a": {}, "f:b": {}},
            "f:metadata": {"f:labels": {".": {}, "f:l": {}}},
        },
    }
