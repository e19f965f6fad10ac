"""Fields a JSON body gives twice, as kube-apiserver's decoder (sigs.k8s.io/json) finds them.

The server warns of each (`duplicate field "spec.replicas"`, at the second occurrence) or,
under fieldValidation=Strict, refuses the body, with the unknown fields, in the order the
decoder met them. What it keeps of them is Go's: decoding into a built-in kind's struct,
a repeated map or struct is merged into the first (a list's items into the first list's,
by index), anything else replaced; into a map (a custom resource, a patch) the last wins.

orjson keeps the last silently, and is what every body is decoded with; only a body that
may repeat a key (it names more keys than its decoding kept) is decoded again here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesim.gojson import go_quote
from kubesim.jsonutil import dumps

Position = tuple[int, ...]  # the index of each key and item on the way to a field
_SPACED_COLON = re.compile(rb'"[ \t\r\n]+:')


def suspected(raw: bytes, decoded: Any) -> bool:
    """Whether raw may repeat a key. Every key is followed by `":` (or spaces then `:`);
    strings hold those characters as the decoding, encoded again, does: more of them in
    raw means keys that the decoding lost."""
    if not isinstance(decoded, (dict, list)):
        return False
    count = raw.count(b'":')
    return count > dumps(decoded).count(b'":') or _SPACED_COLON.search(raw) is not None


@dataclass
class Duplicates:
    """The repeated fields of one body, and where each field of it was; `merged`: the body
    is a built-in object's, decoded into its struct."""

    merged: bool
    found: list[tuple[str, Position]] = field(default_factory=list)
    where: dict[str, Position] = field(default_factory=dict)
    yaml: list[tuple[int, str]] = field(default_factory=list)  # (line, key) of a YAML body

    def issues(self, unknown: list[str], *, strict: bool = False) -> list[str]:
        """The decoder's messages. Decoding into a struct meets the unknown fields with the
        repeated ones, in the body's order; otherwise the unknown fields are found later
        (a custom resource's by its schema, a patch's in the patched object): after. A YAML
        body's repeated keys come first, as go-yaml's error (one, under `strict`)."""
        if self.yaml:
            lines = yaml_lines(self.yaml)
            first = ["yaml: unmarshal errors:\n  " + "\n  ".join(lines)] if strict else lines
            return first + [f'unknown field "{u}"' for u in unknown]
        dup = [(pos, f'duplicate field "{p}"') for p, pos in self.found]
        unk = [(self.where.get(u, (1 << 62,)), f'unknown field "{u}"') for u in unknown]
        both = sorted(dup + unk, key=lambda i: i[0]) if self.merged else dup + unk
        return [message for _, message in both]


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's members in order, repeats kept."""


def decode(raw: bytes, *, merge: bool) -> tuple[Any, Duplicates]:
    """raw decoded as Go decodes it (`merge`: into a struct), and its repeated fields."""
    found = Duplicates(merge)
    tree = json.loads(raw, object_pairs_hook=_Pairs)
    return _build(tree, "", (), None, merge, found), found


def _build(value: Any, path: str, pos: Position, into: Any, merge: bool, found: Duplicates) -> Any:
    if isinstance(value, _Pairs):
        out: dict[str, Any] = into if merge and isinstance(into, dict) else {}
        seen: set[str] = set()
        for i, (key, sub) in enumerate(value):
            at, here = f"{path}.{key}" if path else key, (*pos, i)
            if key in seen:
                found.found.append((at, here))
            seen.add(key)
            found.where[at] = here
            out[key] = _build(sub, at, here, out.get(key), merge, found)
        return out
    if isinstance(value, list):
        before = into if merge and isinstance(into, list) else []
        items = []
        for i, item in enumerate(value):
            old = before[i] if i < len(before) else None  # Go decodes into the item there
            items.append(_build(item, f"{path}[{i}]", (*pos, i), old, merge, found))
        return items
    return value


def yaml_lines(repeated: list[tuple[int, str]]) -> list[str]:
    """go-yaml's words for keys a mapping gives twice, by line (that of the second value)."""
    return [f"line {n}: key {go_quote(k)} already set in map" for n, k in sorted(repeated)]


class _YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader (the last of a repeated key wins, as in go-yaml's map), noting
    each repeated key with the line of its value."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self.repeated: list[tuple[int, str]] = []

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    self.repeated.append((value.start_mark.line + 1, key.value))
                seen.add(key.value)
        return super().construct_mapping(node, deep=deep)


def load_yaml(raw: bytes) -> tuple[Any, list[tuple[int, str]]]:
    """A YAML body (yaml.safe_load's result), and its repeated keys."""
    loader = _YamlLoader(raw)
    try:
        return loader.get_single_data(), loader.repeated
    finally:
        loader.dispose()
