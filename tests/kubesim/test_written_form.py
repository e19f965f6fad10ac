"""What a write comes back as: kube-apiserver decodes each body into Go structs and encodes
them again, so write-only fields (a Secret's stringData) and empty omitempty maps and lists
never come back."""

from __future__ import annotations

import base64

from kubernetes import client

from tests.kubesim.conftest import Kubectl
from tests.kubesim.support import memcached_crd, raw, wait_for

Api = client.ApiClient
EMPTY_META = {"labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_secret_string_data_is_written_into_data(kube_api_client: Api, namespace: str) -> None:
    secrets = f"/api/v1/namespaces/{namespace}/secrets"
    body = {
        "metadata": {"name": "s"},
        "data": {"b": _b64("from data"), "c": _b64("kept")},
        "stringData": {"a": "hello", "b": "from stringData"},
    }
    created = raw(kube_api_client, "POST", secrets, body=body)
    assert created.status == 201, created.data
    wanted = {"a": _b64("hello"), "b": _b64("from stringData"), "c": _b64("kept")}
    assert "stringData" not in created.json()
    assert created.json()["data"] == wanted
    patched = raw(
        kube_api_client,
        "PATCH",
        f"{secrets}/s",
        body={"stringData": {"d": "later"}},
        content_type="application/merge-patch+json",
    ).json()
    assert patched["data"] == wanted | {"d": _b64("later")}
    assert "stringData" not in raw(kube_api_client, "GET", f"{secrets}/s").json()


def test_empty_maps_and_lists_are_left_out(kube_api_client: Api, namespace: str) -> None:
    cms = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {"metadata": {"name": "e", **EMPTY_META}, "data": {}, "binaryData": {}}
    created = raw(kube_api_client, "POST", cms, body=body).json()
    assert not EMPTY_META.keys() & created["metadata"].keys()
    assert "data" not in created and "binaryData" not in created
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "volumes": [],
            "containers": [{"name": "c", "image": "nginx:1.25", "env": [], "ports": []}],
        },
    }
    spec = raw(kube_api_client, "POST", f"/api/v1/namespaces/{namespace}/pods", body=pod).json()
    container = spec["spec"]["containers"][0]
    assert "env" not in container and "ports" not in container
    assert container["resources"] == {}  # a struct, not a map: Go writes it even when empty


def test_removing_the_last_label_leaves_no_labels(
    kube_api_client: Api, namespace: str, kubectl: Kubectl
) -> None:
    kubectl("create", "configmap", "c", "--from-literal=a=1", namespace=namespace)
    assert kubectl("label", "cm", "c", "tier=web", namespace=namespace).stdout == (
        "configmap/c labeled\n"
    )
    assert kubectl("label", "cm", "c", "tier-", namespace=namespace).stdout == (
        "configmap/c unlabeled\n"
    )
    got = raw(kube_api_client, "GET", f"/api/v1/namespaces/{namespace}/configmaps/c").json()
    assert "labels" not in got["metadata"]
    # kubectl compares the object before and after its edit: the second removal sets an
    # empty map where the server sent none, so it reports a change, as on a cluster.
    again = kubectl("label", "cm", "c", "tier-", namespace=namespace)
    assert again.stdout == 'label "tier" not found.\nconfigmap/c labeled\n'


def test_custom_resource_metadata_drops_empties_but_its_spec_keeps_them(
    kube_api_client: Api, namespace: str
) -> None:
    ext = client.ApiextensionsV1Api(kube_api_client)
    crd = memcached_crd(group="written.example.com", plural="writtens", kind="Written")
    ext.create_custom_resource_definition(crd)
    try:
        path = f"/apis/written.example.com/v1alpha1/namespaces/{namespace}/writtens"
        body = {
            "apiVersion": "written.example.com/v1alpha1",
            "kind": "Written",
            "metadata": {"name": "w", **EMPTY_META},
            "spec": {"size": 1, "extra": {"m": {}, "l": []}},
        }
        created = wait_for(
            lambda: (r := raw(kube_api_client, "POST", path, body=body)).status == 201 and r,
            what="the CRD served",
        )
        got = created.json()
        assert not EMPTY_META.keys() & got["metadata"].keys()
        assert got["spec"]["extra"] == {"m": {}, "l": []}
    finally:
        ext.delete_custom_resource_definition(crd["metadata"]["name"])


def test_quantities_come_back_in_their_canonical_form(kube_api_client: Api, namespace: str) -> None:
    # JSON numbers (YAML's `cpu: 1`) are quantities too, as resource.Quantity decodes them.
    resources = {
        "requests": {"cpu": 0.25, "memory": "128974848"},
        "limits": {"cpu": "1000m", "memory": 129e6},
    }
    container = {"name": "c", "image": "busybox", "resources": resources}
    volume = {"name": "v", "emptyDir": {"sizeLimit": "0.5Gi"}}
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [container], "volumes": [volume]}}
    created = raw(kube_api_client, "POST", f"/api/v1/namespaces/{namespace}/pods", body=pod)
    assert created.status == 201, created.data
    spec = created.json()["spec"]
    assert spec["containers"][0]["resources"] == {
        "requests": {"cpu": "250m", "memory": "128974848"},
        "limits": {"cpu": "1", "memory": "129M"},
    }
    assert spec["volumes"][0]["emptyDir"] == {"sizeLimit": "512Mi"}

    hard = {"pods": 10, "requests.cpu": "0.5", "requests.memory": "1024Mi",
            "limits.memory": "1.5Gi", "requests.storage": 2e3}  # fmt: skip
    quota = {"metadata": {"name": "q"}, "spec": {"hard": hard}}
    path = f"/api/v1/namespaces/{namespace}/resourcequotas"
    created = raw(kube_api_client, "POST", path, body=quota)
    assert created.status == 201, created.data
    assert created.json()["spec"]["hard"] == {
        "pods": "10", "requests.cpu": "500m", "requests.memory": "1Gi",
        "limits.memory": "1536Mi", "requests.storage": "2k",
    }  # fmt: skip
