"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge patch lives in kubesim/strategic.py.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.errors import ApiError, bad_request
from kubesim.gojson import unmarshal_type_error
from kubesim.strategic import strategic_merge as strategic_merge  # the store's patches


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


# --- JSON patch -------------------------------------------------------------------------------
# As kube-apiserver 1.28 applies it, with evanphx/json-patch v4: a missing object key reads as
# null (so `replace` adds it, `copy` copies null, `test` against null passes), and an operation
# that does not apply is one generic 422 that keeps json-patch's own words out of the Status.


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _does_not_apply() -> ApiError:
    return ApiError(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )


def _walk(doc: Any, path: Any) -> tuple[Any, str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise _does_not_apply()
    parts = [_unescape(p) for p in path[1:].split("/")]
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise _does_not_apply()
    return cur, parts[-1]


def _index(container: list[Any], key: str, *, allow_end: bool) -> int:
    if key == "-" and allow_end:
        return len(container)
    if not key.isdigit():
        raise _does_not_apply()
    i = int(key)
    if i > len(container) or (i == len(container) and not allow_end):
        raise _does_not_apply()
    return i


def _get(doc: Any, path: Any) -> Any:
    parent, key = _walk(doc, path)
    if isinstance(parent, dict):
        return parent.get(key)
    if isinstance(parent, list):
        return parent[_index(parent, key, allow_end=False)]
    raise _does_not_apply()


def _remove(doc: Any, path: Any) -> Any:
    parent, key = _walk(doc, path)
    if isinstance(parent, dict) and key in parent:
        return parent.pop(key)
    if isinstance(parent, list):
        return parent.pop(_index(parent, key, allow_end=False))
    raise _does_not_apply()


def _add(doc: Any, path: Any, value: Any, *, replace: bool = False) -> None:
    parent, key = _walk(doc, path)
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(parent, key, allow_end=False)] = value
        else:
            parent.insert(_index(parent, key, allow_end=True), value)
    else:
        raise _does_not_apply()


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise bad_request(
            "error decoding patch: " + unmarshal_type_error(ops, "[]handlers.jsonPatchOp")
        )
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise bad_request(
                "error decoding patch: " + unmarshal_type_error(op, "handlers.jsonPatchOp")
            )
    doc = copy.deepcopy(target)
    for op in ops:
        kind, path = (op or {}).get("op"), (op or {}).get("path")
        if kind == "add":
            _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _add(doc, path, copy.deepcopy(op.get("value")), replace=True)
        elif kind == "move":
            _add(doc, path, _remove(doc, op.get("from")))
        elif kind == "copy":
            _add(doc, path, copy.deepcopy(_get(doc, op.get("from"))))
        elif kind != "test" or _get(doc, path) != op.get("value"):
            raise _does_not_apply()  # an unknown op, or a test that failed
    return doc
