"""What every scenario gets: sizes for quick or full runs, fresh stacks, the operator to run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.fleet import Fleet
from bench.kube import KubeApi
from bench.stack import Stack, StackError

NAMESPACE = "bench"  # on kubesim; on a real cluster each stack has its own
WARMUP = "warmup"
FLOOR = "floor"  # the work done straight through the API, with no operator
# How long a fleet of 1,000 CRs may take to be ready from its first create: a real
# cluster's controller-manager makes their pods in about 3 minutes (issue 16's rig runs).
READY_TIMEOUT = 600.0


@dataclass
class Bench:
    quick: bool
    workdir: Path
    peer: bool = True  # also run the kopf peer where a scenario compares
    kubeconfig: Path | None = None  # a real cluster to run on instead of kubesim
    crs: int | None = None  # CRs of the cold start, instead of its full or quick size
    pool: str = "prefork"  # the Celery pool opsboard's workers run (make run's: prefork)
    trace: Path | None = None  # where the patch scenario leaves its trace (bench.trace), if asked
    # Converged fleets handed from one scenario to the next (cold start → cost → UI), so
    # the full run builds 1,000 CRs once per operator instead of once per scenario.
    _kept: dict[str, tuple[Stack, Fleet]] = field(default_factory=dict)

    def keep(self, operator: str, stack: Stack, fleet: Fleet) -> None:
        self.release(operator)
        self._kept[operator] = (stack, fleet)

    def reuse(self, operator: str) -> tuple[Stack, Fleet] | None:
        return self._kept.pop(operator, None)

    def release(self, operator: str | None = None) -> None:
        """Stop the kept fleet of `operator`, or all of them."""
        for key in [operator] if operator else list(self._kept):
            if key in self._kept:
                self._kept.pop(key)[0].stop()

    def size(self, *, full: int, quick: int) -> int:
        return quick if self.quick else full

    def operators(self) -> list[str]:
        return ["opsboard", "kopf"] if self.peer else ["opsboard"]

    def stack(self, name: str) -> Stack:
        return Stack(self.workdir, name=name, kubeconfig=self.kubeconfig, pool=self.pool)

    @property
    def server(self) -> str:
        """What the figures were measured on, for the table and the JSON."""
        return "a real cluster" if self.kubeconfig else "kubesim"


def start_operator(stack: Stack, operator: str, *, workers: int = 2, pods: int = 10) -> Fleet:
    """kubesim, then the operator, then a warmed-up fleet watch: the first CR has converged,
    so every process has connected and imported what it needs before anything is timed.
    `pods`: how many the scenario will run at most, so that the cluster has the nodes.

    Operator "floor" is no operator at all: the scenario then does the work itself,
    straight through the API, to show what the server alone needs."""
    stack.start_cluster(pods=pods)
    namespace = stack.namespace
    stack.api.create_namespace(namespace)
    if operator == "kopf":
        stack.start_kopf(namespace)
    elif operator == "opsboard":
        stack.start_opsboard(workers=workers)
    fleet = Fleet(stack.api, namespace, pods=operator == FLOOR).start()
    stack.followers.append(fleet)
    if operator == FLOOR:
        stack.api.create_deployment(namespace, WARMUP, replicas=1)
        warm = lambda: fleet.deployment_ready(WARMUP, 1)  # noqa: E731
    else:
        stack.api.create_memcached(namespace, WARMUP, size=1)
        warm = lambda: fleet.ready(WARMUP, 1)  # noqa: E731
    if fleet.wait(warm, timeout=120) is None:
        logs = "\n".join(f"--- {p.role}\n{p.tail(800)}" for p in stack.processes)
        raise StackError(f"{operator}: the warm-up CR never converged\n{logs}")
    return fleet


def expect(fleet: Fleet, predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """`fleet.wait`, and an error when the fleet never got there: a figure measured on a
    fleet that had not converged would be a figure of something else. `what`: what was
    awaited, as the error names it."""
    if fleet.wait(predicate, timeout) is None:
        raise StackError(f"{what}: not reached within {timeout:g} s")


def check_pod_room(api: KubeApi, needed: int, what: str) -> None:
    """On a cluster the bench did not start: a clear error, at once, where its nodes cannot
    run the pods a scenario needs (it would wait out its timeouts instead). `what`: what
    the pods are for, and what to do."""
    room = api.pod_room()
    if room < needed:
        raise StackError(
            f"the cluster has room for {room} more pods (its nodes' allocatable pods, less "
            f"those running) and this scenario needs {needed}: {what}"
        )


def check_fleet_room(api: KubeApi, count: int) -> None:
    """check_pod_room for the fleet start_operator warms up and the scenario then creates:
    `count` CRs of one pod each, and the warm-up CR."""
    check_pod_room(api, count + 1,
                   f"one for each of its {count} CRs and a warm-up (give a smaller --crs)")  # fmt: skip
