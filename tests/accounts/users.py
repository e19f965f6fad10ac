"""Users in each role, and clients logged in as them (a plugin listed in tests/conftest.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from opsboard.accounts.roles import Role, role_assign

PASSWORD = "correct horse battery staple"


def _user(username: str, role: Role | None) -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    if role is not None:
        role_assign(user=user, role=role)
    return user


@pytest.fixture
def viewer(db: None) -> User:
    return _user("vera", Role.VIEWER)


@pytest.fixture
def operator(db: None) -> User:
    return _user("otto", Role.OPERATOR)


@pytest.fixture
def admin_user(db: None) -> User:
    return _user("ada", Role.ADMIN)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer_client(viewer: User) -> Client:
    return _client(viewer)


@pytest.fixture
def operator_client(operator: User) -> Client:
    return _client(operator)


@pytest.fixture
def admin_client_(admin_user: User) -> Client:
    return _client(admin_user)
