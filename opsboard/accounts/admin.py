"""Django admin: a person's roles in single namespaces are edited on their user page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User

from opsboard.accounts.models import NamespaceGrant

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


admin.site.unregister(User)
admin.site.register(User, OpsboardUserAdmin)
