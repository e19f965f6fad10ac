"""The WebServer reconcile: a Deployment and a NodePort Service per CR, healed on events."""

from __future__ import annotations

from controllers.apply import ensure_child, finish, now
from controllers.base import (
    DEPLOYMENT,
    POD,
    SERVICE,
    Body,
    Context,
    ExpectedChild,
    Result,
)
from controllers.fields import deep_get
from controllers.problems import ownership_problem, spec_problem
from controllers.scheduling import grace_from, unscheduled
from controllers.webserver.desired import (
    SERVICE_EXACT,
    WEBSERVER,
    desired_deployment,
    desired_service,
    labels_for,
    service_name,
    spec_image,
    spec_replicas,
)
from controllers.webserver.status import compute_status


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(WEBSERVER, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    deployment = ctx.cache.get(DEPLOYMENT, namespace, name)
    service = ctx.cache.get(SERVICE, namespace, service_name(cr))
    problem = (
        spec_problem(image=spec_image(cr), size=spec_replicas(cr), size_field="spec.replicas")
        or ownership_problem(cr, deployment, kind=DEPLOYMENT.kind)
        or ownership_problem(cr, service, kind=SERVICE.kind)
    )
    if problem is None:
        deployment = ensure_child(ctx, DEPLOYMENT, desired_deployment(cr), deployment)
        service = ensure_child(ctx, SERVICE, desired_service(cr), service, exact=SERVICE_EXACT)
    pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))
    at, grace = now(), grace_from(ctx.settings)
    status = compute_status(
        cr,
        pods=pods,
        service=service,
        now=at,
        problem=problem,
        deployment=deployment,
        grace=grace,
    )
    # Told from its pods, each of whose changes wakes this CR (and from its Deployment's
    # ReplicaFailure, which does too: opsboard.engine.mapping): no recheck on a timer, but
    # for the end of a pod's grace for waiting on a node, which no event tells.
    due = unscheduled(pods, now=at, grace=grace).recheck
    return finish(ctx, WEBSERVER, cr, status, problem, recheck=False, due=due)


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [
        ExpectedChild(DEPLOYMENT, cr["metadata"]["name"]),
        ExpectedChild(SERVICE, service_name(cr)),
    ]
