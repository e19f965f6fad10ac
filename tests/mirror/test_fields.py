"""The mirror's JSON columns decode with orjson, and as Django's JSONField does where it
refuses."""

from __future__ import annotations

import pytest

from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import mirror_object

pytestmark = pytest.mark.django_db


def test_bodies_read_back_as_written_even_where_orjson_refuses() -> None:
    body = {"spec": {"replicas": 3, "big": 2**70, "text": "é\u2603"}}  # 2**70: beyond orjson
    obj = mirror_object("Pod", "p", labels={"app": "web", "tier": "123"})
    KubeObject.objects.filter(pk=obj.pk).update(body=body)
    read = KubeObject.objects.get(pk=obj.pk)
    spec = read.body["spec"]
    assert (spec["replicas"], spec["big"], spec["text"]) == (3, 2**70, "é\u2603")
    assert read.labels == {"app": "web", "tier": "123"}
    # A key's value read alone is what Django's JSONField gives (its own quirks included).
    assert list(KubeObject.objects.filter(pk=obj.pk).values_list("labels__app", flat=True)) == [
        "web"
    ]
