"""`manage.py opsboard_diagnose memcached shop/cache`: why a CR is not converging, in a
terminal. Read from the mirror and the run log, as the dashboard's section is."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from opsboard.dashboard.kinds import KindInfo, all_kinds
from opsboard.diagnosis.gather import cr_diagnosis
from opsboard.mirror.models import KubeObject


def _kind(text: str) -> KindInfo:
    for info in all_kinds().values():
        if text.lower() in (
            info.name,
            info.kind.kind.lower(),
            info.kind.plural,
            info.kind.resource,
        ):
            return info
    known = ", ".join(sorted(all_kinds()))
    raise CommandError(f"Unknown kind {text!r}: use one of {known}.")


class Command(BaseCommand):
    help = "Print why a custom resource is not converging (from the mirror, no API call)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", help="controller or kind: memcached, Memcached, ...")
        parser.add_argument("object", help="NAMESPACE/NAME")

    def handle(self, *args: Any, **options: Any) -> None:
        info = _kind(options["kind"])
        namespace, sep, name = str(options["object"]).partition("/")
        if not sep or not namespace or not name:
            raise CommandError(f"Name the object as NAMESPACE/NAME, not {options['object']!r}.")
        cr = KubeObject.objects.filter(
            api_version=info.kind.api_version, kind=info.kind.kind, namespace=namespace, name=name
        ).first()
        if cr is None:
            raise CommandError(
                f"{info.kind.kind} {namespace}/{name} is not in the mirror: check the name, "
                "and that the watcher runs (manage.py runwatcher)."
            )
        diagnosis = cr_diagnosis(info=info, cr=cr)
        self.stdout.write(f"{info.kind.kind} {namespace}/{name}: {cr.health}")
        if not diagnosis.findings:
            self.stdout.write(f"  {diagnosis.summary}")
        for number, finding in enumerate(diagnosis.findings, 1):
            self.stdout.write(f"{number}. [{finding.code}] {finding.what}")
            self.stdout.write(f"   → {finding.todo}")
            if finding.see:  # a section of the CR's page: there is no "below" in a terminal
                page = reverse("cr_detail", args=[info.name, namespace, name])
                self.stdout.write(f"     (its {finding.see.heading}: {page}#{finding.see})")
