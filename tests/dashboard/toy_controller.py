"""A controller the dashboard has never heard of, with no CRD file: it must still appear."""

from __future__ import annotations

from controllers.base import DEPLOYMENT, Controller, CrFields, ExpectedChild, Kind, Result

WIDGET = Kind("toys.example.com", "v1", "Widget", "widgets")

CONTROLLER = Controller(
    name="widget",
    primary=WIDGET,
    owns=(DEPLOYMENT,),
    reconcile=lambda ctx: Result.done(),
    expected_children=lambda cr: [ExpectedChild(DEPLOYMENT, cr["metadata"]["name"])],
    fields=CrFields(size="spec.replicas"),
)
