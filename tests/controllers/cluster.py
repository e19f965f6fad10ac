"""Helpers for the operator scenarios against a live API server (kubesim or a real cluster).

Only the public Kubernetes API: no kubesim-only hooks, so the scenarios run unchanged
against a real cluster through OPSBOARD_TEST_KUBECONFIG.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controllers.base import EVENT, Body, Context, Key, Kind, Kube
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.ownership import selector_string
from tests.controllers.manifests import CRD_FILES, K8S
from tests.support.waiting import wait_for

THIRD_PARTY_CRD_FILES = sorted((K8S / "third_party").glob("*/*.yaml"))
CRD = Kind(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    namespaced=False,
)


def install_crds(kube: ApiKube) -> None:
    """Create or update the operators' CRDs, and wait until their resources are served; then,
    as `make run` does, the third parties' CRDs they use (KMM's Module) where not served."""
    from opsboard.core import manifests

    _install_ours(kube)
    manifests.install_missing(kube.api, manifests.documents(THIRD_PARTY_CRD_FILES))


def _install_ours(kube: ApiKube) -> None:
    from opsboard.core import manifests

    docs = list(manifests.documents(CRD_FILES))
    manifests.apply(kube.api, docs, update=True)
    for doc in docs:
        wait_for(
            lambda name=doc["metadata"]["name"]: _established(kube.get(CRD, "", name)),
            what=f"CRD {doc['metadata']['name']} Established",
        )


def _established(crd: Body | None) -> bool:
    return condition_of(crd, "Established").get("status") == "True"


def list_objects(
    kube: ApiKube, kind: Kind, namespace: str, labels: Mapping[str, str] | None = None
) -> list[Body]:
    query = {"labelSelector": selector_string(labels)} if labels else None
    return kube.request("GET", kube.path(kind, namespace), query=query).get("items") or []


def kubectl(kubeconfig: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/usr/bin/kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@dataclass
class ReadThroughCache:
    """`controllers.base.Cache` that reads the API directly, for driving reconcile() by hand."""

    kube: ApiKube

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        return self.kube.get(kind, namespace, name)

    def list(
        self, kind: Kind, namespace: str, *, labels: Mapping[str, str] | None = None
    ) -> list[Body]:
        return list_objects(self.kube, kind, namespace, labels)

    def events_about(self, obj: Body) -> list[Body]:
        meta = obj["metadata"]
        fields = f"involvedObject.uid={meta['uid']}"
        return self.kube.list(EVENT, meta.get("namespace", ""), fields=fields)[0]


@dataclass
class RecordingReporter:
    """`controllers.base.Reporter` that keeps what it is told."""

    actions: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)

    def action(self, message: str) -> None:
        self.actions.append(message)

    def status_change(self, message: str) -> None:
        self.actions.append(message)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def by_hand(
    controller: str, namespace: str, name: str, kube: ApiKube, *, writes: Kube | None = None
) -> Context:
    """What the engine hands a reconcile, for calling it by hand: reads straight from
    `kube`, writes through `writes` (a CountingKube, say) or `kube`, a RecordingReporter."""
    key = Key(controller, namespace, name)
    return Context(key, ReadThroughCache(kube), writes or kube, RecordingReporter())


@dataclass
class CountingKube:
    """Wraps ApiKube and counts the writes, to prove a no-op reconcile writes nothing."""

    inner: ApiKube
    writes: list[tuple[str, str, str]] = field(default_factory=list)

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        return self.inner.get(kind, namespace, name)

    def create(self, kind: Kind, body: Body) -> Body:
        self.writes.append(("create", kind.kind, body["metadata"]["name"]))
        return self.inner.create(kind, body)

    def patch(self, kind: Kind, namespace: str, name: str, patch: Body, **kw: Any) -> Body:
        self.writes.append(("patch", kind.kind, name))
        return self.inner.patch(kind, namespace, name, patch, **kw)

    def begin_patch(
        self, kind: Kind, namespace: str, name: str, patch: Body, **kw: Any
    ) -> Callable[[], Body]:
        self.writes.append(("patch", kind.kind, name))
        return self.inner.begin_patch(kind, namespace, name, patch, **kw)

    def patch_status(self, kind: Kind, namespace: str, name: str, status: Body, **kw: Any) -> Body:
        self.writes.append(("patch_status", kind.kind, name))
        return self.inner.patch_status(kind, namespace, name, status, **kw)

    def begin_patch_status(
        self, kind: Kind, namespace: str, name: str, status: Body, **kw: Any
    ) -> Callable[[], Body]:
        self.writes.append(("patch_status", kind.kind, name))
        return self.inner.begin_patch_status(kind, namespace, name, status, **kw)

    def delete(self, kind: Kind, namespace: str, name: str) -> None:
        self.writes.append(("delete", kind.kind, name))
        self.inner.delete(kind, namespace, name)
