"""The Ptemplate reconcile: a KMM Module and a consumer DaemonSet per CR, healed on events."""

from __future__ import annotations

from controllers.apply import RECHECK_MAX_SECONDS, ensure_child, finish, now, refusal_events
from controllers.base import (
    DAEMONSET,
    POD,
    Body,
    Context,
    ExpectedChild,
    Result,
)
from controllers.fields import deep_get
from controllers.graces import grace_ends, graces_from
from controllers.images import is_valid_image
from controllers.problems import INVALID_SPEC, Problem, ownership_problem
from controllers.ptemplate.desired import (
    DAEMONSET_EXACT,
    MODULE,
    MODULE_EXACT,
    PTEMPLATE,
    RESOURCES_PATH,
    SECRET,
    daemonset_name,
    desired_daemonset,
    desired_module,
    labels_for,
    module_image_ok,
    module_name,
    resource_problem,
    selector_problem,
    spec_device_count,
    spec_device_resource,
    spec_image,
    spec_node_selector,
    spec_pull_secret,
)
from controllers.ptemplate.status import compute_status
from controllers.resources import resources_problem

PULL_SECRET_MISSING = "PullSecretMissing"


def reconcile(ctx: Context) -> Result:
    namespace, name = ctx.key.namespace, ctx.key.name
    cr = ctx.cache.get(PTEMPLATE, namespace, name)
    if cr is None or deep_get(cr, "metadata.deletionTimestamp"):
        return Result.done()  # gone: the garbage collector removes its children
    daemonset = ctx.cache.get(DAEMONSET, namespace, daemonset_name(cr))
    module = ctx.cache.get(MODULE, namespace, module_name(cr))
    problem = (
        spec_problem(cr)
        or ownership_problem(cr, module, kind=MODULE.kind)
        or ownership_problem(cr, daemonset, kind=DAEMONSET.kind)
        or pull_secret_problem(ctx, cr)
    )
    if problem is None:
        module = ensure_child(ctx, MODULE, desired_module(cr), module, exact=MODULE_EXACT)
        daemonset = ensure_child(
            ctx, DAEMONSET, desired_daemonset(cr), daemonset, exact=DAEMONSET_EXACT
        )
    pods = ctx.cache.list(POD, namespace, labels=labels_for(cr))
    at, graces = now(), graces_from(ctx.settings)
    status = compute_status(
        cr,
        daemonset=daemonset,
        module=module,
        pods=pods,
        now=at,
        problem=problem,
        events=refusal_events(ctx, daemonset),
        graces=graces,
    )
    due = grace_ends(pods, now=at, graces=graces)  # a pod's grace ends
    result = finish(ctx, PTEMPLATE, cr, status, problem, due=due)
    if problem is not None and problem[0] == PULL_SECRET_MISSING:
        # Secrets are not watched (their data would land in the mirror): look again slowly.
        return Result(requeue_after=RECHECK_MAX_SECONDS)
    return result


def spec_problem(cr: Body) -> Problem | None:
    """What the API should have refused (a CRD without validation, or a key CEL would catch)."""
    image = spec_image(cr)
    loader = str(deep_get(cr, "spec.moduleLoaderImage") or "")
    plugin = deep_get(cr, "spec.devicePluginImage")
    text = (
        (None if is_valid_image(image) else f"spec.image: Invalid value: {image!r}")
        or (
            None
            if module_image_ok(loader)
            else f"spec.moduleLoaderImage: Invalid value: {loader!r}"
        )
        or (
            f"spec.devicePluginImage: Invalid value: {plugin!r}"
            if plugin and not is_valid_image(str(plugin))
            else None
        )
        or (
            f"spec.deviceCount: Invalid value: {spec_device_count(cr)}: must be greater than "
            "or equal to 0"
            if spec_device_count(cr) < 0
            else None
        )
        or ("spec.moduleName: Required value" if not deep_get(cr, "spec.moduleName") else None)
        or ("spec.imagePullSecret: Required value" if not spec_pull_secret(cr) else None)
        or selector_problem(spec_node_selector(cr))
        or resource_problem(spec_device_resource(cr))
        or resources_problem(cr, RESOURCES_PATH)
    )
    return (INVALID_SPEC, text) if text else None


def pull_secret_problem(ctx: Context, cr: Body) -> Problem | None:
    """The pull secret must exist in the CR's namespace: a live read, since it is not watched."""
    secret = spec_pull_secret(cr)
    namespace = cr["metadata"]["namespace"]
    if ctx.kube.get(SECRET, namespace, secret) is not None:
        return None
    return PULL_SECRET_MISSING, (
        f"Secret {secret} does not exist in namespace {namespace}: the Module and the "
        f"consumer pods need it to pull their images (kubectl -n {namespace} create secret "
        f"docker-registry {secret} ...)"
    )


def expected_children(cr: Body) -> list[ExpectedChild]:
    return [
        ExpectedChild(MODULE, module_name(cr)),
        ExpectedChild(DAEMONSET, daemonset_name(cr)),
    ]
