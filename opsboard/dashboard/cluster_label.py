"""Which cluster the dashboard manages, named on every page and in every review: with an
opsboard per cluster open in a few tabs, a change must not go to the wrong one."""

from __future__ import annotations

from typing import NamedTuple

from django.conf import settings

from controllers.kube import context_in_use
from opsboard.dashboard import crclient


class ClusterLabel(NamedTuple):
    name: str  # OPSBOARD_CLUSTER_NAME, else the kubeconfig context's name, else "in-cluster"
    server: str  # the API server's URL, "" when the kubeconfig cannot be used


_known: dict[tuple[str, str, str], ClusterLabel] = {}  # per process, once the server is known


def cluster_label() -> ClusterLabel:
    key = (settings.KUBECONFIG, settings.KUBE_CONTEXT, settings.CLUSTER_NAME)
    label = _known.get(key)
    if label is None:
        label = _label(*key)
        if label.server:  # else looked for again: the kubeconfig may be written later
            _known[key] = label
    return label


def _label(kubeconfig: str, context: str, name: str) -> ClusterLabel:
    try:
        server = crclient.api_host()
    except crclient.ClusterError:
        server = ""
    if not name:
        name = context_in_use(kubeconfig, context) if kubeconfig else "in-cluster"
    return ClusterLabel(name or server or "unknown", server)
