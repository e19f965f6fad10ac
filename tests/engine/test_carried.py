"""Which changes of a batch are queued before their mirror write, and which copy a run takes."""

from __future__ import annotations

import orjson

from controllers.base import Key
from opsboard.engine import carried
from opsboard.mirror.writer import ADDED, DELETED, MODIFIED, Change, snapshot
from tests.engine.toy import TOY
from tests.mirror.factories import obj


def _change(type_: str, body: dict[str, object], *, mirrored: bool = True) -> Change:
    return Change(type_, TOY, body, snapshot(body) if mirrored else None)


def test_only_a_modification_of_a_mirrored_object_goes_first() -> None:
    edited, new, gone = obj(TOY, "edited"), obj(TOY, "new"), obj(TOY, "gone")
    replayed = obj(TOY, "replayed")
    changes = [
        _change(MODIFIED, edited),
        _change(ADDED, new, mirrored=False),
        _change(MODIFIED, gone),
        _change(DELETED, gone),  # its last change: the object is going, mirror first
        _change(MODIFIED, replayed, mirrored=False),  # a replay: the mirror knows no previous
    ]
    assert [change.body["metadata"]["name"] for change in carried.early(changes)] == ["edited"]


def test_an_unnumbered_version_is_not_carried() -> None:
    body = obj(TOY, "odd")
    body["metadata"]["resourceVersion"] = "abc"
    assert carried.early([_change(MODIFIED, body)]) == []


def test_a_key_carries_its_object_s_last_change() -> None:
    first, last = obj(TOY, "a", uid="u-a"), obj(TOY, "a", uid="u-a", generation=2)
    other = obj(TOY, "b", namespace="elsewhere")
    changes = [_change(MODIFIED, first), _change(MODIFIED, other), _change(MODIFIED, last)]
    keys = [Key("toy", "default", "a"), Key("toy", "elsewhere", "b")]
    assert carried.bodies(keys, changes) == {
        keys[0]: orjson.dumps(last),
        keys[1]: orjson.dumps(other),
    }


def test_the_run_takes_the_newer_copy_and_never_revives_an_object_the_mirror_lacks() -> None:
    old, new = obj(TOY, "a", uid="u-a"), obj(TOY, "a", uid="u-a", generation=2)
    assert carried.newer(old, orjson.dumps(new)) == new
    assert carried.newer(new, orjson.dumps(old)) == new
    assert carried.newer(old, b"") == old
    assert carried.newer(None, orjson.dumps(new)) is None
