"""A reconcile's outcome is worded alike wherever it shows: the run tables, the list's last
outcome, the audit's "observed by" and the charts ("Permanent error", never "permanent"
here and "permanent error" there)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = pytest.mark.django_db
WORDS = {"success": "Success", "requeue": "Requeue", "error": "Error",
         "permanent": "Permanent error"}  # fmt: skip


def _runs() -> ReconcileRun:
    """One run of each outcome for cache-a, the permanent error last."""
    now = timezone.now()
    for minutes, outcome in enumerate(("success", "requeue", "error", "permanent")):
        run = ReconcileRun.objects.create(
            controller="memcached", namespace="default", name="cache-a", uid="u", generation=1,
            trigger="event", started_at=now - timedelta(minutes=4 - minutes), outcome=outcome,
        )  # fmt: skip
    return run


def _badges(html: str) -> set[tuple[str, str]]:
    return set(re.findall(r'<span class="badge o-(\w+)">([^<]+)</span>', html))


def test_the_run_log_and_the_list_word_each_outcome_alike(admin_client_: Client) -> None:
    memcached_with_pods("cache-a", size=1)
    _runs()
    runs = admin_client_.get("/audit/runs/").content.decode()
    assert _badges(runs) == set(WORDS.items())
    options = re.findall(r'<option value="(\w+)"[^>]*>([^<]+)</option>', runs)
    assert set(options) >= set(WORDS.items()), "the outcome filter says the same words"
    listed = admin_client_.get("/k/memcached/").content.decode()
    assert _badges(listed) == {("permanent", "Permanent error")}
    page = admin_client_.get("/k/memcached/default/cache-a/").content.decode()
    assert _badges(page) == set(WORDS.items())


def test_the_audit_and_the_charts_word_outcomes_as_the_run_log_does(
    admin_client_: Client,
) -> None:
    run = _runs()
    AuditEntry.objects.create(
        username="otto", action="patch", controller="memcached", kind="Memcached",
        namespace="default", name="cache-a", uid="u", before={"spec.size": 1},
        after={"spec.size": 2}, result="applied", generation=1, observed_by=run,
    )  # fmt: skip
    audit = admin_client_.get("/audit/").content.decode()
    assert f"run #{run.pk} at" in audit and "(Permanent error)" in audit
    charts = admin_client_.get("/audit/charts/").content.decode()
    legend = charts[charts.index('<p class="legend">') :]
    legend = legend[: legend.index("</p>")]
    assert [w.strip() for w in re.split(r"<[^>]+>", legend) if w.strip()] == [
        *WORDS.values(),
        "mean duration",
    ]
    assert "Success 1 · Requeue 1 · Error 1 · Permanent error 1" in charts
