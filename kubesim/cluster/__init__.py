"""The simulated cluster: nodes, workload controllers, scheduler, kubelets and their faults."""

from __future__ import annotations

from kubesim.cluster.cluster import Cluster
from kubesim.cluster.controller import ClusterOptions

__all__ = ["Cluster", "ClusterOptions"]
