"""`controllers.base.Cache` served from the mirror: a no-op reconcile makes no API read."""

from __future__ import annotations

from collections.abc import Mapping

from controllers.base import Body, Kind
from opsboard.mirror.models import KubeObject


class MirrorCache:
    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        return (
            KubeObject.objects.filter(
                api_version=kind.api_version, kind=kind.kind, namespace=namespace, name=name
            )
            .values_list("body", flat=True)
            .first()
        )

    def list(
        self, kind: Kind, namespace: str, *, labels: Mapping[str, str] | None = None
    ) -> list[Body]:
        objects = KubeObject.objects.filter(
            api_version=kind.api_version, kind=kind.kind, namespace=namespace
        )
        if labels:
            objects = objects.filter(**{f"labels__{key}": value for key, value in labels.items()})
        bodies = objects.order_by("name").values_list("body", flat=True)
        selector = dict(labels or {})
        return [
            body
            for body in bodies
            if all((body["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
        ]
