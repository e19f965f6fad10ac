"""What drifted: the minimal merge patch over the fields an operator owns (pure)."""

from __future__ import annotations

from typing import Any

from controllers.base import Body, Manifest

# Keys that identify an item of a list of objects, tried in order (as strategic merge does):
# ownerReferences by uid, containers/env/ports by name, conditions by type.
_LIST_KEYS = ("uid", "name", "type", "containerPort", "port")


def owned_diff(
    desired: Manifest, observed: Body | None, *, exact: frozenset[str] = frozenset(), _at: str = ""
) -> Body | None:
    """The minimal merge patch that makes `observed` agree with `desired`, or None.

    Only the fields present in `desired` are compared, so fields that others own (defaults,
    annotations, an allocated nodePort, a sidecar) are kept. A list of objects that differs
    is sent whole, as the observed list with the desired items laid over it by their key.
    The maps at the dotted paths in `exact` (a Service's selector) must match key for key:
    an extra key there would change their meaning, so the patch removes it (null, or left
    out of a list sent whole); a list there must hold the desired items and no others (a
    pod's imagePullSecrets). "[]" in a path stands for every item of a list
    ("spec.template.spec.containers[].resources").
    """
    observed = observed or {}
    patch: Body = {}
    for key, want in desired.items():
        have, path = observed.get(key), f"{_at}{key}"
        if want == {} and have is None:
            continue  # the server leaves an empty map out of what it returns
        if isinstance(want, dict) and isinstance(have, dict):
            sub = owned_diff(want, have, exact=exact, _at=f"{path}.")
            extra = {k: None for k in have if k not in want} if path in exact else {}
            if sub is not None or extra:
                patch[key] = {**extra, **(sub or {})}
        elif isinstance(want, list) and isinstance(have, list):
            items = f"{path}[]."
            if not _list_covers(want, have, exact, items):
                patch[key] = _overlay_list(want, have, exact, items)
        elif want != have:
            patch[key] = want
    return patch or None


def _list_key(items: list[Any]) -> str | None:
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    return next((k for k in _LIST_KEYS if all(k in item for item in items)), None)


def _list_covers(want: list[Any], have: list[Any], exact: frozenset[str], at: str) -> bool:
    """Whether every desired item is in `have` as it should be (`at`: the items' path),
    and, for a list at an exact path, no other item is."""

    def agree(w: Any, h: Any) -> bool:
        if isinstance(w, dict) and isinstance(h, dict):
            return owned_diff(w, h, exact=exact, _at=at) is None
        return bool(w == h)

    key = _list_key(want)
    if key is None:
        return len(want) == len(have) and all(agree(w, h) for w, h in zip(want, have, strict=True))
    by_key = {item.get(key): item for item in have if isinstance(item, dict)}
    if _whole(exact, at) and len(have) != len(want):
        return False
    return all(item[key] in by_key and agree(item, by_key[item[key]]) for item in want)


def _whole(exact: frozenset[str], at: str) -> bool:
    """Whether the list whose items' path is `at` ("a.b[].") is exact."""
    return at.removesuffix("[].") in exact


def _overlay_list(want: list[Any], have: list[Any], exact: frozenset[str], at: str) -> list[Any]:
    key = _list_key(want)
    if key is None:
        return want
    wanted = {item[key]: item for item in want}
    merged = [
        _overlay(item, wanted[item[key]], exact, at)
        if isinstance(item, dict) and item.get(key) in wanted
        else item
        for item in have
        if not _whole(exact, at) or (isinstance(item, dict) and item.get(key) in wanted)
    ]
    present = {item.get(key) for item in have if isinstance(item, dict)}
    return merged + [item for item in want if item[key] not in present]


def _overlay(have: Body, want: Body, exact: frozenset[str], at: str) -> Body:
    """`want` laid over `have`, whose path is `at` ("a.b."): at an exact path, have's keys
    that want lacks are left out."""
    merged = {k: v for k, v in have.items() if k in want or at[:-1] not in exact}
    for key, value in want.items():
        old, path = have.get(key), f"{at}{key}"
        if isinstance(value, dict) and isinstance(old, dict):
            merged[key] = _overlay(old, value, exact, f"{path}.")
        elif isinstance(value, list) and isinstance(old, list):
            merged[key] = _overlay_list(value, old, exact, f"{path}[].")
        else:
            merged[key] = value
    return merged
