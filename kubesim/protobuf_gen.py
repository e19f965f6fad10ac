"""Writes kubesim/protobuf_schema.json from a Kubernetes source tree:
`python -m kubesim.protobuf_gen ~/k8s-rig/src`.

Field numbers and types come from each API package's generated.proto; the JSON name of a
field, and whether Go marshals its zero value (a pointer, or no `omitempty`), come from the
struct tags in the package's Go types. The schema holds every message of the packages below.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

STAGING = "staging/src/k8s.io"
PACKAGES = {
    "k8s.io.apimachinery.pkg.apis.meta.v1": "apimachinery/pkg/apis/meta/v1",
    "k8s.io.apimachinery.pkg.runtime": "apimachinery/pkg/runtime",
    "k8s.io.apimachinery.pkg.util.intstr": "apimachinery/pkg/util/intstr",
    "k8s.io.apimachinery.pkg.api.resource": "apimachinery/pkg/api/resource",
    **{
        f"k8s.io.api.{p.replace('/', '.')}": f"api/{p}"
        for p in (
            "core/v1",
            "apps/v1",
            "batch/v1",
            "autoscaling/v1",
            "autoscaling/v2",
            "policy/v1",
            "rbac/v1",
            "authorization/v1",
            "authentication/v1",
            "networking/v1",
            "coordination/v1",
            "discovery/v1",
            "storage/v1",
            "scheduling/v1",
            "events/v1",
            "node/v1",
            "certificates/v1",
        )
    },
}

_MESSAGE = re.compile(r"^message (\w+) \{$")
_FIELD = re.compile(
    r"^\s*(optional|repeated)?\s*([\w.]+|map<\s*[\w.]+\s*,\s*[\w.]+\s*>)\s+(\w+)\s*=\s*(\d+)"
)
_STRUCT = re.compile(r"^type (\w+) struct \{")
_TAG = re.compile(r"^\s*\w+\s+(\S+)\s+`(.*)`")
_SCALARS = {
    "string": "string",
    "bytes": "bytes",
    "bool": "bool",
    "int32": "int",
    "int64": "int",
    "uint32": "int",
    "uint64": "int",
    "double": "double",
    "float": "float",
}


def _type(name: str, package: str) -> str:
    if name in _SCALARS:
        return _SCALARS[name]
    return name if "." in name else f"{package}.{name}"


def _go_tags(directory: Path) -> dict[tuple[str, int], tuple[str, bool]]:
    """(struct, field number) -> (JSON name, whether Go marshals the zero value)."""
    out: dict[tuple[str, int], tuple[str, bool]] = {}
    for path in sorted(directory.glob("*.go")):
        if path.name.startswith(("generated", "zz_")) or path.name.endswith("_test.go"):
            continue
        struct = None
        for line in path.read_text().splitlines():
            if m := _STRUCT.match(line):
                struct = m.group(1)
                continue
            if line.startswith("}"):
                struct = None
                continue
            m = _TAG.match(line)
            if struct is None or m is None or 'protobuf:"' not in m.group(2):
                continue
            gotype, tags = m.group(1), m.group(2)
            proto = re.search(r'protobuf:"([^"]*)"', tags)
            js = re.search(r'json:"([^"]*)"', tags)
            if proto is None:
                continue
            number = int(proto.group(1).split(",")[1])
            json_name, _, opts = (js.group(1) if js else "").partition(",")
            keep_zero = gotype.startswith("*") or "omitempty" not in opts
            out[(struct, number)] = (json_name, keep_zero)
    return out


def build(src: Path) -> dict[str, dict[str, list[object]]]:
    messages: dict[str, dict[str, list[object]]] = {}
    for package, rel in PACKAGES.items():
        directory = src / STAGING / rel
        tags = _go_tags(directory)
        current: str | None = None
        for line in (directory / "generated.proto").read_text().splitlines():
            if m := _MESSAGE.match(line):
                current = m.group(1)
                messages[f"{package}.{current}"] = {}
                continue
            if line.startswith("}"):
                current = None
                continue
            if current is None or line.lstrip().startswith("//"):
                continue
            m = _FIELD.match(line)
            if m is None:
                continue
            label, typ, name, number = m.group(1), m.group(2), m.group(3), int(m.group(4))
            if typ.startswith("map<"):
                key, value = (t.strip() for t in typ[4:-1].split(","))
                kind = f"map:{_type(key, package)}:{_type(value, package)}"
            else:
                kind = _type(typ, package)
            json_name, keep_zero = tags.get((current, number), (name, False))
            flags = (1 if label == "repeated" else 0) | (2 if keep_zero else 0)
            messages[f"{package}.{current}"][str(number)] = [json_name or name, kind, flags]
    return messages


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m kubesim.protobuf_gen KUBERNETES_SOURCE_DIR", file=sys.stderr)
        return 2
    schema = build(Path(argv[0]).expanduser())
    out = Path(__file__).with_name("protobuf_schema.json")
    lines = [
        f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in schema.items()
    ]
    out.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {len(schema)} messages to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
