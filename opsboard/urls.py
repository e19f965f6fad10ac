from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from opsboard.accounts.local_login import admin_login
from opsboard.accounts.logout import LogoutView
from opsboard.accounts.views import LoginView
from opsboard.core import probes
from opsboard.engine.views import metrics_view


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Pages without opsboard's `<link rel="icon">` (Django admin's) make the browser ask."""
    return HttpResponsePermanentRedirect(static("opsboard/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("healthz", probes.healthz, name="healthz"),
    path("readyz", probes.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/login/", admin_login),  # before admin's own: one login page for all
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("oidc/", include("mozilla_django_oidc.urls")),
    path("", include("opsboard.dashboard.urls")),
]

handler404 = "opsboard.core.not_found.page_not_found"
handler500 = "opsboard.core.server_error.server_error"
