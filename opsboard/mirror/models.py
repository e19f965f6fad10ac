"""The mirror: a database copy of every watched object, kept by the watcher.

Pages, filters and owner trees read from here, never from the API server, and
controllers read from here instead of calling the API (an informer cache).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import F, Q

from opsboard.mirror.fields import JSONField

# The columns that repeat parts of `body`, kept apart for filters and indexes.
BODY_COPIES = ("labels", "annotations", "owner_references", "spec", "status")


def body_copies(body: dict[str, Any]) -> dict[str, Any]:
    """The BODY_COPIES columns' values for an object's body, as the watcher writes them."""
    meta = body.get("metadata") or {}
    status = body.get("status")
    return {
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "owner_references": meta.get("ownerReferences") or [],
        "spec": body.get("spec") or {},
        "status": status if isinstance(status, dict) else {},
    }


# The status describes an older spec than the one the user wrote. Not so for an object being
# deleted: kube-apiserver raises its generation as it marks it, and no controller observes
# that. KubeObject.is_stale in Python.
STALE = Q(observed_generation__lt=F("generation"), deleted_at__isnull=True)


class KubeObject(models.Model):
    """One watched Kubernetes object, as last seen by the watcher."""

    api_version = models.CharField(max_length=100)  # "apps/v1", "cache.example.com/v1alpha1"
    kind = models.CharField(max_length=100)  # "Deployment", "Memcached"
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, unique=True)
    resource_version = models.CharField(max_length=32)
    generation = models.BigIntegerField(default=0)
    # status.observedGeneration, kept apart so "stale" is one indexed comparison.
    observed_generation = models.BigIntegerField(null=True, blank=True)
    labels = JSONField(default=dict)
    annotations = JSONField(default=dict)
    owner_references = JSONField(default=list)
    # uid of the controller owner (the ownerReference with controller: true), "" if none.
    owner_uid = models.CharField(max_length=64, blank=True, db_index=True)
    spec = JSONField(default=dict)
    status = JSONField(default=dict)
    # The whole object as the API returned it (for the YAML view and for controllers).
    body = JSONField(default=dict)
    # Derived for filters: "Available", "Progressing", "Degraded" or "Unknown".
    health = models.CharField(max_length=16, default="Unknown")
    created_at = models.DateTimeField(null=True, blank=True)  # metadata.creationTimestamp
    deleted_at = models.DateTimeField(null=True, blank=True)  # metadata.deletionTimestamp
    mirrored_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["api_version", "kind", "namespace", "name"], name="mirror_unique_object"
            )
        ]
        indexes = [
            models.Index(fields=["kind", "namespace", "name"]),
            models.Index(fields=["kind", "health"]),
            models.Index(fields=["kind", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def is_stale(self) -> bool:
        """As STALE."""
        return (
            self.observed_generation is not None
            and self.observed_generation < self.generation
            and self.deleted_at is None
        )


class KindWatch(models.Model):
    """Where the watcher is in the stream of one kind: what it resumes from after a restart."""

    api_version = models.CharField(max_length=100)
    kind = models.CharField(max_length=100)
    resource_version = models.CharField(max_length=32, blank=True)
    listed_at = models.DateTimeField(null=True, blank=True)  # last full list (start, 410 Gone)
    last_event_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "kind watches"
        constraints = [
            models.UniqueConstraint(fields=["api_version", "kind"], name="mirror_unique_kind_watch")
        ]

    def __str__(self) -> str:
        return f"{self.kind} @ {self.resource_version}"


class WatcherHeartbeat(models.Model):
    """One row per watcher process; the leader keeps its row fresh while it watches."""

    identity = models.CharField(max_length=200, unique=True)
    is_leader = models.BooleanField(default=False)
    started_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField(db_index=True)
    # Why this watcher could not take or renew the Lease at its last attempt (the API server
    # unreachable, a 403), "" when it could, or when another watcher holds it.
    lease_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"{self.identity} ({'leader' if self.is_leader else 'standby'})"


class SpecVersion(models.Model):
    """The spec of a watched CR at each generation the watcher saw, and who wrote it: the
    change history of CRs changed outside opsboard too (kubectl, GitOps)."""

    uid = models.CharField(max_length=64)
    api_version = models.CharField(max_length=100)
    kind = models.CharField(max_length=100)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    generation = models.BigIntegerField()
    spec = JSONField(default=dict)
    # The field manager that last wrote the spec, where the API server reports managedFields.
    manager = models.CharField(max_length=128, blank=True)
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["uid", "generation"], name="mirror_unique_spec_version")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} generation {self.generation}"
