"""The Memcached reconcile: one Deployment per CR, status told from its pods."""

from __future__ import annotations

from controllers.apply import ensure_child_and_finish, finish, now
from controllers.base import DEPLOYMENT, POD, Body, Context, ExpectedChild, Result
from controllers.fields import deep_get
from controllers.graces import grace_ends, graces_from
from controllers.memcached.desired import (
    DEPLOYMENT_EXACT,
    MEMCACHED,
    RESOURCES_PATH,
    desired_deployment,
    labels_for,
    spec_image,
    spec_size,
)
from controllers.memcached.status import compute_status
from controllers.problems import ownership_problem, spec_problem
from controllers.resources import resources_problem


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(MEMCACHED, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    deployment = ctx.cache.get(DEPLOYMENT, namespace, name)
    problem = spec_problem(
        image=spec_image(cr),
        size=spec_size(cr),
        size_field="spec.size",
        resources=resources_problem(cr, RESOURCES_PATH),
    ) or ownership_problem(cr, deployment, kind=DEPLOYMENT.kind)

    def tell(deployment: Body | None) -> tuple[Body, float | None]:
        pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))
        at, graces = now(), graces_from(ctx.settings)
        status = compute_status(
            cr, pods=pods, now=at, problem=problem, deployment=deployment, graces=graces
        )
        # Told from its pods, each of whose changes wakes this CR (and from its Deployment's
        # ReplicaFailure, which does too: opsboard.engine.mapping): no recheck on a timer, but
        # for the end of a pod's grace (for a node, or to become ready), which no event tells.
        return status, grace_ends(pods, now=at, graces=graces)

    if problem is None:
        # The status written beside the Deployment's patch: one round trip for the two.
        return ensure_child_and_finish(
            ctx,
            MEMCACHED,
            cr,
            DEPLOYMENT,
            desired_deployment(cr),
            deployment,
            tell,
            exact=DEPLOYMENT_EXACT,
            recheck=False,
        )
    status, due = tell(deployment)
    return finish(ctx, MEMCACHED, cr, status, problem, recheck=False, due=due)


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [ExpectedChild(DEPLOYMENT, cr["metadata"]["name"])]
