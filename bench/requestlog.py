"""What kubesim's request log says: requests split from leader election, writes, calls;
and, on a real API server, the same records made from its own count of what it served."""

from __future__ import annotations

from collections import Counter
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from bench.kube import WRITE_VERBS


def split_leases(
    records: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Leader election renews a Lease every few seconds whatever the fleet does: it is
    counted on its own, not charged to the reconciles that happen to overlap it."""
    others: list[dict[str, Any]] = []
    leases: list[dict[str, Any]] = []
    for record in records:
        (leases if str(record.get("resource", "")).startswith("leases") else others).append(record)
    return others, leases


def writes_of(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r.get("verb") in WRITE_VERBS)


def calls_of(records: list[dict[str, Any]]) -> dict[str, int]:
    """What the requests were: "patch deployments", "create events", "update leases"..."""
    return dict(
        Counter(
            f"{r.get('verb')} {r.get('resource')}"
            + (f"/{r['subresource']}" if r.get("subresource") else "")
            for r in records
        ).most_common()
    )


# The server's verbs in the request log's words (kubesim logs the RBAC verb).
_VERBS = {"POST": "create", "PUT": "update", "APPLY": "patch"}
# What a real control plane asks by itself while nothing changes (the rig, 200 s with no
# operator): every component's Lease, the nodes' status, the kubernetes Service's endpoints,
# the fake kubelet's storage lists each second, discovery; and lists of every Service, the
# API server's own ClusterIP and NodePort repair loops, every few minutes. No operator of
# ours asks for these when it has nothing to do, so they are left out of its count.
CONTROL_PLANE_OWN = frozenset(
    {"leases", "nodes", "endpoints", "endpointslices", "persistentvolumes", "storageclasses"}
)
CONTROL_PLANE_LISTS = frozenset({"persistentvolumeclaims", "services"})


def served_counts(metrics: str) -> Counter[tuple[str, str, str]]:
    """A real API server's count of the requests it has answered, from its /metrics text
    (`apiserver_request_total`): by verb (the request log's word), resource and
    subresource."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == "apiserver_request_total":
                labels = sample.labels
                verb = labels.get("verb", "")
                key = (_VERBS.get(verb, verb.lower()), labels.get("resource", ""),
                       labels.get("subresource", ""))  # fmt: skip
                counts[key] += int(sample.value)
    return counts


def served_between(
    before: Counter[tuple[str, str, str]], after: Counter[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    """The requests a real server answered between two counts, as request-log records,
    watches aside and what its control plane asks by itself left out: every other client's
    are in, so this is at most what the product asked."""
    records: list[dict[str, Any]] = []
    for (verb, resource, subresource), count in (after - before).items():
        if (
            verb in ("watch", "connect")
            or not resource
            or resource in CONTROL_PLANE_OWN
            or (verb == "list" and resource in CONTROL_PLANE_LISTS)
        ):
            continue
        records += [{"verb": verb, "resource": resource, "subresource": subresource}] * count
    return records
