"""Prepares a fresh installation: the admin user, the CRDs and the sample CRs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from kubernetes.client.exceptions import ApiException
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
        try:
            self.install(samples=not no_samples)
            if identities:
                api = load_api_client(kubeconfig=settings.KUBECONFIG)
                for line in identities_.install(api, K8S, Path(settings.KUBECONFIG)):
                    self.stdout.write(line)
        except (ApiException, HTTPError, OSError) as exc:
            raise CommandError(
                f"could not install CRDs and samples into the cluster: {exc}"
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

    def install(self, *, samples: bool) -> None:
        api = load_api_client(kubeconfig=settings.KUBECONFIG)
        crds = list(manifests.documents((K8S / "crd").glob("*.yaml")))
        for line in manifests.apply(api, crds, update=True):
            self.stdout.write(line)
        manifests.wait_established(api, [crd["metadata"]["name"] for crd in crds])
        # Others' CRDs that our operators use (KMM's Module): only where not served already.
        third_party = manifests.documents((K8S / "third_party").glob("*/*.yaml"))
        for line in manifests.install_missing(api, third_party):
            self.stdout.write(line)
        if samples:
            sample_docs = manifests.documents((K8S / "samples").glob("*.yaml"))
            for line in manifests.apply(api, sample_docs, update=False):
                self.stdout.write(line)
