"""Django admin: a person's roles in single namespaces are edited on their user page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.http import HttpRequest

from opsboard.accounts.access import Access
from opsboard.accounts.models import NamespaceGrant
from opsboard.accounts.role_changes import access_read, role_changes_announce

if TYPE_CHECKING:  # the admin classes are generic for the type checker only
    TabularInline = admin.TabularInline[Any, Any]
    BaseUserAdmin = UserAdmin[User]
else:
    TabularInline = admin.TabularInline
    BaseUserAdmin = UserAdmin


class NamespaceGrantInline(TabularInline):
    model = NamespaceGrant
    extra = 1
    fields = ("namespace", "role", "source")
    readonly_fields = ("source",)
    verbose_name = "role in one namespace"
    verbose_name_plural = "roles in single namespaces (the global role is the viewer, "
    "operator or admin group above)"


class OpsboardUserAdmin(BaseUserAdmin):
    inlines = [NamespaceGrantInline]

    # The roles before the save (the user's flags and groups, then the grants inline, are
    # saved in two steps); what changed is announced for the audit once both are done.
    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        obj.__dict__["_opsboard_access_before"] = access_read(obj) if change else Access()
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        user = form.instance
        before = user.__dict__.pop("_opsboard_access_before", Access())
        actor = request.user if isinstance(request.user, User) else None
        role_changes_announce(target=user, actor=actor, by="Django admin", before=before)


admin.site.unregister(User)
admin.site.register(User, OpsboardUserAdmin)
