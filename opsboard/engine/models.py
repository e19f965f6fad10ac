"""The reconcile log: one row per reconcile run, with its ordered actions."""

from __future__ import annotations

from typing import Any

from django.db import models

from opsboard.mirror.fields import JSONField


class ReconcileRun(models.Model):
    class Outcome(models.TextChoices):
        # The labels are the one wording of outcomes, on every page and in the console.
        SUCCESS = "success", "Success"
        REQUEUE = "requeue", "Requeue"
        ERROR = "error", "Error"
        PERMANENT = "permanent", "Permanent error"

    class Trigger(models.TextChoices):
        EVENT = "event"
        RESYNC = "resync"
        MANUAL = "manual"
        RETRY = "retry"
        REQUEUE = "requeue"

    controller = models.CharField(max_length=63)  # Controller.name, e.g. "memcached"
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True, db_index=True)
    generation = models.BigIntegerField(null=True, blank=True)  # the generation observed
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    trigger_detail = models.CharField(max_length=200, blank=True)  # "MODIFIED Deployment x"
    worker = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)
    requeue_after = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    actions = JSONField(default=list)  # ["Created Deployment x", ...] in order
    # The timeline: every trigger merged into this run while it waited, oldest first
    # ([{"trigger": "event", "detail": "MODIFIED Pod ns/x", "at": unix time}]), how many
    # more were not kept, its wait in the queue, the backoff step it ran at (consecutive
    # failures before it) and when the key runs again by itself.
    triggers = JSONField(default=list)
    triggers_dropped = models.PositiveIntegerField(default=0)
    queue_wait_ms = models.FloatField(null=True, blank=True)
    backoff_step = models.PositiveIntegerField(default=0)
    next_due_at = models.DateTimeField(null=True, blank=True)
    # Runs that changed nothing are folded into the previous such run of the same key.
    folded_count = models.PositiveIntegerField(default=0)
    last_folded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["controller", "namespace", "name", "-started_at"]),
            models.Index(fields=["outcome", "-started_at"]),
        ]
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.controller}/{self.namespace}/{self.name} {self.outcome} @ {self.started_at}"

    @property
    def merged(self) -> list[dict[str, Any]]:
        """The triggers this run served, each with how long before the start it came."""
        start = self.started_at.timestamp()
        return [
            {**t, "before_ms": max(start - float(t.get("at") or start), 0.0) * 1000}
            for t in self.triggers or []
        ]
