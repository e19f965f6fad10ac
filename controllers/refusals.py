"""Pod creates the API server refuses (a ResourceQuota, a LimitRange, Pod Security
admission, a webhook), as a StatefulSet or DaemonSet tells them (pure).

A ReplicaSet says so in its ReplicaFailure condition, which its Deployment carries
(workload.refused_problem). A StatefulSet or DaemonSet has no such condition: its
controller posts a FailedCreate Warning Event on it, word for word on v1.28

    create Pod db-1 in StatefulSet db failed error: pods "db-1" is forbidden:
    exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1

and retries with back-off, bumping the Event's count and lastTimestamp. The watcher
mirrors those Events (and only those of other objects than the CRs), so the operators and
the diagnosis read them from the mirror.
"""

from __future__ import annotations

import re
from datetime import datetime

from controllers.base import DAEMONSET, STATEFULSET, Body
from controllers.conditions import parse_time
from controllers.fields import deep_get

REASON = "FailedCreate"
TOLD_IN_EVENTS = (STATEFULSET, DAEMONSET)  # the workloads that tell a refusal so only
# The ResourceQuota admission's refusals: "exceeded quota: q, requested: ..." and
# "failed quota: q: must specify limits.cpu for: ..."
QUOTA = re.compile(r"(?:exceeded|failed) quota: ([a-z0-9.-]+)")
# kube-apiserver's authorization refusal (forbiddenMessage): `User "x" cannot patch resource`.
NOT_GRANTED = re.compile(r'User "[^"]*" cannot \S+ ')
UNSTATED = ": must specify "  # a quota on cpu or memory, and a container that states neither
# The LimitRanger's refusal of a container, a pod or a claim outside a LimitRange's min,
# max or ratio: "maximum memory usage per Container is 1Gi, but limit is 2Gi".
BOUNDED = re.compile(
    r"(?:(?:minimum|maximum) \S+ usage|max limit to request ratio) per "
    r"(Container|Pod|PersistentVolumeClaim) is"
)
# A claim refused, at its creation (by a StatefulSet) or its growth (by an operator):
# 'persistentvolumeclaims "data-db-0" is forbidden: ...'.
CLAIM = re.compile(r'persistentvolumeclaims "([^"]+)" is forbidden')
# The PersistentVolumeClaimResize admission's refusal of a bound claim's growth.
NOT_EXPANDABLE = "only dynamically provisioned pvc can be resized"
# A quota's refusal that counts storage: "requested: requests.storage=1Gi", or a class's
# "standard.storageclass.storage.k8s.io/requests.storage=1Gi".
STORAGE_ASKED = "requests.storage="
# A quota's refusal that counts cpu or memory ("requested: requests.memory=1Gi, ...").
COMPUTE = re.compile(r"requested: .*\b(?:requests\.|limits\.)?(?:cpu|memory)=")
# Pod Security admission's refusal: `violates PodSecurity "restricted:latest": ...`, each
# check the pods fail with what would meet it.
POD_SECURITY = re.compile(r'violates PodSecurity "(privileged|baseline|restricted):([^"]+)"')
LESS_STRICT = {"restricted": "baseline", "baseline": "privileged"}
# An admission webhook's refusal, and the API server's when it could not call one whose
# failurePolicy is Fail (kube-apiserver's words: webhook/errors, webhook/validating).
WEBHOOK_DENIED = re.compile(r'admission webhook "([^"]+)" denied the request')
WEBHOOK_DOWN = re.compile(r'failed calling webhook "([^"]+)"')
# Which configuration holds a webhook, by the webhook's name.
WEBHOOKS_LISTED = (
    "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations "
    "-o custom-columns=NAME:.metadata.name,WEBHOOKS:.webhooks[*].name"
)
# An Event the correlator aggregated says so first.
COMBINED = "(combined from similar events): "
# How long a refusal is taken as the reason a workload is short: while refusals go on, the
# event correlator's spam filter lets one through every 5 minutes after the first 25.
REFUSAL_FRESH_SECONDS = 600


_TOLD = frozenset((kind.api_version, kind.kind) for kind in TOLD_IN_EVENTS)


def is_refusal_event(event: Body) -> bool:
    """A FailedCreate Event about a workload that tells its refusals only so (asked of
    every Event the watcher maps: the set is built once)."""
    if event.get("reason") != REASON:
        return False
    involved = event.get("involvedObject") or {}
    return (involved.get("apiVersion"), involved.get("kind")) in _TOLD


def short_of_pods(workload: Body) -> bool:
    """A StatefulSet or DaemonSet with fewer pods than it wants. Neither has a
    ReplicaFailure condition: a refused create shows only in its FailedCreate Events."""
    status = workload.get("status") or {}
    if workload.get("kind") == "StatefulSet":
        wanted = deep_get(workload, "spec.replicas")
        return int(status.get("replicas") or 0) < (1 if wanted is None else int(wanted))
    if workload.get("kind") == "DaemonSet":
        scheduled = int(status.get("currentNumberScheduled") or 0)
        return scheduled < int(status.get("desiredNumberScheduled") or 0)
    return False


def event_stamp(event: Body) -> str | None:
    """When the Event was last seen, however its reporter stamps it (an events/v1 series,
    a core/v1 count and lastTimestamp, or a single eventTime)."""
    stamp = (
        deep_get(event, "series.lastObservedTime")
        or event.get("lastTimestamp")
        or event.get("eventTime")
        or deep_get(event, "metadata.creationTimestamp")
    )
    return str(stamp) if stamp else None


def event_time(event: Body) -> datetime | None:
    return parse_time(event_stamp(event))


def event_message(event: Body) -> str:
    return str(event.get("message") or "").removeprefix(COMBINED)


def current_refusal(
    workload: Body | None, events: list[Body], pods: list[Body], *, now: datetime
) -> Body | None:
    """The FailedCreate Event that tells why `workload` (a StatefulSet or DaemonSet) is short
    of pods now, if one does: the newest about it, within REFUSAL_FRESH_SECONDS, and for a
    StatefulSet no older than its newest pod in `pods`: it creates them one by one, so a pod
    created since means a create got through (the quota was raised), and a scale-up minutes
    after a refusal is not told by that old refusal. (A DaemonSet creates a pod per node:
    one created elsewhere says nothing of the node it was refused on.)"""
    if workload is None or not short_of_pods(workload):
        return None
    uid = deep_get(workload, "metadata.uid")
    told = [
        (when, event)
        for event in events
        if event.get("reason") == REASON
        and deep_get(event, "involvedObject.uid") == uid
        and (when := event_time(event)) is not None
    ]
    if not told:
        return None
    when, event = max(told, key=lambda pair: pair[0])
    if (now - when).total_seconds() > REFUSAL_FRESH_SECONDS:
        return None
    created = [
        at
        for pod in pods
        if (at := parse_time(deep_get(pod, "metadata.creationTimestamp"))) is not None
    ]
    if workload.get("kind") == "StatefulSet" and created and max(created) > when:
        return None
    return event


def refusal_advice(
    namespace: str,
    message: str,
    field: str | None,
    *,
    resources: str | None = None,
    storage: str | None = None,
) -> str:
    """What to do about a refusal; `field`: the CR's field that sets how many pods (or how
    much) they ask for, if it has one; `resources`: the one that sets their cpu and memory
    ("spec.resources"); `storage`: the one that sets the size of their claims."""
    if said := webhook_advice(message, "these pods"):
        return said
    if CLAIM.search(message):  # a StatefulSet's claim, refused before its pod
        return claim_advice(namespace, message, storage, field=field)
    if (quota := QUOTA.search(message)) and UNSTATED in message:
        describe = f"kubectl -n {namespace} describe resourcequota {quota[1]}"
        if resources:
            return (
                f"ResourceQuota {quota[1]} limits compute resources, so every container must "
                f"state them, and these pods state none: set them in the CR's {resources} "
                f"(requests and limits of cpu and memory; {describe} shows which it limits), "
                "or a LimitRange in the namespace with default requests and limits gives "
                "them to every pod."
            )
        return (
            f"ResourceQuota {quota[1]} limits compute resources, so every container must "
            "state them, and these pods state none: a LimitRange in the namespace with "
            f"default requests and limits gives them ({describe} shows what it limits), or "
            "ask for one without it."
        )
    if quota:
        lower = f"lower the CR's {field}" if field else "lower what the pods request"
        if field and resources and COMPUTE.search(message):
            lower = f"lower the CR's {field} or {resources}"
        return _raise_quota(namespace, quota[1], lower, "pods")
    if security := POD_SECURITY.search(message):
        level = security[1]
        lower = LESS_STRICT.get(level, "baseline")
        return (
            f"Namespace {namespace} enforces the {level} Pod Security Standard, and these pods "
            "need what it forbids (the checks above). Run the CR in a namespace at "
            f"{lower}, or, if your cluster's policy lets this one be {lower}: kubectl label "
            f"namespace {namespace} pod-security.kubernetes.io/enforce={lower} --overwrite."
        )
    if bounded := BOUNDED.search(message):
        asks = f"the CR's {resources}" if resources else "the pods' requests and limits"
        each = "container" if bounded[1] == "Container" else "pod (its containers together)"
        return (
            f"A LimitRange in the namespace bounds what each {each} may ask for (kubectl "
            f"-n {namespace} describe limitrange): bring {asks} within it, or ask for the "
            "bounds to change."
        )
    return (
        "Change what refuses the pods in the namespace: a ResourceQuota, a LimitRange, "
        "PodSecurity admission or an admission webhook "
        f"(kubectl -n {namespace} get events --field-selector reason=FailedCreate)."
    )


def _raise_quota(namespace: str, quota: str, lower: str, counted: str) -> str:
    """The advice for a quota exceeded: raise it, or `lower` what is asked."""
    return (
        f"Raise ResourceQuota {quota} (kubectl -n {namespace} describe resourcequota {quota}) "
        f"or {lower}; the {counted} already there count against it."
    )


def claim_advice(
    namespace: str,
    message: str,
    storage: str | None,
    *,
    field: str | None = None,
    storage_class: str | None = None,
) -> str:
    """What to do about a claim the API server refused to create or grow; `storage`: the
    CR's field that sets its size, `field` the one that sets how many claims (one per
    replica), `storage_class`: the claim's class, if known."""
    size = f"the CR's {storage}" if storage else "the size asked for"
    if quota := QUOTA.search(message):
        if STORAGE_ASKED in message:
            lower = f"lower {size} (no lower than the claims already are: a claim cannot shrink)"
        else:  # a quota on how many claims
            lower = f"lower the CR's {field}" if field else "delete claims no longer needed"
        return _raise_quota(namespace, quota[1], lower, "claims")
    if BOUNDED.search(message):
        return (
            "A LimitRange in the namespace bounds the storage each PersistentVolumeClaim "
            f"may ask for (kubectl -n {namespace} describe limitrange): bring {size} within "
            "it, or ask for the bounds to change."
        )
    if NOT_EXPANDABLE in message:
        which = f"StorageClass {storage_class}" if storage_class else "the claim's StorageClass"
        unnamed = "its allowVolumeExpansion set to true"
        allow = allow_expansion(storage_class) if storage_class else unnamed
        return (
            f"{which} does not allow volumes to grow (allowVolumeExpansion). If its "
            f"provisioner can grow them, a cluster administrator allows it ({allow}); "
            f"else set {size} back to the claims' size."
        )
    return (
        "Change what refuses the claim in the namespace: a ResourceQuota, a LimitRange or "
        f"an admission webhook (kubectl -n {namespace} get events)."
    )


def allow_expansion(storage_class: str) -> str:
    """The command that lets the claims of `storage_class` grow."""
    return f"""kubectl patch storageclass {storage_class} -p '{{"allowVolumeExpansion": true}}'"""


def webhook_advice(message: str, what: str) -> str | None:
    """What to do about `what` ("these pods", "this write") an admission webhook refused, or
    could not judge because it did not answer; None if no webhook did."""
    if denied := WEBHOOK_DENIED.search(message):
        return (
            f"Admission webhook {denied[1]} refuses {what} (its words above): change what it "
            "objects to, or ask the webhook's owners for an exception. Which configuration "
            f"holds it: {WEBHOOKS_LISTED}."
        )
    if down := WEBHOOK_DOWN.search(message):
        return (
            f"Admission webhook {down[1]} does not answer, and its failurePolicy is Fail: the "
            f"API server refuses {what} until it does. Check the service or URL it is called "
            f"at (clientConfig) and the pods behind it; which configuration holds it: "
            f"{WEBHOOKS_LISTED}."
        )
    return None
