"""The pages around logging in speak the product's language: who is signed in, a form
that expired, a person who holds no role."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.accounts.users import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_login_page_says_who_is_signed_in(viewer_client: Client, viewer: User) -> None:
    page = viewer_client.get("/accounts/login/").content.decode()
    assert f"You are signed in as {viewer.username}." in page
    assert "signed in as" not in Client().get("/accounts/login/").content.decode()


def test_a_form_without_its_token_gets_the_products_page_saying_to_reload(viewer: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(viewer)
    response = client.post("/accounts/logout/")  # a page from before a login, say
    assert response.status_code == 403
    page = response.content.decode()
    assert "Reload the page and try again." in page
    assert 'class="who"' in page and viewer.username in page  # the product's header
    assert "_auth_user_id" in client.session  # nothing was done


def test_a_person_without_any_role_is_told_so_in_plain_words() -> None:
    client = Client()
    client.force_login(User.objects.create_user("nora", password=PASSWORD))
    page = client.get("/audit/").content.decode()
    assert "you hold no role anywhere" in page and "you are no role" not in page


def test_the_overview_of_a_person_without_any_role_says_so_and_who_can_grant_one(
    admin_user: User,
) -> None:
    client = Client()
    client.force_login(User.objects.create_user("nora", password=PASSWORD))
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "You hold no role" in page and f"Ask an admin ({admin_user.username})" in page
    assert "Every resource is Available" not in page and "overview-live" not in page
