"""On a real cluster, how hard the cluster's own controllers worked during a run.

A cold start's Deployments need two of kube-controller-manager's controllers: the
deployment controller creates each one's ReplicaSet, records an Event of it and writes
the Deployment's status; the ReplicaSet controller creates the pods, records an Event
of each and writes the ReplicaSet's status. Each has its own client, held by default to
20 requests a second in bursts of 30 (the manager's --kube-api-qps and
--kube-api-burst). Their rates during a run, from the API server's count of requests
by resource (`apiserver_request_total`, cluster-wide) and the Events they recorded in
the run's namespace, show whether those clients are what bounds the run: the floor's
and every operator's alike.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bench.kube import ApiError, KubeApi, metric_samples

CLIENT_QPS = 20  # kube-controller-manager's default --kube-api-qps


@dataclass(frozen=True)
class Controller:
    name: str
    component: str  # its Events' source
    writes: tuple[tuple[str, str], ...]  # (verb, resource[/subresource]) only it makes


CONTROLLERS = (
    Controller("deployment controller", "deployment-controller",
               (("POST", "replicasets"), ("PUT", "deployments/status"))),
    Controller("ReplicaSet controller", "replicaset-controller",
               (("POST", "pods"), ("PUT", "replicasets/status"))),
)  # fmt: skip


def request_counts(metrics: str) -> Counter[tuple[str, str]]:
    """The server's count so far of each (verb, resource[/subresource]), every response
    code together: a conflict (409) took its client's token all the same."""
    counted: Counter[tuple[str, str]] = Counter()
    for sample in metric_samples(metrics, "apiserver_request_total"):
        labels = sample.labels
        resource = labels.get("resource", "")
        if sub := labels.get("subresource"):
            resource = f"{resource}/{sub}"
        counted[(labels.get("verb", ""), resource)] += int(sample.value)
    return counted


def event_counts(api: KubeApi, namespace: str) -> Counter[str]:
    """How many Events each component recorded in `namespace`."""
    listed = api.request("GET", f"/api/v1/namespaces/{namespace}/events")
    return Counter(
        (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        for e in listed["items"]
    )


def rates(
    requests: Counter[tuple[str, str]], events: Counter[str], seconds: float
) -> dict[str, float]:
    """Each controller's requests per second: its writes and its Events."""
    return {
        c.name: round((sum(requests[w] for w in c.writes) + events[c.component]) / seconds, 1)
        for c in CONTROLLERS
    }


class Meter:
    """The controllers' requests from now to `rates_over`. Nothing where the server does not
    serve its metrics to the bench (kubesim, or no permission)."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self.api, self.namespace = api, namespace
        self._before = self._counts()
        self._events = event_counts(api, namespace) if self._before is not None else Counter()

    def rates_over(self, seconds: float | None) -> dict[str, float] | None:
        if self._before is None or not seconds or (after := self._counts()) is None:
            return None
        events = event_counts(self.api, self.namespace) - self._events
        return rates(after - self._before, events, seconds)

    def _counts(self) -> Counter[tuple[str, str]] | None:
        try:
            return request_counts(self.api.metrics())
        except ApiError:
            return None
