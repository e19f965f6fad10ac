"""The benchmarks' own API client: raw JSON over the official client's transport.

The official client's typed models cost milliseconds per object to decode; a
benchmark that decodes them measures itself. This client keeps the official
kubeconfig loading, auth and TLS, and hands back plain dicts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from kubernetes.watch.watch import iter_resp_lines
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from controllers.kube import load_api_client
from controllers.memcached.desired import desired_deployment

MEMCACHED_PATH = "/apis/cache.example.com/v1alpha1"
CRD_DIR = Path(__file__).resolve().parent.parent / "k8s" / "crd"
THIRD_PARTY_DIR = Path(__file__).resolve().parent.parent / "k8s" / "third_party"
CRD_FILE = (
    Path(__file__).resolve().parent.parent / "k8s" / "crd" / "cache.example.com_memcacheds.yaml"
)
MERGE_PATCH = "application/merge-patch+json"
USER_AGENT = "opsboard-bench"
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class ApiError(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}: {body[:300]!r}")
        self.status = status


class KubeApi:
    def __init__(self, kubeconfig: Path) -> None:
        # Cold start creates CRs from many threads; each also holds a watch open. kubesim's
        # request log names the client: the bench's own calls are left out of costs. Made as
        # opsboard's own clients are (a skipped TLS verification said once; certificates
        # held in memory, not left in /tmp by a bench killed midway).
        self.client = load_api_client(
            kubeconfig=str(kubeconfig), pool_size=32, user_agent=USER_AGENT
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: list[tuple[str, str]] | None = None,
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> Any:
        response = self._send(method, path, body=body, query=query, content_type=content_type,
                              timeout=timeout)  # fmt: skip
        data = response.read()
        if response.status >= 400:
            raise ApiError(response.status, data)
        return json.loads(data) if data else None

    def stream(self, path: str, query: list[tuple[str, str]]) -> Iterator[dict[str, Any]]:
        """The events of a watch, decoded, until the server ends it."""
        response = self._send("GET", path, query=[*query, ("watch", "true")], timeout=None)
        if response.status >= 400:
            raise ApiError(response.status, response.read())
        for line in iter_resp_lines(response.response):
            yield json.loads(line)

    def _send(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: list[tuple[str, str]] | None = None,
        content_type: str = "application/json",
        timeout: float | None,
    ) -> Any:
        method, url, headers, body, _ = self.client.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params={"Content-Type": content_type, "Accept": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
        )
        return self.client.rest_client.request(
            method, url, headers=headers, body=body, _request_timeout=timeout
        )

    # -- what the scenarios do -------------------------------------------------------
    def apply_crds(self) -> None:
        """Every CRD of the product, and the third-party ones `make run` installs where they
        are missing (KMM's Module): its watcher watches all the kinds it has operators for,
        and an unserved kind would be retried, costing requests the scenarios would count."""
        for path in [*sorted(CRD_DIR.glob("*.yaml")), *sorted(THIRD_PARTY_DIR.glob("*/*.yaml"))]:
            crd = yaml.safe_load(path.read_text())
            if crd.get("kind") != "CustomResourceDefinition":
                continue
            try:
                self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                             body=crd)  # fmt: skip
            except ApiError as exc:
                if exc.status != 409:
                    raise

    def create_namespace(self, name: str) -> None:
        try:
            self.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
        except ApiError as exc:
            if exc.status != 409:
                raise

    def pod_room(self) -> int:
        """How many more pods the cluster's nodes take: the pods their status allows, on
        nodes that are Ready and schedulable, less the pods not done on them or on none yet."""
        nodes = self.request("GET", "/api/v1/nodes")["items"]
        usable = {
            node["metadata"]["name"]: int(node["status"].get("allocatable", {}).get("pods", 0))
            for node in nodes
            if not node.get("spec", {}).get("unschedulable")
            and any(c["type"] == "Ready" and c["status"] == "True"
                    for c in node["status"].get("conditions", []))
        }  # fmt: skip
        running = self.request(
            "GET",
            "/api/v1/pods",
            query=[("fieldSelector", "status.phase!=Succeeded,status.phase!=Failed")],
        )["items"]
        placed = {*usable, ""}
        taken = sum(1 for pod in running if (pod.get("spec", {}).get("nodeName") or "") in placed)
        return sum(usable.values()) - taken

    def create_memcached(self, namespace: str, name: str, *, size: int) -> dict[str, Any]:
        body = {
            "apiVersion": "cache.example.com/v1alpha1",
            "kind": "Memcached",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": size},
        }
        created: dict[str, Any] = self.request(
            "POST", f"{MEMCACHED_PATH}/namespaces/{namespace}/memcacheds", body=body
        )
        return created

    def create_deployment(self, namespace: str, name: str, *, replicas: int) -> dict[str, Any]:
        """The Deployment the Memcached operator makes for a CR of that name and size."""
        cr = {"apiVersion": f"{MEMCACHED_PATH.split('/', 2)[2]}", "kind": "Memcached",
              "metadata": {"name": name, "namespace": namespace, "uid": "none"},
              "spec": {"size": replicas}}  # fmt: skip
        body = desired_deployment(cr)
        body["metadata"].pop("ownerReferences", None)  # no CR owns it
        created: dict[str, Any] = self.request(
            "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=body
        )
        return created

    def patch_deployment(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        patched: dict[str, Any] = self.request(
            "PATCH",
            f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
            body=patch,
            content_type=MERGE_PATCH,
        )
        return patched

    def patch_memcached(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        patched: dict[str, Any] = self.request(
            "PATCH",
            f"{MEMCACHED_PATH}/namespaces/{namespace}/memcacheds/{name}",
            body=patch,
            content_type=MERGE_PATCH,
        )
        return patched

    # -- a real API server's own metrics ---------------------------------------------------
    def metrics(self) -> str:
        """The server's /metrics text (not served by kubesim): `flowschemas.counts` reads
        its count of the operator's requests."""
        response = self._send("GET", "/metrics", timeout=30)
        data: bytes = response.read()
        if response.status >= 400:
            raise ApiError(response.status, data)
        return data.decode()

    # -- kubesim's request log (kubesim only) ----------------------------------------------
    def clear_request_log(self) -> None:
        self.request("DELETE", "/_kubesim/requests")

    def request_log(self) -> list[dict[str, Any]]:
        """Requests made by everyone but the bench itself, watches excepted (they stay open)."""
        records = self.request("GET", "/_kubesim/requests")
        if isinstance(records, dict):
            records = records.get("items") or records.get("requests") or []
        return [
            r for r in records
            if r.get("user_agent", "") != USER_AGENT and r.get("verb") != "watch"
        ]  # fmt: skip


def metric_samples(metrics: str, *names: str) -> Iterator[Sample]:
    """The samples of the named metrics in a /metrics text. Only their lines are parsed:
    a real API server's text is about a megabyte."""
    lines = "\n".join(line for line in metrics.splitlines() if line.startswith(names))
    for family in text_string_to_metric_families(lines + "\n"):
        yield from (sample for sample in family.samples if sample.name in names)
