"""The scenarios of issue 9, in the order they run. Each is `run(bench) -> Outcome`."""

from __future__ import annotations

from collections.abc import Callable

from bench.report import Outcome
from bench.runner import Bench
from bench.scenarios import coldstart, cost, heal, idle, kubesim, latency, patch, scale, ui

SCENARIOS: dict[str, Callable[[Bench], Outcome]] = {
    "kubesim": kubesim.run,
    "patch": patch.run,
    "latency": latency.run,
    "coldstart": coldstart.run,
    "cost": cost.run,
    "idle": idle.run,
    "ui": ui.run,
    "heal": heal.run,
    "scale": scale.run,
}
# Run only when named (`python -m bench scale`): docs/scaling.md's inputs, not the table's.
ON_REQUEST = {"scale"}

# What needs kubesim's own hooks (its API's internals, fault injection) or a stack of its
# own outside a namespace: not run against a real cluster.
KUBESIM_ONLY = frozenset({"kubesim", "heal", "scale"})
