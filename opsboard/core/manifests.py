"""Applying YAML manifests (CRDs, samples) to whatever cluster we talk to.

CRDs are ours, so they are brought up to date; samples are the user's once
created, so an existing one is left as it is.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import ResourceNotFoundError


def documents(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The Kubernetes objects in `paths`; kustomize's own files (kustomization.yaml) are not."""
    for path in sorted(paths):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and not str(doc.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"):
                yield doc


@contextmanager
def _discovered(api: client.ApiClient) -> Iterator[dynamic.DynamicClient]:
    """A dynamic client that discovers the cluster afresh. The library's default keeps its
    discovery in a file under /tmp, shared by every process and never expired, so a CRD
    deleted since (or a cluster rebuilt at the same address) would still look served."""
    with tempfile.TemporaryDirectory(prefix="opsboard-discovery-") as directory:
        yield dynamic.DynamicClient(api, cache_file=os.path.join(directory, "discovery.json"))


# The installer's writes (CRDs, RBAC, samples) in the cluster's managedFields.
BOOTSTRAP_FIELD_MANAGER = "opsboard-bootstrap"


def apply(api: client.ApiClient, docs: Iterable[dict[str, Any]], *, update: bool) -> list[str]:
    """Create each object; if it exists, replace it when `update`, else leave it."""
    with _discovered(api) as dyn:
        return _apply(dyn, docs, update=update)


def _apply(
    dyn: dynamic.DynamicClient, docs: Iterable[dict[str, Any]], *, update: bool
) -> list[str]:
    done = []
    for doc in docs:
        resource = dyn.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        meta = doc["metadata"]
        namespace = meta.get("namespace", "default") if resource.namespaced else None
        what = f"{doc['kind']} {meta['name']}"
        try:
            resource.create(body=doc, namespace=namespace, field_manager=BOOTSTRAP_FIELD_MANAGER)
            done.append(f"created {what}")
        except ApiException as exc:
            if exc.status != 409:
                raise
            if update:
                _replace(resource, doc, namespace)
                done.append(f"updated {what}")
            else:
                done.append(f"kept {what}")
    return done


def _replace(resource: Any, doc: dict[str, Any], namespace: str | None, attempts: int = 5) -> None:
    """Replaces the object with `doc` at its current version. kube-apiserver updates a new
    CRD's status itself (names accepted, established), so a replace from a read a moment
    old can meet a 409: read again and retry, as client-go's RetryOnConflict does."""
    for attempt in range(attempts):
        current = resource.get(name=doc["metadata"]["name"], namespace=namespace)
        doc["metadata"]["resourceVersion"] = current.metadata.resourceVersion
        try:
            resource.replace(body=doc, namespace=namespace, field_manager=BOOTSTRAP_FIELD_MANAGER)
            return
        except ApiException as exc:
            if exc.status != 409 or attempt == attempts - 1:
                raise


class CrdsForbidden(Exception):
    """This kubeconfig's user may not install CRDs the cluster does not serve yet."""


def install_crds(api: client.ApiClient, crds: list[dict[str, Any]]) -> list[str]:
    """Our CRDs, created or brought up to date, and Established. A user who may not write
    CRDs (403: most users of a shared cluster) goes on with those the cluster serves, as a
    cluster admin installed them; CrdsForbidden if any is not served."""
    with _discovered(api) as dyn:  # one discovery for the writes and, refused, the reads
        try:
            done = _apply(dyn, crds, update=True)
        except ApiException as exc:
            if exc.status != 403:
                raise
            if missing := _unserved(dyn, crds):
                raise CrdsForbidden(
                    "this kubeconfig's user may not create CustomResourceDefinitions, and the "
                    f"cluster does not serve {_kinds(missing)} yet: ask a cluster admin to "
                    "`kubectl apply -f k8s/crd/`, then start again"
                ) from exc
            return [
                f"kept {_kinds([crd])}: served by the cluster (this kubeconfig's user may "
                "not update its CRD)"
                for crd in crds
            ]
    wait_established(api, [crd["metadata"]["name"] for crd in crds])
    return done


def install_missing(api: client.ApiClient, crds: Iterable[dict[str, Any]]) -> list[str]:
    """Install third parties' CRDs (k8s/third_party/) only where the cluster does not serve
    their kinds yet, and never replace one: on a cluster with that operator, its CRD stays.
    One the user may not install (403) is said and left: only its controller needs it."""
    with _discovered(api) as dyn:
        crds = list(crds)
        missing = _unserved(dyn, crds)
        done = [
            f"kept {_kinds([crd])}: served by the cluster" for crd in crds if crd not in missing
        ]
        installed = []
        for crd in missing:
            try:
                done += _apply(dyn, [crd], update=False)  # the same discovery: one per call
            except ApiException as exc:
                if exc.status != 403:
                    raise
                done.append(
                    f"not installed: {_kinds([crd])}, which this kubeconfig's user may not "
                    "create (403); its controller fails until a cluster admin applies "
                    "k8s/third_party/"
                )
            else:
                installed.append(crd["metadata"]["name"])
        wait_established(api, installed)
        return done


def _unserved(dyn: dynamic.DynamicClient, crds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The CRDs whose kind the cluster does not serve in every version they serve."""
    missing = []
    for crd in crds:
        spec = crd["spec"]
        versions = [v["name"] for v in spec["versions"] if v.get("served")]
        try:
            for version in versions:
                dyn.resources.get(
                    api_version=f"{spec['group']}/{version}", kind=spec["names"]["kind"]
                )
        except ResourceNotFoundError:
            missing.append(crd)
    return missing


def _kinds(crds: list[dict[str, Any]]) -> str:
    return ", ".join(f"{c['spec']['names']['kind']} ({c['spec']['group']})" for c in crds)


def wait_established(api: client.ApiClient, names: list[str], timeout: float = 30.0) -> None:
    ext = client.ApiextensionsV1Api(api)
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            crd = ext.read_custom_resource_definition(name)
            conditions = (crd.status and crd.status.conditions) or []
            if any(c.type == "Established" and c.status == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"CustomResourceDefinition {name} is not Established")
            time.sleep(0.1)
