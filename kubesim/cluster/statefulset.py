"""The StatefulSet controller: ordinal pods with stable names and their claims.

OrderedReady creates one pod at a time, lowest ordinal first, each waiting for
the one before to be Running and Ready; Parallel creates them all. Rolling
updates replace pods from the highest ordinal down, one at a time.
"""

from __future__ import annotations

import copy

from kubesim.cluster import history, names
from kubesim.cluster.controller import (
    Context,
    Controller,
    Key,
    Obj,
    controller_ref,
    is_deleting,
    pod_ready,
)
from kubesim.cluster.refusals import REASON, PodRefused, Refusals
from kubesim.cluster.replicaset import seconds_until_available
from kubesim.cluster.workloads import drop_zero, min_ready_seconds, write_status
from kubesim.errors import ApiError

COMPONENT = "statefulset-controller"
REVISION_LABEL = "controller-revision-hash"
HASH_LABEL = "controller.kubernetes.io/hash"  # on its ControllerRevisions
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


class StatefulSetController(Controller[Key]):
    name = "statefulset"
    resource, owns, kind = "statefulsets.apps", "pods", "StatefulSet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.refusals = Refusals(ctx, COMPONENT)

    def reconcile(self, key: Key) -> float | None:
        sts = self.current(key)
        if sts is None:
            return None
        name = sts["metadata"]["name"]
        template_hash = names.template_hash(sts["spec"]["template"])
        update_revision = f"{name}-{template_hash}"
        pods = {ordinal(p, name): p for p in self.ctx.cache.owned("pods", sts["metadata"]["uid"])}
        pods.pop(None, None)
        live = {p["metadata"].get("labels", {}).get(REVISION_LABEL, "") for p in pods.values()}
        live.add((sts.get("status") or {}).get("currentRevision") or "")
        history.record(self.ctx, sts, template_hash, HASH_LABEL, live)
        replicas = int(sts["spec"].get("replicas", 1))
        ordered = sts["spec"].get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        try:
            self._step(sts, pods, replicas, ordered, update_revision)
        except PodRefused:
            self._write_status(sts, self._current_pods(sts), replicas, update_revision)
            return self.refusals.backoff(key)
        self.refusals.clear(key)
        self._write_status(sts, self._current_pods(sts), replicas, update_revision)
        return None

    def _current_pods(self, sts: Obj) -> list[Obj]:
        return [
            p
            for p in self.ctx.cache.owned("pods", sts["metadata"]["uid"])
            if ordinal(p, sts["metadata"]["name"]) is not None
        ]

    def _step(
        self, sts: Obj, pods: dict[int | None, Obj], replicas: int, ordered: bool, revision: str
    ) -> None:
        # Creation, lowest ordinal first.
        for i in range(replicas):
            pod = pods.get(i)
            if pod is None:
                self._create_pod(sts, i, revision)
                if ordered:
                    return
                continue
            if ordered and (is_deleting(pod) or not pod_ready(pod)):
                return  # OrderedReady: wait for this one before touching the next
        # Scale down, highest ordinal first.
        extra = sorted((i for i in pods if i is not None and i >= replicas), reverse=True)
        for i in extra:
            pod = pods[i]
            if not is_deleting(pod):
                self._delete_pod(sts, pod)
            if ordered:
                return
        if extra:
            return
        # Rolling update, highest ordinal first, once every pod is up.
        strategy = sts["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        current = [pods[i] for i in range(replicas) if i in pods]
        if len(current) < replicas or any(is_deleting(p) or not pod_ready(p) for p in current):
            return
        for i in range(replicas - 1, partition - 1, -1):
            if pods[i]["metadata"].get("labels", {}).get(REVISION_LABEL) != revision:
                self._delete_pod(sts, pods[i])
                return

    def _create_pod(self, sts: Obj, i: int, revision: str) -> None:
        name, namespace = sts["metadata"]["name"], sts["metadata"]["namespace"]
        pod_name = f"{name}-{i}"
        template = copy.deepcopy(sts["spec"]["template"])
        labels = dict(template.get("metadata", {}).get("labels") or {})
        labels |= {REVISION_LABEL: revision, POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(i)}
        spec = template.get("spec") or {}
        spec["hostname"] = pod_name
        if sts["spec"].get("serviceName"):
            spec["subdomain"] = sts["spec"]["serviceName"]
        volumes = list(spec.get("volumes") or [])
        for claim in sts["spec"].get("volumeClaimTemplates") or []:
            claim_name = f"{claim['metadata']['name']}-{pod_name}"
            self._ensure_claim(sts, claim, claim_name, pod_name)
            volumes = [v for v in volumes if v.get("name") != claim["metadata"]["name"]]
            volumes.append(
                {
                    "name": claim["metadata"]["name"],
                    "persistentVolumeClaim": {"claimName": claim_name},
                }
            )
        if volumes:
            spec["volumes"] = volumes
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [controller_ref(sts)],
                **(
                    {"annotations": template["metadata"]["annotations"]}
                    if template.get("metadata", {}).get("annotations")
                    else {}
                ),
            },
            "spec": spec,
        }
        try:
            self.ctx.api.create("pods", pod)
        except ApiError as exc:
            if exc.code == 409:
                self.ctx.api.refresh("pods", namespace, pod_name)
                return
            failed = f"create Pod {pod_name} in StatefulSet {name} failed error: {exc.message}"
            raise self.refusals.tell(sts, exc, failed) from exc
        self.ctx.events.normal(
            sts,
            "SuccessfulCreate",
            f"create Pod {pod_name} in StatefulSet {name} successful",
            COMPONENT,
        )

    def _ensure_claim(self, sts: Obj, template: Obj, claim_name: str, pod_name: str) -> None:
        namespace = sts["metadata"]["namespace"]
        if self.ctx.cache.get("persistentvolumeclaims", namespace, claim_name) is not None:
            return
        labels = dict((sts["spec"].get("selector") or {}).get("matchLabels") or {})
        labels |= template.get("metadata", {}).get("labels") or {}
        claim: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name, "namespace": namespace, "labels": labels},
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        if annotations := template.get("metadata", {}).get("annotations"):
            claim["metadata"]["annotations"] = annotations
        policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        if policy.get("whenDeleted") == "Delete":
            claim["metadata"]["ownerReferences"] = [controller_ref(sts)]  # collected with the set
        name = sts["metadata"]["name"]
        try:
            self.ctx.api.create("persistentvolumeclaims", claim)
        except ApiError as exc:
            if exc.code == 409:
                self.ctx.api.refresh("persistentvolumeclaims", namespace, claim_name)
                return
            # Told twice, as the real controller does: the claim's create, then the pod's.
            claim_failed = (
                f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {name} "
                f"failed error: {exc.message}"
            )
            refused = self.refusals.tell(sts, exc, claim_failed)
            pod_failed = (
                f"create Pod {pod_name} in StatefulSet {name} failed error: "
                f"failed to create PVC {claim_name}: {exc.message}"
            )
            self.ctx.events.warning(sts, REASON, pod_failed, COMPONENT)
            raise refused from exc
        message = f"create Claim {claim_name} Pod {pod_name} in StatefulSet {name} success"
        self.ctx.events.normal(sts, "SuccessfulCreate", message, COMPONENT)

    def _delete_pod(self, sts: Obj, pod: Obj) -> None:
        meta = pod["metadata"]
        self.ctx.api.delete("pods", meta["namespace"], meta["name"])
        message = f"delete Pod {meta['name']} in StatefulSet {sts['metadata']['name']} successful"
        self.ctx.events.normal(sts, "SuccessfulDelete", message, COMPONENT)

    def _write_status(self, sts: Obj, pods: list[Obj], replicas: int, update_revision: str) -> None:
        old = sts.get("status") or {}
        current_revision = old.get("currentRevision") or update_revision
        live = [p for p in pods if not is_deleting(p)]
        revisions = [p["metadata"].get("labels", {}).get(REVISION_LABEL) for p in live]
        updated = revisions.count(update_revision)
        ready = sum(pod_ready(p) for p in live)
        min_ready = min_ready_seconds(sts)
        available = sum(seconds_until_available(p, min_ready) == 0 for p in live)
        if updated == replicas and ready == replicas and len(live) == replicas:
            current_revision = update_revision  # the rollout finished
        status = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(live),
            "readyReplicas": ready,
            "currentReplicas": revisions.count(current_revision),
            "updatedReplicas": updated,
            "availableReplicas": available,
            "currentRevision": current_revision,
            "updateRevision": update_revision,
            "collisionCount": old.get("collisionCount", 0),
        }
        write_status(
            self.ctx,
            "statefulsets.apps",
            sts,
            drop_zero(status, keep=("replicas", "availableReplicas", "collisionCount")),
        )


def ordinal(pod: Obj, set_name: str) -> int | None:
    suffix = pod["metadata"]["name"].removeprefix(f"{set_name}-")
    return int(suffix) if suffix.isdigit() and suffix == str(int(suffix)) else None
