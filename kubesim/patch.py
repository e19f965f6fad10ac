"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge knows the list merge keys of the built-in kinds by field name (the same
`patchMergeKey` tags the Go types carry) and the `$patch`, `$retainKeys`,
`$setElementOrder/` and `$deleteFromPrimitiveList/` directives kubectl sends.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.errors import ApiError, bad_request, unconverted
from kubesim.gojson import printed, unmarshal_type_error


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


# --- strategic merge patch -------------------------------------------------------------------

# (field name, parent field name or None) -> merge key. None for the parent means any parent.
MERGE_KEYS: dict[tuple[str, str | None], str] = {
    ("containers", None): "name",
    ("initContainers", None): "name",
    ("ephemeralContainers", None): "name",
    ("env", None): "name",
    ("volumes", None): "name",
    ("volumeMounts", None): "mountPath",
    ("volumeDevices", None): "devicePath",
    ("conditions", None): "type",
    ("imagePullSecrets", None): "name",
    ("hostAliases", None): "ip",
    ("ownerReferences", None): "uid",
    ("topologySpreadConstraints", None): "topologyKey",
    ("addresses", "status"): "type",
    ("ports", "containers"): "containerPort",
    ("ports", "initContainers"): "containerPort",
    ("ports", "spec"): "port",  # Service.spec.ports
    ("contexts", None): "name",
}
# Lists of primitives merged as sets.
PRIMITIVE_MERGE = {"finalizers"}


# strategicpatch's errors are plain Go errors, which kube-apiserver answers with a bare 500.
def _no_merge_key(item: dict[str, Any], key: str) -> ApiError:
    return unconverted(f"map: {printed(item)} does not contain declared merge key: {key}")


def _bad_patch_type(directive: Any, where: dict[str, Any]) -> ApiError:
    return unconverted(f"unknown patch type: {printed(directive)} in map: {printed(where)}")


def _merge_key(field: str, parent: str | None) -> str | None:
    return MERGE_KEYS.get((field, parent)) or MERGE_KEYS.get((field, None))


def strategic_merge(original: Any, patch: Any, parent: str | None = None) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    # Go merges only into what the object has: a new subtree is taken as sent, unchecked.
    checked = isinstance(original, dict)
    if not isinstance(original, dict):
        original = {}
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive is not None and checked:
        raise _bad_patch_type(directive, patch)
    result = dict(original)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, key, parent)
        elif isinstance(value, dict):
            merged = strategic_merge(result.get(key), value, key)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    for key, order in patch.items():
        if key.startswith("$setElementOrder/") and isinstance(order, list):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = _apply_order(result[field], order, _merge_key(field, parent))
    return result


def _merge_list(original: Any, patch: list[Any], field: str, parent: str | None) -> list[Any]:
    checked = isinstance(original, list)  # as for maps: a new list is not checked
    original = original if isinstance(original, list) else []
    if field in PRIMITIVE_MERGE:
        out = list(original)
        out.extend(v for v in patch if v not in out)
        return _element_order(out, patch, original, None)
    key = _merge_key(field, parent)
    if key is None or not all(isinstance(p, dict) for p in patch):
        return [copy.deepcopy(v) for v in patch if not (isinstance(v, dict) and v.get("$patch"))]
    for item in patch if checked else ():  # mergeSliceWithSpecialElements: directives first
        directive = item.get("$patch")
        if directive == "delete" and key not in item:
            raise _no_merge_key(item, key)
        if directive == "merge":
            raise unconverted("merging lists cannot yet be specified in the patch")
        if directive not in (None, "delete", "replace"):
            raise _bad_patch_type(directive, item)
    if any(p.get("$patch") == "replace" for p in patch):
        return [copy.deepcopy(p) for p in patch if p.get("$patch") != "replace"]
    for item in patch if checked else ():
        if key not in item:
            raise _no_merge_key(item, key)
    out = [copy.deepcopy(o) for o in original]
    for item in patch:
        kv = item.get(key)
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == kv), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, item, field))
        else:
            out[idx] = strategic_merge(out[idx], item, field)
    return _element_order(out, [p for p in patch if not p.get("$patch")], original, key)


def _element_order(
    merged: list[Any], patch: list[Any], original: list[Any], key: str | None
) -> list[Any]:
    """strategicpatch's normalizeElementOrder: the patch's items in the patch's order, the
    server's other items in their order, interleaved where the live list orders both (so a
    new item goes before the ones it did not mention: [A] patched with [B] is [B, A])."""

    def ident(v: Any) -> Any:
        return v.get(key) if key is not None and isinstance(v, dict) else v

    def index(order: list[Any], v: Any) -> int:
        wanted = ident(v)
        return next((i for i, o in enumerate(order) if ident(o) == wanted), -1)

    in_patch = sorted((m for m in merged if index(patch, m) >= 0), key=lambda m: index(patch, m))
    server_only = sorted(
        (m for m in merged if index(patch, m) < 0), key=lambda m: index(original, m)
    )
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_patch):
        if j >= len(in_patch):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(in_patch[j])
            j += 1
        else:
            li, ri = index(original, server_only[i]), index(original, in_patch[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(in_patch[j])
                j += 1
    return out


def _apply_order(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    if key is None:
        rank: dict[Any, int] = {repr(v): i for i, v in enumerate(order)}  # by merge key below
        return sorted(items, key=lambda v: rank.get(repr(v), len(rank)))
    rank = {o.get(key): i for i, o in enumerate(order) if isinstance(o, dict)}
    return sorted(
        items, key=lambda v: rank.get(v.get(key) if isinstance(v, dict) else None, len(rank))
    )
