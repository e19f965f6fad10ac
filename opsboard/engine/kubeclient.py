"""The process's connection to the cluster, built once from settings (per process)."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from controllers.kube import OPERATOR_FIELD_MANAGER, ApiKube, EventRecorder, load_api_client


@cache
def api_kube() -> ApiKube:
    client = load_api_client(
        kubeconfig=settings.KUBECONFIG,
        context=settings.KUBE_CONTEXT,
        user_agent=OPERATOR_FIELD_MANAGER,
    )
    return ApiKube(
        client, timeout=settings.KUBE_REQUEST_TIMEOUT, field_manager=OPERATOR_FIELD_MANAGER
    )


@cache
def event_recorder() -> EventRecorder:
    return EventRecorder(api_kube(), component="opsboard")
