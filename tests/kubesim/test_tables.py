"""Table cells computed as kube-apiserver's printers compute them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesim.resources import Registry
from kubesim.tables import table


def _node(ready: str | None, *, unschedulable: bool = False) -> dict[str, Any]:
    conditions = [{"type": "MemoryPressure", "status": "False"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    return {
        "metadata": {"name": "n1", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"conditions": conditions},
    }


def _status_cell(node: dict[str, Any]) -> str:
    nodes = Registry().get("nodes")
    assert nodes is not None
    got = table(nodes, "v1", [node], include="None")
    names = [c["name"] for c in got["columnDefinitions"]]
    return got["rows"][0]["cells"][names.index("Status")]


@pytest.mark.parametrize(
    ("ready", "unschedulable", "expected"),
    [
        ("True", False, "Ready"),
        ("False", False, "NotReady"),
        ("Unknown", False, "NotReady"),  # a node that stopped reporting
        (None, False, "Unknown"),  # a node that never reported
        ("True", True, "Ready,SchedulingDisabled"),
        ("Unknown", True, "NotReady,SchedulingDisabled"),
        (None, True, "Unknown,SchedulingDisabled"),
    ],
)
def test_node_status_reads_as_kubectl_shows_it(
    ready: str | None, unschedulable: bool, expected: str
) -> None:
    assert _status_cell(_node(ready, unschedulable=unschedulable)) == expected
