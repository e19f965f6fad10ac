"""The BookStore CR's status, told from its pods, its Service and its DB claims (pure)."""

from __future__ import annotations

from controllers.base import Body
from controllers.bookstore.desired import (
    APP_PORT_NAME,
    APP_RESOURCES_PATH,
    DB_REPLICAS_PATH,
    DB_RESOURCES_PATH,
    DB_SIZE_PATH,
    app_image,
    app_labels,
    app_name,
    app_replicas,
    db_image,
    db_labels,
    db_name,
    db_replicas,
)
from controllers.bookstore.quantity import parse_quantity
from controllers.conditions import conditions_from, find_condition
from controllers.fields import deep_get, node_port
from controllers.graces import DEFAULT_GRACES, Graces
from controllers.problems import Problem
from controllers.workload import workload_status

RESIZE_CONDITIONS = ("FileSystemResizePending", "Resizing")


def claim_status(claim: Body) -> Body:
    """One DB claim as the CR reports it: what was asked, what the volume has, and its state
    (Bound, Pending, or the resize step it waits on)."""
    state = deep_get(claim, "status.phase") or "Pending"
    for type_ in RESIZE_CONDITIONS:
        condition = find_condition(deep_get(claim, "status.conditions"), type_)
        if condition is not None and condition.get("status") == "True":
            state = type_
            break
    entry: Body = {
        "name": claim["metadata"]["name"],
        "requested": deep_get(claim, "spec.resources.requests.storage"),
        "state": state,
    }
    if capacity := deep_get(claim, "status.capacity.storage"):
        entry["capacity"] = capacity
    return entry


def resizing(claims: list[Body]) -> list[Body]:
    """The claims whose volume has less than they request: a resize under way."""
    out = []
    for claim in claims:
        entry = claim_status(claim)
        want, have = parse_quantity(entry["requested"]), parse_quantity(entry.get("capacity"))
        if want is not None and have is not None and have < want:
            out.append(entry)
    return out


def compute_status(
    cr: Body,
    *,
    app_pods: list[Body],
    db_pods: list[Body],
    app_service: Body | None,
    claims: list[Body],
    now: str,
    problem: Problem | None = None,
    app_deployment: Body | None = None,
    db_statefulset: Body | None = None,
    db_events: list[Body] | None = None,
    graces: Graces = DEFAULT_GRACES,
) -> Body:
    """Available when the app and the DB have all their pods ready; Progressing while either
    scales or rolls out, or while a claim grows; Degraded when pods cannot start or be
    scheduled, the API server refuses the app's (`app_deployment` says so) or the DB's
    (the FailedCreate `db_events` about `db_statefulset` do), or the CR cannot be served
    as asked (`problem`)."""
    fresh = {"metadata": cr["metadata"]}  # each part's conditions, told from scratch
    app = workload_status(
        fresh,
        pods=app_pods,
        size=app_replicas(cr),
        image=app_image(cr),
        labels=app_labels(cr),
        now=now,
        workload=app_deployment,
        size_field="spec.bookApp.replicas",
        resources_field=APP_RESOURCES_PATH,
        graces=graces,
    )
    db = workload_status(
        fresh,
        pods=db_pods,
        size=db_replicas(cr),
        image=db_image(cr),
        labels=db_labels(cr),
        now=now,
        workload=db_statefulset,
        events=db_events,
        size_field=DB_REPLICAS_PATH,
        resources_field=DB_RESOURCES_PATH,
        storage_field=DB_SIZE_PATH,
        graces=graces,
    )
    parts = (("App", app), ("DB", db))

    def part(type_: str, prefix: str, view: Body) -> Body:
        condition = find_condition(view["conditions"], type_)
        assert condition is not None
        return {**condition, "message": f"{prefix}: {condition['message']}"}

    def verdict(type_: str, *, bad: str) -> tuple[bool, str, str]:
        """(status, reason, message): the first part whose status is `bad` gives the reason."""
        each = [part(type_, prefix, view) for prefix, view in parts]
        worst = [c for c in each if c["status"] == bad]
        chosen = worst or each
        truth = (worst[0]["status"] if worst else each[0]["status"]) == "True"
        return truth, chosen[0]["reason"], "; ".join(c["message"] for c in chosen)

    available = verdict("Available", bad="False")
    progressing = verdict("Progressing", bad="True")
    degraded = verdict("Degraded", bad="True")
    growing = resizing(claims)
    if growing and not progressing[0]:
        names = ", ".join(f"{c['name']} {c.get('capacity')}→{c['requested']}" for c in growing)
        pending = any(c["state"] == "FileSystemResizePending" for c in growing)
        step = (
            "the file system grows when the pod using it starts again "
            "(FileSystemResizePending: restart the DB pods to finish)"
            if pending
            else "the volume is being resized"
        )
        progressing = (True, "VolumeResizing", f"Claims growing: {names}; {step}")
    if problem is not None:
        degraded = (True, *problem)

    generation = int(deep_get(cr, "metadata.generation", 0))
    verdicts = [
        (type_, truth, (reason, message))
        for type_, (truth, reason, message) in (
            ("Available", available),
            ("Progressing", progressing),
            ("Degraded", degraded),
        )
    ]
    conditions = conditions_from(cr, verdicts, observed_generation=generation, now=now)
    status: Body = {
        "nodes": sorted([*app["nodes"], *db["nodes"]]),
        "readyReplicas": app["readyReplicas"],
        "dbReadyReplicas": db["readyReplicas"],
        "selector": app["selector"],
        "serviceName": app_name(cr),
        "dbServiceName": db_name(cr),
        "claims": sorted((claim_status(c) for c in claims), key=lambda c: c["name"]),
        "observedGeneration": generation,
        "conditions": conditions,
    }
    if (port := node_port(app_service, APP_PORT_NAME)) is not None:
        status["nodePort"] = port
    return status
