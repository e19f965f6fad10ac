"""Audit entries: every change a person made through opsboard, and its result; every
login lockout (no object: controller, kind, namespace and name are empty); every change
to a person's roles; every end put to their sessions and every lockout lifted, by hand."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        PATCH = "patch"
        RECONCILE = "reconcile", "manual reconcile"
        LOCKOUT = "lockout", "login lockout"
        ROLE = "role", "role change"  # kind "User", name: the person, namespace "" everywhere
        REVOKE = "revoke", "sessions ended"  # kind "User", name: the person
        UNLOCK = "unlock", "lockout lifted"  # name: the username, if one was given

    class Result(models.TextChoices):
        APPLIED = "applied"
        REJECTED = "rejected"  # the API refused it (422, 409, 403); a login refused
        FAILED = "failed"  # the cluster could not be reached

    # When the change was asked for (before it reached the cluster or the queue): a run
    # that started after it may have observed it, one that started before cannot.
    at = models.DateTimeField(default=timezone.now, editable=False, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    username = models.CharField(max_length=150)  # kept when the user is deleted
    # Who the API server saw, when the web impersonated the person (prefix included):
    # what its RBAC decided on and its own audit log names. Empty without impersonation.
    kube_user = models.CharField(max_length=255, blank=True)
    kube_groups = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=16, choices=Action.choices)
    controller = models.CharField(max_length=63)
    kind = models.CharField(max_length=100)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    before = models.JSONField(default=dict)  # {"spec.size": 3}
    after = models.JSONField(default=dict)  # {"spec.size": 5}
    result = models.CharField(max_length=16, choices=Result.choices)
    message = models.TextField(blank=True)
    generation = models.BigIntegerField(null=True, blank=True)  # generation the patch produced
    # A revert names what it undoes: an entry of this audit, or (for a change made outside
    # opsboard, which has none) the generation that change produced.
    reverts = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reverted_by"
    )
    reverts_generation = models.BigIntegerField(null=True, blank=True)
    # The reconcile run that first observed that generation, filled in once it exists.
    observed_by = models.ForeignKey(
        "engine.ReconcileRun", null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-at"]
        indexes = [
            models.Index(fields=["controller", "namespace", "name", "-at"]),
            # Each recorded reconcile run looks for the entries it observes, among the few
            # not linked yet: a small partial index, however long the audit grows.
            models.Index(
                fields=["uid", "generation"],
                condition=models.Q(observed_by__isnull=True),
                name="audit_unlinked_by_uid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.username} {self.action} {self.kind} {self.namespace}/{self.name}"
