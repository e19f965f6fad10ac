"""ResourceQuota on object counts, compute and storage: kube-apiserver's ResourceQuota
admission plugin and the status kube-controller-manager's resourcequota controller keeps.

Counted and enforced, as kube's evaluators count them: `count/<resource>[.<group>]` of any
resource (every object stored), `pods` (pods not yet Succeeded or Failed), `services`,
`services.nodeports` (the ports of NodePort and LoadBalancer Services),
`services.loadbalancers`, and `persistentvolumeclaims`, `configmaps`, `secrets`,
`replicationcontrollers` and `resourcequotas` by their own names; the pods' compute
resources, `requests.cpu` (or `cpu`), `requests.memory` (or `memory`), `limits.cpu` and
`limits.memory`, which every container must then state ("failed quota: q: must specify
limits.cpu for: c"); and the claims' storage, `requests.storage` (their
`spec.resources.requests.storage`, summed) and, by StorageClass,
`<class>.storageclass.storage.k8s.io/requests.storage` and
`<class>.storageclass.storage.k8s.io/persistentvolumeclaims`. A claim is checked at its
creation and at each update, for what it grows by. Quotas with scopes are left alone, as
are extended resources.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from decimal import ROUND_CEILING, Decimal
from typing import Any

from kubesim import errors
from kubesim.cluster import names
from kubesim.cluster.controller import Controller, Key, Obj, Watch
from kubesim.cluster.limitranges import shown_as
from kubesim.cluster.workloads import write_status
from kubesim.quantity import canonical_quantity, parse_quantity

PODS, POD_COUNT = "pods", "count/pods"
NODE_PORTS, LOAD_BALANCERS = "services.nodeports", "services.loadbalancers"
COUNT = "count/"
# Counted by their own names too (kube's legacy object-count names).
BY_NAME = (
    "services",
    "persistentvolumeclaims",
    "configmaps",
    "secrets",
    "replicationcontrollers",
    "resourcequotas",
)
# The pods' compute resources a quota may limit: (the containers' field, the resource).
COMPUTE = {
    "cpu": ("requests", "cpu"),
    "requests.cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}
# The claims' storage a quota may limit, in all and by StorageClass (<class> + CLASS + name).
CLAIMS, STORAGE = "persistentvolumeclaims", "requests.storage"
CLASS = ".storageclass.storage.k8s.io/"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
# A quota's status is told again this often when it counts what the cluster's cache does
# not watch (configmaps, custom resources): kube's controller recalculates every 5 minutes.
RECOUNT_SECONDS = 10.0


def counted_resource(name: str) -> str | None:
    """The resource (as the store keys it) a quota's resource name counts; None: not a count."""
    if name.startswith(COUNT):
        return name.removeprefix(COUNT) or None
    if name in COMPUTE:
        return PODS
    if name == PODS or name in BY_NAME:
        return name
    if name == STORAGE or name.endswith((CLASS + CLAIMS, CLASS + STORAGE)):
        return CLAIMS
    return "services" if name in (NODE_PORTS, LOAD_BALANCERS) else None


def usage(resource: str, objs: Iterable[Obj]) -> dict[str, Decimal]:
    """What `objs`, all of `resource`, hold of each quota name that counts them."""
    objs = list(objs)
    held = {COUNT + resource: Decimal(len(objs))}
    if resource == PODS:
        holding = [p for p in objs if _holds_pod_quota(p)]
        held[PODS] = Decimal(len(holding))
        # cpu and requests.cpu (memory and requests.memory) are one sum, added up once.
        sums = {
            (field, kind): sum((_pod_amount(p, field, kind) for p in holding), Decimal(0))
            for field, kind in set(COMPUTE.values())
        }
        held |= {name: sums[field_kind] for name, field_kind in COMPUTE.items()}
    elif resource in BY_NAME:
        held[resource] = Decimal(len(objs))
    if resource == CLAIMS:
        for claim in objs:
            for name, amount in _claim_usage(claim).items():
                held[name] = held.get(name, Decimal(0)) + amount
    if resource == "services":
        held[NODE_PORTS] = Decimal(sum(_node_ports(s) for s in objs))
        held[LOAD_BALANCERS] = Decimal(sum(_type(s) == "LoadBalancer" for s in objs))
    return held


def written(resource: str, objs: Iterable[Obj]) -> dict[str, str]:
    """For each storage name, the request its sum prints like: the first claim's that is not
    zero (Quantity.Add takes an addend's format only while the sum is zero)."""
    likes: dict[str, str] = {}
    for claim in objs if resource == CLAIMS else ():
        for name, amount in _claim_usage(claim).items():
            if amount and name.endswith(STORAGE):
                likes.setdefault(name, str(_request(claim)))
    return likes


def _request(claim: Obj) -> Any:
    return (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")


def _claim_usage(claim: Obj) -> dict[str, Decimal]:
    """pvcEvaluator.Usage, less the count `usage` makes of every object: the claim's storage
    request (in whole bytes, rounded up), and its count and storage again under its
    StorageClass if it has one."""
    meta, spec = claim.get("metadata") or {}, claim.get("spec") or {}
    # GetPersistentVolumeClaimClass: the beta annotation first
    class_name = (meta.get("annotations") or {}).get(BETA_CLASS, spec.get("storageClassName"))
    held = {f"{class_name}{CLASS}{CLAIMS}": Decimal(1)} if class_name else {}
    if (request := _request(claim)) is None:
        return held
    try:
        storage = parse_quantity(request).to_integral_value(rounding=ROUND_CEILING)
    except ValueError:  # not a quantity: kubesim does not validate
        return held
    held[STORAGE] = storage
    if class_name:
        held[f"{class_name}{CLASS}{STORAGE}"] = storage
    return held


def _stated(container: Obj, field: str) -> dict[str, Any]:
    """A container's requests or limits; requests default to the limits, as the API server
    defaults them before admission."""
    resources = container.get("resources") or {}
    stated = dict(resources.get(field) or {})
    if field == "requests":
        stated = {**(resources.get("limits") or {}), **stated}
    return stated


def _pod_amount(pod: Obj, field: str, kind: str) -> Decimal:
    """PodRequests/PodLimits: the containers' sum, or the largest init container's."""
    spec = pod.get("spec") or {}

    def amounts(containers: list[Obj]) -> list[Decimal]:
        return [parse_quantity(_stated(c, field).get(kind, 0)) for c in containers]

    return max(
        sum(amounts(spec.get("containers") or []), Decimal(0)),
        max(amounts(spec.get("initContainers") or []), default=Decimal(0)),
    )


def _unstated(pod: Obj, limited: Iterable[str]) -> str | None:
    """podEvaluator.Constraints: every container must state each compute resource a quota
    limits. The refusal's words for those it does not, or None."""
    spec = pod.get("spec") or {}
    missing: dict[str, list[str]] = {}
    for name in sorted(set(limited) & set(COMPUTE)):
        field, kind = COMPUTE[name]
        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            if kind not in _stated(container, field):
                missing.setdefault(name, []).append(str(container.get("name", "")))
    if not missing:
        return None
    return "must specify " + "; ".join(
        f"{name} for: {','.join(sorted(set(containers)))}" for name, containers in missing.items()
    )


def _shown(name: str, value: Decimal, like: str | None = None) -> str:
    """A quantity as the refusal and the status print it: in the family of `like`, the
    first addend of its sum, where known; else memory in the binary family where that reads
    shorter (512Mi; but 128M)."""
    if like is not None:
        return shown_as((value, like))
    decimal = canonical_quantity(f"{value:f}")
    if "memory" in name and value and value % 1024 == 0:
        binary = canonical_quantity(f"{value / 1024:f}Ki")
        return binary if len(binary) < len(decimal) else decimal
    return decimal


def _type(service: Obj) -> str:
    return str((service.get("spec") or {}).get("type") or "ClusterIP")


def _node_ports(service: Obj) -> int:
    """serviceEvaluator: a NodePort or LoadBalancer Service holds one node port per port."""
    if _type(service) not in ("NodePort", "LoadBalancer"):
        return 0
    return len((service.get("spec") or {}).get("ports") or [])


def _holds_pod_quota(pod: Obj) -> bool:
    """QuotaV1Pod: a finished pod, or one terminating past its grace period, frees its place."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod["metadata"]
    deleting = names.parse_time(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if deleting is None or grace is None:
        return True
    return names.now() <= deleting + timedelta(seconds=int(grace))


def _counted_limits(quota: Obj, resource: str | None = None) -> dict[str, Decimal]:
    """The quota's hard limits on counts (of `resource`'s objects, if given); none for a
    scoped quota."""
    spec = quota.get("spec") or {}
    if spec.get("scopes") or spec.get("scopeSelector"):
        return {}
    limits = {}
    for name, value in (spec.get("hard") or {}).items():
        counts = counted_resource(name)
        if counts is None or (resource is not None and counts != resource):
            continue
        try:
            limits[name] = parse_quantity(value)
        except ValueError:  # not a quantity: kubesim does not validate
            continue
    return limits


def _hard(quota: Obj) -> dict[str, str]:
    """The quota's hard limits as written: the status prints them so."""
    return {k: str(v) for k, v in ((quota.get("spec") or {}).get("hard") or {}).items()}


def _listed(values: dict[str, Decimal], likes: dict[str, str]) -> str:
    """prettyPrint of a ResourceList: `name=value` pairs by name, comma-separated."""
    return ",".join(
        f"{name}={_shown(name, value, likes.get(name))}" for name, value in sorted(values.items())
    )


class QuotaAdmission:
    """Refuses an object that would take a namespace past a quota on what it counts: at its
    creation, at a Service's update that adds node ports or a load balancer, and at a
    claim's that asks for more storage."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission_of_all(self.admit)

    def admit(self, resource: str, op: str, new: Obj | None, old: Obj | None) -> None:
        if new is None or op not in ("CREATE", "UPDATE"):
            return
        if op == "UPDATE" and resource not in ("services", CLAIMS):  # nothing else grows in place
            return
        namespace, name = new["metadata"].get("namespace"), new["metadata"].get("name", "")
        if not namespace:
            return
        listed = self.store.list("resourcequotas", namespace)
        quotas = [(q, limits) for q in listed if (limits := _counted_limits(q, resource))]
        if not quotas:
            return
        before = usage(resource, [old] if old is not None else [])
        requested = {
            r: n - before.get(r, Decimal(0))
            for r, n in usage(resource, [new]).items()
            if n > before.get(r, Decimal(0))
        }
        if not requested:
            return
        # kube-apiserver checks the quotas in its cache's order; here by name, to repeat.
        quotas.sort(key=lambda q: str(q[0]["metadata"]["name"]))
        for quota, limits in quotas if resource == PODS else ():
            if (unstated := _unstated(new, limits)) is not None:
                raise errors.forbidden(
                    resource, name, f"failed quota: {quota['metadata']['name']}: {unstated}"
                )
        objs = self.store.list(resource, namespace)
        used, used_like, new_like = (
            usage(resource, objs),
            written(resource, objs),
            written(resource, [new]),
        )
        for quota, limits in quotas:
            exceeded = sorted(
                r
                for r, limit in limits.items()
                if r in requested and used.get(r, Decimal(0)) + requested[r] > limit
            )
            if exceeded:
                raise errors.forbidden(
                    resource,
                    name,
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {_listed({r: requested[r] for r in exceeded}, new_like)}, "
                    f"used: {_listed({r: used.get(r, Decimal(0)) for r in exceeded}, used_like)}, "
                    f"limited: {_listed({r: limits[r] for r in exceeded}, _hard(quota))}",
                )


class ResourceQuotaController(Controller[Key]):
    """Keeps `status.hard` (the spec's) and `status.used` of the counted resources: told
    again at each change of what the cache watches, and every RECOUNT_SECONDS for what
    it does not."""

    name = "resourcequota"
    resource = "resourcequotas"
    # What the cache holds and a quota may count: their changes tell the quotas again.
    WATCHED = ("pods", "services", "persistentvolumeclaims", "deployments.apps",
               "replicasets.apps", "statefulsets.apps", "daemonsets.apps")  # fmt: skip

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), **dict.fromkeys(self.WATCHED, self._counted_changed)}

    def _counted_changed(self, old: Obj | None, new: Obj | None) -> None:
        namespace = (new or old or {}).get("metadata", {}).get("namespace", "")
        for quota in self.ctx.cache.list(self.resource, namespace):
            self.enqueue_obj(quota)

    def reconcile(self, key: Key) -> float | None:
        quota = self.current(key)
        if quota is None:
            return None
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        limits = _counted_limits(quota)
        resources = {r for name in limits if (r := counted_resource(name)) is not None}
        held: dict[str, Decimal] = {}
        likes: dict[str, str] = {}
        for resource in sorted(resources):
            # What the cache does not hold is listed from the store, as a recount lists it.
            objs = (
                self.ctx.cache.list(resource, key[0])
                if resource in self.WATCHED
                else self.ctx.api.store.list(resource, key[0])
            )
            held.update(usage(resource, objs))
            likes.update(written(resource, objs))
        used = {name: _shown(name, held.get(name, Decimal(0)), likes.get(name)) for name in limits}
        write_status(self.ctx, self.resource, quota, {"hard": hard, "used": used})
        return RECOUNT_SECONDS if resources - set(self.WATCHED) else None
