from __future__ import annotations

from django.urls import path

from opsboard.dashboard.views import audit, changes, crs, overview

_CR = "k/<slug:controller>/<str:namespace>/<str:name>/"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("crs/", crs.cr_list_all, name="cr_list_all"),
    path("k/<slug:controller>/", crs.cr_list, name="cr_list"),
    path(_CR, crs.cr_detail, name="cr_detail"),
    path(_CR + "live/", crs.cr_live, name="cr_live"),
    path(_CR + "pods/<str:pod>/log/", crs.cr_pod_log, name="cr_pod_log"),
    path(_CR + "pods/<str:pod>/log/whole/", crs.cr_pod_log_whole, name="cr_pod_log_whole"),
    path(_CR + "patch/", changes.cr_patch, name="cr_patch"),
    path(_CR + "patch/apply/", changes.cr_patch_confirm, name="cr_patch_confirm"),
    path(_CR + "reconcile/", changes.cr_reconcile, name="cr_reconcile"),
    path(_CR + "history/<slug:change>/revert/", changes.cr_revert, name="cr_revert"),
    path("audit/", audit.audit_list, name="audit_list"),
    path("audit/export.csv", audit.audit_export, name="audit_export"),
    path("audit/runs/", audit.run_list, name="run_list"),
    path("audit/charts/", audit.run_charts, name="run_charts"),
]
