"""Single sign-on's own rules, without a browser: the group mapping, the ID token's issuer
and audience (real RS256 tokens, verified by the backend), and names never taken over."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from opsboard.accounts import oidc
from opsboard.accounts.access import access_of
from opsboard.accounts.group_roles import GroupRole, parse_group_roles
from opsboard.accounts.oidc import Provider, SsoBackend, SsoRefused
from opsboard.accounts.roles import Role, grant_assign
from opsboard.accounts.sso_roles import roles_from_groups
from opsboard.audit.models import AuditEntry
from tests.accounts.users import PASSWORD

ISSUER = "https://sso.example.com/realms/platform"
RULES = parse_group_roles("platform-admins=admin,team-a-ops=operator:team-a,all=viewer:team-a")


def test_the_group_mapping_reads_global_and_namespace_roles() -> None:
    assert [
        GroupRole("platform-admins", "admin", None),
        GroupRole("team-a-ops", "operator", "team-a"),
        GroupRole("all", "viewer", "team-a"),
    ] == RULES
    assert parse_group_roles("") == []


@pytest.mark.parametrize("raw", ["team-a-ops", "x=root", "=admin", "x=operator:Team_A"])
def test_a_bad_mapping_item_stops_start_up_naming_it(raw: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="OPSBOARD_OIDC_GROUP_ROLES"):
        parse_group_roles(raw)


def test_the_highest_role_a_group_gives_wins() -> None:
    assert roles_from_groups(["all", "team-a-ops"], RULES) == (None, {"team-a": Role.OPERATOR})
    assert roles_from_groups(["platform-admins"], RULES) == (Role.ADMIN, {})
    assert roles_from_groups(["nothing"], RULES) == (None, {})


@pytest.fixture
def signing(settings: Any) -> Any:
    """A provider whose ID tokens are signed with this key (verified as the backend does)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    settings.OPSBOARD_OIDC_ISSUER = ISSUER
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "opsboard", "secret"
    settings.OIDC_RP_IDP_SIGN_KEY = public.decode()
    settings.OPSBOARD_OIDC_GROUP_ROLES = RULES
    oidc._discovered[ISSUER] = (time.monotonic(), Provider(ISSUER, "a", "t", "u", "j"))
    yield lambda **claims: jwt.encode(
        {"iss": ISSUER, "aud": "opsboard", "sub": "s-1", "nonce": "n", "exp": time.time() + 60}
        | claims,
        key,
        algorithm="RS256",
    )
    oidc._discovered.clear()


def test_a_token_from_our_issuer_for_us_is_accepted(signing: Any) -> None:
    payload = SsoBackend().verify_token(signing(), nonce="n")
    assert payload["sub"] == "s-1"


def test_a_token_from_another_issuer_is_refused(signing: Any) -> None:
    with pytest.raises(SsoRefused, match="Wrong issuer: the ID token was issued by"):
        SsoBackend().verify_token(signing(iss="https://evil.example.com"), nonce="n")


def test_a_token_for_another_client_is_refused(signing: Any) -> None:
    with pytest.raises(SsoRefused, match="Wrong audience: the ID token is meant for grafana"):
        SsoBackend().verify_token(signing(aud="grafana"), nonce="n")
    with pytest.raises(SsoRefused, match="Wrong audience"):  # shared, but authorised for another
        SsoBackend().verify_token(signing(aud=["opsboard", "grafana"], azp="grafana"), nonce="n")


def test_a_wrong_nonce_or_signature_is_refused(signing: Any) -> None:
    with pytest.raises(Exception, match="Nonce"):
        SsoBackend().verify_token(signing(), nonce="another")
    forged = signing()[:-4] + "AAAA"
    with pytest.raises(Exception):  # noqa: B017 (pyjwt's own error for a bad signature)
        SsoBackend().verify_token(forged, nonce="n")


@pytest.mark.django_db
def test_sso_never_takes_over_a_local_account_of_the_same_name(signing: Any) -> None:
    local = User.objects.create_user("tina", password="x")
    backend = SsoBackend()
    user = backend.create_user({"sub": "s-1", "preferred_username": "tina",
                                "groups": ["team-a-ops"]})  # fmt: skip
    assert user.pk != local.pk and user.username == "tina-sso"
    assert list(backend.filter_users_by_claims({"sub": "s-1"})) == [user]
    assert access_of(user).role_in("team-a") == Role.OPERATOR
    assert access_of(local).role_in("team-a") is None


@pytest.mark.django_db
def test_grants_made_by_hand_survive_an_sso_login(signing: Any) -> None:
    backend = SsoBackend()
    user = backend.create_user({"sub": "s-2", "preferred_username": "rob", "groups": []})
    grant_assign(user=user, namespace="team-z", role=Role.VIEWER)
    backend.update_user(user, {"sub": "s-2", "groups": ["team-a-ops"]})
    user = User.objects.get(pk=user.pk)
    grants = dict(user.namespace_grants.values_list("namespace", "source"))
    assert grants == {"team-a": "oidc", "team-z": "manual"}
    backend.update_user(user, {"sub": "s-2", "groups": []})
    assert list(user.namespace_grants.values_list("namespace", flat=True)) == ["team-z"]
    backend.update_user(user, {"sub": "s-2", "groups": []})  # no change: no entry
    # What the groups granted and took is audited, as a grant by hand is.
    roles = AuditEntry.objects.filter(action=AuditEntry.Action.ROLE).order_by("pk")
    assert [(e.namespace, e.before["role"], e.after["role"]) for e in roles] == [
        ("team-a", None, "operator"),
        ("team-a", "operator", None),
    ]
    assert {e.message.rsplit("(", 1)[1] for e in roles} == {"through single sign-on)"}


@pytest.mark.django_db
def test_with_local_passwords_off_only_sso_logs_in(viewer: User, settings: Any) -> None:
    settings.OPSBOARD_OIDC_ISSUER, settings.OPSBOARD_OIDC_NAME = ISSUER, "Acme SSO"
    settings.OPSBOARD_LOCAL_LOGIN = False
    client = Client()
    page = client.get("/accounts/login/").content.decode()
    assert "Log in with Acme SSO" in page and 'name="password"' not in page
    refused = client.post("/accounts/login/", {"username": viewer.username, "password": PASSWORD})
    assert refused.status_code == 403
    assert "Local passwords are switched off" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    settings.OPSBOARD_LOCAL_LOGIN = True
    page = client.get("/accounts/login/").content.decode()
    assert "Log in with Acme SSO" in page and 'name="password"' in page
