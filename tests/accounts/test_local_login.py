"""OPSBOARD_LOCAL_LOGIN=false: no password logs anyone in, not through Django admin's login
either, whose URL leads to opsboard's login page (keeping where admin was going)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from tests.accounts.users import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser("root", password=PASSWORD)


@pytest.fixture
def sso_only(settings: Any) -> None:
    settings.OPSBOARD_OIDC_ISSUER = "https://sso.example.com"
    settings.OPSBOARD_LOCAL_LOGIN = False


def test_with_local_login_off_the_admin_login_post_logs_nobody_in(
    superuser: User, sso_only: None
) -> None:
    client = Client()
    response = client.post("/admin/login/?next=/admin/",
                           {"username": "root", "password": PASSWORD, "next": "/admin/"})  # fmt: skip
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302  # still to a login page


def test_with_local_login_off_no_authenticate_caller_accepts_a_password(
    superuser: User, sso_only: None
) -> None:
    request = RequestFactory().post("/anywhere/", REMOTE_ADDR="10.5.0.1")
    assert authenticate(request, username="root", password=PASSWORD) is None


def test_with_local_login_on_the_admin_logs_in_through_the_product_login_page(
    superuser: User,
) -> None:
    client = Client()
    sent = client.get("/admin/login/?next=/admin/auth/user/")
    assert sent["Location"] == "/accounts/login/?next=%2Fadmin%2Fauth%2Fuser%2F"
    response = client.post("/accounts/login/",
                           {"username": "root", "password": PASSWORD, "next": "/admin/"})  # fmt: skip
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    request = RequestFactory().post("/anywhere/", REMOTE_ADDR="10.5.0.2")
    assert authenticate(request, username="root", password=PASSWORD) == superuser
