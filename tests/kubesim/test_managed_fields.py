"""metadata.managedFields as kube-apiserver v1.28 records them for each write: who wrote
which fields (fieldsV1), per manager, operation, apiVersion and subresource. The expected
sets are what the rig (a real v1.28 control plane) answered; run with
OPSBOARD_TEST_KUBECONFIG to check them there. Entries of the real controllers
(kube-controller-manager), which kubesim's simulated ones do not write, are left out."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, watch

from kubesim.server import KubeSim
from tests.kubesim.conftest import Kubectl
from tests.kubesim.support import established_crd, raw

Api = client.ApiClient
CONTROLLERS = {"kube-controller-manager"}
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
CRD_FILE = Path(__file__).parents[2] / "k8s" / "crd" / "cache.example.com_memcacheds.yaml"


def _managed(obj: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    """(manager, operation, subresource) -> fieldsV1, without the real controllers'."""
    return {
        (e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
        for e in obj["metadata"].get("managedFields") or []
        if e["manager"] not in CONTROLLERS
    }


def _write(
    api: Api, method: str, path: str, body: Any, manager: str | None, ctype: str = ""
) -> dict[str, Any]:
    ctype = ctype or (MERGE if method == "PATCH" else "application/json")
    query = f"?fieldManager={manager}" if manager else ""
    if isinstance(body, str):
        body = body.encode()
    resp = raw(api, method, path + query, body=body, content_type=ctype)
    assert resp.status in (200, 201), resp.data
    return dict(resp.json())


def _get(api: Api, path: str) -> dict[str, Any]:
    resp = raw(api, "GET", path)
    assert resp.status == 200, resp.data
    return dict(resp.json())


def _deployment(name: str) -> dict[str, Any]:
    container = {
        "name": "c",
        "image": "nginx:1.25",
        "ports": [{"containerPort": 80}],
        "env": [{"name": "A", "value": "1"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
        },
    }


def _k(**keys: Any) -> str:
    return "k:" + json.dumps(keys, separators=(",", ":"))


# What kube-apiserver v1.28 gives the creator of _deployment("d"): every field as decoded,
# defaults included; the maps and list items it added own themselves ("."), the spec and
# the template (always in the Go struct) do not; the selector is atomic.
CONTAINER = {
    ".": {},
    "f:env": {".": {}, _k(name="A"): {".": {}, "f:name": {}, "f:value": {}}},
    "f:image": {},
    "f:imagePullPolicy": {},
    "f:name": {},
    "f:ports": {
        ".": {},
        _k(containerPort=80, protocol="TCP"): {".": {}, "f:containerPort": {}, "f:protocol": {}},
    },
    "f:resources": {},
    "f:terminationMessagePath": {},
    "f:terminationMessagePolicy": {},
}
DEPLOYMENT_SPEC = {
    "f:progressDeadlineSeconds": {},
    "f:replicas": {},
    "f:revisionHistoryLimit": {},
    "f:selector": {},
    "f:strategy": {
        "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
        "f:type": {},
    },
    "f:template": {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:containers": {_k(name="c"): CONTAINER},
            "f:dnsPolicy": {},
            "f:restartPolicy": {},
            "f:schedulerName": {},
            "f:securityContext": {},
            "f:terminationGracePeriodSeconds": {},
        },
    },
}
LABELS = {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}


def test_a_create_owns_every_field_as_decoded_defaults_included(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    created = _write(kube_api_client, "POST", path, _deployment("d"), "opsboard-bootstrap")
    (entry,) = list(created["metadata"]["managedFields"])
    assert set(entry) == {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"}
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsType"]) == (
        "opsboard-bootstrap",
        "Update",
        "apps/v1",
        "FieldsV1",
    )
    assert entry["fieldsV1"] == {**LABELS, "f:spec": DEPLOYMENT_SPEC}
    # GET, LIST and the watch carry them as the write answered them.
    got = _get(kube_api_client, f"{path}/d")
    assert _managed(got) == _managed(created)
    items = _get(kube_api_client, path)["items"]
    assert [_managed(i) for i in items] == [_managed(created)]
    events = watch.Watch().stream(
        client.AppsV1Api(kube_api_client).list_namespaced_deployment,
        namespace,
        resource_version="0",
        timeout_seconds=5,
    )
    first = next(iter(events))
    assert ({
        (e["manager"], e["operation"]): e["fieldsV1"]
        for e in first["raw_object"]["metadata"]["managedFields"]
        if e["manager"] not in CONTROLLERS
    }) == {("opsboard-bootstrap", "Update"): entry["fieldsV1"]}  # fmt: skip


def test_a_patch_owns_what_it_changed_and_takes_it_from_the_other_managers(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    _write(kube_api_client, "POST", path, _deployment("d"), "creator")
    d = f"{path}/d"
    _write(kube_api_client, "PATCH", d, {"spec": {"replicas": 2}}, "mgr-a")
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}}
    _write(kube_api_client, "PATCH", d, patch, "mgr-b", STRATEGIC)
    label = [{"op": "add", "path": "/metadata/labels/x", "value": "y"}]
    after = _write(kube_api_client, "PATCH", d, label, "mgr-c", JSON_PATCH)
    spec = json.loads(json.dumps(DEPLOYMENT_SPEC))
    del spec["f:replicas"]
    del spec["f:template"]["f:spec"]["f:containers"][_k(name="c")]["f:image"]
    assert _managed(after) == {
        ("creator", "Update", ""): {**LABELS, "f:spec": spec},
        ("mgr-a", "Update", ""): {"f:spec": {"f:replicas": {}}},
        ("mgr-b", "Update", ""): {
            "f:spec": {"f:template": {"f:spec": {"f:containers": {_k(name="c"): {"f:image": {}}}}}}
        },
        ("mgr-c", "Update", ""): {"f:metadata": {"f:labels": {"f:x": {}}}},
    }
    # A write that changes nothing leaves them alone.
    same = _write(kube_api_client, "PATCH", d, {"spec": {"replicas": 2}}, "mgr-d")
    assert _managed(same) == _managed(after)
    # The scale subresource has an entry of its own, which v1.28 leaves without a time.
    _write(kube_api_client, "PATCH", d + "/scale", {"spec": {"replicas": 3}}, "mgr-s")
    scaled = _get(kube_api_client, d)
    assert ("mgr-a", "Update", "") not in _managed(scaled)
    assert _managed(scaled)[("mgr-s", "Update", "scale")] == {"f:spec": {"f:replicas": {}}}
    (entry,) = [e for e in scaled["metadata"]["managedFields"] if e["manager"] == "mgr-s"]
    assert "time" not in entry


def test_removed_fields_leave_every_manager_and_set_lists_own_their_values(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "finalizers": ["a/b"]},
        "data": {"k": "v", "k2": "v2"},
    }
    created = _write(kube_api_client, "POST", path, cm, "mgr-cm")
    finalizers = {"f:finalizers": {".": {}, 'v:"a/b"': {}}}
    assert _managed(created) == {
        ("mgr-cm", "Update", ""): {
            "f:data": {".": {}, "f:k": {}, "f:k2": {}},
            "f:metadata": finalizers,
        }
    }
    patch = {"data": {"k": "w", "k2": None}, "metadata": {"finalizers": ["a/b", "c/d"]}}
    merged = _write(kube_api_client, "PATCH", f"{path}/c", patch, "mgr-cm2")
    # A write that changes nothing leaves them, and the resourceVersion, alone.
    same = _write(kube_api_client, "PATCH", f"{path}/c", {"data": {"k": "w"}}, "mgr-none")
    assert same["metadata"]["resourceVersion"] == merged["metadata"]["resourceVersion"]
    assert same["metadata"]["managedFields"] == merged["metadata"]["managedFields"]
    assert _managed(merged) == {
        ("mgr-cm", "Update", ""): {"f:data": {}, "f:metadata": finalizers},
        ("mgr-cm2", "Update", ""): {
            "f:data": {"f:k": {}},
            "f:metadata": {"f:finalizers": {'v:"c/d"': {}}},
        },
    }
    # A PUT by the same manager merges into its entry and moves its time.
    current = _get(kube_api_client, f"{path}/c")
    current["metadata"]["finalizers"] = []
    current["data"]["k3"] = "v3"
    put = _write(kube_api_client, "PUT", f"{path}/c", current, "mgr-cm2", "application/json")
    assert _managed(put) == {
        ("mgr-cm", "Update", ""): {"f:data": {}},
        ("mgr-cm2", "Update", ""): {"f:data": {"f:k": {}, "f:k3": {}}},
    }


def test_service_ports_are_keyed_by_port_and_protocol_and_its_ip_is_not_owned(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/services"
    ports = [
        {"name": "http", "port": 80, "targetPort": 8080},
        {"name": "u", "port": 53, "protocol": "UDP"},
    ]
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"selector": {"app": "d"}, "ports": ports},
    }
    created = _write(kube_api_client, "POST", path, svc, "mgr-svc")
    port = {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}
    spec = {
        "f:internalTrafficPolicy": {},
        "f:ports": {
            ".": {},
            _k(port=53, protocol="UDP"): port,
            _k(port=80, protocol="TCP"): port,
        },
        "f:selector": {},
        "f:sessionAffinity": {},
        "f:type": {},
    }
    assert _managed(created) == {("mgr-svc", "Update", ""): {"f:spec": spec}}
    patch = {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}
    patched = _write(kube_api_client, "PATCH", f"{path}/s", patch, "mgr-svc2", STRATEGIC)
    kept = {k: v for k, v in port.items() if k != "f:targetPort"}
    spec["f:ports"] = {
        ".": {},
        _k(port=53, protocol="UDP"): port,
        _k(port=80, protocol="TCP"): kept,
    }
    assert _managed(patched) == {
        ("mgr-svc", "Update", ""): {"f:spec": spec},
        ("mgr-svc2", "Update", ""): {
            "f:spec": {"f:ports": {_k(port=80, protocol="TCP"): {"f:targetPort": {}}}}
        },
    }


@pytest.fixture
def memcached(kube_api_client: Api) -> Iterator[str]:
    """The repo's Memcached CRD, in a group of its own; its objects' API path."""
    body = yaml.safe_load(CRD_FILE.read_text())
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    body["metadata"]["name"] = f"memcacheds.{group}"
    body["spec"]["group"] = group
    with established_crd(kube_api_client, body):
        yield f"/apis/{group}/v1alpha1"


def test_a_custom_resource_names_each_writer_of_its_spec_and_status(
    kube_api_client: Api, memcached: str, namespace: str
) -> None:
    path = f"{memcached}/namespaces/{namespace}/memcacheds"
    cr = {"apiVersion": memcached[6:], "kind": "Memcached", "metadata": {"name": "m"},
          "spec": {"size": 2}}  # fmt: skip
    created = _write(kube_api_client, "POST", path, cr, "opsboard-bootstrap")
    # The schema's defaults are owned by the creator; a new spec owns itself.
    spec = {".": {}, "f:containerPort": {}, "f:image": {}, "f:size": {}}
    assert _managed(created) == {("opsboard-bootstrap", "Update", ""): {"f:spec": spec}}
    m = f"{path}/m"
    _write(kube_api_client, "PATCH", m, {"spec": {"image": "memcached:1.6"}}, "kubectl-edit")
    _write(kube_api_client, "PATCH", m + "/scale", {"spec": {"replicas": 3}}, "opsboard-web")
    condition = {"type": "Available", "status": "True", "reason": "R", "message": "m",
                 "lastTransitionTime": "2024-01-01T00:00:00Z"}  # fmt: skip
    status = {"status": {"nodes": ["a", "b"], "conditions": [condition]}}
    _write(kube_api_client, "PATCH", m + "/status", status, "opsboard")
    got = _get(kube_api_client, m)
    fields = {".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
              "f:status": {}, "f:type": {}}  # fmt: skip
    assert _managed(got) == {
        ("opsboard-bootstrap", "Update", ""): {"f:spec": {".": {}, "f:containerPort": {}}},
        ("kubectl-edit", "Update", ""): {"f:spec": {"f:image": {}}},
        ("opsboard-web", "Update", "scale"): {"f:spec": {"f:size": {}}},
        ("opsboard", "Update", "status"): {
            "f:status": {
                ".": {},
                "f:conditions": {".": {}, _k(type="Available"): fields},
                "f:nodes": {},  # an atomic list, owned whole
            }
        },
    }
    assert {e["apiVersion"] for e in got["metadata"]["managedFields"]} == {memcached[6:]}


def test_a_status_write_keeps_its_manager_s_fields_and_a_second_manager_takes_one_over(
    kube_api_client: Api, memcached: str, namespace: str
) -> None:
    path = f"{memcached}/namespaces/{namespace}/memcacheds"
    cr = {"apiVersion": memcached[6:], "kind": "Memcached", "metadata": {"name": "m"},
          "spec": {"size": 1}}  # fmt: skip
    _write(kube_api_client, "POST", path, cr, "opsboard-bootstrap")
    m = f"{path}/m/status"
    condition = {"type": "Available", "status": "False", "reason": "Waiting", "message": "m",
                 "lastTransitionTime": "2024-01-01T00:00:00Z"}  # fmt: skip
    status = {"observedGeneration": 1, "nodes": ["a"], "conditions": [condition]}
    first = _write(kube_api_client, "PATCH", m, {"status": status}, "opsboard")
    # The same manager again, one field of a condition and the atomic list changed: its
    # entry owns what it did, and no other entry moves.
    again = {"conditions": [{**condition, "status": "True", "reason": "Ready"}], "nodes": ["b"]}
    second = _write(kube_api_client, "PATCH", m, {"status": again}, "opsboard")
    assert _managed(second) == _managed(first)
    fields = {".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
              "f:status": {}, "f:type": {}}  # fmt: skip
    assert _managed(second)[("opsboard", "Update", "status")] == {
        "f:status": {
            ".": {},
            "f:conditions": {".": {}, _k(type="Available"): fields},
            "f:nodes": {},
            "f:observedGeneration": {},
        }
    }
    # A second manager that changes one of those fields takes it; one that writes the
    # value the field has takes nothing.
    _write(kube_api_client, "PATCH", m, {"status": {"observedGeneration": 1}}, "same-value")
    taken = _write(kube_api_client, "PATCH", m, {"status": {"nodes": ["c"]}}, "other")
    assert _managed(taken) == {
        ("opsboard-bootstrap", "Update", ""): _managed(first)[("opsboard-bootstrap", "Update", "")],
        ("opsboard", "Update", "status"): {
            "f:status": {
                ".": {},
                "f:conditions": {".": {}, _k(type="Available"): fields},
                "f:observedGeneration": {},
            }
        },
        ("other", "Update", "status"): {"f:status": {"f:nodes": {}}},
    }


def test_a_client_list_replaces_them_and_an_empty_one_clears_them(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    _write(kube_api_client, "POST", path, cm, "creator")
    c = f"{path}/c"
    only = {"manager": "only", "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}  # fmt: skip
    replaced = _write(kube_api_client, "PATCH", c, {"metadata": {"managedFields": [only]}}, "x")
    assert _managed(replaced) == {("only", "Update", ""): {"f:data": {"f:k": {}}}}
    # A list the server cannot decode is ignored: the live one stays.
    for bad in ({**only, "operation": "Foo"}, {**only, "fieldsType": "FieldsV2"}):
        kept = _write(kube_api_client, "PATCH", c, {"metadata": {"managedFields": [bad]}}, "x")
        assert _managed(kept) == _managed(replaced)
        assert kept["metadata"]["resourceVersion"] == replaced["metadata"]["resourceVersion"]
    cleared = _write(kube_api_client, "PATCH", c, {"metadata": {"managedFields": []}}, "x")
    assert "managedFields" not in cleared["metadata"]
    # Once cleared, updates are not tracked again (only an apply starts over); nor is an
    # object whose create set no field of its own.
    after = _write(kube_api_client, "PATCH", c, {"data": {"k": "w"}}, "later")
    assert "managedFields" not in after["metadata"]
    empty = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty"}}
    assert "managedFields" not in _write(kube_api_client, "POST", path, empty, "x")["metadata"]
    labelled = _write(
        kube_api_client, "PATCH", f"{path}/empty", {"metadata": {"labels": {"a": "b"}}}, "y"
    )
    assert "managedFields" not in labelled["metadata"]


def test_an_apply_owns_the_fields_of_its_configuration(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    applied = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {a: b}\ndata:\n  k3: v3\n"
    )
    created = _write(kube_api_client, "PATCH", f"{path}/c", applied, "mgr-apply", APPLY)
    assert _managed(created) == {
        ("mgr-apply", "Apply", ""): {
            "f:data": {"f:k3": {}},
            "f:metadata": {"f:labels": {"f:a": {}}},
        }
    }
    _write(kube_api_client, "PATCH", f"{path}/c", {"data": {"k": "v"}}, "mgr-merge")
    # The same value as another manager's: owned by both (a different one is a conflict).
    again = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n  k3: v3\n"
    got = _write(kube_api_client, "PATCH", f"{path}/c", again + "", "mgr-apply", APPLY)
    assert _managed(got) == {
        ("mgr-apply", "Apply", ""): {"f:data": {"f:k": {}, "f:k3": {}}},
        ("mgr-merge", "Update", ""): {"f:data": {"f:k": {}}},
    }


def test_an_apply_that_changes_nothing_gives_its_entry_no_time(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    _write(kube_api_client, "POST", path, cm, "creator")
    # The object stays as it was: the applier's new entry has no time (structured-merge-diff
    # returns no object, and the server stamps only a changed one).
    same = _write(kube_api_client, "PATCH", f"{path}/c", json.dumps(cm), "applier", APPLY)
    (entry,) = [e for e in same["metadata"]["managedFields"] if e["manager"] == "applier"]
    assert "time" not in entry and entry["fieldsV1"] == {"f:data": {"f:k": {}}}
    changed = {**cm, "data": {"k": "v", "k2": "v2"}}
    after = _write(kube_api_client, "PATCH", f"{path}/c", json.dumps(changed), "applier", APPLY)
    (entry,) = [e for e in after["metadata"]["managedFields"] if e["manager"] == "applier"]
    assert "time" in entry


def _entries(obj: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """(manager, operation, subresource, fieldsV1) of every entry, in the server's order."""
    return [
        (e["manager"], e["operation"], e.get("subresource", ""), e["fieldsV1"])
        for e in obj["metadata"]["managedFields"]
    ]


def _data_entry(manager: str, key: str, when: str | None = None, **more: str) -> dict[str, Any]:
    """A managedFields entry owning one key of a ConfigMap's data, as a client sends it."""
    entry = {"manager": manager, "operation": "Update", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {f"f:{key}": {}}}, **more}  # fmt: skip
    return {**entry, "time": when} if when else entry


def test_no_more_than_ten_update_entries_are_kept_the_oldest_merge_into_ancient_changes(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k00": "v"}}
    _write(kube_api_client, "POST", path, cm, "m00")
    for i in range(1, 10):
        tenth = _write(
            kube_api_client, "PATCH", f"{path}/c", {"data": {f"k{i:02d}": "v"}}, f"m{i:02d}"
        )
    assert [e[0] for e in _entries(tenth)] == [f"m{i:02d}" for i in range(10)]
    # The eleventh: the two oldest (the same second orders them by name) become one entry.
    eleventh = _write(kube_api_client, "PATCH", f"{path}/c", {"data": {"k10": "v"}}, "m10")
    merged = {"f:data": {".": {}, "f:k00": {}, "f:k01": {}}}
    assert _entries(eleventh)[0] == ("ancient-changes", "Update", "", merged)
    assert [e[0] for e in _entries(eleventh)[1:]] == [f"m{i:02d}" for i in range(2, 11)]
    (bucket,) = [
        e for e in eleventh["metadata"]["managedFields"] if e["manager"] == "ancient-changes"
    ]
    assert (bucket["apiVersion"], set(bucket)) == (
        "v1",
        {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"},
    )
    # The next one merges the oldest left into it.
    twelfth = _write(kube_api_client, "PATCH", f"{path}/c", {"data": {"k11": "v"}}, "m11")
    merged = {"f:data": {".": {}, "f:k00": {}, "f:k01": {}, "f:k02": {}}}
    assert _entries(twelfth)[0] == ("ancient-changes", "Update", "", merged)
    assert len(twelfth["metadata"]["managedFields"]) == 10


def test_the_cap_merges_by_time_keeps_apply_entries_and_drops_the_subresource(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    keys = ["ap", *(f"u{i}" for i in range(1, 12))]
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": dict.fromkeys(keys, "v")}  # fmt: skip
    _write(kube_api_client, "POST", path, cm, "creator")
    # A client's list of 12 Update entries (one without a time: the oldest of all) and an
    # Apply entry older than them all, sent with a change of a 13th manager's.
    sent = [
        {**_data_entry("ap", "ap", "2019-01-01T00:00:00Z"), "operation": "Apply"},
        _data_entry("u1", "u1", "2020-01-01T00:00:00Z"),
        _data_entry("u2", "u2", "2020-01-02T00:00:00Z", subresource="status"),
        _data_entry("u3", "u3"),
        *(_data_entry(f"u{i}", f"u{i}", f"2021-01-{i:02d}T00:00:00Z") for i in range(4, 12)),
    ]
    body = {"metadata": {"managedFields": sent}, "data": {"w": "x"}}
    got = _write(kube_api_client, "PATCH", f"{path}/c", body, "w")
    entries = got["metadata"]["managedFields"]
    # 12 Update entries: two merges, the three oldest (u3, u1, then u2 of status) into one
    # entry of the main resource with the time of the last merged; the Apply entry stays.
    assert entries[:2] == [
        {**sent[0], "fieldsV1": {"f:data": {"f:ap": {}}}},
        {"manager": "ancient-changes", "operation": "Update", "apiVersion": "v1",
         "time": "2020-01-02T00:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:u1": {}, "f:u2": {}, "f:u3": {}}}},
    ]  # fmt: skip
    assert [e["manager"] for e in entries[2:]] == [*(f"u{i}" for i in range(4, 12)), "w"]


def test_an_ancient_changes_entry_that_is_not_the_oldest_merges_into_itself_and_is_lost(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": {f"k{i}": "v" for i in range(1, 12)}}  # fmt: skip
    _write(kube_api_client, "POST", path, cm, "creator")
    # "aaa" and "ancient-changes" are as old; "aaa" comes first by name. As capmanagers.go
    # does, the bucket is merged with itself and deleted, then "aaa" and "u3" make a new one.
    sent = [
        _data_entry("aaa", "k1", "2020-01-01T00:00:00Z"),
        _data_entry("ancient-changes", "k2", "2020-01-01T00:00:00Z"),
        _data_entry("u3", "k3", "2020-01-03T00:00:00Z"),
        *(_data_entry(f"u{i}", f"k{i}", f"2021-01-{i:02d}T00:00:00Z") for i in range(4, 12)),
    ]
    body = {"metadata": {"managedFields": sent}, "data": {"w": "x"}}
    got = _write(kube_api_client, "PATCH", f"{path}/c", body, "w")
    (bucket,) = [e for e in got["metadata"]["managedFields"] if e["manager"] == "ancient-changes"]
    assert (bucket["time"], bucket["fieldsV1"]) == (
        "2020-01-03T00:00:00Z",
        {"f:data": {"f:k1": {}, "f:k3": {}}},
    )
    assert [e[0] for e in _entries(got)] == [
        "ancient-changes",
        *(f"u{i}" for i in range(4, 12)),
        "w",
    ]


def test_the_manager_is_the_user_agent_s_first_word_without_a_field_manager(
    kube_api_client: Api, namespace: str, kubectl: Kubectl
) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"}, "data": {"k": "v"}}
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_config_map(namespace, cm, _preload_content=False)
    assert [e["manager"] for e in json.loads(created.data)["metadata"]["managedFields"]] == [
        "OpenAPI-Generator"  # the Python client's "OpenAPI-Generator/<version>/python"
    ]
    kubectl("create", "configmap", "cli", "--from-literal=k=v", namespace=namespace)
    kubectl("label", "configmap", "cli", "x=y", namespace=namespace)
    shown = yaml.safe_load(
        kubectl(
            "get", "configmap", "cli", "-o", "yaml", "--show-managed-fields", namespace=namespace
        ).stdout
    )
    assert _managed(shown) == {
        ("kubectl-create", "Update", ""): {"f:data": {".": {}, "f:k": {}}},
        ("kubectl-label", "Update", ""): {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
    }
    hidden = yaml.safe_load(
        kubectl("get", "configmap", "cli", "-o", "yaml", namespace=namespace).stdout
    )
    assert "managedFields" not in hidden["metadata"]


@pytest.mark.kubesim_only
def test_managed_fields_survive_a_restart(tmp_path: Path) -> None:
    first = KubeSim(data_dir=tmp_path, cluster=False).start()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    created = first.store.create("configmaps", cm, namespace="default", field_manager="me")
    first.stop()
    second = KubeSim(data_dir=tmp_path, cluster=False).start()
    try:
        again = second.store.get("configmaps", "default", "c")
        assert again["metadata"]["managedFields"] == created["metadata"]["managedFields"]
        assert _managed(again) == {("me", "Update", ""): {"f:data": {".": {}, "f:k": {}}}}
    finally:
        second.stop()


@pytest.mark.kubesim_only
def test_kubesim_s_own_controllers_take_fields_without_an_entry_of_their_own(
    kubesim_server: Any, namespace: str
) -> None:
    store = kubesim_server.store
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": {"k": "v", "k2": "v2"}}  # fmt: skip
    store.create("configmaps", cm, namespace=namespace, field_manager="me")
    changed = store.patch("configmaps", namespace, "c", {"data": {"k": "w"}})
    assert _managed(changed) == {("me", "Update", ""): {"f:data": {".": {}, "f:k2": {}}}}
    made = store.create("configmaps", {**cm, "metadata": {"name": "own"}}, namespace=namespace)
    assert "managedFields" not in made["metadata"]


@pytest.mark.kubesim_only
def test_kubesim_s_own_controllers_take_only_what_someone_owns(
    kubesim_server: Any, namespace: str
) -> None:
    store = kubesim_server.store
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "c", "labels": {"a": "1", "b": "1"}}, "data": {"k": "v"}}  # fmt: skip
    store.create("configmaps", cm, namespace=namespace, field_manager="me")
    store.patch("configmaps", namespace, "c", {"data": {"k2": "v2"}}, field_manager="you")
    before = store.get("configmaps", namespace, "c")["metadata"]["managedFields"]
    # Fields no one owns, at the top and under metadata: the entries stay as they were.
    untouched = store.patch(
        "configmaps", namespace, "c",
        {"binaryData": {"b": "YQ=="}, "metadata": {"annotations": {"x": "y"}}},
    )  # fmt: skip
    assert untouched["metadata"]["managedFields"] == before
    # A label one manager owns and a data key another owns: each loses that one field.
    taken = store.patch(
        "configmaps", namespace, "c", {"metadata": {"labels": {"a": "2"}}, "data": {"k2": "w"}}
    )
    assert _managed(taken) == {  # "you" owned nothing else: its entry is gone
        ("me", "Update", ""): {
            "f:data": {".": {}, "f:k": {}},
            "f:metadata": {"f:labels": {".": {}, "f:b": {}}},
        },
    }


@pytest.mark.kubesim_only
def test_kubesim_s_own_status_write_takes_a_status_field_from_its_manager(
    kube_api_client: Api, kubesim_server: Any, memcached: str, namespace: str
) -> None:
    path = f"{memcached}/namespaces/{namespace}/memcacheds"
    cr = {"apiVersion": memcached[6:], "kind": "Memcached", "metadata": {"name": "m"},
          "spec": {"size": 1}}  # fmt: skip
    _write(kube_api_client, "POST", path, cr, "opsboard-bootstrap")
    status = {"status": {"observedGeneration": 1, "nodes": ["a"]}}
    _write(kube_api_client, "PATCH", f"{path}/m/status", status, "opsboard")
    resource = f"memcacheds.{memcached.split('/')[2]}"
    store = kubesim_server.store
    taken = store.patch(resource, namespace, "m", {"status": {"nodes": ["b"]}},
                        subresource="status")  # fmt: skip
    assert _managed(taken)[("opsboard", "Update", "status")] == {
        "f:status": {".": {}, "f:observedGeneration": {}}
    }
