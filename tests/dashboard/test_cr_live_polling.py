"""A CR page's live sections poll with the token of what they show, as rendered: nothing to
swap (204) while they would render the same — a revert form's CSRF field, masked anew for
every response, included — and a render as soon as anything they show changes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject, SpecVersion
from tests.dashboard.mirror_factory import memcached_with_pods
from tests.dashboard.polls import poll, poll_url

pytestmark = pytest.mark.django_db
PAGE = "/k/memcached/default/cache-a/"
POLL = re.compile(r'<div id="cr-live-[^"]+" hx-get="([^"]+)"')


def _spec_versions(cr: KubeObject) -> None:
    """Generations 1 and 2 seen, size 1 then 2: a change a person may revert."""
    for generation, size in ((1, 1), (2, 2)):
        SpecVersion.objects.create(
            uid=cr.uid, api_version=cr.api_version, kind=cr.kind, namespace=cr.namespace,
            name=cr.name, generation=generation, spec={"size": size}, manager="kubectl-edit",
            seen_at=datetime.now(UTC) - timedelta(minutes=5),
        )  # fmt: skip


def test_unchanged_sections_get_nothing_to_swap_a_revert_form_included(
    operator_client: Client,
) -> None:
    cr = memcached_with_pods("cache-a", size=2)
    _spec_versions(cr)
    page = operator_client.get(PAGE).content.decode()
    assert "Revert to before this change" in page and "csrfmiddlewaretoken" in page
    url = poll_url(POLL, page)
    assert url.startswith(f"{PAGE}live/?shown=")
    assert poll(operator_client, url) == (204, "")
    assert poll(operator_client, url) == (204, "")
    assert poll(operator_client, f"{PAGE}live/?shown=other")[0] == 200


def test_a_change_to_what_they_show_renders_them_again(viewer_client: Client) -> None:
    cr = memcached_with_pods("cache-a", size=2)
    url = poll_url(POLL, viewer_client.get(PAGE).content.decode())

    KubeObject.objects.filter(pk=cr.pk).update(health="Degraded")
    status, sections = poll(viewer_client, url)
    assert status == 200 and "h-degraded" in sections

    url = poll_url(POLL, sections)
    ReconcileRun.objects.create(
        controller="memcached", namespace="default", name="cache-a", uid=cr.uid,
        generation=1, trigger="event", started_at=timezone.now() - timedelta(minutes=2),
        outcome="success", actions=["Updated Deployment cache-a replicas 1→2"],
    )  # fmt: skip
    status, sections = poll(viewer_client, url)
    assert status == 200 and "Updated Deployment cache-a replicas 1→2" in sections

    url = poll_url(POLL, sections)
    pod = KubeObject.objects.filter(kind="Pod").first()
    assert pod is not None
    failed = {**pod.status, "phase": "Failed"}
    KubeObject.objects.filter(pk=pod.pk).update(status=failed, body={**pod.body, "status": failed})
    status, sections = poll(viewer_client, url)
    assert status == 200 and "Failed" in sections
    assert poll(viewer_client, poll_url(POLL, sections)) == (204, "")
