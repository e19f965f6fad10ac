"""reconcile() driven by hand against a live API server: what it writes, and when it does not.

The engine-driven scenarios (test_*_scenarios.py) prove the operators end to end; these
pin down the reconcile contract itself: create, correct drift without clobbering, write
nothing once converged, report a missing image once and stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from controllers.apply import begin_status, ensure_child, ensure_child_and_finish, now
from controllers.base import DEPLOYMENT, POD, SERVICE, STATEFULSET, Context, Key, Kind, Result
from controllers.bookstore.desired import BOOKSTORE, desired_db_statefulset
from controllers.conditions import condition_of
from controllers.kube import ApiKube, Conflict, NotFound
from controllers.memcached import CONTROLLER as MEMCACHED_CONTROLLER
from controllers.memcached.desired import MEMCACHED, desired_deployment
from controllers.problems import RECONCILE_FAILED
from controllers.webserver import CONTROLLER as WEBSERVER_CONTROLLER
from controllers.webserver.desired import WEBSERVER
from tests.controllers.cluster import (
    CountingKube,
    ReadThroughCache,
    RecordingReporter,
    list_objects,
)
from tests.support.waiting import wait_for


class Driver:
    """Runs one controller's reconcile for one key, recording writes and reports."""

    def __init__(self, kube: ApiKube, controller: Any, namespace: str, name: str) -> None:
        self.kube, self.controller = kube, controller
        self.key = Key(controller.name, namespace, name)
        self.counting = CountingKube(kube)
        self.reporter = RecordingReporter()
        self.result: Result | None = None

    def run(self) -> list[tuple[str, str, str]]:
        """One reconcile, retried from fresh state on a 409 as the engine does; its writes."""
        for _ in range(10):
            self.counting.writes.clear()
            ctx = Context(self.key, ReadThroughCache(self.kube), self.counting, self.reporter)
            try:
                self.result = self.controller.reconcile(ctx)
            except Conflict:  # the cluster's Deployment controller wrote its status meanwhile
                continue
            return list(self.counting.writes)
        raise AssertionError(f"{self.key}: a conflict on every one of 10 attempts")

    def converge(self, *, timeout: float = 30.0) -> None:
        """Reconcile until a pass finds the CR Available and writes nothing."""
        wait_for(
            lambda: not self.run() and self.condition("Available") == "True",
            timeout=timeout,
            what=f"{self.key} to converge",
        )

    def until(self, check: Any, *, what: str, timeout: float = 30.0) -> None:
        """Reconcile until `check()` holds after a pass."""
        wait_for(lambda: self.run() is not None and check(), timeout=timeout, what=what)

    def cr(self) -> dict[str, Any]:
        cr = self.kube.get(self.controller.primary, self.key.namespace, self.key.name)
        assert cr is not None
        return cr

    def condition(self, type_: str, field: str = "status") -> Any:
        condition = condition_of(self.cr(), type_)
        return condition.get(field)


def _rolled_out(deployment: dict[str, Any] | None) -> bool:
    """The deployment controller has nothing left to write: its status tells the last
    generation, every replica updated and available, and the rollout complete."""
    if deployment is None:
        return False
    status, replicas = deployment.get("status") or {}, deployment["spec"].get("replicas", 1)
    progressing = condition_of(deployment, "Progressing")
    return (
        status.get("observedGeneration") == deployment["metadata"].get("generation")
        and status.get("updatedReplicas") == status.get("availableReplicas") == replicas
        and progressing.get("reason") == "NewReplicaSetAvailable"
    )


def _memcached(kube: ApiKube, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": MEMCACHED.api_version,
        "kind": MEMCACHED.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return kube.create(MEMCACHED, body)


def test_first_reconcile_creates_the_deployment_and_reports_it(
    kube: ApiKube, namespace: str
) -> None:
    cr = _memcached(kube, namespace, "m", size=2)
    driver = Driver(kube, MEMCACHED_CONTROLLER, namespace, "m")
    writes = driver.run()
    assert ("create", "Deployment", "m") in writes
    assert ("patch_status", "Memcached", "m") in writes
    assert "Created Deployment m" in driver.reporter.actions
    deployment = kube.get(DEPLOYMENT, namespace, "m")
    assert deployment is not None
    assert deployment["spec"]["replicas"] == 2
    [owner] = deployment["metadata"]["ownerReferences"]
    assert (owner["uid"], owner["controller"]) == (cr["metadata"]["uid"], True)
    # Pods still starting, but no timer: each of their changes wakes the CR.
    assert driver.result == Result.done()


def _context(kube: ApiKube, namespace: str, name: str) -> tuple[Context, RecordingReporter]:
    """What the engine hands a Memcached reconcile, for calling its write steps by hand."""
    reporter = RecordingReporter()
    return Context(
        Key("memcached", namespace, name), ReadThroughCache(kube), kube, reporter
    ), reporter


def test_a_child_patch_from_a_stale_read_is_redone_from_the_servers_copy(
    kube: ApiKube, namespace: str
) -> None:
    _memcached(kube, namespace, "m", size=2)
    Driver(kube, MEMCACHED_CONTROLLER, namespace, "m").run()
    stale = kube.get(DEPLOYMENT, namespace, "m")
    assert stale is not None
    # Someone writes the Deployment after our read (as its controller does with its status).
    kube.patch(DEPLOYMENT, namespace, "m", {"metadata": {"annotations": {"note": "later"}}})
    ctx, reporter = _context(kube, namespace, "m")
    cr = kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 4}})
    updated = ensure_child(ctx, DEPLOYMENT, desired_deployment(cr), stale)
    assert updated["spec"]["replicas"] == 4
    assert updated["metadata"]["annotations"]["note"] == "later"  # nothing clobbered
    assert reporter.actions == ["Scaled Deployment m replicas 2→4"]


def test_the_status_goes_beside_the_childs_patch_and_a_refused_patch_is_the_runs_error(
    kube: ApiKube, namespace: str
) -> None:
    """ensure_child_and_finish writes the status told from the child as it stood and
    patches the child, reported in that order; a patch the server refuses is the run's
    error, the status written beside it; while the CR says its last run failed, the status
    waits for the child's answer, so a patch refused again writes none."""
    _memcached(kube, namespace, "m", size=2)
    Driver(kube, MEMCACHED_CONTROLLER, namespace, "m").run()
    before = kube.get(DEPLOYMENT, namespace, "m")
    assert before is not None
    ctx, reporter = _context(kube, namespace, "m")

    def run(cr: dict[str, Any], have: dict[str, Any]) -> Result:
        def tell(child: dict[str, Any]) -> tuple[dict[str, Any], None]:
            seen = {"observedGeneration": cr["metadata"]["generation"], "conditions": []}
            return {**seen, "readyReplicas": child["spec"]["replicas"]}, None

        return ensure_child_and_finish(
            ctx, MEMCACHED, cr, DEPLOYMENT, desired_deployment(cr), have, tell
        )

    def status() -> dict[str, Any]:
        return (kube.get(MEMCACHED, namespace, "m") or {})["status"]

    cr = kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 3}})
    run(cr, before)
    assert (kube.get(DEPLOYMENT, namespace, "m") or {})["spec"]["replicas"] == 3
    assert status()["observedGeneration"] == cr["metadata"]["generation"]
    assert status()["readyReplicas"] == 2  # told from the child as it stood
    assert reporter.actions[0] == "Scaled Deployment m replicas 2→3"
    assert len(reporter.actions) > 1  # then the status's change

    kube.delete(DEPLOYMENT, namespace, "m")  # the child's patch now meets a 404
    wait_for(lambda: kube.get(DEPLOYMENT, namespace, "m") is None, what="the Deployment gone")
    cr = kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 4}})
    with pytest.raises(NotFound):
        run(cr, before)
    assert status()["observedGeneration"] == cr["metadata"]["generation"]

    failed = {"type": "Degraded", "status": "True", "reason": RECONCILE_FAILED, "message": "x",
              "lastTransitionTime": now()}  # fmt: skip
    kube.patch_status(MEMCACHED, namespace, "m", {"conditions": [failed]})
    cr = kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 5}})
    with pytest.raises(NotFound):
        run(cr, before)
    assert status()["observedGeneration"] == cr["metadata"]["generation"] - 1


def test_a_create_racing_the_mirror_goes_on_from_the_childs_server_copy(
    kube: ApiKube, namespace: str
) -> None:
    """The key ran again before the mirror showed the child its last run created: the
    create's 409 is that child, as wanted, so the run goes on with it (no error, no retry)."""
    cr = _memcached(kube, namespace, "m", size=2)
    created = kube.create(DEPLOYMENT, desired_deployment(cr))
    ctx, reporter = _context(kube, namespace, "m")
    counting = CountingKube(kube)
    ctx = Context(ctx.key, ctx.cache, counting, reporter)
    found = ensure_child(ctx, DEPLOYMENT, desired_deployment(cr), None)
    assert found["metadata"]["uid"] == created["metadata"]["uid"]
    assert counting.writes == [("create", "Deployment", "m")]  # the one that found it
    assert reporter.actions == []  # nothing was done


def test_a_statefulset_created_whole_is_found_as_wanted_after_the_race(
    kube: ApiKube, namespace: str
) -> None:
    """BookStore creates its StatefulSet from the whole manifest (defaults filled in by the
    server, claim templates among them) and patches only its mutable fields later: the
    server's copy must still read as the manifest created (make run's first seconds)."""
    cr = kube.create(
        BOOKSTORE,
        {
            "apiVersion": BOOKSTORE.api_version,
            "kind": BOOKSTORE.kind,
            "metadata": {"name": "b", "namespace": namespace},
            "spec": {"replicas": 1},
        },
    )
    created = kube.create(STATEFULSET, desired_db_statefulset(cr))
    ctx, reporter = _context(kube, namespace, "b")
    found = ensure_child(ctx, STATEFULSET, desired_db_statefulset(cr), None)
    assert found["metadata"]["uid"] == created["metadata"]["uid"]
    assert reporter.actions == []


def test_a_create_that_finds_a_child_to_correct_or_not_ours_is_left_to_the_next_run(
    kube: ApiKube, namespace: str
) -> None:
    cr = _memcached(kube, namespace, "m", size=2)
    kube.create(DEPLOYMENT, desired_deployment(cr))
    ctx, _ = _context(kube, namespace, "m")
    grown = kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 3}})
    with pytest.raises(Conflict):  # the next run, from the mirror, scales it
        ensure_child(ctx, DEPLOYMENT, desired_deployment(grown), None)
    other = _memcached(kube, namespace, "other", size=2)
    with pytest.raises(Conflict):  # "m"'s Deployment, which "other" does not control
        ensure_child(ctx, DEPLOYMENT, _renamed(desired_deployment(other), "m"), None)
    deployment = kube.get(DEPLOYMENT, namespace, "m")
    assert deployment is not None and deployment["spec"]["replicas"] == 2  # untouched


def _renamed(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    return manifest | {"metadata": manifest["metadata"] | {"name": name}}


def test_a_status_computed_from_a_stale_read_is_written_without_a_conflict(
    kube: ApiKube, namespace: str
) -> None:
    _memcached(kube, namespace, "m", size=1)
    Driver(kube, MEMCACHED_CONTROLLER, namespace, "m").run()
    stale = kube.get(MEMCACHED, namespace, "m")
    assert stale is not None
    # The previous run's own status write, not yet in the mirror the next run reads.
    kube.patch_status(MEMCACHED, namespace, "m", {"nodes": ["written-since"]})
    ctx, _ = _context(kube, namespace, "m")
    begin_status(ctx, MEMCACHED, stale, {"nodes": ["a", "b"]})()
    fresh = kube.get(MEMCACHED, namespace, "m")
    assert fresh is not None and fresh["status"]["nodes"] == ["a", "b"]
    assert fresh["status"]["conditions"] == stale["status"]["conditions"]  # a merge: kept
    assert fresh["spec"] == stale["spec"]


def test_a_converged_reconcile_writes_nothing(kube: ApiKube, namespace: str) -> None:
    _memcached(kube, namespace, "m", size=2)
    driver = Driver(kube, MEMCACHED_CONTROLLER, namespace, "m")
    driver.converge()
    # The CR is Available once its pods are ready; a real cluster's deployment controller
    # may still be writing the Deployment's status (availableReplicas, Progressing) then.
    wait_for(
        lambda: _rolled_out(kube.get(DEPLOYMENT, namespace, "m")),
        what="the Deployment's controller to finish its rollout",
    )
    before = (driver.cr(), kube.get(DEPLOYMENT, namespace, "m"))
    assert driver.run() == []
    after = (driver.cr(), kube.get(DEPLOYMENT, namespace, "m"))
    assert [o["metadata"]["resourceVersion"] for o in after] == [
        o["metadata"]["resourceVersion"] for o in before
    ]
    assert driver.result == Result.done()
    assert driver.cr()["status"]["nodes"] == sorted(
        p["metadata"]["name"] for p in list_objects(kube, POD, namespace)
    )


def test_drift_is_corrected_without_clobbering_what_others_own(
    kube: ApiKube, namespace: str
) -> None:
    _memcached(kube, namespace, "m", size=1)
    driver = Driver(kube, MEMCACHED_CONTROLLER, namespace, "m")
    driver.run()
    kube.patch(
        DEPLOYMENT,
        namespace,
        "m",
        {
            "metadata": {"annotations": {"team": "cache"}},
            "spec": {"replicas": 4, "revisionHistoryLimit": 3},
        },
    )
    driver.run()
    assert "Scaled Deployment m replicas 4→1" in driver.reporter.actions
    deployment = kube.get(DEPLOYMENT, namespace, "m")
    assert deployment is not None
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["revisionHistoryLimit"] == 3
    assert deployment["metadata"]["annotations"]["team"] == "cache"


def test_a_missing_image_is_reported_once_as_degraded_and_not_retried(
    kube: ApiKube, namespace: str
) -> None:
    _memcached(kube, namespace, "m", size=1, image="memcached:does-not-exist")
    driver = Driver(kube, MEMCACHED_CONTROLLER, namespace, "m")
    driver.until(lambda: driver.condition("Degraded") == "True", what="Degraded=True")
    assert driver.condition("Degraded", "reason") == "ImagePullFailed"
    assert "memcached:does-not-exist" in driver.condition("Degraded", "message")
    assert driver.result == Result.done()
    warnings = [e for e in driver.reporter.events if e[0] == "Warning"]
    assert [reason for _, reason, _ in warnings] == ["ImagePullFailed"]
    driver.run()
    assert len([e for e in driver.reporter.events if e[0] == "Warning"]) == 1


def test_webserver_reconcile_keeps_a_service_with_an_allocated_node_port(
    kube: ApiKube, namespace: str
) -> None:
    body = {
        "apiVersion": WEBSERVER.api_version,
        "kind": WEBSERVER.kind,
        "metadata": {"name": "w", "namespace": namespace},
        "spec": {"replicas": 1},
    }
    kube.create(WEBSERVER, body)
    driver = Driver(kube, WEBSERVER_CONTROLLER, namespace, "w")
    driver.converge()
    service = kube.get(SERVICE, namespace, "w-service")
    assert service is not None and service["spec"]["type"] == "NodePort"
    node_port = service["spec"]["ports"][0]["nodePort"]
    assert driver.cr()["status"]["nodePort"] == node_port
    assert driver.cr()["status"]["serviceName"] == "w-service"
    assert driver.run() == []

    # A scale with the Service as wanted: the status goes first, beside the Deployment's
    # patch (as a Memcached's); with the Service gone, the Deployment first, as before, so
    # a Service the server refuses does not hold up the scale.
    kube.patch(WEBSERVER, namespace, "w", {"spec": {"replicas": 2}})
    assert driver.run() == [("patch_status", "WebServer", "w"), ("patch", "Deployment", "w")]
    assert (kube.get(DEPLOYMENT, namespace, "w") or {})["spec"]["replicas"] == 2
    assert driver.cr()["status"]["observedGeneration"] == driver.cr()["metadata"]["generation"]
    kube.delete(SERVICE, namespace, "w-service")
    wait_for(lambda: kube.get(SERVICE, namespace, "w-service") is None, what="the Service gone")
    kube.patch(WEBSERVER, namespace, "w", {"spec": {"replicas": 3}})
    assert driver.run() == [
        ("patch", "Deployment", "w"),
        ("create", "Service", "w-service"),
        ("patch_status", "WebServer", "w"),
    ]
    assert driver.cr()["status"]["nodePort"] == node_port  # the re-created Service's, the same


@dataclass
class MirrorBehind(ReadThroughCache):
    """A mirror that does not show the objects named in `hidden` yet."""

    hidden: frozenset[tuple[str, str]] = frozenset()

    def get(self, kind: Kind, namespace: str, name: str) -> dict[str, Any] | None:
        return None if (kind.kind, name) in self.hidden else super().get(kind, namespace, name)


def test_a_webserver_run_before_the_mirror_shows_its_service_goes_on_with_it(
    kube: ApiKube, namespace: str
) -> None:
    """The run asks the Service it does not see for the nodePort its status reports: the
    Service's own. kube-apiserver refuses that create with 422 "provided port is already
    allocated" (it allocates before it finds the name taken), not 409: that is the Service
    as wanted, not a port another Service took, so nothing is re-created or reported."""
    body = {
        "apiVersion": WEBSERVER.api_version,
        "kind": WEBSERVER.kind,
        "metadata": {"name": "w", "namespace": namespace},
        "spec": {"replicas": 1},
    }
    kube.create(WEBSERVER, body)
    Driver(kube, WEBSERVER_CONTROLLER, namespace, "w").run()
    created = kube.get(SERVICE, namespace, "w-service")
    assert created is not None
    reporter, counting = RecordingReporter(), CountingKube(kube)
    behind = MirrorBehind(kube, hidden=frozenset({("Service", "w-service")}))
    WEBSERVER_CONTROLLER.reconcile(
        Context(Key("webserver", namespace, "w"), behind, counting, reporter)
    )
    assert [w for w in counting.writes if w[1] == "Service"] == [("create", "Service", "w-service")]
    assert [a for a in reporter.actions if "Service" in a] == []
    assert [e for e in reporter.events if e[1] == "NodePortChanged"] == []
    service = kube.get(SERVICE, namespace, "w-service")
    assert service is not None and service["metadata"]["uid"] == created["metadata"]["uid"]
