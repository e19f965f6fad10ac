"""The Memcached reconcile: one Deployment per CR, status told from its pods."""

from __future__ import annotations

from controllers.apply import ensure_child, now, settle, write_status
from controllers.base import DEPLOYMENT, POD, Body, Context, ExpectedChild, PermanentError, Result
from controllers.memcached.desired import (
    MEMCACHED,
    desired_deployment,
    labels_for,
    spec_image,
    spec_size,
)
from controllers.memcached.status import compute_status
from controllers.objects import INVALID_SPEC, deep_get, ownership_problem, spec_problem


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(MEMCACHED, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    deployment = ctx.cache.get(DEPLOYMENT, namespace, name)
    problem = spec_problem(
        image=spec_image(cr), size=spec_size(cr), size_field="spec.size"
    ) or ownership_problem(cr, deployment, kind=DEPLOYMENT.kind)
    if problem is None:
        ensure_child(ctx, DEPLOYMENT, desired_deployment(cr), deployment)
    pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))
    status = compute_status(cr, pods=pods, now=now(), problem=problem)
    write_status(ctx, MEMCACHED, cr, status)
    if problem is not None and problem[0] == INVALID_SPEC:
        raise PermanentError(problem[1])  # the user must change the CR, which brings us back
    return settle(ctx, cr, status)


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [ExpectedChild(DEPLOYMENT, cr["metadata"]["name"])]
