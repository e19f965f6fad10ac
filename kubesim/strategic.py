"""Strategic merge patch, as apimachinery v0.28's strategicpatch.mergeMap applies it for
kube-apiserver (MergeParallelList and IgnoreUnmatchedNulls on), step for step, so that the
directives (`$patch`, `$retainKeys`, `$setElementOrder/`, `$deleteFromPrimitiveList/`) give
the same object or the same error.

The Go types' `patchMergeKey`/`patchStrategy` tags are known by field name (MERGE_KEYS,
PRIMITIVE_MERGE). Where Go iterates a map (in random order) this walks the patch's keys in
their order."""

from __future__ import annotations

import copy
from typing import Any

from kubesim import builtin_schema
from kubesim.errors import ApiError, bad_request, unconverted
from kubesim.gojson import go_type as _percent_t
from kubesim.gojson import printed
from kubesim.gosort import stable_sort

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
    ("ports", "ephemeralContainers"): "containerPort",
    ("ports", "spec"): "port",  # Service.spec.ports
    ("contexts", None): "name",
}
# Lists of primitives merged as sets.
PRIMITIVE_MERGE = {"finalizers"}

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"

# mergepatch's sentinel errors, which kube-apiserver answers with a 400 (the others are 500s)
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"


def _merge_key(field: str | None, parent: str | None) -> str:
    if field is None:
        return ""
    return MERGE_KEYS.get((field, parent)) or MERGE_KEYS.get((field, None)) or ""


def _merges(field: str | None, parent: str | None) -> bool:
    """Whether the field's patchStrategy is merge (else a patch's list replaces the object's)."""
    return bool(_merge_key(field, parent)) or field in PRIMITIVE_MERGE


# --- Go's words for what it was given -----------------------------------------------------------


def go_type(value: Any) -> str:
    """reflect.TypeOf(v).String() of a value json.Unmarshal decoded: %T's words, but for
    null, whose nil reflect.Type mergepatch prints with %s."""
    return "%!s(<nil>)" if value is None else _percent_t(value)


def go_s(value: Any) -> str:
    """fmt's %s of a decoded value: strings bare, other scalars as %!s(type=value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_s(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_s(v) for v in value) + "]"
    if value is None:
        return "%!s(<nil>)"
    return f"%!s({go_type(value)}={printed(value)})"


def _same(a: Any, b: Any) -> bool:
    """Go's == on two interface{} values: same dynamic type and equal (1 is not 1.0, nor true)."""
    return go_type(a) == go_type(b) and a == b


def _bad_arg_type(expected: str, actual: Any) -> ApiError:
    return unconverted(f"expected a {expected}, but received a {go_type(actual)}")


def _no_merge_key(item: dict[str, Any], key: str) -> ApiError:
    return unconverted(f"map: {printed(item)} does not contain declared merge key: {key}")


def _bad_patch_type(directive: Any, where: dict[str, Any]) -> ApiError:
    return unconverted(f"unknown patch type: {go_s(directive)} in map: {printed(where)}")


# --- maps ---------------------------------------------------------------------------------------


def strategic_merge(original: Any, patch: Any, model: str | None = None) -> Any:
    """The object with the patch applied. The top level is a map like any other: `$patch:
    delete` leaves it empty and `replace` takes the patch, so the object may lose its name
    (which kube-apiserver's patch handler then refuses).

    `model` is the kind's client model (builtin_schema.MODELS): where Go looks a key up in
    the struct it patches, a key the struct lacks is its 500 (None: nothing is looked up)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    base = copy.deepcopy(original) if isinstance(original, dict) else {}
    return _merge_map(base, copy.deepcopy(patch), None, model)


def _struct_field(schema: str | None, key: str) -> str | None:
    try:
        return builtin_schema.struct_field(schema, key)
    except builtin_schema.NoSuchField as exc:
        raise unconverted(str(exc)) from None


def _slice_element(schema: str | None, key: str) -> str | None:
    try:
        return builtin_schema.slice_element(schema, key)
    except builtin_schema.NoSuchField as exc:
        raise unconverted(str(exc)) from None


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], field: str | None, schema: str | None
) -> Any:
    """mergeMap: a directive, then $retainKeys, then $setElementOrder lists, then each key.
    Both maps are the caller's copies and are changed in place; `schema` is the client type
    of the Go value they decode into."""
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == "replace":
            del patch[_DIRECTIVE]
            return patch
        if directive == "delete":
            return {}
        raise _bad_patch_type(directive, patch)
    _retain_keys(original, patch)
    _set_element_orders(original, patch, field, schema)
    for key, value in list(patch.items()):
        deleting = key.startswith(_DELETE_FROM)
        if deleting:
            key = _directive_field(key, _DELETE_FROM, _BAD_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original or _kind(original[key]) != _kind(value):
            # A new (or retyped) value is taken as sent, less its nulls and directives; a
            # deletion list for a field the object does not have does nothing.
            if not deleting:
                _discard_nulls(value)
                kept, keep = _remove_directives(value)
                if keep:
                    original[key] = kept
                else:
                    original.pop(key, None)
            continue
        if isinstance(value, dict):
            original[key] = _merge_map(original[key], value, key, _struct_field(schema, key))
        elif isinstance(value, list):
            items = _slice_element(schema, key)
            original[key] = _merge_list(original[key], value, key, field, deleting, items)
        else:
            original[key] = value
    return original


def _kind(value: Any) -> str:
    return (
        "map" if isinstance(value, dict) else "list" if isinstance(value, list) else go_type(value)
    )


def _directive_field(key: str, prefix: str, bad: str) -> str:
    """extractKey: the field a `$prefix/field` directive names."""
    head, _, rest = key.partition("/")
    if head != prefix or not _:
        raise bad_request(bad)
    return rest


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: every key the patch sets must be listed; the object keeps
    only the listed keys."""
    if _RETAIN_KEYS not in patch:
        return
    keys = patch.pop(_RETAIN_KEYS)
    if not isinstance(keys, list):
        raise bad_request(_BAD_RETAIN_KEYS)
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM, _SET_ORDER)):
            continue
        if not any(_same(key, k) for k in keys):
            raise bad_request(_BAD_RETAIN_KEYS)
    for key in list(original):
        if not any(_same(key, k) for k in keys):
            del original[key]


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for k in [k for k, v in value.items() if v is None]:
            del value[k]
        for v in value.values():
            _discard_nulls(v)
    elif isinstance(value, list):
        for v in value:
            _discard_nulls(v)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives: a map with `$patch` goes, wherever it is; other directives stay (and
    are later dropped as unknown fields)."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        for k in list(value):
            value[k], keep = _remove_directives(value[k])
            if not keep:
                del value[k]
        return value, True
    if isinstance(value, list):
        kept = [_remove_directives(v) for v in value]
        return [v for v, keep in kept if keep], True
    return value, True


# --- lists --------------------------------------------------------------------------------------


def _merge_list(
    original: list[Any],
    patch: list[Any],
    field: str,
    parent: str | None,
    deleting: bool,
    items: str | None,
) -> list[Any]:
    """mergeSliceHandler: a list without the merge strategy is replaced, directives and all.
    `items` is the client type of its items."""
    if _merges(field, parent) or deleting:
        return _merge_slice(original, patch, field, parent, deleting, items)
    return patch


def _element_kind(*lists: list[Any]) -> str:
    """sliceElementType: every item of every list of one Go type, and not a list."""
    kind = None
    for items in lists:
        for item in items:
            this = go_type(item)
            if kind is None:
                if isinstance(item, list):
                    raise ApiError(422, "", "lists of lists are not supported")
                kind = this
            elif this != kind:
                raise unconverted(f"list element types are not identical: {printed(list(lists))}")
    if kind is None:
        raise unconverted("no elements in any of the given slices")
    return kind


def _merge_slice(
    original: list[Any],
    patch: list[Any],
    field: str,
    parent: str | None,
    deleting: bool,
    items: str | None,
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    key = _merge_key(field, parent)
    if kind != "map[string]interface {}":
        if deleting:
            return [v for v in original if not any(_same(v, d) for d in patch)]
        merged = _dedupe(original + patch)
    else:
        if not key:
            # Go names the kind of the list's Go elements, which for objects is a struct
            raise unconverted("cannot merge lists without merge key for struct")
        original, patch = _special_elements(original, patch, key)
        merged = _merge_items(original, patch, key, field, items)
    if key:
        in_patch, server_only = _partition_maps(merged, patch, key)
    else:
        in_patch, server_only = _partition_scalars(merged, patch)
    return _normalize_order(in_patch, server_only, patch, original, key)


def _dedupe(items: list[Any]) -> list[Any]:
    """deduplicateScalars, whose swaps the normalisation that follows undoes."""
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _same(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _special_elements(
    original: list[Any], patch: list[Any], key: str
) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: items that delete, a `$patch: replace` that makes the
    patch's other items the list."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            original = [o for o in original if not _matches(o, key, item[key])]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise unconverted("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, item)
    return (plain, []) if replace else (original, plain)


def _matches(item: Any, key: str, value: Any) -> bool:
    return isinstance(item, dict) and key in item and _same(item[key], value)


def _find(items: list[Any], key: str, value: Any) -> int | None:
    """findMapInSliceBasedOnKeyValue."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise unconverted(f"value for key {i} is not a map")
        if key in item and _same(item[key], value):
            return i
    return None


def _merge_items(
    original: list[Any], patch: list[Any], key: str, field: str, items: str | None
) -> list[Any]:
    """mergeSliceWithoutSpecialElements: an item the object has is merged into it, a new one
    appended as sent."""
    out = list(original)
    for item in patch:
        if key not in item:
            raise _no_merge_key(item, key)
        at = _find(out, key, item[key])
        if at is None:
            out.append(item)
        else:
            out[at] = _merge_map(out[at], item, field, items)
    return out


def _partition_scalars(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    present = [v for v in items if any(_same(v, b) for b in by)]
    return present, [v for v in items if not any(_same(v, b) for b in by)]


def _partition_maps(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    present: list[Any] = []
    absent: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise _bad_arg_type("map[string]interface {}", item)
        if key not in item:
            raise _no_merge_key(item, key)
        (present if _find(by, key, item[key]) is not None else absent).append(item)
    return present, absent


def _ident(item: Any, key: str) -> Any:
    if not key:
        return item
    return item.get(key) if isinstance(item, dict) else None


def _index(order: list[Any], item: Any, key: str) -> int:
    wanted = _ident(item, key)
    return next((i for i, o in enumerate(order) if _same(_ident(o, key), wanted)), -1)


def _sort_by(items: list[Any], order: list[Any], key: str) -> list[Any]:
    """normalizeSliceOrder: by the order given (Go's sort.SliceStable with its lenient less),
    the items that delete last."""
    deletes: list[Any] = []
    if key:
        for item in items + order:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if key not in item:
                raise _no_merge_key(item, key)
        deletes = [i for i in items if i.get(_DIRECTIVE) == "delete"]
        items = [i for i in items if i.get(_DIRECTIVE) != "delete"]

    def less(a: Any, b: Any) -> bool:
        ia, ib = _index(order, a, key), _index(order, b, key)
        return ia < ib if ia >= 0 and ib >= 0 else True

    return stable_sort(items, less) + deletes


def _normalize_order(
    in_patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    key: str,
) -> list[Any]:
    """normalizeElementOrder: the patch's items in the patch's order, the server's others in
    theirs, interleaved where the live list orders both (so a new item goes before the ones it
    did not mention: [A] patched with [B] is [B, A])."""
    right = _sort_by(in_patch, patch_order, key)
    left = _sort_by(server_only, server_order, key)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = _index(server_order, left[i], key), _index(server_order, right[j], key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


# --- $setElementOrder ---------------------------------------------------------------------------


def _set_element_orders(
    original: dict[str, Any], patch: dict[str, Any], parent: str | None, schema: str | None
) -> None:
    """mergePatchIntoOriginal: each `$setElementOrder/field` merges its field's list now and
    orders it as listed (the live list's order for the items it does not list)."""
    for directive in [k for k in patch if k.startswith(_SET_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        field = _directive_field(directive, _SET_ORDER, _BAD_SET_ORDER)
        live, sent = original.get(field), patch.get(field)
        have, sending = field in original, field in patch
        if have and not isinstance(live, list):
            raise _bad_arg_type("[]interface {}", live)
        if sending and not isinstance(sent, list):
            raise _bad_arg_type("[]interface {}", sent)
        items = _slice_element(schema, field)  # the field is looked up, listed or not
        live_items: list[Any] = live if isinstance(live, list) else []
        sent_items: list[Any] = sent if isinstance(sent, list) else []
        key = _merge_key(field, parent)
        _check_order(sent_items, order, key)
        if have and sending:
            merged = _merge_list(live_items, sent_items, field, parent, False, items)
        elif sending:
            merged, _keep = _remove_directives(sent_items)
        elif have:
            merged = live_items
        else:
            continue
        if key:
            in_order, server_only = _partition_maps(merged, order, key)
        else:
            in_order, server_only = _partition_scalars(merged, order)
        _element_kind(live_items, sent_items)
        original[field] = _normalize_order(in_order, server_only, order, live_items, key)
        patch.pop(field, None)


def _check_order(sent: list[Any], order: list[Any], key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items (less deletions) in the order listed."""
    if not sent or not order:
        return
    items = [i for i in sent if not (isinstance(i, dict) and i.get(_DIRECTIVE) == "delete")]
    if key:
        for item in sent:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
    p = o = 0
    while p < len(items) and o < len(order):
        if isinstance(items[p], dict) and _DIRECTIVE in items[p]:
            p += 1
            continue
        if _order_equal(items[p], order[o], key):
            p += 1
        o += 1
    if p < len(items) and o >= len(order):
        raise unconverted(
            f"The order in patch list:\n{printed(sent)}\n doesn't match "
            f"$setElementOrder list:\n{printed(order)}\n"
        )


def _order_equal(left: Any, right: Any, key: str) -> bool:
    """mergeKeyValueEqual."""
    if not key:
        return _same(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise _bad_arg_type("map[string]interface {}", item)
        if key not in item:
            raise _no_merge_key(item, key)
    return _same(left[key], right[key])
