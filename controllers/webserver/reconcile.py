"""The WebServer reconcile: a Deployment and a NodePort Service per CR, healed on events."""

from __future__ import annotations

from controllers.apply import ensure_child, ensure_child_and_finish, finish, now
from controllers.base import (
    DEPLOYMENT,
    POD,
    SERVICE,
    Body,
    Context,
    ExpectedChild,
    PermanentError,
    Result,
    TemporaryError,
)
from controllers.drift import owned_diff
from controllers.fields import deep_get, node_port
from controllers.graces import grace_ends, graces_from
from controllers.kube import Conflict, node_port_refusal
from controllers.problems import ownership_problem, spec_problem
from controllers.resources import resources_problem
from controllers.webserver.desired import (
    DEPLOYMENT_EXACT,
    PORT_NAME,
    RESOURCES_PATH,
    SERVICE_EXACT,
    WEBSERVER,
    desired_deployment,
    desired_service,
    labels_for,
    previous_node_port,
    service_name,
    spec_image,
    spec_node_port,
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
        spec_problem(
            image=spec_image(cr),
            size=spec_replicas(cr),
            size_field="spec.replicas",
            resources=resources_problem(cr, RESOURCES_PATH),
        )
        or ownership_problem(cr, deployment, kind=DEPLOYMENT.kind)
        or ownership_problem(cr, service, kind=SERVICE.kind)
    )
    pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))

    def tell(child: Body | None) -> tuple[Body, float | None]:
        at, graces = now(), graces_from(ctx.settings)
        status = compute_status(
            cr,
            pods=pods,
            service=service,
            now=at,
            problem=problem,
            deployment=child,
            graces=graces,
        )
        # Told from its pods, each of whose changes wakes this CR (and from its Deployment's
        # ReplicaFailure, which does too: opsboard.engine.mapping): no recheck on a timer,
        # but for the end of a pod's grace (for a node, or to become ready), no event tells.
        return status, grace_ends(pods, now=at, graces=graces)

    if problem is None and service is not None and _stands(cr, service):
        # A scale or an image: the status written beside the Deployment's patch, as
        # Memcached's (one round trip for the two).
        return ensure_child_and_finish(
            ctx,
            WEBSERVER,
            cr,
            DEPLOYMENT,
            desired_deployment(cr),
            deployment,
            tell,
            exact=DEPLOYMENT_EXACT,
            recheck=False,
        )
    if problem is None:  # the Deployment first: a Service refused does not hold up a scale
        deployment = ensure_child(
            ctx, DEPLOYMENT, desired_deployment(cr), deployment, exact=DEPLOYMENT_EXACT
        )
        service = _ensure_service(ctx, cr, service)
    status, due = tell(deployment)
    return finish(ctx, WEBSERVER, cr, status, problem, recheck=False, due=due)


def _stands(cr: Body, service: Body) -> bool:
    """The Service is as the CR wants it: nothing to write to it."""
    return owned_diff(desired_service(cr), service, exact=SERVICE_EXACT) is None


def _ensure_service(ctx: Context, cr: Body, have: Body | None) -> Body:
    """The Service, created anew (someone deleted it) with the nodePort its predecessor had,
    unless the spec names one. If the API server will not give that port back (another
    Service took it meanwhile), the cluster allocates one, and the user is told: whoever
    used the old port has lost it."""
    previous = previous_node_port(cr) if have is None else None
    want = desired_service(cr, node_port=previous)
    try:
        return ensure_child(ctx, SERVICE, want, have, exact=SERVICE_EXACT)
    except (TemporaryError, PermanentError) as exc:
        why = node_port_refusal(exc)
        if previous is None or spec_node_port(cr) is not None or why is None:
            raise
    name = service_name(cr)
    if ctx.kube.get(SERVICE, cr["metadata"]["namespace"], name) is not None:
        # It holds the port itself, not yet in the mirror, and differs from `want` (else
        # ensure_child took it): the next run, from a newer mirror, corrects it.
        raise Conflict(f"Service {name} exists, though the mirror did not show it yet")
    try:  # The holder may have been this very Service, deleted since: ask once more.
        return ensure_child(ctx, SERVICE, want, None, exact=SERVICE_EXACT)
    except (TemporaryError, PermanentError) as exc:
        if node_port_refusal(exc) is None:
            raise
    service = ensure_child(ctx, SERVICE, desired_service(cr), None, exact=SERVICE_EXACT)
    now_at = node_port(service, PORT_NAME)
    ctx.report.action(
        f"Allocated NodePort {now_at} to Service {name}: its previous NodePort {previous} is {why}"
    )
    ctx.report.event(
        "Warning",
        "NodePortChanged",
        f"Service {name} was re-created with NodePort {now_at}, not its previous NodePort "
        f"{previous}, which is {why}: http://<node>:{previous} no longer reaches this "
        f"{cr['kind']}. Use port {now_at}, or set spec.nodePort to choose a fixed port.",
    )
    return service


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [
        ExpectedChild(DEPLOYMENT, cr["metadata"]["name"]),
        ExpectedChild(SERVICE, service_name(cr)),
    ]
