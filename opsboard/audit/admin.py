"""Django admin: audit entries and reconcile runs are records, so they are read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest

from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun

if TYPE_CHECKING:  # ModelAdmin is generic for the type checker only
    ModelAdmin = admin.ModelAdmin[Any]
else:
    ModelAdmin = admin.ModelAdmin


class ReadOnlyAdmin(ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("at", "username", "action", "kind", "namespace", "name", "result")
    list_filter = ("action", "result", "controller")
    search_fields = ("username", "name", "namespace")
    date_hierarchy = "at"


@admin.register(ReconcileRun)
class ReconcileRunAdmin(ReadOnlyAdmin):
    list_display = (
        "started_at",
        "controller",
        "namespace",
        "name",
        "trigger",
        "outcome",
        "duration_ms",
    )
    list_filter = ("controller", "outcome", "trigger")
    search_fields = ("name", "namespace", "error")
    date_hierarchy = "started_at"
