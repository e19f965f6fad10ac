"""Roles per namespace: operator in team-a, viewer in team-b, nothing elsewhere. Every
list, count, chart, audit page and export respects it; a CR elsewhere is a 404; a refused
action says what it needs and who can grant it."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from opsboard.accounts.access import access_of
from opsboard.accounts.models import NamespaceGrant
from opsboard.accounts.roles import Role, grant_assign, role_assign
from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = pytest.mark.django_db

TEAMS = ("team-a", "team-b", "team-c")


@pytest.fixture
def teams() -> None:
    for ns in TEAMS:
        memcached_with_pods(f"cache-{ns[-1]}", size=1, namespace=ns)
        ReconcileRun.objects.create(
            controller="memcached", namespace=ns, name=f"cache-{ns[-1]}", trigger="event",
            started_at=timezone.now(), outcome="success", duration_ms=5.0,
        )  # fmt: skip
        AuditEntry.objects.create(
            username="otto", action="patch", controller="memcached", kind="Memcached",
            namespace=ns, name=f"cache-{ns[-1]}", result="applied",
        )  # fmt: skip


@pytest.fixture
def tina(db: None) -> User:
    """Operator in team-a, viewer in team-b, nothing elsewhere."""
    user = User.objects.create_user("tina", password="x")
    grant_assign(user=user, namespace="team-a", role=Role.OPERATOR)
    grant_assign(user=user, namespace="team-b", role=Role.VIEWER)
    return user


@pytest.fixture
def tina_client(tina: User) -> Client:
    client = Client()
    client.force_login(tina)
    return client


def test_access_combines_the_global_role_and_the_grants(tina: User) -> None:
    access = access_of(tina)
    assert access.role_in("team-a") == Role.OPERATOR
    assert access.role_in("team-b") == Role.VIEWER
    assert access.role_in("team-c") is None
    assert access.why_not(Role.OPERATOR, "team-b") == "needs operator in team-b; you are viewer"
    assert access.summary() == "operator in team-a, viewer in team-b"
    role_assign(user=tina, role=Role.VIEWER)
    tina = User.objects.get(pk=tina.pk)
    assert access_of(tina).role_in("team-c") == Role.VIEWER  # the global role holds everywhere
    assert access_of(tina).role_in("team-a") == Role.OPERATOR  # the grant is higher there


def test_lists_show_only_the_namespaces_with_a_role(tina_client: Client, teams: None) -> None:
    for url in ("/crs/", "/k/memcached/"):
        response = tina_client.get(url)
        names = [row.cr.name for row in response.context["page"]]
        assert sorted(names) == ["cache-a", "cache-b"], url
        assert response.context["namespaces"] == ["team-a", "team-b"]
    assert tina_client.get("/crs/?namespace=team-c").context["page"].paginator.count == 0


def test_the_overview_counts_only_what_the_person_can_see(tina_client: Client,
                                                          teams: None) -> None:  # fmt: skip
    context = tina_client.get("/").context
    memcached = next(c for c in context["counts"] if c.info.name == "memcached")
    assert memcached.total == 2
    assert {r.namespace for r in context["recent_runs"]} == {"team-a", "team-b"}
    assert context["engine"].runs_last_hour == 2


def test_the_overview_says_which_namespaces_it_shows_and_that_they_hold_nothing(
    tina_client: Client, viewer_client: Client
) -> None:
    memcached_with_pods("cache-c", size=1, namespace="team-c")  # not tina's to see
    html = tina_client.get("/").content.decode()
    assert (
        "You see only the namespaces where you hold a role: team-a, team-b, "
        "which hold no resources."
    ) in html
    assert "No resources in team-a, team-b." in html
    assert "Every resource is Available" not in html, "zeros are not an all-clear"
    memcached_with_pods("cache-a", size=1, namespace="team-a")
    html = tina_client.get("/").content.decode()
    assert "You see only the namespaces where you hold a role: team-a, team-b." in html
    assert "Every resource is Available and settled." in html
    assert 'id="overview-scope"' not in viewer_client.get("/").content.decode()  # everywhere


def test_a_cr_in_a_namespace_without_a_role_is_a_404(tina_client: Client, teams: None) -> None:
    base = "/k/memcached/team-c/cache-c/"
    assert tina_client.get(base).status_code == 404
    assert tina_client.get(base + "live/").status_code == 404
    for action in ("patch/", "patch/apply/", "reconcile/"):
        assert tina_client.post(base + action, {"size": 2}).status_code == 404, action


def test_a_viewer_there_gets_a_403_saying_what_it_needs_and_who_grants_it(
    tina_client: Client, teams: None, admin_user: User
) -> None:
    response = tina_client.post("/k/memcached/team-b/cache-b/reconcile/")
    assert response.status_code == 403
    text = response.content.decode()
    assert "needs operator in team-b; you are viewer" in text
    assert f"Ask an admin ({admin_user.username}) to grant it" in text


def test_the_detail_page_shows_the_disabled_actions_with_the_reason(tina_client: Client,
                                                                    teams: None) -> None:  # fmt: skip
    page = tina_client.get("/k/memcached/team-b/cache-b/").content.decode()
    assert "needs operator in team-b; you are viewer" in page
    assert 'name="size"' not in page and "disabled" in page
    own = tina_client.get("/k/memcached/team-a/cache-a/").content.decode()
    assert 'name="size"' in own and "you are viewer" not in own


def test_an_admin_in_one_namespace_audits_only_that_namespace(teams: None) -> None:
    user = User.objects.create_user("nadia")
    grant_assign(user=user, namespace="team-a", role=Role.ADMIN)
    AuditEntry.objects.create(username="x", action="lockout", result="rejected")
    client = Client()
    client.force_login(user)
    entries = client.get("/audit/").context["page"]
    assert [(e.namespace, e.action) for e in entries] == [("team-a", "patch")]
    rows = list(csv.DictReader(io.StringIO(b"".join(client.get("/audit/export.csv")).decode())))
    assert [r["namespace"] for r in rows] == ["team-a"]
    assert {r.namespace for r in client.get("/audit/runs/").context["page"]} == {"team-a"}
    chart = client.get("/audit/charts/").context["charts"]
    assert [sum(c.totals.values()) for c in chart] == [1]


def test_a_global_admin_audits_everything_including_lockouts(admin_client_: Client,
                                                             teams: None) -> None:  # fmt: skip
    AuditEntry.objects.create(username="x", action="lockout", result="rejected")
    entries = admin_client_.get("/audit/").context["page"]
    assert len(entries) == 4
    assert "—" in admin_client_.get("/audit/").content.decode()  # a lockout names no object


def test_no_audit_for_someone_admin_nowhere(tina_client: Client) -> None:
    response = tina_client.get("/audit/")
    assert response.status_code == 403
    assert "needs admin in some namespace" in response.content.decode()


def test_opsboard_user_grants_and_takes_a_role_in_a_namespace(capsys) -> None:
    call_command("opsboard_user", "sam", "--role", "operator", "--namespace", "team-a",
                 "--namespace", "team-b")  # fmt: skip
    assert "with role operator in team-a, team-b" in capsys.readouterr().out
    sam = User.objects.get(username="sam")
    assert access_of(sam).everywhere is None
    assert dict(sam.namespace_grants.values_list("namespace", "role")) == {
        "team-a": "operator", "team-b": "operator",
    }  # fmt: skip
    call_command("opsboard_user", "sam", "--role", "none", "--namespace", "team-b")
    assert list(sam.namespace_grants.values_list("namespace", flat=True)) == ["team-a"]


def test_the_django_admin_grants_a_role_in_a_namespace(admin_client_: Client, tina: User) -> None:
    url = f"/admin/auth/user/{tina.pk}/change/"
    page = admin_client_.get(url)
    assert b"in single namespaces" in page.content
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "groups"}
    data |= {"date_joined_0": "2026-01-01", "date_joined_1": "00:00:00", "password": "x"}
    grants = list(tina.namespace_grants.order_by("namespace"))
    prefix = "namespace_grants"
    data |= {
        f"{prefix}-TOTAL_FORMS": "3", f"{prefix}-INITIAL_FORMS": "2",
        f"{prefix}-MIN_NUM_FORMS": "0", f"{prefix}-MAX_NUM_FORMS": "1000",
        f"{prefix}-0-id": grants[0].pk, f"{prefix}-0-user": tina.pk,
        f"{prefix}-0-namespace": "team-a", f"{prefix}-0-role": "operator",
        f"{prefix}-1-id": grants[1].pk, f"{prefix}-1-user": tina.pk,
        f"{prefix}-1-namespace": "team-b", f"{prefix}-1-role": "viewer",
        f"{prefix}-2-user": tina.pk, f"{prefix}-2-namespace": "team-c",
        f"{prefix}-2-role": "viewer",
    }  # fmt: skip
    response = admin_client_.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert NamespaceGrant.objects.get(user=tina, namespace="team-c").role == "viewer"
