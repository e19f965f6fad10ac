"""Ptemplate end to end: a KMM Module and a consumer DaemonSet per CR, healed through watches.

Real kubesim over HTTP, a real Celery worker and watcher running only the Ptemplate
controller. Devices are advertised as the Kubernetes docs show for extended resources (a
patch of the node's status), which is what a device plugin's registration amounts to.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from controllers.base import DAEMONSET, POD
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from controllers.ptemplate.desired import MODULE, PTEMPLATE, labels_for
from tests.controllers.cluster import list_objects
from tests.controllers.ptemplate_helpers import NODE, SPEC, advertise, install_kmm_crd
from tests.controllers.ptemplate_helpers import make_secret as _secret
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import create_quota
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.kubesim_only]


@pytest.fixture
def ptemplate_engine(engine: EngineProcesses, kubesim_server: Any, operator_crds: None) -> Any:
    install_kmm_crd(kubesim_server.kubeconfig_path)
    engine.controllers = "controllers.ptemplate"
    # Consumers that no node can take are Degraded after the grace (test_unschedulable_
    # scenarios tests it): a short one, so these tests do not wait out the 30 s default.
    engine.extra_env["OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS"] = "2"
    worker = engine.start_worker(concurrency=2, wait=False)
    engine.start_watcher()
    engine.wait_worker_ready(worker)
    return engine


@pytest.fixture
def device(kube: ApiKube) -> Iterator[str]:
    """A resource name of this test's own; every node's advertised count is removed after."""
    name = f"acme.com/accel-{uuid.uuid4().hex[:8]}"
    yield name
    advertise(kube, name, None)


def _create(kube: ApiKube, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": PTEMPLATE.api_version,
        "kind": PTEMPLATE.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {**SPEC, "deviceCount": 1, **spec},
    }
    return kube.create(PTEMPLATE, body)


def _live_pods(kube: ApiKube, namespace: str, name: str) -> list[str]:
    pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": name}}))
    return sorted(
        p["metadata"]["name"] for p in pods if not deep_get(p, "metadata.deletionTimestamp")
    )


def _available(kube: ApiKube, namespace: str, name: str) -> dict[str, Any] | None:
    cr = kube.get(PTEMPLATE, namespace, name)
    status = (cr or {}).get("status") or {}
    nodes, _ = kube.list(NODE)
    if (
        cr is not None
        and status.get("observedGeneration") == cr["metadata"]["generation"]
        and status.get("desiredNumberScheduled") == len(nodes)
        and status.get("numberReady") == len(nodes)
        and status.get("nodes") == _live_pods(kube, namespace, name)
        and status.get("modulePresent") is True
        and condition_of(cr, "Available").get("status") == "True"
        and condition_of(cr, "Progressing").get("status") == "False"
    ):
        return cr
    return None


def _wait_available(kube: ApiKube, namespace: str, name: str) -> dict[str, Any]:
    return wait_for(lambda: _available(kube, namespace, name), what=f"{name} Available")


def _wait_degraded(kube: ApiKube, namespace: str, name: str, reason: str) -> dict[str, Any]:
    def degraded() -> dict[str, Any] | None:
        cr = kube.get(PTEMPLATE, namespace, name)
        condition = condition_of(cr, "Degraded")
        return (
            cr if (condition.get("status"), condition.get("reason")) == ("True", reason) else None
        )

    return wait_for(degraded, what=f"{name} Degraded/{reason}")


def test_create_makes_a_module_and_consumers_that_get_the_device(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    advertise(kube, device, 1)
    _secret(kube, namespace)
    cr = _create(kube, namespace, "pt", deviceResource=device)
    settled = _wait_available(kube, namespace, "pt")
    module = kube.get(MODULE, namespace, "pt")
    ds = kube.get(DAEMONSET, namespace, "pt-consumer")
    assert module is not None and ds is not None
    for child in (module, ds):
        assert child["metadata"]["ownerReferences"][0]["uid"] == cr["metadata"]["uid"]
    assert module["spec"]["selector"] == SPEC["nodeSelector"]
    assert module["spec"]["imageRepoSecret"] == {"name": "pull"}
    assert module["spec"]["moduleLoader"]["container"]["modprobe"]["moduleName"] == "accel_drv"
    pod_spec = ds["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == SPEC["nodeSelector"]
    assert pod_spec["imagePullSecrets"] == [{"name": "pull"}]
    assert pod_spec["containers"][0]["resources"]["limits"] == {device: "1"}
    pods = list_objects(kube, POD, namespace, labels_for(cr))
    assert len({p["spec"]["nodeName"] for p in pods}) == len(pods)  # one per node
    assert settled["status"]["nodes"] == sorted(p["metadata"]["name"] for p in pods)


def test_consumers_wait_for_the_device_and_start_once_it_is_advertised(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    _secret(kube, namespace)
    _create(kube, namespace, "pt", deviceResource=device, deviceCount=2)
    cr = _wait_degraded(kube, namespace, "pt", "NoDeviceCapacity")
    message = condition_of(cr, "Degraded")["message"]
    assert f"Insufficient {device}" in message and "device plugin" in message
    assert condition_of(cr, "Available").get("status") == "False"
    advertise(kube, device, 1)  # one device per node: still not enough for two
    advertise(kube, device, 2)
    _wait_available(kube, namespace, "pt")


def test_a_missing_pull_secret_is_degraded_and_nothing_is_created(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    advertise(kube, device, 1)
    _create(kube, namespace, "pt", deviceResource=device)
    cr = _wait_degraded(kube, namespace, "pt", "PullSecretMissing")
    assert (
        f"Secret pull does not exist in namespace {namespace}"
        in (condition_of(cr, "Degraded")["message"])
    )
    assert kube.get(DAEMONSET, namespace, "pt-consumer") is None
    assert kube.get(MODULE, namespace, "pt") is None
    _secret(kube, namespace)
    # Secrets are not watched; the operator looks again within a minute, or on any change.
    kube.patch(PTEMPLATE, namespace, "pt", {"metadata": {"annotations": {"touched": "1"}}})
    _wait_available(kube, namespace, "pt")


def test_no_node_matching_the_selector_is_degraded(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    _secret(kube, namespace)
    _create(kube, namespace, "pt", deviceResource=device, nodeSelector={"acme.com/accel": "yes"})
    cr = _wait_degraded(kube, namespace, "pt", "NoMatchingNodes")
    assert "acme.com/accel=yes" in condition_of(cr, "Degraded")["message"]
    assert cr["status"]["nodes"] == []


def test_consumers_a_quota_refuses_are_degraded_until_it_is_raised(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str, kube_api_client: Any
) -> None:
    """A DaemonSet has no ReplicaFailure condition: its controller's FailedCreate Event,
    which the mirror keeps, is what tells the Ptemplate (and wakes it)."""
    advertise(kube, device, 1)
    _secret(kube, namespace)
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"pods": "1"})  # fewer than the nodes
    _create(kube, namespace, "pt", deviceResource=device)
    cr = _wait_degraded(kube, namespace, "pt", "PodsRefused")
    message = condition_of(cr, "Degraded")["message"]
    assert message.startswith("DaemonSet pt-consumer cannot create its pods (FailedCreate): ")
    assert "exceeded quota: q" in message
    assert f"Raise ResourceQuota q (kubectl -n {namespace} describe resourcequota q)" in message
    nodes, _ = kube.list(NODE)
    core.patch_namespaced_resource_quota(
        "q", namespace, {"spec": {"hard": {"pods": str(len(nodes))}}}
    )
    _wait_available(kube, namespace, "pt")


def test_children_are_healed_and_an_image_change_rolls_out(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    advertise(kube, device, 1)
    _secret(kube, namespace)
    _create(kube, namespace, "pt", deviceResource=device)
    _wait_available(kube, namespace, "pt")

    old_module = kube.get(MODULE, namespace, "pt")
    assert old_module is not None
    kube.delete(MODULE, namespace, "pt")
    wait_for(
        lambda: (
            (m := kube.get(MODULE, namespace, "pt"))
            and m["metadata"]["uid"] != old_module["metadata"]["uid"]
        ),
        what="a new Module pt",
    )

    kube.patch(
        DAEMONSET,
        namespace,
        "pt-consumer",
        {
            "metadata": {"annotations": {"team": "hw"}},
            "spec": {"template": {"spec": {"nodeSelector": {"other": "x"}}}},
        },
    )

    def corrected() -> dict[str, Any] | None:
        ds = kube.get(DAEMONSET, namespace, "pt-consumer") or {}
        selector = deep_get(ds, "spec.template.spec.nodeSelector")
        return ds if selector == SPEC["nodeSelector"] else None

    ds = wait_for(corrected, what="the DaemonSet's nodeSelector restored")
    assert ds["metadata"]["annotations"]["team"] == "hw"  # not ours: kept

    kube.patch(MODULE, namespace, "pt", {"spec": {"selector": {"other": "x"}}})
    wait_for(
        lambda: (
            deep_get(kube.get(MODULE, namespace, "pt"), "spec.selector") == SPEC["nodeSelector"]
        ),
        what="the Module's selector restored",
    )

    old_ds = kube.get(DAEMONSET, namespace, "pt-consumer")
    assert old_ds is not None
    kube.delete(DAEMONSET, namespace, "pt-consumer")
    wait_for(
        lambda: (
            (d := kube.get(DAEMONSET, namespace, "pt-consumer"))
            and d["metadata"]["uid"] != old_ds["metadata"]["uid"]
        ),
        what="a new DaemonSet pt-consumer",
    )
    _wait_available(kube, namespace, "pt")

    kube.patch(PTEMPLATE, namespace, "pt", {"spec": {"image": "quay.io/acme/accel-consumer:2.0"}})

    def rolled() -> bool:
        pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": "pt"}}))
        live = [p for p in pods if not deep_get(p, "metadata.deletionTimestamp")]
        images = {p["spec"]["containers"][0]["image"] for p in live}
        return images == {"quay.io/acme/accel-consumer:2.0"} and bool(
            _available(kube, namespace, "pt")
        )

    wait_for(rolled, what="the consumers to run 2.0")


def test_a_second_reconcile_writes_nothing(
    ptemplate_engine: Any, kube: ApiKube, namespace: str, device: str
) -> None:
    from controllers.ptemplate.reconcile import reconcile
    from tests.controllers.cluster import CountingKube, by_hand

    advertise(kube, device, 1)
    _secret(kube, namespace)
    _create(kube, namespace, "pt", deviceResource=device)
    _wait_available(kube, namespace, "pt")
    counting = CountingKube(kube)
    ctx = by_hand("ptemplate", namespace, "pt", kube, writes=counting)
    reconcile(ctx)
    assert counting.writes == []
