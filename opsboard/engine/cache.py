"""`controllers.base.Cache` served from the mirror: a no-op reconcile makes no API read."""

from __future__ import annotations

from collections.abc import Mapping

from controllers.base import Body, Kind
from opsboard.mirror.models import KubeObject


class MirrorCache:
    """One run's view of the mirror. An object read twice in a run (the engine reads the
    primary for the run log, the controller reads it again) is read from the database once.
    """

    def __init__(self) -> None:
        self._got: dict[tuple[str, str, str, str], Body | None] = {}

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        key = (kind.api_version, kind.kind, namespace, name)
        if key not in self._got:
            self._got[key] = (
                KubeObject.objects.filter(
                    api_version=kind.api_version, kind=kind.kind, namespace=namespace, name=name
                )
                .values_list("body", flat=True)
                .first()
            )
        return self._got[key]

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
