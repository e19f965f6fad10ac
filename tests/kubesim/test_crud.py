"""Create, get, list, update, patch and delete through the official client."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.kubesim.support import raw, wait_for

Api = client.ApiClient


def _cm(name: str, **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"k": "v"},
    }


def _deployment(name: str, replicas: int = 1) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }


def _error(exc: pytest.ExceptionInfo[client.ApiException]) -> dict:
    return json.loads(exc.value.body)


def test_create_sets_server_metadata(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    cm = core.create_namespaced_config_map(namespace, _cm("a"))
    assert cm.metadata.uid and cm.metadata.creation_timestamp
    assert int(cm.metadata.resource_version) > 0
    assert cm.metadata.namespace == namespace


def test_generate_name_appends_five_characters(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    body = {"metadata": {"generateName": "web-"}, "data": {}}
    cm = core.create_namespaced_config_map(namespace, body)
    assert cm.metadata.name.startswith("web-") and len(cm.metadata.name) == 9
    assert cm.metadata.generate_name == "web-"


def test_create_twice_is_already_exists(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("dup"))
    with pytest.raises(client.ApiException) as exc:
        core.create_namespaced_config_map(namespace, _cm("dup"))
    assert exc.value.status == 409
    body = _error(exc)
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "dup" already exists'


def test_create_in_missing_namespace_is_not_found(kube_api_client: Api) -> None:
    core = client.CoreV1Api(kube_api_client)
    with pytest.raises(client.ApiException) as exc:
        core.create_namespaced_config_map("no-such-namespace", _cm("a"))
    assert exc.value.status == 404
    assert _error(exc)["message"] == 'namespaces "no-such-namespace" not found'


def test_get_missing_is_not_found_status(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    with pytest.raises(client.ApiException) as exc:
        apps.read_namespaced_deployment("nope", namespace)
    body = _error(exc)
    assert exc.value.status == 404
    assert body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}


def test_update_with_stale_resource_version_conflicts(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    first = core.create_namespaced_config_map(namespace, _cm("c"))
    core.patch_namespaced_config_map("c", namespace, {"data": {"k": "new"}})
    stale = _cm("c")
    stale["metadata"]["resourceVersion"] = first.metadata.resource_version
    with pytest.raises(client.ApiException) as exc:
        core.replace_namespaced_config_map("c", namespace, stale)
    assert exc.value.status == 409
    assert _error(exc)["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert core.read_namespaced_config_map("c", namespace).data == {"k": "new"}


def test_noop_update_keeps_resource_version(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_config_map(namespace, _cm("same"))
    again = core.patch_namespaced_config_map("same", namespace, {"data": {"k": "v"}})
    assert again.metadata.resource_version == created.metadata.resource_version


def test_generation_follows_spec_not_metadata(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _deployment("gen"))
    labelled = apps.patch_namespaced_deployment(
        "gen", namespace, {"metadata": {"labels": {"x": "y"}}}
    )
    assert labelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("gen", namespace, {"spec": {"replicas": 2}})
    assert scaled.metadata.generation == 2


def test_status_subresource_writes_only_status(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _deployment("st"))
    # Not status.replicas: a real cluster's controller may have counted an updated replica
    # already, and replicas below updatedReplicas is invalid.
    body = {"spec": {"replicas": 7}, "status": {"observedGeneration": 1}}
    result = apps.patch_namespaced_deployment_status("st", namespace, body)
    assert result.spec.replicas == 1
    assert result.status.observed_generation == 1
    assert result.metadata.generation == 1
    main = apps.patch_namespaced_deployment("st", namespace, {"status": {"replicas": 99}})
    assert main.status.replicas != 99


def test_scale_subresource(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _deployment("sc"))
    scale = apps.read_namespaced_deployment_scale("sc", namespace)
    assert scale.spec.replicas == 1
    assert scale.status.selector == "app=sc"
    apps.patch_namespaced_deployment_scale("sc", namespace, {"spec": {"replicas": 4}})
    dep = apps.read_namespaced_deployment("sc", namespace)
    assert dep.spec.replicas == 4 and dep.metadata.generation == 2


def test_label_selectors(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("a", tier="web", env="prod"))
    core.create_namespaced_config_map(namespace, _cm("b", tier="db", env="prod"))
    core.create_namespaced_config_map(namespace, _cm("c", tier="web"))

    def names(selector: str) -> list[str]:
        items = core.list_namespaced_config_map(namespace, label_selector=selector).items
        return [i.metadata.name for i in items]

    assert names("tier=web") == ["a", "c"]
    assert names("tier,tier!=web") == ["b"]
    assert names("tier in (web,db),env") == ["a", "b"]
    assert names("tier,tier notin (web)") == ["b"]
    assert names("tier,!env") == ["c"]
    assert names("tier==web,env=prod") == ["a"]


def test_bad_label_selector_is_bad_request(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    with pytest.raises(client.ApiException) as exc:
        core.list_namespaced_config_map(namespace, label_selector="a in (b")
    assert exc.value.status == 400


def test_field_selectors(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("one"))
    core.create_namespaced_config_map(namespace, _cm("two"))
    items = core.list_config_map_for_all_namespaces(
        field_selector=f"metadata.name=two,metadata.namespace={namespace}"
    ).items
    assert [i.metadata.name for i in items] == ["two"]
    with pytest.raises(client.ApiException) as exc:
        core.list_namespaced_config_map(namespace, field_selector="data.k=v")
    assert exc.value.status == 400
    assert _error(exc)["message"] == (
        '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    with pytest.raises(client.ApiException) as exc:  # pods convert their own field labels
        core.list_namespaced_pod(namespace, field_selector="spec.image=x")
    assert _error(exc)["message"] == "field label not supported: spec.image"


def test_pod_field_selectors(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "nodeName": "somewhere",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
        },
    }
    core.create_namespaced_pod(namespace, pod)
    on_node = core.list_namespaced_pod(namespace, field_selector="spec.nodeName=somewhere")
    assert [p.metadata.name for p in on_node.items] == ["p"]
    elsewhere = core.list_namespaced_pod(namespace, field_selector="spec.nodeName=other")
    assert elsewhere.items == []
    not_failed = core.list_namespaced_pod(namespace, field_selector="status.phase!=Failed")
    assert len(not_failed.items) == 1


def test_limit_and_continue_page_through_everything(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    for i in range(7):
        core.create_namespaced_config_map(namespace, _cm(f"cm-{i}", page="yes"))
    seen, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_config_map(
            namespace, limit=3, _continue=token, label_selector="page=yes"
        )
        seen += [i.metadata.name for i in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3
    assert seen == sorted(seen) and len(seen) == 7


def test_list_resource_version_is_current(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_config_map(namespace, _cm("rv"))
    listed = core.list_namespaced_config_map(namespace)
    assert int(listed.metadata.resource_version) >= int(created.metadata.resource_version)


def test_json_and_merge_and_strategic_patches(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    dep = _deployment("p")
    dep["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    apps.create_namespaced_deployment(namespace, dep)
    # strategic merge (the client's default for dict bodies): env merges by name
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}]}
            }
        }
    }
    merged = apps.patch_namespaced_deployment("p", namespace, patch)
    env = merged.spec.template.spec.containers[0].env
    # the patch's new items come first, the server's others after (normalizeElementOrder)
    assert [(e.name, e.value) for e in env] == [("B", "2"), ("A", "1")]
    assert merged.spec.template.spec.containers[0].image == "nginx:1.25"
    # JSON patch
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 3}]
    assert apps.patch_namespaced_deployment("p", namespace, ops).spec.replicas == 3


def test_merge_patch_replaces_lists(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _deployment("m"))
    body = {
        "spec": {"template": {"spec": {"containers": [{"name": "other", "image": "busybox:1.36"}]}}}
    }
    result = raw(
        kube_api_client,
        "PATCH",
        f"/apis/apps/v1/namespaces/{namespace}/deployments/m",
        body=body,
        content_type="application/merge-patch+json",
    ).json()
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["other"]


def test_failed_json_patch_test_changes_nothing(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    before = core.create_namespaced_config_map(namespace, _cm("t"))
    ops = [
        {"op": "replace", "path": "/data/k", "value": "x"},
        {"op": "test", "path": "/data/k", "value": "not-x"},
    ]
    with pytest.raises(client.ApiException) as exc:
        core.patch_namespaced_config_map("t", namespace, ops)
    assert exc.value.status == 422
    after = core.read_namespaced_config_map("t", namespace)
    assert after.metadata.resource_version == before.metadata.resource_version


def test_dry_run_changes_nothing(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_config_map(namespace, _cm("dry"), dry_run="All")
    assert created.metadata.name == "dry"
    with pytest.raises(client.ApiException) as exc:
        core.read_namespaced_config_map("dry", namespace)
    assert exc.value.status == 404
    core.create_namespaced_config_map(namespace, _cm("dry"))
    core.patch_namespaced_config_map("dry", namespace, {"data": {"k": "dry"}}, dry_run="All")
    core.delete_namespaced_config_map("dry", namespace, dry_run="All")
    assert core.read_namespaced_config_map("dry", namespace).data == {"k": "v"}


def test_delete_preconditions(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    cm = core.create_namespaced_config_map(namespace, _cm("pre"))
    wrong = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-the-uid"))
    with pytest.raises(client.ApiException) as exc:
        core.delete_namespaced_config_map("pre", namespace, body=wrong)
    assert exc.value.status == 409
    assert _error(exc)["message"] == (
        'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition '
        f"(not-the-uid) does not match the UID in record ({cm.metadata.uid}). The object might "
        "have been deleted and then recreated"
    )
    stale = client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version="1"))
    with pytest.raises(client.ApiException) as exc:
        core.delete_namespaced_config_map("pre", namespace, body=stale)
    assert _error(exc)["message"] == (
        'Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the '
        f"precondition (1) does not match the ResourceVersion in record "
        f"({cm.metadata.resource_version}). The object might have been modified"
    )
    right = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=cm.metadata.uid))
    status = core.delete_namespaced_config_map("pre", namespace, body=right)
    assert status["status"] == "Success" and status["details"]["uid"] == cm.metadata.uid


def test_finalizers_keep_object_until_removed(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    body = _cm("fin")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, body)
    core.delete_namespaced_config_map("fin", namespace)
    held = core.read_namespaced_config_map("fin", namespace)
    assert held.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("fin", namespace, {"metadata": {"finalizers": None}})
    with pytest.raises(client.ApiException) as exc:
        core.read_namespaced_config_map("fin", namespace)
    assert exc.value.status == 404


def test_delete_collection_by_label(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("x1", group="x"))
    core.create_namespaced_config_map(namespace, _cm("x2", group="x"))
    core.create_namespaced_config_map(namespace, _cm("y1", group="y"))
    core.delete_collection_namespaced_config_map(namespace, label_selector="group=x")
    left = core.list_namespaced_config_map(namespace, label_selector="group").items
    assert [i.metadata.name for i in left] == ["y1"]


def test_server_defaults_match_kube_apiserver(kube_api_client: Api, namespace: str) -> None:
    apps = client.AppsV1Api(kube_api_client)
    dep = apps.create_namespaced_deployment(namespace, _deployment("defaults"))
    assert dep.spec.strategy.type == "RollingUpdate"
    assert dep.spec.strategy.rolling_update.max_surge == "25%"
    assert dep.spec.revision_history_limit == 10
    pod_spec = dep.spec.template.spec
    assert pod_spec.restart_policy == "Always" and pod_spec.dns_policy == "ClusterFirst"
    assert pod_spec.containers[0].image_pull_policy == "IfNotPresent"


def test_an_init_containers_restart_policy_is_dropped(kube_api_client: Api, namespace: str) -> None:
    """v1.28's SidecarContainers gate is off: the field is dropped, and the pod is created."""
    init = {"name": "side", "image": "pause", "restartPolicy": "Always"}
    pod = {
        "metadata": {"name": "p"},
        "spec": {"initContainers": [init], "containers": [{"name": "c", "image": "pause"}]},
    }
    made = client.CoreV1Api(kube_api_client).create_namespaced_pod(namespace, pod)
    assert made.spec.init_containers[0].name == "side"
    assert made.spec.init_containers[0].restart_policy is None


def test_unknown_resource_is_not_found(kube_api_client: Api) -> None:
    resp = raw(kube_api_client, "GET", "/apis/apps/v1/namespaces/default/widgets")
    assert resp.status == 404
    assert resp.json()["reason"] == "NotFound"


def test_eviction_deletes_the_pod(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    pod = {
        "metadata": {"name": "ev"},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "pause"}],
        },
    }
    core.create_namespaced_pod(namespace, pod)
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "ev", "namespace": namespace},
    }
    core.create_namespaced_pod_eviction("ev", namespace, eviction)

    def gone() -> bool:
        try:
            core.read_namespaced_pod("ev", namespace)
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the evicted pod to go")
