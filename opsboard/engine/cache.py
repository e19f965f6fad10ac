"""`controllers.base.Cache` served from the mirror: a no-op reconcile makes no API read."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson
from django.db import connection

from controllers.base import Body, Kind, PermanentError, TemporaryError
from controllers.kube import ApiKube
from controllers.ownership import INSTANCE_LABEL
from opsboard.engine import own_status
from opsboard.mirror import instance_index
from opsboard.mirror.models import KubeObject

log = logging.getLogger(__name__)
_TABLE = KubeObject._meta.db_table
# Every reconcile reads here, so by prepared SQL on indexed columns: building the same
# queries through the ORM cost more CPU than running them.
_GET = (
    f"SELECT body FROM {_TABLE}"
    " WHERE api_version = %s AND kind = %s AND namespace = %s AND name = %s"
)


class MirrorCache:
    """One run's view of the mirror. An object read twice in a run (the engine reads the
    primary for the run log, the controller reads it again) is read from the database once.
    """

    def __init__(self) -> None:
        self._got: dict[tuple[str, str, str, str], Body | None] = {}

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        key = (kind.api_version, kind.kind, namespace, name)
        if key not in self._got:
            with connection.cursor() as cursor:
                cursor.execute(_GET, list(key))
                row = cursor.fetchone()
            body = orjson.loads(row[0]) if row else None
            self._got[key] = own_status.newest(kind, namespace, name, body)
        return self._got[key]

    def refresh(self, kind: Kind, namespace: str, name: str, kube: ApiKube) -> Body | None:
        """The object read from the server instead, when the mirror is known to be behind
        (own_status); the mirror's copy still if the server cannot be asked."""
        key = (kind.api_version, kind.kind, namespace, name)
        try:
            self._got[key] = kube.get(kind, namespace, name)
        except (TemporaryError, PermanentError) as exc:
            log.warning("Could not read %s %s/%s: %s", kind.kind, namespace, name, exc)
            return self.get(kind, namespace, name)
        return self._got[key]

    def events_about(self, obj: Body) -> list[Body]:
        """One indexed query: the mirror files an Event under its involvedObject's uid."""
        uid = str(obj.get("metadata", {}).get("uid") or "")
        if not uid:
            return []
        rows = KubeObject.objects.filter(kind="Event", api_version="v1", owner_uid=uid)
        return list(rows.values_list("body", flat=True))

    def list(
        self, kind: Kind, namespace: str, *, labels: Mapping[str, str] | None = None
    ) -> list[Body]:
        selector = dict(labels or {})
        instance = selector.get(INSTANCE_LABEL)
        if instance is not None and instance_index.supported(connection.vendor):
            sql = instance_index.select_sql(connection.vendor, _TABLE, "body")
            with connection.cursor() as cursor:
                cursor.execute(sql, [kind.kind, namespace, instance, kind.api_version])
                bodies = [orjson.loads(body) for (body,) in cursor.fetchall()]
        else:
            objects = KubeObject.objects.filter(
                api_version=kind.api_version, kind=kind.kind, namespace=namespace
            )
            if selector:
                objects = objects.filter(**{f"labels__{k}": v for k, v in selector.items()})
            bodies = list(objects.order_by("name").values_list("body", flat=True))
        return [
            body
            for body in bodies
            if all((body["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
        ]
