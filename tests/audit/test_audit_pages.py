from __future__ import annotations

import csv
import io
import logging
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun

pytestmark = pytest.mark.django_db


def _entry(username: str = "otto", **fields: object) -> AuditEntry:
    values = {
        "username": username, "action": "patch", "controller": "memcached", "kind": "Memcached",
        "namespace": "default", "name": "cache-a", "uid": "uid-1", "before": {"spec.size": 3},
        "after": {"spec.size": 5}, "result": "applied", "generation": 2,
    } | fields  # fmt: skip
    return AuditEntry.objects.create(**values)


def _run(**fields: object) -> ReconcileRun:
    values = {
        "controller": "memcached", "namespace": "default", "name": "cache-a", "uid": "uid-1",
        "generation": 2, "trigger": "event", "started_at": timezone.now(), "outcome": "success",
        "duration_ms": 12.5, "actions": ["Scaled Deployment cache-a replicas 3→5"],
    } | fields  # fmt: skip
    return ReconcileRun.objects.create(**values)


def test_only_admins_see_the_audit_pages(viewer_client: Client, operator_client: Client,
                                         admin_client_: Client) -> None:  # fmt: skip
    for url in ("/audit/", "/audit/export.csv", "/audit/runs/", "/audit/charts/"):
        assert viewer_client.get(url).status_code == 403, url
        assert operator_client.get(url).status_code == 403, url
        assert admin_client_.get(url).status_code == 200, url


def test_a_refusal_is_logged_as_one_line_with_its_reason(
    viewer_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert viewer_client.get("/audit/").status_code == 403
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info is None  # not a fault: no traceback
    assert record.getMessage().startswith("Forbidden (Permission denied): /audit/: Not allowed")


def test_audit_list_filters_by_user_kind_namespace_object_and_time(admin_client_: Client) -> None:
    _entry("otto")
    _entry("ada", namespace="prod", name="web", kind="WebServer", controller="webserver")
    old = _entry("otto", name="ancient")
    AuditEntry.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=3))

    def names(query: str) -> list[str]:
        return [e.name for e in admin_client_.get(f"/audit/?{query}").context["page"]]

    assert names("user=ada") == ["web"]
    assert names("kind=Memcached") == ["cache-a", "ancient"]
    assert names("namespace=prod") == ["web"]
    assert names("name=anc") == ["ancient"]
    since = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    assert sorted(names(f"since={since}")) == ["cache-a", "web"]


def test_the_audit_pages_write_nothing(admin_client_: Client) -> None:
    _entry()
    _run()  # a run of that generation, as the lazy linking of old would have linked on GET
    with CaptureQueriesContext(connection) as queries:
        for url in ("/audit/", "/audit/export.csv"):
            response = admin_client_.get(url)
            b"".join(response.streaming_content) if response.streaming else response.content
    writes = [
        q["sql"]
        for q in queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]
    assert writes == []


def test_csv_export_has_one_row_per_filtered_entry(admin_client_: Client) -> None:
    _entry("otto")
    _entry("ada", namespace="prod")
    response = admin_client_.get("/audit/export.csv?namespace=prod")
    assert response["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["username"], r["namespace"], r["after"]) for r in rows] == [
        ("ada", "prod", '{"spec.size": 5}')
    ]


def test_csv_export_with_an_invalid_filter_is_a_400_that_says_why(admin_client_: Client) -> None:
    _entry("otto")
    listed = admin_client_.get("/audit/?since=garbage")
    assert "Enter a valid date/time." in listed.content.decode()
    assert list(listed.context["page"]) == []  # nothing listed, not everything unfiltered
    _run(name="slow", duration_ms=900)
    runs = admin_client_.get("/audit/runs/?min_ms=fast")
    assert runs.context["form"].errors and list(runs.context["page"]) == []
    response = admin_client_.get("/audit/export.csv?since=garbage&until=2026-13-40")
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == (
        "Since: Enter a valid date/time.\nUntil: Enter a valid date/time.\n"
    )


def test_reconcile_log_filters_by_outcome_and_duration(admin_client_: Client) -> None:
    _run(name="fast", duration_ms=3)
    _run(name="slow", duration_ms=900)
    _run(name="broken", outcome="error", error="boom", duration_ms=50)

    def names(query: str) -> list[str]:
        return sorted(r.name for r in admin_client_.get(f"/audit/runs/?{query}").context["page"])

    assert names("outcome=error") == ["broken"]
    assert names("min_ms=100") == ["slow"]
    assert names("max_ms=10") == ["fast"]


def test_charts_draw_bars_per_controller(admin_client_: Client) -> None:
    _run()
    _run(outcome="error", duration_ms=80)
    _run(controller="webserver", name="web")
    html = admin_client_.get("/audit/charts/").content.decode()
    assert html.count("<svg") == 2
    assert 'class="o-error"' in html and 'class="o-success"' in html
    assert "<polyline" in html


def test_django_admin_lists_audit_and_runs_read_only(admin_client_: Client) -> None:
    entry = _entry()
    run = _run()
    assert admin_client_.get("/admin/audit/auditentry/").status_code == 200
    assert admin_client_.get("/admin/engine/reconcilerun/").status_code == 200
    assert admin_client_.get("/admin/audit/auditentry/add/").status_code == 403
    page = admin_client_.get(f"/admin/engine/reconcilerun/{run.pk}/change/").content.decode()
    assert 'type="submit"' not in page or "Save" not in page
    response = admin_client_.post(f"/admin/audit/auditentry/{entry.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_entries_show_the_number_the_diagnosis_cites_and_are_found_by_it(
    admin_client_: Client,
) -> None:
    cited, other = _entry("otto"), _entry("ada")
    html = admin_client_.get("/audit/").content.decode()
    assert f'<tr id="entry-{cited.pk}">\n    <td><a href="?entry={cited.pk}">{cited.pk}</a>' in html
    found = admin_client_.get(f"/audit/?entry={cited.pk}").context["page"]
    assert [e.pk for e in found] == [cited.pk] and other.pk != cited.pk
    response = admin_client_.get(f"/audit/export.csv?entry={other.pk}")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["entry"], r["username"]) for r in rows] == [(str(other.pk), "ada")]
