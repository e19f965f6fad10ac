"""The CRDs of OPSBOARD_GENERIC_KINDS, read once when the watcher starts to lead: their
kinds are mirrored (no reconcile), and the CRDs themselves too, so the dashboard builds
their pages from the mirror."""

from __future__ import annotations

import logging

from django.conf import settings

from controllers.base import Body, Kind, PermanentError, TemporaryError
from controllers.generic import kind_of
from controllers.kube import ApiKube
from opsboard.mirror.writer import ADDED, mirror_apply

log = logging.getLogger(__name__)
CRD = Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
           "customresourcedefinitions", namespaced=False)  # fmt: skip


def generic_kinds(kube: ApiKube) -> list[Kind]:
    """The kinds to mirror for OPSBOARD_GENERIC_KINDS; a CRD that cannot be read is logged
    with what to do, and left out."""
    kinds, crds = [], []
    for name in settings.OPSBOARD_GENERIC_KINDS:
        try:
            crd: Body | None = kube.get(CRD, "", name)
        except (PermanentError, TemporaryError) as exc:
            log.error("OPSBOARD_GENERIC_KINDS: cannot read CRD %s (%s); not shown", name, exc)
            continue
        if crd is None:
            log.error("OPSBOARD_GENERIC_KINDS: no CRD named %s in the cluster; not shown", name)
            continue
        crds.append((ADDED, crd))
        kinds.append(kind_of(crd))
    if crds:
        mirror_apply(kind=CRD, events=crds)
    return kinds
