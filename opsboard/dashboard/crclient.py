"""The dashboard's only calls to the API server: read one CR and merge-patch it (or dry-run
the patch). Failures become a ClusterError whose message a person can act on."""

from __future__ import annotations

import functools
from pathlib import Path

from django.conf import settings

from controllers.base import Body, Kind, PermanentError, TemporaryError
from controllers.kube import MERGE_PATCH, ApiKube, Conflict, NotFound, load_api_client


class ClusterError(Exception):
    def __init__(self, message: str, *, conflict: bool = False, unreachable: bool = False):
        super().__init__(message)
        self.conflict = conflict
        self.unreachable = unreachable


@functools.cache  # one connection pool per kubeconfig and process
def _kube_for(kubeconfig: str) -> ApiKube:
    if kubeconfig and not Path(kubeconfig).exists():
        raise ClusterError(f"No cluster: {kubeconfig} does not exist.", unreachable=True)
    api_client = load_api_client(kubeconfig=kubeconfig)
    return ApiKube(api_client, timeout=settings.KUBE_REQUEST_TIMEOUT)


def _request(method: str, path: str, **kwargs: object) -> Body:
    try:
        return _kube_for(settings.KUBECONFIG).request(method, path, **kwargs)
    except Conflict as exc:
        raise ClusterError(str(exc), conflict=True) from None
    except NotFound:
        raise ClusterError("The object no longer exists in the cluster.") from None
    except PermanentError as exc:
        raise ClusterError(f"The cluster refused the change: {exc}") from None
    except TemporaryError as exc:
        raise ClusterError(
            f"The cluster is unreachable or failing; nothing was changed ({exc}).",
            unreachable=True,
        ) from None


def cr_read(kind: Kind, namespace: str, name: str) -> Body:
    return _request("GET", ApiKube.path(kind, namespace, name))


def cr_merge_patch(kind: Kind, namespace: str, name: str, patch: Body, *, dry_run: bool) -> Body:
    """A JSON merge patch; with dry_run the server validates and defaults but persists nothing."""
    return _request(
        "PATCH",
        ApiKube.path(kind, namespace, name),
        query={"dryRun": "All"} if dry_run else None,
        body=patch,
        content_type=MERGE_PATCH,
    )
