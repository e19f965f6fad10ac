"""The dashboard's only calls to the API server: read one CR and merge-patch it (or dry-run
the patch), ask whether a person may, read the StorageClass of claims a review grows, and
read the log of a pod a CR owns. Failures become a ClusterError whose message a person can
act on. With impersonation on, each call about a CR or its pods is made as the person
(`as_user`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from django.conf import settings

from controllers.base import Body, Kind, PermanentError, TemporaryError
from controllers.kube import (
    MERGE_PATCH,
    ApiKube,
    Conflict,
    Forbidden,
    Invalid,
    KubeconfigError,
    NotFound,
    NotGranted,
    load_api_client,
)
from opsboard.accounts.kube_identity import KubeIdentity

# The web app's writes (a person's patch, through /scale or not) in the cluster's
# managedFields and audit log, told apart from the operators' ("opsboard").
WEB_FIELD_MANAGER = "opsboard-web"


class ClusterError(Exception):
    def __init__(
        self, message: str, *, conflict: bool = False, unreachable: bool = False,
        gone: bool = False, forbidden: str = "", invalid: tuple[str, ...] = (), said: str = "",
    ):  # fmt: skip
        super().__init__(message)
        self.conflict = conflict
        self.unreachable = unreachable
        self.gone = gone  # the object asked for does not exist (404)
        self.forbidden = forbidden  # the API server's 403 message, when RBAC refused it
        self.invalid = invalid  # the fields a 422 names (the object as the write leaves it)
        self.said = said  # the API server's own words


@functools.cache  # one connection pool per kubeconfig and process
def _kube_for(kubeconfig: str, context: str) -> ApiKube:
    if kubeconfig and not Path(kubeconfig).exists():
        raise ClusterError(
            f"No cluster: {kubeconfig} does not exist. Point KUBECONFIG at the cluster's "
            "kubeconfig, or start opsboard with `make run` (it starts kubesim).",
            unreachable=True,
        )
    try:
        api_client = load_api_client(
            kubeconfig=kubeconfig, context=context, user_agent=WEB_FIELD_MANAGER
        )
    except KubeconfigError as exc:  # unreadable, no such context, no token: said, not a 500
        where = "" if kubeconfig else "the in-cluster service account cannot be used: "
        raise ClusterError(f"No cluster: {where}{exc}", unreachable=True) from None
    return ApiKube(
        api_client, timeout=settings.KUBE_REQUEST_TIMEOUT, field_manager=WEB_FIELD_MANAGER
    )


def _kube() -> ApiKube:
    return _kube_for(settings.KUBECONFIG, settings.KUBE_CONTEXT)


def api_host() -> str:
    """The URL of the API server the dashboard calls; ClusterError when there is none."""
    return str(_kube().api.configuration.host)


def _request(
    method: str, path: str, *, as_user: KubeIdentity | None, missing: str = "", **kwargs: Any,
) -> Body:  # fmt: skip
    """`missing`: what a 404 means, when it is not that the object asked for is gone."""
    headers = as_user.headers() if as_user else []
    try:
        return _kube().request(method, path, extra_headers=headers, **kwargs)
    except Conflict as exc:
        raise ClusterError(str(exc), conflict=True) from None
    except NotFound:
        if missing:
            raise ClusterError(missing) from None
        raise ClusterError("The object no longer exists in the cluster.", gone=True) from None
    except NotGranted as exc:  # RBAC's: the panel says what a cluster admin can grant
        raise ClusterError(f"The cluster refused the change: {exc}", forbidden=str(exc)) from None
    except Forbidden as exc:  # admission's: no grant changes it, so none is suggested
        raise ClusterError(
            "The cluster refused the change, and nothing was changed: an admission check (a "
            "webhook, a policy or a quota of the namespace) turned it down, not a want of "
            f"rights. Change what it objects to, or ask whoever runs it. It said: {exc}"
        ) from None
    except Invalid as exc:
        raise ClusterError(
            f"The cluster refused the change: {exc}", invalid=exc.fields, said=exc.said
        ) from None
    except PermanentError as exc:
        raise ClusterError(f"The cluster refused the change: {exc}") from None
    except TemporaryError as exc:
        raise ClusterError(
            f"The cluster is unreachable or failing; nothing was changed ({exc}).",
            unreachable=True,
        ) from None


def cr_read(kind: Kind, namespace: str, name: str, *, as_user: KubeIdentity | None) -> Body:
    return _request("GET", ApiKube.path(kind, namespace, name), as_user=as_user)


def storage_class(name: str) -> Body | None:
    """The StorageClass `name`, None if there is none. Read as opsboard, not as the person:
    a class's policy is the cluster's, no secret of a namespace's."""
    try:
        return _request("GET", f"/apis/storage.k8s.io/v1/storageclasses/{name}", as_user=None)
    except ClusterError as exc:
        if exc.gone:
            return None
        raise


def pod_log(
    namespace: str, pod: str, *, container: str, previous: bool, lines: int | None,
    limit_bytes: int, as_user: KubeIdentity | None,
) -> str:  # fmt: skip
    """The last `lines` of `container`'s log (all of it for None; at most `limit_bytes`), of
    its previous run if `previous`. Refusals are worded for a read: nothing was to be
    changed."""
    query: dict[str, Any] = {"container": container, "limitBytes": limit_bytes}
    if lines is not None:
        query["tailLines"] = lines
    if previous:
        query["previous"] = "true"
    path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
    headers = as_user.headers() if as_user else []
    try:
        return _kube().read_text(path, query=query, extra_headers=headers)
    except NotFound:
        raise ClusterError(f"Pod {pod} no longer exists.", gone=True) from None
    except NotGranted as exc:
        raise ClusterError(f"The cluster's RBAC refuses: {exc.said}", forbidden=str(exc)) from None
    except PermanentError as exc:  # 400: not started yet, or no previous run to show
        raise ClusterError(f"The API server has no such log: {exc.said}") from None
    except TemporaryError as exc:
        raise ClusterError(
            f"The cluster is unreachable or failing ({exc}).", unreachable=True
        ) from None


def cr_merge_patch(
    kind: Kind, namespace: str, name: str, patch: Body, *, dry_run: bool,
    as_user: KubeIdentity | None,
) -> Body:  # fmt: skip
    """A JSON merge patch; with dry_run the server validates and defaults but persists nothing."""
    return _request(
        "PATCH",
        ApiKube.path(kind, namespace, name),
        as_user=as_user,
        query={"dryRun": "All"} if dry_run else None,
        body=patch,
        content_type=MERGE_PATCH,
    )


def cr_scale_patch(
    kind: Kind, namespace: str, name: str, patch: Body, *, dry_run: bool,
    as_user: KubeIdentity | None,
) -> Body:  # fmt: skip
    """A merge patch of the CR's scale subresource (an autoscaling/v1 Scale)."""
    return _request(
        "PATCH",
        ApiKube.path(kind, namespace, name, "scale"),
        as_user=as_user,
        query={"dryRun": "All"} if dry_run else None,
        body=patch,
        content_type=MERGE_PATCH,
    )


def access_refusal(
    kind: Kind, namespace: str, verb: str, *, as_user: KubeIdentity, subresource: str = ""
) -> str:
    """Asks the cluster (a SelfSubjectAccessReview, as the person) whether they may `verb`
    the kind (or its `subresource`) in the namespace: "" if so, else the refusal in words."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {
                "namespace": namespace, "verb": verb, "group": kind.group,
                "resource": kind.plural, "subresource": subresource,
            }
        },
    }  # fmt: skip
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    missing = "This cluster does not answer access reviews (no SelfSubjectAccessReview API)."
    answer = _request("POST", path, as_user=as_user, body=review, missing=missing)
    status = answer.get("status") or {}
    if status.get("allowed"):
        return ""
    why = f" ({status['reason']})" if status.get("reason") else ""
    return "The cluster's RBAC refuses: " + rbac_refusal(
        kind, namespace, verb, who=as_user.describe(), subresource=subresource, why=why
    )


def rbac_refusal(
    kind: Kind, namespace: str, verb: str, *, who: str, subresource: str = "", why: str = ""
) -> str:
    """`who` may not `verb` …, and what to do about it: a person acts on this one."""
    resource = kind.plural + (f"/{subresource}" if subresource else "")
    resource += f" (API group {kind.group})" if kind.group else ""
    return (
        f"{who} may not {verb} {resource} in namespace {namespace}{why}. A cluster admin "
        f"can grant it with a RoleBinding there (to {kind.kind.lower()}-editor-role, for "
        "instance)."
    )
