"""Access in the browser: a team-a operator changes a CR in team-a, sees team-b read only
(the disabled button says why) and team-c not at all; the sixth wrong password is refused
with the time to wait."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.accounts.roles import Role, grant_assign
from tests.accounts.users import PASSWORD
from tests.browser.conftest import screenshot
from tests.dashboard.mirror_factory import MEMCACHED_API, memcached_with_pods, mirror_object

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_team_operator_changes_team_a_reads_team_b_and_never_sees_team_c(
    page_as, cluster_kube: ApiKube, namespace: str, live_server
) -> None:
    team_a, team_b, team_c = namespace, f"{namespace}-b", f"{namespace}-c"
    spec = {"size": 3, "image": "memcached:1.4.36-alpine"}
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": team_a}, "spec": spec,
    })  # fmt: skip
    mirror_object("Memcached", "cache-a", namespace=team_a, api_version=MEMCACHED_API, spec=spec)
    memcached_with_pods("cache-b", size=2, namespace=team_b)
    memcached_with_pods("cache-c", size=2, namespace=team_c)
    tina = User.objects.create_user("tina", password=PASSWORD)
    grant_assign(user=tina, namespace=team_a, role=Role.OPERATOR)
    grant_assign(user=tina, namespace=team_b, role=Role.VIEWER)

    page = page_as(tina)
    assert f"operator in {team_a}, viewer in {team_b}" in page.locator("header").inner_text()
    page.get_by_role("link", name="All resources").click()
    rows = page.locator("#cr-rows tr")
    rows.first.wait_for()
    listed = rows.all_inner_texts()
    assert any("cache-a" in r for r in listed) and any("cache-b" in r for r in listed)
    assert not any("cache-c" in r for r in listed)

    # team-b: read only, and the page says why.
    rows.filter(has_text="cache-b").get_by_role("link", name="cache-b").click()
    page.get_by_role("heading", name="Owner tree").wait_for()
    review = page.get_by_role("button", name="Review change")
    assert review.is_disabled()
    assert page.get_by_role("button", name="Reconcile now").is_disabled()
    why = page.locator("[id^=cr-why-]")
    assert f"needs operator in {team_b}; you are viewer" in why.inner_text()
    assert review.get_attribute("aria-describedby") == why.get_attribute("id")
    screenshot(page, "access-read-only")

    # team-c: not there at all.
    response = page.goto(f"{live_server.url}/k/memcached/{team_c}/cache-c/")
    assert response is not None and response.status == 404

    # team-a: the change goes through.
    page.goto(f"{live_server.url}/k/memcached/{team_a}/cache-a/")
    page.get_by_label("Size (replicas)").fill("4")
    page.get_by_role("button", name="Review change").click()
    page.locator("[id^=cr-diff-]").wait_for()
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Applied:").wait_for()
    assert cluster_kube.get(MEMCACHED, team_a, "cache-a")["spec"]["size"] == 4


def test_the_sixth_wrong_password_is_refused_with_the_time_to_wait(browser, live_server,
                                                                   viewer) -> None:  # fmt: skip
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    for attempt in range(1, 7):
        page.get_by_label("Username").fill(viewer.username)
        page.get_by_label("Password").fill(f"wrong {attempt}")
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("alert").wait_for()
        if attempt < 5:
            assert "did not match" in page.get_by_role("alert").inner_text()
    alert = page.get_by_role("alert").inner_text()
    # The 5 min lockout started at the fifth failure: what is left, rounded up, is at most 5 min.
    assert "Too many failed logins" in alert
    assert re.search(r"Try again in (4 min \d+ s|5 min 0 s) \(at ", alert), alert
    screenshot(page, "login-locked-out")
    # The right password changes nothing while the lockout lasts.
    page.get_by_label("Username").fill(viewer.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    assert "Try again in" in page.get_by_role("alert").inner_text()
    context.close()


def test_a_page_open_when_its_session_ends_goes_to_the_login_page_and_back(
    page_as, live_server, viewer
) -> None:
    memcached_with_pods("cache", size=1)
    page = page_as(viewer)
    cr_page = f"{live_server.url}/k/memcached/default/cache/"
    page.goto(cr_page)
    page.get_by_role("heading", name="Owner tree").wait_for()
    call_command("opsboard_user", "--revoke", viewer.username)
    # Its next poll, within seconds: the login page in place of the page, not inside it.
    page.wait_for_url(re.compile(r"/accounts/login/\?next="))
    assert page.locator("form").count() == 1 and page.locator("header").count() == 1
    page.get_by_label("Username").fill(viewer.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(cr_page)
    page.get_by_role("heading", name="Owner tree").wait_for()
