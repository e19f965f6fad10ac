"""A tiny controller for engine tests, registered with OPSBOARD_CONTROLLERS=tests.engine.toy.

A Toy (test.opsboard.dev/v1) keeps one ConfigMap of the same name holding `spec.size`.
Its spec can make it misbehave, so tests can drive the engine's error paths:
`fail: "temporary" | "permanent" | "crash"` (a bug: any other exception), `sleep: <seconds>` inside the reconcile, and
`touch: true` to report an action on every run (so no run is folded in the log), and
`conflict: true` to write its ConfigMap from a stale read (the server answers 409).
"""

from __future__ import annotations

import time
from typing import Any

from controllers.base import (
    Body,
    Context,
    Controller,
    CrFields,
    ExpectedChild,
    Kind,
    PermanentError,
    Result,
    TemporaryError,
)

TOY = Kind("test.opsboard.dev", "v1", "Toy", "toys")
CONFIGMAP = Kind("", "v1", "ConfigMap", "configmaps")

CRD: Body = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "toys.test.opsboard.dev"},
    "spec": {
        "group": "test.opsboard.dev",
        "scope": "Namespaced",
        "names": {"plural": "toys", "singular": "toy", "kind": "Toy", "listKind": "ToyList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


def child_size(api: Any, namespace: str, name: str) -> str | None:
    """The size the Toy's ConfigMap holds, None before it exists (`api`: an ApiKube)."""
    return ((api.get(CONFIGMAP, namespace, name) or {}).get("data") or {}).get("size")


def toy(name: str, namespace: str, **spec: object) -> Body:
    return {
        "apiVersion": TOY.api_version,
        "kind": TOY.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": 1, **spec},
    }


def reconcile(ctx: Context) -> Result:
    cr = ctx.cache.get(TOY, ctx.key.namespace, ctx.key.name)
    if cr is None or cr["metadata"].get("deletionTimestamp"):
        return Result.done()
    spec = cr.get("spec") or {}
    if spec.get("sleep"):
        time.sleep(float(spec["sleep"]))
    if spec.get("fail") == "temporary":
        raise TemporaryError("toy asked to fail")
    if spec.get("fail") == "permanent":
        raise PermanentError("spec.fail: toy asked to fail for good")
    if spec.get("fail") == "crash":
        raise RuntimeError("toy asked to crash")
    if spec.get("touch"):
        ctx.report.action(f"Touched Toy {ctx.key.name}")
    meta = cr["metadata"]
    data = {"size": str(spec.get("size"))}
    have = ctx.cache.get(CONFIGMAP, ctx.key.namespace, ctx.key.name)
    if have is None:
        ctx.kube.create(
            CONFIGMAP,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "ownerReferences": [
                        {
                            "apiVersion": TOY.api_version,
                            "kind": TOY.kind,
                            "name": meta["name"],
                            "uid": meta["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "data": data,
            },
        )
        ctx.report.action(f"Created ConfigMap {meta['name']}")
    elif spec.get("conflict"):
        ctx.kube.patch(
            CONFIGMAP, meta["namespace"], meta["name"], {"data": data}, resource_version="1"
        )
    elif have.get("data") != data:
        ctx.kube.patch(
            CONFIGMAP,
            meta["namespace"],
            meta["name"],
            {"data": data},
            resource_version=have["metadata"]["resourceVersion"],
        )
        ctx.report.action(
            f"Updated ConfigMap {meta['name']} size {have['data'].get('size')}→{data['size']}"
        )
    status = {"observedGeneration": meta.get("generation"), "size": spec.get("size")}
    if {k: (cr.get("status") or {}).get(k) for k in status} != status:
        ctx.kube.patch_status(
            TOY, meta["namespace"], meta["name"], status, resource_version=meta["resourceVersion"]
        )
    return Result(requeue_after=float(spec["requeue"])) if spec.get("requeue") else Result.done()


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [ExpectedChild(CONFIGMAP, cr["metadata"]["name"])]


CONTROLLER = Controller(
    name="toy",
    primary=TOY,
    owns=(CONFIGMAP,),
    reconcile=reconcile,
    expected_children=expected_children,
    fields=CrFields(size="spec.size"),
)
