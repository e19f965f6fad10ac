"""A CR's cpu and memory reach its pods' template, as the server prints them, and leave it.

Reconciled by hand against the cluster (kubesim, or a real one through
OPSBOARD_TEST_KUBECONFIG): what matters is what the API server stores and returns, and
that a quantity written otherwise than it prints costs no write on the next run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from controllers import bookstore, memcached, webserver
from controllers.base import DEPLOYMENT, STATEFULSET, Body, Controller, Kind, PermanentError
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from tests.controllers.cluster import CountingKube, by_hand


@dataclass(frozen=True)
class Case:
    controller: Controller
    workload: Kind
    suffix: str  # the workload's name is the CR's and this
    path: str  # the CR's resources field, under spec

    @property
    def kind(self) -> Kind:
        return self.controller.primary

    def spec(self, resources: Any) -> Body:
        spec: Body = {"resources": resources}
        for part in reversed(self.path.split(".")[:-1]):
            spec = {part: spec}
        return spec


CASES = [
    Case(memcached.CONTROLLER, DEPLOYMENT, "", "resources"),
    Case(webserver.CONTROLLER, DEPLOYMENT, "", "resources"),
    Case(bookstore.CONTROLLER, DEPLOYMENT, "-app", "bookApp.resources"),
    Case(bookstore.CONTROLLER, STATEFULSET, "-db", "bookDB.resources"),
]
WRITTEN = {"limits": {"cpu": 1, "memory": "1024Mi"}, "requests": {"cpu": "0.5", "memory": "0.5Gi"}}
PRINTED = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "512Mi"}}


def _reconcile(
    case: Case, kube: ApiKube, namespace: str, writes: CountingKube | None = None
) -> None:
    case.controller.reconcile(by_hand(case.controller.name, namespace, "res", kube, writes=writes))


def _create_and_reconcile(case: Case, kube: ApiKube, namespace: str, resources: Body) -> None:
    body = {
        "apiVersion": case.kind.api_version,
        "kind": case.kind.kind,
        "metadata": {"name": "res", "namespace": namespace},
        "spec": case.spec(resources),
    }
    kube.create(case.kind, body)
    _reconcile(case, kube, namespace)


def _resources(case: Case, kube: ApiKube, namespace: str) -> Body:
    workload = kube.get(case.workload, namespace, f"res{case.suffix}")
    assert workload is not None
    [container] = deep_get(workload, "spec.template.spec.containers")
    return dict(container.get("resources") or {})


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.controller.name}-{c.workload.kind}")
def test_the_crs_resources_reach_the_template_and_a_removed_limit_leaves_it(
    kube: ApiKube, namespace: str, case: Case
) -> None:
    _create_and_reconcile(case, kube, namespace, WRITTEN)
    assert _resources(case, kube, namespace) == PRINTED

    # Written "1024Mi" and "0.5", printed "1Gi" and "500m": the same, so nothing to write.
    counting = CountingKube(kube)
    _reconcile(case, kube, namespace, counting)
    assert [w for w in counting.writes if w[1] == case.workload.kind] == []

    kube.patch(case.kind, namespace, "res", {"spec": case.spec({"limits": {"memory": None}})})
    _reconcile(case, kube, namespace)
    assert _resources(case, kube, namespace) == {
        "limits": {"cpu": "1"},
        "requests": PRINTED["requests"],
    }

    kube.patch(case.kind, namespace, "res", {"spec": case.spec(None)})
    _reconcile(case, kube, namespace)
    assert _resources(case, kube, namespace) == {}


@pytest.mark.parametrize("case", CASES[:1] + CASES[3:], ids=lambda c: c.controller.name)
def test_a_request_above_its_limit_is_an_invalid_spec_and_changes_nothing(
    kube: ApiKube, namespace: str, case: Case
) -> None:
    _create_and_reconcile(case, kube, namespace, {"limits": {"memory": "1Gi"}})
    kube.patch(case.kind, namespace, "res", {"spec": case.spec({"requests": {"memory": "2Gi"}})})
    with pytest.raises(PermanentError, match="must be less than or equal to memory limit"):
        _reconcile(case, kube, namespace)  # for the person to fix: no retry
    cr = kube.get(case.kind, namespace, "res")
    degraded = condition_of(cr, "Degraded")
    assert (degraded.get("status"), degraded.get("reason")) == ("True", "InvalidSpec")
    assert degraded["message"] == (
        f"spec.{case.path}.requests.memory: Invalid value: '2Gi': must be less than or equal "
        "to memory limit of 1Gi"
    )
    assert _resources(case, kube, namespace) == {"limits": {"memory": "1Gi"}}
