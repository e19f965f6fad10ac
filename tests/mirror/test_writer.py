from __future__ import annotations

from typing import Any

import pytest

from controllers.base import DEPLOYMENT, NODE
from opsboard.mirror import writer
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import KindEvents, mirror_apply, mirror_apply_kinds, mirror_relist
from tests.mirror.factories import MEMCACHED, condition, obj

pytestmark = pytest.mark.django_db


def test_added_object_is_mirrored_with_its_owner_and_health() -> None:
    cr = obj(MEMCACHED, "m", status={"conditions": [condition("Available", "True")]})
    deployment = obj(DEPLOYMENT, "m", owner=cr)
    mirror_apply(kind=MEMCACHED, events=[("ADDED", cr)])
    mirror_apply(kind=DEPLOYMENT, events=[("ADDED", deployment)])
    row = KubeObject.objects.get(uid=deployment["metadata"]["uid"])
    assert row.owner_uid == cr["metadata"]["uid"]
    assert KubeObject.objects.get(uid=cr["metadata"]["uid"]).health == "Available"


def test_modified_event_reports_the_previous_state() -> None:
    cr = obj(MEMCACHED, "m", generation=1)
    mirror_apply(kind=MEMCACHED, events=[("ADDED", cr)])
    newer = {**cr, "metadata": {**cr["metadata"], "generation": 2, "resourceVersion": "999"}}
    [change] = mirror_apply(kind=MEMCACHED, events=[("MODIFIED", newer)])
    assert change.previous is not None and change.previous.generation == 1
    assert KubeObject.objects.get(uid=cr["metadata"]["uid"]).generation == 2


def test_deleted_event_removes_the_row() -> None:
    cr = obj(MEMCACHED, "m")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", cr), ("DELETED", cr)])
    assert not KubeObject.objects.exists()


def test_recreated_name_replaces_the_old_uid() -> None:
    old, new = obj(MEMCACHED, "m"), obj(MEMCACHED, "m")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", old)])
    mirror_apply(kind=MEMCACHED, events=[("ADDED", new)])
    assert list(KubeObject.objects.values_list("uid", flat=True)) == [new["metadata"]["uid"]]


def test_recreated_name_seen_first_as_modified_still_replaces_the_old_uid() -> None:
    # A watch resumed past the new object's ADDED: it is new to the mirror all the same.
    old, new = obj(MEMCACHED, "m"), obj(MEMCACHED, "m")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", old)])
    mirror_apply(kind=MEMCACHED, events=[("MODIFIED", new)])
    assert list(KubeObject.objects.values_list("uid", flat=True)) == [new["metadata"]["uid"]]


def test_a_late_write_of_an_older_incarnation_leaves_the_newer_one() -> None:
    # A deposed leader still flushing a change of the object its successor has since seen
    # deleted and re-created under the same name: the newer one stays.
    old, new = obj(MEMCACHED, "m"), obj(MEMCACHED, "m")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", new)])
    mirror_apply(kind=MEMCACHED, events=[("MODIFIED", old)])
    assert list(KubeObject.objects.values_list("uid", flat=True)) == [new["metadata"]["uid"]]


def test_a_relisted_object_replaces_its_name_s_row_even_at_a_lower_version() -> None:
    # A server restored from a backup counts its versions again from below the mirror's.
    old, new = obj(MEMCACHED, "m"), obj(MEMCACHED, "m")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", old)])
    restored = {**new, "metadata": {**new["metadata"], "resourceVersion": "1"}}
    mirror_relist(kind=MEMCACHED, items=[restored])
    assert list(KubeObject.objects.values_list("uid", flat=True)) == [new["metadata"]["uid"]]


def test_the_same_name_in_another_kind_or_namespace_is_not_replaced() -> None:
    cr, deployment = obj(MEMCACHED, "m"), obj(DEPLOYMENT, "m")
    elsewhere = obj(MEMCACHED, "m")
    elsewhere["metadata"]["namespace"] = "other"
    mirror_apply(kind=MEMCACHED, events=[("ADDED", cr)])
    mirror_apply(kind=DEPLOYMENT, events=[("ADDED", deployment)])
    mirror_apply(kind=MEMCACHED, events=[("ADDED", elsewhere)])
    uids = {o["metadata"]["uid"] for o in (cr, deployment, elsewhere)}
    assert set(KubeObject.objects.values_list("uid", flat=True)) == uids


def test_relist_reports_only_what_changed_including_deletions() -> None:
    kept, changed, gone = obj(MEMCACHED, "a"), obj(MEMCACHED, "b"), obj(MEMCACHED, "c")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", o) for o in (kept, changed, gone)])
    changed2 = {**changed, "metadata": {**changed["metadata"], "resourceVersion": "5000"}}
    fresh = obj(MEMCACHED, "d")
    changes = mirror_relist(kind=MEMCACHED, items=[kept, changed2, fresh])
    summary = sorted((c.type, c.body["metadata"]["name"]) for c in changes)
    assert summary == [("ADDED", "d"), ("DELETED", "c"), ("MODIFIED", "b")]
    assert sorted(KubeObject.objects.values_list("name", flat=True)) == ["a", "b", "d"]


def test_list_items_without_kind_are_mirrored_under_the_listed_kind() -> None:
    item = obj(MEMCACHED, "m")
    del item["kind"], item["apiVersion"]
    mirror_relist(kind=MEMCACHED, items=[item])
    assert KubeObject.objects.get().kind == "Memcached"


def test_a_replayed_older_event_neither_regresses_the_mirror_nor_counts_as_a_change() -> None:
    cr = obj(MEMCACHED, "m", generation=1)
    newer = {**cr, "metadata": {**cr["metadata"], "generation": 2, "resourceVersion": "90000"}}
    mirror_apply(kind=MEMCACHED, events=[("ADDED", cr), ("MODIFIED", newer)])
    assert mirror_apply(kind=MEMCACHED, events=[("MODIFIED", cr), ("MODIFIED", newer)]) == []
    assert KubeObject.objects.get().generation == 2


def test_managed_fields_and_the_last_applied_copy_are_not_mirrored() -> None:
    cr = obj(MEMCACHED, "m", spec={"size": 3})
    cr["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    cr["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"spec":{"size":3}}',
        "team": "cache",
    }
    [change] = mirror_apply(kind=MEMCACHED, events=[("ADDED", cr)])
    row = KubeObject.objects.get(uid=cr["metadata"]["uid"])
    assert "managedFields" not in row.body["metadata"]
    assert row.annotations == {"team": "cache"} == row.body["metadata"]["annotations"]
    assert row.body["spec"] == {"size": 3} and change.body["metadata"]["name"] == "m"
    assert "managedFields" in cr["metadata"]  # the caller's object is left as it was


def test_a_node_is_mirrored_without_its_images_its_health_its_ready_condition() -> None:
    images = [{"names": [f"registry.example/app:{n}"], "sizeBytes": 10**8} for n in range(50)]
    status = {"conditions": [condition("Ready", "True")], "images": images,
              "allocatable": {"cpu": "4"}}  # fmt: skip
    node = obj(NODE, "rig-node-1", namespace="", status=status)
    mirror_apply(kind=NODE, events=[("ADDED", node)])
    row = KubeObject.objects.get(kind="Node")
    assert (row.namespace, row.health) == ("", "Available")
    assert "images" not in row.body["status"] and row.status["allocatable"] == {"cpu": "4"}
    assert len(node["status"]["images"]) == 50  # the caller's object is left as it was
    lost = {**node, "status": {"conditions": [condition("Ready", "Unknown")]}}
    mirror_apply(kind=NODE, events=[("MODIFIED", _at(lost, 10**9))])
    assert KubeObject.objects.get(kind="Node").health == "Degraded"


def _at(body: dict[str, Any], version: int) -> dict[str, Any]:
    return {**body, "metadata": {**body["metadata"], "resourceVersion": str(version)}}


def test_a_replay_newer_than_what_was_queued_comes_back_as_news_without_a_write() -> None:
    # A watcher killed after mirroring these and before queueing their keys: its successor
    # knows keys are queued only through version 100.
    old, fresh = _at(obj(MEMCACHED, "old"), 90), _at(obj(MEMCACHED, "fresh"), 110)
    mirror_apply(kind=MEMCACHED, events=[("ADDED", old), ("ADDED", fresh)])
    mirrored_at = KubeObject.objects.get(name="fresh").mirrored_at
    replayed = mirror_apply(
        kind=MEMCACHED, events=[("MODIFIED", old), ("MODIFIED", fresh)], queued_through=100
    )
    assert [(c.body["metadata"]["name"], c.previous) for c in replayed] == [("fresh", None)]
    assert KubeObject.objects.get(name="fresh").mirrored_at == mirrored_at


def test_a_relist_after_a_lost_queue_reports_the_unqueued_objects_only() -> None:
    old, fresh = _at(obj(MEMCACHED, "old"), 90), _at(obj(MEMCACHED, "fresh"), 110)
    mirror_apply(kind=MEMCACHED, events=[("ADDED", old), ("ADDED", fresh)])
    assert mirror_relist(kind=MEMCACHED, items=[old, fresh]) == []
    [change] = mirror_relist(kind=MEMCACHED, items=[old, fresh], queued_through=100)
    assert (change.body["metadata"]["name"], change.previous) == ("fresh", None)


def test_several_kinds_are_mirrored_together_their_changes_kind_by_kind() -> None:
    crs = [obj(MEMCACHED, f"m{i:03}") for i in range(300)]
    deployments = [obj(DEPLOYMENT, f"m{i:03}", owner=cr) for i, cr in enumerate(crs)]
    changes = mirror_apply_kinds(
        [
            KindEvents(MEMCACHED, [("ADDED", cr) for cr in crs]),
            KindEvents(DEPLOYMENT, [("ADDED", d) for d in deployments]),
        ]
    )  # 600 events: two chunks, the second holding both kinds
    assert [(c.kind, c.body["metadata"]["uid"]) for c in changes] == [
        *((MEMCACHED, cr["metadata"]["uid"]) for cr in crs),
        *((DEPLOYMENT, d["metadata"]["uid"]) for d in deployments),
    ]
    assert KubeObject.objects.filter(kind="Deployment").count() == 300
    rows = dict(KubeObject.objects.filter(kind="Deployment").values_list("name", "owner_uid"))
    assert rows == {cr["metadata"]["name"]: cr["metadata"]["uid"] for cr in crs}
    modified = {**crs[0], "metadata": {**crs[0]["metadata"], "resourceVersion": "99999"}}
    [change] = mirror_apply_kinds(
        [KindEvents(MEMCACHED, [("MODIFIED", modified)]), KindEvents(DEPLOYMENT, [])]
    )
    assert change.previous is not None and change.previous.uid == crs[0]["metadata"]["uid"]


def test_a_name_recreated_in_one_kind_leaves_that_name_of_another_kind_alone() -> None:
    cr, old = obj(MEMCACHED, "m"), obj(DEPLOYMENT, "m")
    mirror_apply_kinds(
        [KindEvents(MEMCACHED, [("ADDED", cr)]), KindEvents(DEPLOYMENT, [("ADDED", old)])]
    )
    new = obj(DEPLOYMENT, "m")
    mirror_apply_kinds([KindEvents(MEMCACHED, []), KindEvents(DEPLOYMENT, [("ADDED", new)])])
    uids = set(KubeObject.objects.values_list("uid", flat=True))
    assert uids == {cr["metadata"]["uid"], new["metadata"]["uid"]}


def test_batches_of_every_size_write_statements_of_a_few_shapes_only() -> None:
    """SQLite keeps each distinct statement prepared, about 1 MB for a 500-row upsert: a
    shape per batch size grew the watcher's memory by tens of MB."""
    writer._upsert_sql.cache_clear()
    for size in range(1, 131):
        batch = [("ADDED", obj(MEMCACHED, f"shape-{size}-{n}")) for n in range(size)]
        deleted = [("DELETED", body) for _, body in batch[: size // 2]]
        mirror_apply(kind=MEMCACHED, events=[*batch, *deleted])
        remaining = {
            row.name for row in KubeObject.objects.filter(name__startswith=f"shape-{size}-")
        }
        assert remaining == {body["metadata"]["name"] for _, body in batch[size // 2 :]}
    assert writer._upsert_sql.cache_info().currsize <= 7  # 64, 32, 16, 8, 4, 2, 1 rows
    assert writer._pieces(500) == [64] * 7 + [32, 16, 4]
