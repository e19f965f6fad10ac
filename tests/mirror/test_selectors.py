from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from controllers.base import DEPLOYMENT, NODE, POD, REPLICASET, SERVICE
from opsboard.mirror.models import STALE, KubeObject, WatcherHeartbeat
from opsboard.mirror.selectors import (
    cr_health_counts,
    cr_list,
    mirror_freshness,
    nodes,
    owner_tree,
    service_pods,
)
from opsboard.mirror.writer import kind_watches_save, mirror_apply
from tests.mirror.factories import MEMCACHED, condition, obj

pytestmark = pytest.mark.django_db


def add(*bodies: dict) -> None:
    for body in bodies:
        kind = next(
            k
            for k in (MEMCACHED, DEPLOYMENT, REPLICASET, POD, SERVICE, NODE)
            if k.kind == body["kind"]
        )
        mirror_apply(kind=kind, events=[("ADDED", body)])


def test_cr_list_filters_by_namespace_health_and_name() -> None:
    available = {"conditions": [condition("Available", "True")]}
    add(
        obj(MEMCACHED, "alpha", namespace="a", status=available),
        obj(MEMCACHED, "beta", namespace="a"),
        obj(MEMCACHED, "alpine", namespace="b", status=available),
    )
    assert [o.name for o in cr_list(kind=MEMCACHED, namespace="a")] == ["alpha", "beta"]
    assert [o.name for o in cr_list(kind=MEMCACHED, health="Available")] == ["alpha", "alpine"]
    assert [o.name for o in cr_list(kind=MEMCACHED, search="alp")] == ["alpha", "alpine"]


def test_cr_list_searches_labels_with_key_value_terms() -> None:
    add(obj(MEMCACHED, "x", labels={"app.kubernetes.io/tier": "cache"}), obj(MEMCACHED, "y"))
    page = cr_list(kind=MEMCACHED, search="app.kubernetes.io/tier=cache")
    assert [o.name for o in page] == ["x"]


def test_cr_list_finds_stale_objects() -> None:
    add(obj(MEMCACHED, "fresh", generation=2, status={"observedGeneration": 2}))
    add(obj(MEMCACHED, "stale", generation=3, status={"observedGeneration": 2}))
    assert [o.name for o in cr_list(kind=MEMCACHED, stale=True)] == ["stale"]


def test_an_object_being_deleted_is_not_stale_though_its_generation_moved_on() -> None:
    status = {"observedGeneration": 1, "conditions": [condition("Available", "True")]}
    going = obj(MEMCACHED, "going", generation=2, status=status)
    going["metadata"].update(deletionTimestamp="2026-11-22T18:00:00Z", finalizers=["x.io/hold"])
    add(going, obj(MEMCACHED, "behind", generation=2, status=status))
    rows = {row.name: row for row in KubeObject.objects.all()}
    assert (rows["going"].is_stale, rows["going"].health) == (False, "Available")
    assert (rows["behind"].is_stale, rows["behind"].health) == (True, "Progressing")
    assert list(KubeObject.objects.filter(STALE).values_list("name", flat=True)) == ["behind"]


def test_cr_list_paginates() -> None:
    add(*(obj(MEMCACHED, f"m{i:02}") for i in range(25)))
    page = cr_list(kind=MEMCACHED, page=3, per_page=10)
    assert [o.name for o in page] == [f"m{i}" for i in range(20, 25)]
    assert page.paginator.count == 25


def test_cr_health_counts() -> None:
    add(
        obj(MEMCACHED, "a", status={"conditions": [condition("Degraded", "True")]}),
        obj(MEMCACHED, "b"),
        obj(MEMCACHED, "c", generation=2, status={"observedGeneration": 1}),
    )
    counts = cr_health_counts(kind=MEMCACHED)
    assert counts["Degraded"] == 1 and counts["Unknown"] == 2
    assert counts["stale"] == 1 and counts["total"] == 3


def test_owner_tree_walks_cr_deployment_replicasets_pods_in_one_query_per_level() -> None:
    cr = obj(MEMCACHED, "m")
    deployment = obj(DEPLOYMENT, "m", owner=cr)
    rs = obj(REPLICASET, "m-abc", owner=deployment)
    pods = [obj(POD, f"m-abc-{i}", owner=rs) for i in range(3)]
    add(cr, deployment, rs, *pods, obj(POD, "unrelated"))
    root = KubeObject.objects.get(uid=cr["metadata"]["uid"])
    with CaptureQueriesContext(connection) as queries:
        tree = owner_tree(root=root)
    assert [o.name for o in tree.walk()] == ["m", "m", "m-abc", "m-abc-0", "m-abc-1", "m-abc-2"]
    assert len(queries) <= 4


def test_owner_tree_objects_hold_what_a_full_read_holds_without_more_queries() -> None:
    cr = obj(MEMCACHED, "m")
    deployment = obj(DEPLOYMENT, "m", owner=cr, labels={"app": "m"}, spec={"replicas": 1})
    pod = obj(POD, "m-1", owner=deployment, labels={"app": "m"}, status={"phase": "Running"})
    add(cr, deployment, pod)
    tree = owner_tree(root=KubeObject.objects.get(uid=cr["metadata"]["uid"]))
    columns = [f.attname for f in KubeObject._meta.concrete_fields]
    with CaptureQueriesContext(connection) as queries:
        read = [{c: getattr(o, c) for c in columns} for o in tree.walk()[1:]]
    full = KubeObject.objects.filter(owner_uid__in=[o.uid for o in tree.walk()[:2]])
    assert read == [{c: getattr(o, c) for c in columns} for o in full.order_by("id")]
    assert read[1]["status"] == {"phase": "Running"} and read[1]["labels"] == {"app": "m"}
    assert len(queries) == 0


def test_service_pods_are_the_pods_its_selector_picks() -> None:
    service = obj(SERVICE, "web-service", spec={"selector": {"app": "web"}})
    add(
        service,
        obj(POD, "web-1", labels={"app": "web", "pod-template-hash": "x"}),
        obj(POD, "other", labels={"app": "db"}),
        obj(POD, "elsewhere", namespace="other", labels={"app": "web"}),
    )
    row = KubeObject.objects.get(uid=service["metadata"]["uid"])
    assert [p.name for p in service_pods(service=row)] == ["web-1"]


def test_mirror_freshness_reports_the_leader_and_last_event() -> None:
    now = timezone.now()
    WatcherHeartbeat.objects.create(identity="w1", is_leader=True, started_at=now, heartbeat_at=now)
    WatcherHeartbeat.objects.create(
        identity="old", is_leader=False, started_at=now, heartbeat_at=now - timedelta(hours=1)
    )
    kind_watches_save({MEMCACHED: ("42", False, True)})
    freshness = mirror_freshness()
    assert freshness.watcher_up and freshness.leader == "w1" and freshness.standbys == 0
    assert freshness.kinds == {"Memcached": "42"} and freshness.last_event_at is not None


def test_mirror_freshness_without_watcher_is_down() -> None:
    assert not mirror_freshness().watcher_up


def test_nodes_are_none_until_the_watcher_has_listed_them_then_by_name() -> None:
    add(obj(NODE, "b", namespace=""), obj(NODE, "a", namespace=""), obj(POD, "p"))
    assert nodes() is None  # never listed: perhaps not allowed to (the Diagnosis says NODE)
    kind_watches_save({NODE: ("7", False, True)})
    assert nodes() is None  # a resume point alone is not a list
    kind_watches_save({NODE: ("8", True, False)})
    assert [n["metadata"]["name"] for n in nodes() or []] == ["a", "b"]
