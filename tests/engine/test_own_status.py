"""A run's own status write stands in for the mirror's copy only while the mirror is older."""

from __future__ import annotations

from opsboard.engine import own_status
from tests.engine.toy import TOY
from tests.mirror.factories import obj


def _at(version: int, size: int) -> dict[str, object]:
    body = obj(TOY, "kept", namespace="own-status", uid="u-kept", status={"size": size})
    body["metadata"]["resourceVersion"] = str(version)
    return body


def test_the_write_is_read_until_the_mirror_has_it_then_forgotten() -> None:
    own_status.remember(TOY, _at(10, 2))
    assert own_status.newest(TOY, "own-status", "kept", _at(9, 1)) == _at(10, 2)
    assert own_status.newest(TOY, "own-status", "kept", _at(11, 3)) == _at(11, 3)
    assert own_status.newest(TOY, "own-status", "kept", _at(9, 1)) == _at(9, 1)  # forgotten


def test_an_object_gone_from_the_mirror_stays_gone() -> None:
    own_status.remember(TOY, _at(20, 2))
    assert own_status.newest(TOY, "own-status", "kept", None) is None
    assert own_status.newest(TOY, "own-status", "other", _at(5, 1)) == _at(5, 1)
