"""Prepares a fresh installation: the admin user, the CRDs and the sample CRs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.config import ConfigException
from urllib3.exceptions import HTTPError

from controllers.kube import load_api_client
from opsboard.core import identities as identities_
from opsboard.core import manifests

K8S = settings.BASE_DIR / "k8s"


class Command(BaseCommand):
    help = "Create or update the admin user, install the CRDs and apply the samples."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--admin-password-file", type=Path)
        parser.add_argument("--no-samples", action="store_true")
        parser.add_argument(
            "--identities",
            action="store_true",
            help="also apply k8s/rbac and the web's RBAC, and write a kubeconfig per "
            "ServiceAccount beside the admin's (make run on kubesim)",
        )

    def handle(
        self,
        *args: Any,
        admin_password_file: Path | None,
        no_samples: bool,
        identities: bool = False,
        **kw: Any,
    ) -> None:
        if admin_password_file:
            self.ensure_admin(admin_password_file.read_text().strip())
        if not settings.KUBECONFIG_IN_CLUSTER and not Path(settings.KUBECONFIG).exists():
            self.stdout.write(f"No kubeconfig at {settings.KUBECONFIG}: CRDs not installed")
            return
        where = settings.KUBECONFIG or "the in-cluster service account"
        try:
            api = load_api_client(kubeconfig=settings.KUBECONFIG, context=settings.KUBE_CONTEXT)
        except (ConfigException, yaml.YAMLError) as exc:
            what = f"the kubeconfig {where}" if settings.KUBECONFIG else where
            raise CommandError(f"cannot use {what}: {exc}") from exc
        try:
            self.install(api, samples=not no_samples)
            if identities:
                for line in identities_.install(api, K8S, Path(settings.KUBECONFIG)):
                    self.stdout.write(line)
        except manifests.CrdsForbidden as exc:
            raise CommandError(str(exc)) from exc
        except (ApiException, HTTPError, OSError) as exc:
            raise CommandError(
                f"could not install CRDs and samples into the cluster at "
                f"{api.configuration.host} ({where}): {cluster_failure(exc)}"
            ) from exc

    def ensure_admin(self, password: str) -> None:
        user, created = get_user_model().objects.get_or_create(
            username="admin", defaults={"is_staff": True, "is_superuser": True}
        )
        user.is_staff = user.is_superuser = True
        # Only when it differs: a new hash (new salt) ends every admin session at each start.
        if not user.check_password(password):
            user.set_password(password)
        user.save()
        group, _ = Group.objects.get_or_create(name="admin")
        user.groups.add(group)
        self.stdout.write(f"{'Created' if created else 'Updated'} user admin")

    def install(self, api: ApiClient, *, samples: bool) -> None:
        crds = list(manifests.documents((K8S / "crd").glob("*.yaml")))
        for line in manifests.install_crds(api, crds):
            self.stdout.write(line)
        # Others' CRDs that our operators use (KMM's Module): only where not served already.
        third_party = manifests.documents((K8S / "third_party").glob("*/*.yaml"))
        for line in manifests.install_missing(api, third_party):
            self.stdout.write(line)
        if samples:
            sample_docs = manifests.documents((K8S / "samples").glob("*.yaml"))
            for line in manifests.apply(api, sample_docs, update=False):
                self.stdout.write(line)


def cluster_failure(exc: Exception) -> str:
    """What a person can act on, from the client's exception: the API server's own message
    rather than its headers and body, and the cause of a connection that failed."""
    if isinstance(exc, ApiException):
        reason = f"{exc.status} {exc.reason}"
        try:
            message = json.loads(exc.body or "{}").get("message", "")
        except ValueError:
            message = ""
        if exc.status == 401:
            return f"{reason}: the server did not accept the kubeconfig's credentials"
        return f"{reason}: {message}" if message else reason
    cause = getattr(exc, "reason", None) or exc  # urllib3's MaxRetryError: the last failure
    return f"it did not answer ({str(cause).rsplit(': ', 1)[-1]}): is it up, at that address?"
