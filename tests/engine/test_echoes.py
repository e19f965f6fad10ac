"""A run's own writes to its children wake nobody; anyone else's change of them does."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from controllers.base import Key
from controllers.kube import ApiKube, Conflict
from opsboard.engine.echoes import OwnWrites, echoes_of, record_name, shows_own_write
from opsboard.engine.mapping import keys_for
from opsboard.engine.queue import connection
from opsboard.engine.registered import controllers
from opsboard.engine.runner import reconcile_key
from opsboard.mirror.writer import Change, mirror_apply
from tests.engine.toy import CONFIGMAP, TOY, toy

pytestmark = pytest.mark.django_db(transaction=True)


def _keys(kind: Any, type_: str, body: dict[str, Any]) -> list[Key]:
    changes: list[Change] = mirror_apply(kind=kind, events=[(type_, body)])
    return [key for key, _ in keys_for(changes, list(controllers().values()), echoes=echoes_of)]


def _reconciled(api: ApiKube, namespace: str, name: str) -> dict[str, Any]:
    """Creates a Toy, runs its key here (it creates its ConfigMap); the ConfigMap as the
    server has it now."""
    mirror_apply(kind=TOY, events=[("ADDED", api.create(TOY, toy(name, namespace)))])
    assert reconcile_key(key=Key("toy", namespace, name), trigger="event")
    child = api.get(CONFIGMAP, namespace, name)
    assert child is not None
    return child


def test_the_echo_of_a_child_a_run_created_wakes_nobody(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    child = _reconciled(api, namespace, "quiet")
    assert _keys(CONFIGMAP, "ADDED", child) == []


def test_someone_elses_change_of_that_child_wakes_its_owner(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    child = _reconciled(api, namespace, "touched")
    mirror_apply(kind=CONFIGMAP, events=[("ADDED", child)])
    edited = api.patch(CONFIGMAP, namespace, "touched", {"data": {"size": "7"}})
    assert _keys(CONFIGMAP, "MODIFIED", edited) == [Key("toy", namespace, "touched")]
    api.delete(CONFIGMAP, namespace, "touched")
    assert _keys(CONFIGMAP, "DELETED", edited) == [Key("toy", namespace, "touched")]


def test_a_change_the_watcher_sees_at_another_version_is_no_echo(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    child = _reconciled(api, namespace, "other")
    older = {**child, "metadata": {**child["metadata"], "resourceVersion": "1"}}
    assert echoes_of(mirror_apply(kind=CONFIGMAP, events=[("ADDED", older)])) == [False]
    unknown = {**child, "metadata": {**child["metadata"], "name": "never-written"}}
    assert echoes_of(mirror_apply(kind=CONFIGMAP, events=[("ADDED", unknown)])) == [False]


def test_with_redis_down_every_change_counts_as_news(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    child = _reconciled(api, namespace, "unreachable")
    changes = mirror_apply(kind=CONFIGMAP, events=[("ADDED", child)])
    connection.cache_clear()
    try:
        with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):  # nothing listens there
            assert echoes_of(changes) == [False]
    finally:
        connection.cache_clear()


def test_a_patch_against_own_writes_passes_others_and_stops_at_a_copy_without_its_own(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    """conflict_on="own": another writer since the copy (as a child's controller updating
    its status) does not stop the patch, and what that writer wrote stays; a copy older
    than the operator's own last write of the object does stop it. A plain precondition,
    and a Kube that keeps no record of its writes (ApiKube), stop at any write."""
    copy = _reconciled(api, namespace, "guarded")  # the run's create: its recorded write
    version = copy["metadata"]["resourceVersion"]
    api.patch(CONFIGMAP, namespace, "guarded", {"metadata": {"labels": {"by": "someone"}}})
    kube = OwnWrites(api, TOY)
    change = {"data": {"added": "1"}}
    with pytest.raises(Conflict):
        kube.patch(CONFIGMAP, namespace, "guarded", change, resource_version=version)
    with pytest.raises(Conflict):
        api.patch(CONFIGMAP, namespace, "guarded", change, resource_version=version,
                  conflict_on="own")  # fmt: skip

    patched = kube.patch(
        CONFIGMAP, namespace, "guarded", change, resource_version=version, conflict_on="own"
    )
    assert patched["data"]["added"] == "1"
    assert patched["metadata"]["labels"]["by"] == "someone"
    # `copy` does not show that patch: a run reading it would find its change undone.
    with pytest.raises(Conflict):
        kube.patch(CONFIGMAP, namespace, "guarded", {"data": {"added": "2"}},
                   resource_version=version, conflict_on="own")  # fmt: skip
    server = api.get(CONFIGMAP, namespace, "guarded")
    assert server is not None and server["data"]["added"] == "1"
    assert shows_own_write(CONFIGMAP, namespace, "guarded", patched["metadata"]["resourceVersion"])


def test_without_a_record_or_without_redis_the_precondition_stays(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    """No own write recorded (none for TTL_MS, or Redis restarted since): a lagging mirror
    may still lack it, so the copy is not known to show it; the patch keeps its
    precondition and a copy older than the server's is refused. Redis unreachable: the same."""
    copy = _reconciled(api, namespace, "forgotten")
    version = copy["metadata"]["resourceVersion"]
    connection().delete(record_name(CONFIGMAP, namespace, "forgotten"))
    assert not shows_own_write(CONFIGMAP, namespace, "forgotten", version)
    api.patch(CONFIGMAP, namespace, "forgotten", {"metadata": {"labels": {"by": "someone"}}})
    with pytest.raises(Conflict):
        OwnWrites(api, TOY).patch(CONFIGMAP, namespace, "forgotten", {"data": {"added": "1"}},
                                  resource_version=version, conflict_on="own")  # fmt: skip
    connection.cache_clear()
    try:
        with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):  # nothing listens there
            assert not shows_own_write(CONFIGMAP, namespace, "forgotten", version)
    finally:
        connection.cache_clear()
