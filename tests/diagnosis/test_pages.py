"""The diagnosis on the CR page, the overview's "Needs attention" and `opsboard_diagnose`,
served from mirror rows: no API call, and a fixed number of queries whatever the pods."""

from __future__ import annotations

import time
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from redis import Redis

from controllers.base import NODE, Key
from opsboard.accounts.roles import Role, grant_assign
from opsboard.audit.models import AuditEntry
from opsboard.diagnosis.observed import Finding
from opsboard.engine.models import ReconcileRun
from opsboard.engine.pump import HEARTBEAT_KEY
from opsboard.engine.queue import Why, queue_for
from opsboard.mirror.models import KubeObject, WatcherHeartbeat
from opsboard.mirror.writer import kind_watches_save
from tests.dashboard.mirror_factory import memcached_with_pods, mirror_object
from tests.fixtures.celery import _point_this_process_at

pytestmark = pytest.mark.django_db
BAD = "memcached:does-not-exist"


def _break_image(cr: KubeObject, *, user: Any) -> AuditEntry:
    """The CR patched to a bad image through opsboard, one of its pods unable to pull it."""
    entry = AuditEntry.objects.create(
        user=user, username=user.username, action="patch", controller="memcached",
        kind="Memcached", namespace=cr.namespace, name=cr.name, uid=cr.uid,
        before={"spec.image": "memcached:1.4.36-alpine"}, after={"spec.image": BAD},
        result="applied", generation=2,
    )  # fmt: skip
    cr.spec = {**cr.spec, "image": BAD}
    cr.body = {**cr.body, "spec": cr.spec}
    cr.health = "Degraded"
    cr.save()
    pod = KubeObject.objects.filter(kind="Pod", namespace=cr.namespace).order_by("name").first()
    assert pod is not None
    pod.spec = {"containers": [{"name": "memcached", "image": BAD}]}
    pod.body = {**pod.body, "spec": pod.spec, "status": {"containerStatuses": [
        {"name": "memcached", "image": f"docker.io/library/{BAD}",
         "state": {"waiting": {"reason": "ImagePullBackOff"}}}
    ]}}  # fmt: skip
    pod.save()
    return entry


def test_the_cr_page_names_the_image_and_the_audit_entry(operator_client: Client, operator) -> None:
    cr = memcached_with_pods("cache", size=3)
    entry = _break_image(cr, user=operator)
    html = operator_client.get("/k/memcached/default/cache/").content.decode()
    section = html[html.index('id="diagnosis"') :]
    section = section[: section.index("</section>")]
    assert 'data-code="ImagePullBackOff"' in section
    assert f"cannot pull image {BAD}" in section and f"change #{entry.pk} of the audit" in section


@pytest.fixture
def engine_up(redis_url: str) -> None:
    """A leading watcher's heartbeat in the database and a worker's in Redis."""
    _point_this_process_at(redis_url)
    now = timezone.now()
    WatcherHeartbeat.objects.create(
        identity="watcher-1", is_leader=True, started_at=now, heartbeat_at=now
    )
    Redis.from_url(redis_url).hset(HEARTBEAT_KEY, "host:1", time.time())


def test_a_converged_cr_says_it_is_healthy_in_one_line(viewer_client: Client, engine_up) -> None:
    memcached_with_pods("fine", size=2)
    response = viewer_client.get("/k/memcached/default/fine/")
    assert response.context["diagnosis"].findings == []
    assert "Healthy: Available, 2/2 ready, generation 1 observed." in response.content.decode()


def test_just_after_a_scale_down_no_more_pods_are_ready_than_wanted(
    viewer_client: Client, engine_up
) -> None:
    """As the operator reports it once it has scaled its Deployment 5→4, before the
    ReplicaSet marks the fifth pod terminating (the rig's Deployment says 5 ready of 4
    replicas at that moment too)."""
    cr = memcached_with_pods("shrunk", size=5)
    cr.spec = {**cr.spec, "size": 4}
    cr.generation = cr.observed_generation = 2
    cr.status = {**cr.status, "readyReplicas": 5, "observedGeneration": 2, "conditions": [
        {"type": "Available", "status": "True", "reason": "PodsReady", "message": "5/4 pods ready"},
        {"type": "Progressing", "status": "True", "reason": "ScalingDown",
         "message": "5 pods for size 4"},
    ]}  # fmt: skip
    cr.body = {**cr.body, "spec": cr.spec, "status": cr.status}
    cr.body["metadata"]["generation"] = 2
    cr.save()
    summary = viewer_client.get("/k/memcached/default/shrunk/").context["diagnosis"].summary
    assert (
        summary
        == "Healthy: Available, 4/4 ready (1 more pod being removed), generation 2 observed."
    )


def test_with_the_engine_down_the_diagnosis_says_which_part(viewer_client: Client) -> None:
    memcached_with_pods("fine", size=2)
    response = viewer_client.get("/k/memcached/default/fine/")
    codes = [f.code for f in response.context["diagnosis"].findings]
    assert codes[0] in ("NoWatcher", "RedisDown"), codes


def test_the_diagnosis_costs_the_same_queries_with_100_pods_as_with_5(
    viewer_client: Client,
) -> None:
    memcached_with_pods("small", size=5, namespace="a")
    memcached_with_pods("large", size=100, namespace="b")
    counts = []
    for url in ("/k/memcached/a/small/live/", "/k/memcached/b/large/live/"):
        with CaptureQueriesContext(connection) as queries:
            assert viewer_client.get(url).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_the_overview_lists_what_needs_attention(operator_client: Client, operator) -> None:
    memcached_with_pods("fine", size=1)
    broken = memcached_with_pods("broken", size=1, namespace="shop")
    _break_image(broken, user=operator)
    response = operator_client.get("/")
    listed = [(a.cr.name, a.diagnosis.findings[0].code) for a in response.context["attention"]]
    codes = dict(listed)
    assert "fine" not in codes
    html = response.content.decode()
    assert 'id="needs-attention"' in html and "shop/broken" in html
    assert any(f.code == "ImagePullBackOff" for a in response.context["attention"]
               for f in a.diagnosis.findings)  # fmt: skip


def test_a_cr_stuck_deleting_needs_attention_and_is_not_counted_stale(
    operator_client: Client,
) -> None:
    going = memcached_with_pods("going", size=1)
    # As a real API server marks it: the deletion raises the generation past the observed one.
    going.body["metadata"].update(
        deletionTimestamp="2026-11-29T12:00:00Z", finalizers=["example.com/hold"], generation=2
    )
    going.generation, going.deleted_at = 2, timezone.now()
    going.save()
    response = operator_client.get("/")
    attention = {a.cr.name: a.diagnosis.findings for a in response.context["attention"]}
    found = {f.code: f for f in attention["going"]}  # and the engine's: none runs here
    assert "BlockingFinalizer" in found and "StatusStale" not in found
    assert "kubectl patch -n default memcached going" in found["BlockingFinalizer"].todo
    counts = {c.info.kind.kind: c for c in response.context["counts"]}
    assert (counts["Memcached"].total, counts["Memcached"].stale) == (1, 0)


def test_the_command_prints_each_finding_and_what_to_do(operator) -> None:
    broken = memcached_with_pods("broken", size=1, namespace="shop")
    entry = _break_image(broken, user=operator)
    out = StringIO()
    call_command("opsboard_diagnose", "Memcached", "shop/broken", stdout=out)
    text = out.getvalue()
    assert text.startswith("Memcached shop/broken: Degraded")
    assert "[ImagePullBackOff]" in text and f"change #{entry.pk}" in text
    assert f"   → Set spec.image to an image that exists, or revert change #{entry.pk}.\n" in text
    assert "     (its change history: /k/memcached/shop/broken/#history)" in text


def test_the_command_explains_a_wrong_kind_or_name() -> None:
    with pytest.raises(CommandError, match=r"Unknown kind 'Memcache'.*memcached"):
        call_command("opsboard_diagnose", "Memcache", "shop/x")
    with pytest.raises(CommandError, match="NAMESPACE/NAME"):
        call_command("opsboard_diagnose", "memcached", "x")
    with pytest.raises(CommandError, match="not in the mirror"):
        call_command("opsboard_diagnose", "memcached", "shop/absent")


def test_a_spec_change_just_mirrored_reads_as_being_picked_up_then_as_a_due_retry(
    viewer_client: Client, engine_up: None
) -> None:
    cr = memcached_with_pods("applied", size=1)
    cr.body["metadata"]["generation"] = cr.generation = 2  # the watcher mirrored it just now
    cr.save()
    [stale] = viewer_client.get("/k/memcached/default/applied/").context["diagnosis"].findings
    assert stale.code == "StatusStale" and "The change is being picked up." in stale.what
    assert "Reconcile now" not in stale.todo

    key = Key("memcached", "default", "applied")  # a run failed: in backoff, not queued
    queue_for("memcached").failed(key)
    queue_for("memcached").add_after(key, 30, Why("retry", "attempt 2", time.time() + 30))
    findings = viewer_client.get("/k/memcached/default/applied/").context["diagnosis"].findings
    [stale] = [f for f in findings if f.code == "StatusStale"]
    assert "The next retry is due in " in stale.what and "No reconcile is queued" not in stale.what
    assert "Backoff" in {f.code for f in findings}


def test_a_stale_status_is_said_pending_only_while_its_key_is_queued(
    viewer_client: Client, engine_up: None
) -> None:
    cr = memcached_with_pods("behind", size=1)
    cr.body["metadata"]["generation"] = cr.generation = 2  # a spec change not yet observed
    cr.save()
    # Mirrored a while ago: the change was lost, not late.
    KubeObject.objects.filter(pk=cr.pk).update(mirrored_at=timezone.now() - timedelta(minutes=5))
    html = viewer_client.get("/k/memcached/default/behind/").content.decode()
    assert "Status is stale" in html
    assert "pending" not in html and "A reconcile is queued" not in html
    assert "No reconcile is queued for it." in html

    queue_for("memcached").add(Key("memcached", "default", "behind"), Why("event"))
    html = viewer_client.get("/k/memcached/default/behind/").content.decode()
    assert "A reconcile is queued." in html


def _unschedulable(cr: KubeObject) -> None:
    """The CR Progressing, its pods waiting for a node that is cordoned."""
    cr.health = "Progressing"
    cr.save()
    message = "0/1 nodes are available: 1 node(s) were unschedulable."
    for pod in KubeObject.objects.filter(kind="Pod", namespace=cr.namespace):
        scheduled = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": message, "lastTransitionTime": "2026-11-23T17:00:00Z"}  # fmt: skip
        pod.body = {**pod.body, "status": {"phase": "Pending", "conditions": [scheduled]}}
        pod.body["spec"].pop("nodeName", None)
        pod.status, pod.spec = pod.body["status"], pod.body["spec"]
        pod.save()


def test_the_overview_reads_the_nodes_once_for_every_cr_that_waits_for_one(
    viewer_client: Client,
) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "n1"},
            "spec": {"unschedulable": True}}  # fmt: skip
    KubeObject.objects.create(api_version="v1", kind="Node", namespace="", name="n1", uid="n1",
                              resource_version="1", body=node, spec=node["spec"])  # fmt: skip
    kind_watches_save({NODE: ("1", True, False)})
    for namespace in ("a", "b"):
        _unschedulable(memcached_with_pods("cache", size=1, namespace=namespace))
    with CaptureQueriesContext(connection) as queries:
        response = viewer_client.get("/")
    found = [f for a in response.context["attention"] for f in a.diagnosis.findings
             if f.code == "Unschedulable"]  # fmt: skip
    assert len(found) == 2
    assert all("(kubectl uncordon n1;" in f.todo for f in found)
    # Whether the Nodes were listed, and the Nodes: once each, not once per CR.
    node_reads = [q["sql"] for q in queries if "'Node'" in q["sql"]]
    assert len(node_reads) == 2, node_reads


def _node(name: str, *, cordoned: bool = False, ready: bool = True) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": name},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}  # fmt: skip
    KubeObject.objects.create(api_version="v1", kind="Node", namespace="", name=name, uid=name,
                              resource_version="1", body=node, spec=node["spec"],
                              health="Available" if ready else "Degraded")  # fmt: skip


def test_nodes_are_named_only_to_a_person_with_a_role_everywhere(viewer_client: Client) -> None:
    """Nodes belong to no namespace: a viewer in one is told what the scheduler said (counts,
    taints), and not which nodes, nor how the node its pod runs on is."""
    _node("n1", cordoned=True)
    _node("kubesim-node-1", ready=False)
    kind_watches_save({NODE: ("1", True, False)})
    _unschedulable(memcached_with_pods("cache", size=1, namespace="a"))
    memcached_with_pods("other", size=1, namespace="a")  # its pod on the NotReady node
    tina = User.objects.create_user("tina")
    grant_assign(user=tina, role=Role.VIEWER, namespace="a")
    in_a = Client()
    in_a.force_login(tina)

    def unschedulable(client: Client, path: str) -> Finding:
        findings = client.get(path).context["diagnosis"].findings
        return next(f for f in findings if f.code == "Unschedulable")

    named = "kubectl uncordon n1;"
    assert named in unschedulable(viewer_client, "/k/memcached/a/cache/").todo
    found = unschedulable(in_a, "/k/memcached/a/cache/")
    assert named not in found.todo and "kubectl uncordon NODE" in found.todo
    assert "n1" not in found.what + found.todo
    # Uncordoning is a cluster administrator's step, not a viewer's in one namespace.
    admin = "Nodes are outside your namespaces: ask a cluster administrator"
    assert admin in found.todo
    assert admin not in unschedulable(viewer_client, "/k/memcached/a/cache/").todo
    [attention] = in_a.get("/").context["attention"]
    assert "n1" not in " ".join(f.what + f.todo for f in attention.diagnosis.findings)

    marked = 'kubesim-node-1 <span class="badge c-false">NotReady</span>'
    assert marked in viewer_client.get("/k/memcached/a/other/").content.decode()
    page = in_a.get("/k/memcached/a/other/").content.decode()
    assert "kubesim-node-1" in page and marked not in page


def test_a_service_holding_a_nodeport_is_named_only_to_who_sees_its_namespace(
    viewer_client: Client,
) -> None:
    mirror_object("Service", "holder", namespace="b", spec={"ports": [{"nodePort": 32361}]})
    cr = memcached_with_pods("cache", size=1, namespace="a")
    ReconcileRun.objects.create(
        controller="memcached", namespace="a", name="cache", uid=cr.uid, generation=1,
        trigger="event", started_at=timezone.now(), outcome="error",
        error='POST /api/v1/namespaces/a/services: 422 Service "cache" is invalid: spec.ports'
        "[0].nodePort: Invalid value: 32361: provided port is already allocated",
    )  # fmt: skip
    tina = User.objects.create_user("tina")
    grant_assign(user=tina, role=Role.VIEWER, namespace="a")
    in_a = Client()
    in_a.force_login(tina)

    def taken(client: Client) -> str:
        findings = client.get("/k/memcached/a/cache/").context["diagnosis"].findings
        return next(f.what for f in findings if f.code == "PortTaken")

    assert "NodePort 32361 is already in use by Service b/holder," in taken(viewer_client)
    said = taken(in_a)
    assert "in use by a Service in a namespace where you have no role," in said
    assert "holder" not in said
    grant_assign(user=tina, role=Role.VIEWER, namespace="b")
    in_a.force_login(User.objects.get(pk=tina.pk))
    assert "in use by Service b/holder," in taken(in_a)
