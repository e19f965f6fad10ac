"""Who may do what where, and which sessions a person holds.

A person's global role is a Django group (opsboard.accounts.roles); a NamespaceGrant
gives a role in one namespace only. The higher of the two wins in that namespace.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

ROLE_CHOICES = [("viewer", "viewer"), ("operator", "operator"), ("admin", "admin")]


class NamespaceGrant(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="namespace_grants"
    )
    namespace = models.CharField(max_length=253)
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)
    # "manual" grants survive an SSO login; "oidc" ones are replaced by the groups claim.
    source = models.CharField(max_length=16, default="manual", editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="one_grant_per_namespace")
        ]
        ordering = ["namespace"]

    def __str__(self) -> str:
        return f"{self.role} in {self.namespace}"


class LoginSession(models.Model):
    """A session a person logged in with, so that it can be ended from outside it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_sessions"
    )
    session_key = models.CharField(max_length=40, unique=True)
    started_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} since {self.started_at:%Y-%m-%d %H:%M}"


class SsoIdentity(models.Model):
    """Who a person is at the identity provider: logins are matched on the subject, never
    on a name or address the person could change there."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    groups = models.JSONField(default=list)  # as of the last login

    class Meta:
        verbose_name = "SSO identity"
        verbose_name_plural = "SSO identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_subject")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
