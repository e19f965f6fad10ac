"""The Memcached CR's status, computed from its pods (pure)."""

from __future__ import annotations

from controllers.base import Body
from controllers.graces import DEFAULT_GRACES, Graces
from controllers.memcached.desired import RESOURCES_PATH, labels_for, spec_image, spec_size
from controllers.problems import Problem
from controllers.workload import workload_status


def compute_status(
    cr: Body,
    *,
    pods: list[Body],
    now: str,
    problem: Problem | None = None,
    deployment: Body | None = None,
    graces: Graces = DEFAULT_GRACES,
) -> Body:
    """status.nodes (the pod names, sorted: the tutorial's contract), readiness, conditions;
    `deployment` tells of pods the API server refuses (a quota)."""
    return workload_status(
        cr,
        pods=pods,
        size=spec_size(cr),
        image=spec_image(cr),
        labels=labels_for(cr),
        now=now,
        problem=problem,
        workload=deployment,
        size_field="spec.size",
        resources_field=RESOURCES_PATH,
        graces=graces,
    )
