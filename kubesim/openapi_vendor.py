"""Vendors kube-apiserver v1.28.7's OpenAPI v3 documents for the built-in group-versions
kubesim serves, and the small ones of /api, /apis, each built-in group and /version, into
kubesim/openapi_v3/, one gzipped file each, which openapi.py serves.

Two sources give the same documents but for enums:

- a running kube-apiserver v1.28.7 (`--kubeconfig`, read with `kubectl get --raw`): the
  documents exactly as a cluster serves them. The files in the repository came from the rig
  this way (its `kubectl explain` prints the enum values, so kubesim's must too).
- a Kubernetes v1.28.7 checkout or bare git directory (`--repo`): its
  api/openapi-spec/v3/*.json, which lack the `enum` lists and the "Possible enum values"
  lines of descriptions that the server adds, and say "unversioned" in `info.version`.

    python -m kubesim.openapi_vendor --kubeconfig /root/k8s-rig/kubeconfig
    python -m kubesim.openapi_vendor --repo ~/src/kubernetes --rev v1.28.7

Run it again when kubesim starts serving another built-in group-version: the set written
is the registry's, and files of group-versions it no longer serves are removed.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess

import orjson

from kubesim.openapi import VENDORED, fixed_paths, gv_path, vendored_file
from kubesim.resources import Registry


def built_in_documents() -> list[str]:
    """The paths of the documents to vendor: the built-in group-versions and the fixed ones."""
    registry = Registry()
    gvs = {(rt.group, v) for rt in registry.all() if not rt.crd for v in rt.served_versions}
    return sorted({gv_path(g, v) for g, v in gvs} | set(fixed_paths(registry)))


def _from_server(kubeconfig: str, path: str) -> bytes:
    cmd = ["kubectl", f"--kubeconfig={kubeconfig}", "get", "--raw", f"/openapi/v3/{path}"]
    return subprocess.run(cmd, check=True, capture_output=True, timeout=60).stdout


def _from_repo(repo: str, rev: str, path: str) -> bytes:
    name = path.replace("/", "__") + "_openapi.json"
    cmd = ["git", "-C", repo, "show", f"{rev}:api/openapi-spec/v3/{name}"]
    return subprocess.run(cmd, check=True, capture_output=True, timeout=60).stdout


def write(path: str, document: bytes) -> int:
    # Compact, key order kept, no timestamp in the gzip header: the same input gives the
    # same bytes, so a regeneration shows in git only when a document changed.
    compact = orjson.dumps(orjson.loads(document))
    data = gzip.compress(compact, compresslevel=9, mtime=0)
    vendored_file(path).write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kubesim.openapi_vendor", description=__doc__)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--kubeconfig", help="of a running kube-apiserver v1.28.7")
    src.add_argument("--repo", help="a Kubernetes git checkout or bare git directory")
    p.add_argument("--rev", default="HEAD", help="with --repo: the revision (v1.28.7)")
    args = p.parse_args(argv)
    VENDORED.mkdir(exist_ok=True)
    wanted = built_in_documents()
    total = 0
    for path in wanted:
        if args.kubeconfig:
            document = _from_server(args.kubeconfig, path)
        else:
            document = _from_repo(args.repo, args.rev, path)
        size = write(path, document)
        total += size
        print(f"{vendored_file(path).name}: {size} bytes")
    keep = {vendored_file(path).name for path in wanted}
    for stale in VENDORED.glob("*.json.gz"):
        if stale.name not in keep:
            stale.unlink()
            print(f"{stale.name}: removed")
    print(f"{len(wanted)} documents, {total} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
