from __future__ import annotations

from typing import Any

from controllers.bookstore.reconcile import spec_problem
from controllers.bookstore.status import compute_status
from controllers.conditions import find_condition
from tests.controllers.builders import bookstore, pod

SPEC = {"bookApp": {"replicas": 2, "image": "shop/app:1"}, "bookDB": {"replicas": 1}}


def _claim(
    name: str, requested: str, capacity: str | None, pending: bool = False
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Bound"}
    if capacity:
        status["capacity"] = {"storage": capacity}
    if pending:
        status["conditions"] = [{"type": "FileSystemResizePending", "status": "True"}]
    return {
        "metadata": {"name": name, "namespace": "shop", "resourceVersion": "1"},
        "spec": {"resources": {"requests": {"storage": requested}}},
        "status": status,
    }


def _status(**kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "app_pods": [pod("s-app-1", image="shop/app:1"), pod("s-app-2", image="shop/app:1")],
        "db_pods": [pod("s-db-0", image="mongo:7.0")],
        "app_service": None,
        "claims": [_claim("data-s-db-0", "1Gi", "1Gi")],
        "now": "T",
    }
    args.update(kw)
    return compute_status(bookstore("s", **SPEC), **args)


def _condition(status: dict[str, Any], type_: str) -> tuple[str, str]:
    condition = find_condition(status["conditions"], type_) or {}
    return condition["status"], condition["reason"]


def test_nodes_are_the_app_and_db_pods_sorted() -> None:
    status = _status()
    assert status["nodes"] == ["s-app-1", "s-app-2", "s-db-0"]
    assert (status["readyReplicas"], status["dbReadyReplicas"]) == (2, 1)
    assert status["observedGeneration"] == 2
    assert _condition(status, "Available") == ("True", "PodsReady")
    assert _condition(status, "Progressing") == ("False", "RolloutComplete")
    assert _condition(status, "Degraded") == ("False", "AsExpected")


def test_selector_and_services_are_the_apps() -> None:
    service = {
        "spec": {
            "ports": [
                {"name": "mine", "port": 8080, "nodePort": 31000},
                {"name": "http", "port": 80, "nodePort": 31001},
            ]
        }
    }
    status = _status(app_service=service)
    assert "app.kubernetes.io/component=app" in status["selector"]
    assert (status["serviceName"], status["dbServiceName"]) == ("s-app", "s-db")
    assert status["nodePort"] == 31001


def test_a_db_pod_not_ready_makes_the_cr_unavailable_naming_the_db() -> None:
    status = _status(db_pods=[pod("s-db-0", image="mongo:7.0", ready=False)])
    assert _condition(status, "Available") == ("False", "PodsNotReady")
    available = find_condition(status["conditions"], "Available") or {}
    assert available["message"] == "DB: 0/1 pod ready"
    assert _condition(status, "Progressing") == ("True", "PodsStarting")


def test_an_app_image_that_cannot_be_pulled_is_degraded() -> None:
    app = [pod("s-app-1", image="shop/app:1", ready=False, waiting="ImagePullBackOff")]
    status = _status(app_pods=app)
    assert _condition(status, "Degraded") == ("True", "ImagePullFailed")


def test_a_db_pod_no_node_can_take_is_degraded_naming_the_db() -> None:
    pending = pod("s-db-0", image="mongo:7.0", ready=False)
    pending["status"]["conditions"].append(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Too many pods.",
        }
    )
    status = _status(db_pods=[pending])
    assert _condition(status, "Degraded") == ("True", "PodsUnschedulable")
    degraded = find_condition(status["conditions"], "Degraded") or {}
    assert degraded["message"] == (
        "DB: 1 pod cannot be scheduled, e.g. s-db-0: 0/3 nodes are available: 3 Too many pods."
    )


def test_a_quota_refusing_the_apps_pods_is_degraded() -> None:
    deployment = {
        "kind": "Deployment",
        "metadata": {"name": "s-app"},
        "status": {
            "conditions": [
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "reason": "FailedCreate",
                    "message": 'pods "s-app-x" is forbidden: exceeded quota: q',
                }
            ]
        },
    }
    status = _status(app_pods=[pod("s-app-1", image="shop/app:1")], app_deployment=deployment)
    assert _condition(status, "Degraded") == ("True", "PodsRefused")


def test_claims_report_requested_capacity_and_state() -> None:
    claims = [
        _claim("data-s-db-1", "3Gi", "2Gi", pending=True),
        _claim("data-s-db-0", "3Gi", "3Gi"),
    ]
    status = _status(claims=claims)
    assert status["claims"] == [
        {"name": "data-s-db-0", "requested": "3Gi", "capacity": "3Gi", "state": "Bound"},
        {
            "name": "data-s-db-1",
            "requested": "3Gi",
            "capacity": "2Gi",
            "state": "FileSystemResizePending",
        },
    ]
    assert _condition(status, "Progressing") == ("True", "VolumeResizing")
    progressing = find_condition(status["conditions"], "Progressing") or {}
    assert "data-s-db-1 2Gi→3Gi" in progressing["message"]
    assert _condition(status, "Available") == ("True", "PodsReady")


def test_a_problem_is_degraded_with_its_reason() -> None:
    status = _status(problem=("InvalidSpec", "spec.bookDB.dbSize: no"))
    assert _condition(status, "Degraded") == ("True", "InvalidSpec")


def test_a_smaller_db_size_than_a_claim_is_an_invalid_spec_naming_the_claim() -> None:
    cr = bookstore("s", bookDB={"dbSize": "1Gi"})
    problem = spec_problem(cr, [_claim("data-s-db-0", "2Gi", "2Gi")])
    assert problem is not None
    assert problem[0] == "InvalidSpec"
    assert "data-s-db-0 (2Gi)" in problem[1] and "cannot shrink" in problem[1]
    assert "2Gi or more" in problem[1]


def test_the_same_size_in_other_units_is_no_shrink() -> None:
    cr = bookstore("s", bookDB={"dbSize": "2048Mi"})
    assert spec_problem(cr, [_claim("data-s-db-0", "2Gi", "2Gi")]) is None


def test_specs_the_api_should_have_refused_are_invalid() -> None:
    for spec, field in (
        ({"bookApp": {"image": "UPPER CASE:bad"}}, "spec.bookApp.image"),
        ({"bookDB": {"image": "UPPER CASE:bad"}}, "spec.bookDB.image"),
        ({"bookApp": {"replicas": -1}}, "spec.bookApp.replicas"),
        ({"bookDB": {"dbSize": "lots"}}, "spec.bookDB.dbSize"),
        ({"bookDB": {"dbSize": "0"}}, "spec.bookDB.dbSize"),
    ):
        problem = spec_problem(bookstore("s", **spec), [])
        assert problem is not None and problem[1].startswith(field), spec


STS_REFUSED = (
    'create Pod s-db-1 in StatefulSet s-db failed error: pods "s-db-1" is forbidden: '
    "exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3"
)


def _db_statefulset(replicas: int = 2, created: int = 1) -> dict[str, Any]:
    """The DB's StatefulSet as its controller reports it: `created` of `replicas` pods."""
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "s-db", "namespace": "shop", "uid": "sts-uid"},
        "spec": {"replicas": replicas},
        "status": {"replicas": created},
    }


def _failed_create(at: str, message: str = STS_REFUSED) -> dict[str, Any]:
    """The FailedCreate Event the StatefulSet controller posts, as on v1.28."""
    return {
        "kind": "Event",
        "type": "Warning",
        "reason": "FailedCreate",
        "message": message,
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "s-db",
            "uid": "sts-uid",
        },
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 3,
    }


def _db_pod(created: str) -> dict[str, Any]:
    db = pod("s-db-0", image="mongo:7.0")
    db["metadata"]["creationTimestamp"] = created
    return db


def test_a_quota_refusing_the_dbs_pods_is_degraded_saying_what_to_do() -> None:
    """A StatefulSet has no ReplicaFailure: its controller's FailedCreate Event tells."""
    status = _status(
        db_pods=[_db_pod("2026-11-29T11:59:00Z")],
        db_statefulset=_db_statefulset(),
        db_events=[_failed_create("2026-11-29T11:59:30Z")],
        now="2026-11-29T12:00:00Z",
    )
    assert _condition(status, "Degraded") == ("True", "PodsRefused")
    degraded = find_condition(status["conditions"], "Degraded") or {}
    assert degraded["message"] == (
        f"DB: StatefulSet s-db cannot create its pods (FailedCreate): {STS_REFUSED}. "
        "Raise ResourceQuota q (kubectl -n shop describe resourcequota q) or lower the CR's "
        "spec.bookDB.replicas; the pods already there count against it."
    )


def test_a_db_refusal_is_over_once_a_pod_is_created_after_it_or_the_set_is_full() -> None:
    """The quota raised: the create that got through made a pod newer than the Event."""
    refused = [_failed_create("2026-11-29T11:59:30Z")]
    since = _status(
        db_pods=[_db_pod("2026-11-29T11:59:40Z")],
        db_statefulset=_db_statefulset(),
        db_events=refused,
        now="2026-11-29T12:00:00Z",
    )
    assert _condition(since, "Degraded") == ("False", "AsExpected")
    full = _status(
        db_pods=[_db_pod("2026-11-29T11:59:00Z")],
        db_statefulset=_db_statefulset(replicas=1, created=1),
        db_events=refused,
        now="2026-11-29T12:00:00Z",
    )
    assert _condition(full, "Degraded") == ("False", "AsExpected")


def test_an_old_db_refusal_is_not_taken_as_the_reason_now() -> None:
    status = _status(
        db_pods=[_db_pod("2026-11-29T10:00:00Z")],
        db_statefulset=_db_statefulset(),
        db_events=[_failed_create("2026-11-29T11:00:00Z")],
        now="2026-11-29T12:00:00Z",
    )
    assert _condition(status, "Degraded") == ("False", "AsExpected")
