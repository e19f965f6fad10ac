"""The BookStore reconcile: the app's Deployment and Service, the DB's StatefulSet and
headless Service, and the DB's claims grown to spec.bookDB.dbSize."""

from __future__ import annotations

from controllers.apply import ensure_child, finish, now, refusal_events
from controllers.base import (
    DEPLOYMENT,
    POD,
    PVC,
    SERVICE,
    STATEFULSET,
    Body,
    Context,
    ExpectedChild,
    Result,
)
from controllers.bookstore.desired import (
    APP_RESOURCES_PATH,
    BOOKSTORE,
    DB_IMAGE_PATH,
    DB_REPLICAS_PATH,
    DB_RESOURCES_PATH,
    DB_SIZE_PATH,
    SERVICE_EXACT,
    WORKLOAD_EXACT,
    app_image,
    app_labels,
    app_name,
    app_replicas,
    claim_prefix,
    db_image,
    db_labels,
    db_name,
    db_replicas,
    db_size,
    db_statefulset_mutable,
    desired_app_deployment,
    desired_app_service,
    desired_db_service,
    desired_db_statefulset,
)
from controllers.bookstore.quantity import larger_claims, parse_quantity
from controllers.bookstore.status import compute_status
from controllers.fields import deep_get
from controllers.graces import grace_ends, graces_from
from controllers.images import is_valid_image
from controllers.kube import Forbidden, NotGranted
from controllers.pods import STUCK_REASONS
from controllers.problems import INVALID_SPEC, Problem, ownership_problem
from controllers.refusals import claim_advice
from controllers.resources import resources_problem

EXPANSION_FAILED = "VolumeExpansionFailed"


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(BOOKSTORE, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    deployment = ctx.cache.get(DEPLOYMENT, namespace, app_name(cr))
    app_service = ctx.cache.get(SERVICE, namespace, app_name(cr))
    statefulset = ctx.cache.get(STATEFULSET, namespace, db_name(cr))
    db_service = ctx.cache.get(SERVICE, namespace, db_name(cr))
    claims = db_claims(ctx, cr)
    problem = (
        spec_problem(cr, claims)
        or ownership_problem(cr, deployment, kind=DEPLOYMENT.kind)
        or ownership_problem(cr, app_service, kind=SERVICE.kind)
        or ownership_problem(cr, statefulset, kind=STATEFULSET.kind)
        or ownership_problem(cr, db_service, kind=SERVICE.kind)
    )
    refused: Forbidden | None = None
    if problem is None:
        deployment = ensure_child(
            ctx, DEPLOYMENT, desired_app_deployment(cr), deployment, exact=WORKLOAD_EXACT
        )
        app_service = ensure_child(
            ctx, SERVICE, desired_app_service(cr), app_service, exact=SERVICE_EXACT
        )
        ensure_child(ctx, SERVICE, desired_db_service(cr), db_service, exact=SERVICE_EXACT)
        if statefulset is None:
            ensure_child(ctx, STATEFULSET, desired_db_statefulset(cr), None)
        else:  # its volumeClaimTemplates are immutable: the claims are grown below instead
            mutable = db_statefulset_mutable(cr)
            ensure_child(ctx, STATEFULSET, mutable, statefulset, exact=WORKLOAD_EXACT)
        claims, problem, refused = expand_claims(ctx, cr, claims, template=statefulset)
    app_pods = ctx.cache.list(POD, namespace, labels=app_labels(cr))
    db_pods = ctx.cache.list(POD, namespace, labels=db_labels(cr))
    if problem is None and statefulset is not None:
        db_pods = replace_stuck_pods(ctx, statefulset, db_pods)
    at, graces = now(), graces_from(ctx.settings)
    status = compute_status(
        cr,
        app_pods=app_pods,
        db_pods=db_pods,
        app_service=app_service,
        claims=claims,
        now=at,
        problem=problem,
        app_deployment=deployment,
        db_statefulset=statefulset,
        db_events=refusal_events(ctx, statefulset),
        graces=graces,
    )
    due = grace_ends([*app_pods, *db_pods], now=at, graces=graces)
    result = finish(ctx, BOOKSTORE, cr, status, problem, due=due)
    if refused is not None:
        refused.told = True  # as VolumeExpansionFailed, by `finish`
        raise refused
    return result


REVISION_LABEL = "controller-revision-hash"


def replace_stuck_pods(ctx: Context, statefulset: Body, pods: list[Body]) -> list[Body]:
    """Delete DB pods of an old revision that can never become ready (an image that cannot be
    pulled, a crash loop): a StatefulSet's rolling update waits for every pod to be ready, so
    after a bad image is fixed it would wait forever (Kubernetes' "forced rollback": the
    StatefulSet re-creates the pod from the new template). Healthy pods are never touched."""
    revision = deep_get(statefulset, "status.updateRevision")
    if not revision:
        return pods
    kept = []
    for pod in pods:
        meta = pod["metadata"]
        waiting = {
            deep_get(c, "state.waiting.reason")
            for c in deep_get(pod, "status.containerStatuses", [])
        }
        old = (meta.get("labels") or {}).get(REVISION_LABEL) not in (None, revision)
        stuck = waiting & STUCK_REASONS
        if old and stuck and not meta.get("deletionTimestamp"):
            ctx.kube.delete(POD, meta["namespace"], meta["name"])
            reason = min(stuck)
            ctx.report.action(
                f"Deleted Pod {meta['name']}: stuck ({reason}) on an old revision; "
                f"StatefulSet {statefulset['metadata']['name']} re-creates it from the new one"
            )
            continue
        kept.append(pod)
    return kept


def db_claims(ctx: Context, cr: Body) -> list[Body]:
    """The DB's claims, those of scaled-down replicas included (a StatefulSet keeps them)."""
    prefix = claim_prefix(cr)
    return [
        claim
        for claim in ctx.cache.list(PVC, cr["metadata"]["namespace"], labels=db_labels(cr))
        if claim["metadata"]["name"].startswith(prefix)
        and claim["metadata"]["name"].removeprefix(prefix).isdigit()
    ]


def spec_problem(cr: Body, claims: list[Body]) -> Problem | None:
    """What the API should have refused (a CRD without validation), and a dbSize smaller
    than a claim already is: Kubernetes cannot shrink a claim."""
    for field, image in (
        ("spec.bookApp.image", app_image(cr)),
        (DB_IMAGE_PATH, db_image(cr)),
    ):
        if not is_valid_image(image):
            return INVALID_SPEC, f"{field}: Invalid value: {image!r}: not a valid image reference"
    for field, size in (
        ("spec.bookApp.replicas", app_replicas(cr)),
        (DB_REPLICAS_PATH, db_replicas(cr)),
    ):
        if size < 0:
            return (
                INVALID_SPEC,
                f"{field}: Invalid value: {size}: must be greater than or equal to 0",
            )
    for path in (APP_RESOURCES_PATH, DB_RESOURCES_PATH):
        if why := resources_problem(cr, path):
            return INVALID_SPEC, why
    db_size_text = db_size(cr)
    wanted = parse_quantity(db_size_text)
    if wanted is None or wanted <= 0:
        return (
            INVALID_SPEC,
            f"spec.bookDB.dbSize: Invalid value: {db_size_text!r}: not a storage size",
        )
    requested = [(c["metadata"]["name"], deep_get(c, "spec.resources.requests.storage"))
                 for c in claims]  # fmt: skip
    if found := larger_claims(wanted, requested):
        names, biggest = found
        return INVALID_SPEC, (
            f"spec.bookDB.dbSize: Invalid value: {db_size_text!r}: smaller than the claims {names}; "
            f"Kubernetes cannot shrink a PersistentVolumeClaim: set it to {biggest} or more"
        )
    return None


def expand_claims(
    ctx: Context, cr: Body, claims: list[Body], *, template: Body | None
) -> tuple[list[Body], Problem | None, Forbidden | None]:
    """Raise each bound claim smaller than dbSize to it (the cluster grows the volume, the
    file system follows when the pod mounts it again; an unbound claim cannot grow, and its
    pod's start after the binding brings us back). Returns the claims as they now are, and
    admission's refusal (its StorageClass, a ResourceQuota, a LimitRange) as the CR's
    problem and as the error that ends the run: retried slowly, as any 403 is
    (opsboard.engine.runner), so a quota raised or a class that allows expansion is taken
    with no change of the CR."""
    size = db_size(cr)
    wanted = parse_quantity(size)
    grown: list[tuple[str, str]] = []
    out: list[Body] = []
    for claim in claims:
        meta = claim["metadata"]
        requested = deep_get(claim, "spec.resources.requests.storage")
        have = parse_quantity(requested)
        smaller = have is not None and wanted is not None and have < wanted
        unbound = deep_get(claim, "status.phase") != "Bound"  # the API server grows none
        if not smaller or unbound or meta.get("deletionTimestamp"):
            out.append(claim)
            continue
        try:
            claim = ctx.kube.patch(
                PVC,
                meta["namespace"],
                meta["name"],
                {"spec": {"resources": {"requests": {"storage": size}}}},
                resource_version=meta["resourceVersion"],
            )
        except NotGranted:  # the operator's role, not the claim: retried once granted
            raise
        except Forbidden as exc:  # admission's
            said = exc.said.rstrip(".")
            advice = claim_advice(
                meta["namespace"],
                said,
                DB_SIZE_PATH,
                storage_class=deep_get(claim, "spec.storageClassName"),
            )
            told = f"Could not grow PersistentVolumeClaim {meta['name']} to {size}: {said}"
            return claims, (EXPANSION_FAILED, f"{told}. {advice}"), exc
        ctx.report.action(f"Expanded PersistentVolumeClaim {meta['name']} {requested}→{size}")
        grown.append((meta["name"], str(requested)))
        out.append(claim)
    if grown:
        kept = deep_get(template, "spec.volumeClaimTemplates", [{}])[0]
        kept_size = deep_get(kept, "spec.resources.requests.storage")
        note = (
            f" StatefulSet {db_name(cr)} keeps {kept_size} in its volumeClaimTemplates "
            "(immutable): claims of new replicas are grown the same way."
            if kept_size and kept_size != size
            else ""
        )
        names = ", ".join(f"{n} ({r})" for n, r in grown)
        ctx.report.event(
            "Normal",
            "ExpandingVolumes",
            f"Requested {size} for PersistentVolumeClaims {names}; the file system grows "
            f"when the pod using each claim starts again.{note}",
        )
    return out, None, None


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [
        ExpectedChild(DEPLOYMENT, app_name(cr)),
        ExpectedChild(SERVICE, app_name(cr)),
        ExpectedChild(STATEFULSET, db_name(cr)),
        ExpectedChild(SERVICE, db_name(cr)),
    ]
