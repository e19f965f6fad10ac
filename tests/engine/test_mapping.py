"""Which changes lead to which reconcile keys (predicates and owner mapping)."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from controllers.base import (
    DEPLOYMENT,
    EVENT,
    POD,
    REPLICASET,
    STATEFULSET,
    Controller,
    ExpectedChild,
    Key,
)
from controllers.kube import ApiKube
from opsboard.engine.expected import ExpectedChildren
from opsboard.engine.mapping import OwnerIndex, is_meaningful, keys_for
from opsboard.engine.watcher import Watcher
from opsboard.mirror.writer import mirror_apply
from tests.engine.toy import CONFIGMAP, TOY, expected_children, reconcile
from tests.mirror.factories import obj

pytestmark = pytest.mark.django_db

TOYS = Controller("toy", TOY, (CONFIGMAP, DEPLOYMENT, POD), reconcile, expected_children)


def modified(body: dict, **meta: object) -> dict:
    body = copy.deepcopy(body)
    body["metadata"].update(meta)
    body["metadata"]["resourceVersion"] = str(int(body["metadata"]["resourceVersion"]) + 1000)
    return body


def changes_for(kind, *events):  # type: ignore[no-untyped-def]
    return mirror_apply(kind=kind, events=list(events))


def test_a_new_primary_object_is_reconciled() -> None:
    cr = obj(TOY, "a")
    assert keys_for(changes_for(TOY, ("ADDED", cr)), [TOYS]) == [
        (Key("toy", "default", "a"), "ADDED Toy default/a")
    ]


def test_a_status_write_on_the_primary_is_not_reconciled() -> None:
    cr = obj(TOY, "a")
    changes_for(TOY, ("ADDED", cr))
    status_write = modified(cr)
    status_write["status"] = {"observedGeneration": 1}
    [change] = changes_for(TOY, ("MODIFIED", status_write))
    assert not is_meaningful(change)
    assert keys_for([change], [TOYS]) == []


@pytest.mark.parametrize(
    "meta",
    [
        {"generation": 2},
        {"labels": {"tier": "cache"}},
        {"annotations": {"note": "x"}},
        {"deletionTimestamp": "2026-11-22T18:00:00Z"},
    ],
)
def test_spec_label_annotation_and_deletion_changes_are_reconciled(meta: dict) -> None:
    cr = obj(TOY, "a")
    changes_for(TOY, ("ADDED", cr))
    [change] = changes_for(TOY, ("MODIFIED", modified(cr, **meta)))
    assert is_meaningful(change)


def test_a_deleted_primary_is_reconciled() -> None:
    cr = obj(TOY, "a")
    changes_for(TOY, ("ADDED", cr))
    assert [k for k, _ in keys_for(changes_for(TOY, ("DELETED", cr)), [TOYS])] == [
        Key("toy", "default", "a")
    ]


def test_an_owned_object_maps_to_its_controller_owner() -> None:
    cr = obj(TOY, "a")
    changes_for(TOY, ("ADDED", cr))
    cm = obj(CONFIGMAP, "a", owner=cr)
    keys = keys_for(changes_for(CONFIGMAP, ("MODIFIED", cm)), [TOYS])
    assert keys == [(Key("toy", "default", "a"), "MODIFIED ConfigMap default/a")]


def _replicaset_of_a_toy() -> dict[str, Any]:
    """A ReplicaSet, not mirrored yet, of the Deployment of Toy "a" (both mirrored)."""
    cr = obj(TOY, "a")
    deployment = obj(DEPLOYMENT, "a", owner=cr)
    changes_for(TOY, ("ADDED", cr))
    changes_for(DEPLOYMENT, ("ADDED", deployment))
    return obj(REPLICASET, "a-1", owner=deployment)


def test_a_pod_maps_through_its_replicaset_and_deployment_to_the_cr() -> None:
    rs = _replicaset_of_a_toy()
    changes_for(REPLICASET, ("ADDED", rs))
    pod = obj(POD, "a-1-x", owner=rs)
    assert [k for k, _ in keys_for(changes_for(POD, ("ADDED", pod)), [TOYS])] == [
        Key("toy", "default", "a")
    ]


def test_the_watchers_owner_index_asks_the_mirror_once_and_follows_owner_changes(
    django_assert_num_queries: Any,
) -> None:
    a, b = obj(TOY, "a"), obj(TOY, "b")
    deployment_a, deployment_b = obj(DEPLOYMENT, "a", owner=a), obj(DEPLOYMENT, "b", owner=b)
    rs = obj(REPLICASET, "a-1", owner=deployment_a)
    for kind, body in ((TOY, a), (TOY, b), (DEPLOYMENT, deployment_a), (DEPLOYMENT, deployment_b)):
        changes_for(kind, ("ADDED", body))
    changes_for(REPLICASET, ("ADDED", rs))
    pod = obj(POD, "a-1-x", owner=rs)
    owners, changes = OwnerIndex([TOYS]), changes_for(POD, ("ADDED", pod))
    with django_assert_num_queries(2):  # one per hop: the ReplicaSet's, the Deployment's
        first = keys_for(changes, [TOYS], owners)
    pod_again = modified(pod, labels={"ready": "yes"})
    changes = changes_for(POD, ("MODIFIED", pod_again))
    with django_assert_num_queries(0):
        again = keys_for(changes, [TOYS], owners)
    assert [k for k, _ in first] == [k for k, _ in again] == [Key("toy", "default", "a")]
    # The ReplicaSet is adopted by b's Deployment: the index follows the change it maps.
    adopted = modified(
        rs, ownerReferences=obj(REPLICASET, "x", owner=deployment_b)["metadata"]["ownerReferences"]
    )
    keys_for(changes_for(REPLICASET, ("MODIFIED", adopted)), [TOYS], owners)
    moved = keys_for(changes_for(POD, ("MODIFIED", modified(pod_again, labels={}))), [TOYS], owners)
    assert [k for k, _ in moved] == [Key("toy", "default", "b")]


def test_the_owner_index_learns_owners_from_the_changes_it_maps(
    django_assert_num_queries: Any,
) -> None:
    cr = obj(TOY, "a")
    deployment = obj(DEPLOYMENT, "a", owner=cr)
    rs = obj(REPLICASET, "a-1", owner=deployment)
    owners = OwnerIndex([TOYS])
    for kind, body in ((TOY, cr), (DEPLOYMENT, deployment), (REPLICASET, rs)):
        keys_for(changes_for(kind, ("ADDED", body)), [TOYS], owners)
    changes = changes_for(POD, ("ADDED", obj(POD, "a-1-x", owner=rs)))
    with django_assert_num_queries(0):
        keys = keys_for(changes, [TOYS], owners)
    assert [k for k, _ in keys] == [Key("toy", "default", "a")]


def test_objects_of_a_kind_the_controller_does_not_own_are_ignored() -> None:
    cr = obj(TOY, "a")
    changes_for(TOY, ("ADDED", cr))
    rs = obj(REPLICASET, "a-1", owner=cr)  # TOYS does not declare ReplicaSets
    assert keys_for(changes_for(REPLICASET, ("ADDED", rs)), [TOYS]) == []


def test_objects_without_a_controller_owner_are_ignored() -> None:
    assert keys_for(changes_for(CONFIGMAP, ("ADDED", obj(CONFIGMAP, "loose"))), [TOYS]) == []


def test_a_burst_of_changes_to_one_key_yields_it_once() -> None:
    cr = obj(TOY, "a")
    events = [("ADDED", cr)] + [("MODIFIED", modified(cr, generation=g)) for g in range(2, 50)]
    assert len(keys_for(changes_for(TOY, *events), [TOYS])) == 1


SPEC_ONLY = Controller(
    "toy",
    TOY,
    (CONFIGMAP, DEPLOYMENT, POD),
    reconcile,
    expected_children,
    owns_spec_only=(DEPLOYMENT,),
)


def _owned_deployment() -> dict:
    cr = obj(TOY, "a")
    deployment = obj(DEPLOYMENT, "a", owner=cr)
    changes_for(TOY, ("ADDED", cr))
    changes_for(DEPLOYMENT, ("ADDED", deployment))
    return deployment


def test_a_status_only_change_of_a_spec_only_owned_kind_wakes_nobody() -> None:
    deployment = _owned_deployment()
    rollout = modified(deployment)
    rollout["status"] = {"observedGeneration": 1, "readyReplicas": 1}
    [change] = changes_for(DEPLOYMENT, ("MODIFIED", rollout))
    assert keys_for([change], [SPEC_ONLY]) == []
    # Without the declaration the same change reconciles its owner.
    assert [k for k, _ in keys_for([change], [TOYS])] == [Key("toy", "default", "a")]


def test_a_spec_only_owned_deployment_refusing_its_pods_wakes_its_owner() -> None:
    """A quota refusing a scale-up creates no pod: the Deployment's ReplicaFailure is the one
    change that tells its CR to turn Degraded."""
    deployment = _owned_deployment()
    refused = modified(deployment)
    refused["status"] = {
        "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"}]
    }
    [change] = changes_for(DEPLOYMENT, ("MODIFIED", refused))
    assert [k for k, _ in keys_for([change], [SPEC_ONLY])] == [Key("toy", "default", "a")]


@pytest.mark.parametrize(
    "meta",
    [
        {"generation": 2},
        {"labels": {"tier": "cache"}},
        {"deletionTimestamp": "2026-11-22T18:00:00Z"},
    ],
)
def test_a_spec_label_or_deletion_change_of_a_spec_only_owned_kind_is_reconciled(
    meta: dict,
) -> None:
    deployment = _owned_deployment()
    [change] = changes_for(DEPLOYMENT, ("MODIFIED", modified(deployment, **meta)))
    assert [k for k, _ in keys_for([change], [SPEC_ONLY])] == [Key("toy", "default", "a")]


def test_a_deleted_spec_only_owned_object_is_reconciled() -> None:
    deployment = _owned_deployment()
    changes = changes_for(DEPLOYMENT, ("DELETED", deployment))
    assert [k for k, _ in keys_for(changes, [SPEC_ONLY])] == [Key("toy", "default", "a")]


def test_an_owned_spec_only_kind_changing_only_kubernetes_annotations_wakes_nobody() -> None:
    deployment = _owned_deployment()
    revised = modified(deployment, annotations={"deployment.kubernetes.io/revision": "1"})
    assert keys_for(changes_for(DEPLOYMENT, ("MODIFIED", revised)), [SPEC_ONLY]) == []
    noted = modified(revised, annotations={"deployment.kubernetes.io/revision": "1", "x": "y"})
    [(key, _)] = keys_for(changes_for(DEPLOYMENT, ("MODIFIED", noted)), [SPEC_ONLY])
    assert key == Key("toy", "default", "a")


def test_a_pod_seen_before_its_replicaset_is_kept_for_when_it_comes() -> None:
    rs = _replicaset_of_a_toy()
    pod = changes_for(POD, ("ADDED", obj(POD, "a-1-x", owner=rs)))  # its watch ran ahead
    unowned: list[Any] = []
    assert keys_for(pod, [TOYS], unowned=unowned) == []
    assert unowned == pod
    changes_for(REPLICASET, ("ADDED", rs))
    assert [k for k, _ in keys_for(unowned, [TOYS])] == [Key("toy", "default", "a")]


def test_the_watcher_maps_a_pod_again_when_its_replicaset_comes() -> None:
    """A pod created and made ready before its ReplicaSet reached the watcher woke nobody
    until the resync (seen on the real control plane, where they come on two watches)."""
    queued: list[Key] = []
    watcher = Watcher(
        kube=cast(ApiKube, None),
        controllers=[TOYS],
        enqueue=lambda **kwargs: queued.append(kwargs["key"]) or True,
    )
    cr = obj(TOY, "a")
    deployment = obj(DEPLOYMENT, "a", owner=cr)
    rs = obj(REPLICASET, "a-1", owner=deployment)
    changes_for(TOY, ("ADDED", cr))
    changes_for(DEPLOYMENT, ("ADDED", deployment))

    def batch(*changes: Any) -> None:  # as Watcher._apply queues a batch's owned changes
        watcher._enqueue_all(watcher._owned_keys(list(changes)))

    batch(*changes_for(POD, ("ADDED", obj(POD, "a-1-x", owner=rs))))
    assert queued == []
    batch(*changes_for(REPLICASET, ("ADDED", rs)))
    assert queued == [Key("toy", "default", "a")]
    batch()
    assert queued == [Key("toy", "default", "a")], "mapped once, then forgotten"


STATEFUL_TOYS = Controller("toy", TOY, (STATEFULSET, POD), reconcile, expected_children)


def _event_about(workload: dict, reason: str) -> dict:
    event = obj(EVENT, f"{workload['metadata']['name']}.1")
    event.update(
        reason=reason,
        type="Warning",
        message='create Pod db-1 in StatefulSet db failed error: pods "db-1" is forbidden',
        involvedObject={
            "apiVersion": "apps/v1",
            "kind": workload["kind"],
            "name": workload["metadata"]["name"],
            "namespace": "default",
            "uid": workload["metadata"]["uid"],
        },
    )
    return event


def test_a_failed_create_event_about_an_owned_statefulset_wakes_its_owner() -> None:
    """A StatefulSet tells a refused pod (a quota) only in that Event: no pod is created,
    and its status does not change."""
    cr = obj(TOY, "a")
    statefulset = obj(STATEFULSET, "db", owner=cr)
    changes_for(TOY, ("ADDED", cr))
    changes_for(STATEFULSET, ("ADDED", statefulset))
    [refused] = changes_for(EVENT, ("ADDED", _event_about(statefulset, "FailedCreate")))
    assert [k for k, _ in keys_for([refused], [STATEFUL_TOYS])] == [Key("toy", "default", "a")]
    [other] = changes_for(EVENT, ("ADDED", _event_about(statefulset, "SuccessfulDelete")))
    assert keys_for([other], [STATEFUL_TOYS]) == []


def test_a_child_with_no_owner_maps_to_the_cr_that_expects_it_by_name() -> None:
    """Someone's ConfigMap of the name a Toy keeps: its deletion (or any change) wakes the
    Toy, which else waits for the resync to create its own."""
    expected = ExpectedChildren([TOYS])
    keys_for(changes_for(TOY, ("ADDED", obj(TOY, "a"))), [TOYS], expected=expected)
    loose = obj(CONFIGMAP, "a")
    changes_for(CONFIGMAP, ("ADDED", loose))
    deleted = changes_for(CONFIGMAP, ("DELETED", loose))
    assert [k for k, _ in keys_for(deleted, [TOYS], expected=expected)] == [
        Key("toy", "default", "a")
    ]
    other = changes_for(CONFIGMAP, ("ADDED", obj(CONFIGMAP, "b")))  # no Toy expects it
    assert keys_for(other, [TOYS], expected=expected) == []
    elsewhere = changes_for(CONFIGMAP, ("ADDED", obj(CONFIGMAP, "a", namespace="other")))
    assert keys_for(elsewhere, [TOYS], expected=expected) == []


def test_a_deleted_cr_expects_its_children_no_more() -> None:
    expected, cr = ExpectedChildren([TOYS]), obj(TOY, "a")
    keys_for(changes_for(TOY, ("ADDED", cr)), [TOYS], expected=expected)
    keys_for(changes_for(TOY, ("DELETED", cr)), [TOYS], expected=expected)
    loose = changes_for(CONFIGMAP, ("ADDED", obj(CONFIGMAP, "a")))
    assert keys_for(loose, [TOYS], expected=expected) == []


def test_the_crs_in_the_mirror_are_expected_from_the_start() -> None:
    """A watcher that resumes sees no change of the CRs that did not change meanwhile."""
    changes_for(TOY, ("ADDED", obj(TOY, "a")))
    expected = ExpectedChildren([TOYS])
    expected.load()
    loose = changes_for(CONFIGMAP, ("ADDED", obj(CONFIGMAP, "a")))
    assert [k for k, _ in keys_for(loose, [TOYS], expected=expected)] == [
        Key("toy", "default", "a")
    ]


def _a_deployment_each(cr: dict) -> list[ExpectedChild]:
    return [ExpectedChild(DEPLOYMENT, cr["metadata"]["name"])]


DEPLOYS = Controller(
    "toy", TOY, (DEPLOYMENT,), reconcile, _a_deployment_each, owns_spec_only=(DEPLOYMENT,)
)


def test_a_status_only_change_of_an_expected_spec_only_child_with_no_owner_wakes_nobody() -> None:
    expected = ExpectedChildren([DEPLOYS])
    keys_for(changes_for(TOY, ("ADDED", obj(TOY, "a"))), [DEPLOYS], expected=expected)
    theirs = obj(DEPLOYMENT, "a")  # someone's Deployment, rolling out
    changes_for(DEPLOYMENT, ("ADDED", theirs))
    rollout = modified(theirs)
    rollout["status"] = {"readyReplicas": 1}
    changes = changes_for(DEPLOYMENT, ("MODIFIED", rollout))
    assert keys_for(changes, [DEPLOYS], expected=expected) == []
    deleted = changes_for(DEPLOYMENT, ("DELETED", rollout))
    assert [k for k, _ in keys_for(deleted, [DEPLOYS], expected=expected)] == [
        Key("toy", "default", "a")
    ]
