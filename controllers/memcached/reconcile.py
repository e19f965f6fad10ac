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
from controllers.objects import deep_get, spec_problem


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(MEMCACHED, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    problem = spec_problem(image=spec_image(cr), size=spec_size(cr), size_field="spec.size")
    if problem is None:
        want = desired_deployment(cr)
        ensure_child(ctx, DEPLOYMENT, want, ctx.cache.get(DEPLOYMENT, namespace, name))
    pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))
    status = compute_status(cr, pods=pods, now=now(), invalid=problem)
    write_status(ctx, MEMCACHED, cr, status)
    if problem is not None:
        raise PermanentError(problem)
    return settle(ctx, cr, status)


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [ExpectedChild(DEPLOYMENT, cr["metadata"]["name"])]
