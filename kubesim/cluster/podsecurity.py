"""Pod Security Admission, as kube-apiserver v1.28 has it built in (the PodSecurity plugin).

A namespace's `pod-security.kubernetes.io/<mode>[-version]` labels choose a level
(privileged, baseline, restricted) and a version for each mode; the defaults are
privileged:latest, and there are no exemptions (the API server's own configuration):

- enforce: a pod create, or an update that changes what the policy reads (a container's
  image, the number of containers, an ephemeral container), that fails the level's checks
  is refused, 403 `pods "x" is forbidden: violates PodSecurity "restricted:latest": ...`.
  So are the pods the workload controllers create: their FailedCreate Events and
  ReplicaFailure conditions carry it (`refusals.py`).
- warn: a pod the enforce level admits, and each create or update of a workload
  (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) whose template fails the
  warn level, is answered with a `would violate PodSecurity ...` Warning header. An enforce
  level stricter than warn's, when warn is not set, is warn's too.
- A namespace's labels must be valid on create, and on an update that changes them (422);
  a change to a stricter enforce level warns of the existing pods it would refuse.

audit only writes audit logs, which kubesim does not keep.
"""

from __future__ import annotations

import functools
from typing import Any

from kubesim import errors
from kubesim.cluster.podsecurity_policy import (
    PRIVILEGED,
    LevelVersion,
    Policy,
    evaluate,
    forbidden_detail,
    forbidden_reason,
    policy_of,
    relaxed_or_same,
)

Obj = dict[str, Any]
WORKLOADS = (  # the resources whose pod template the plugin warns about
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
)


def _template(resource: str, obj: Obj) -> Obj:
    spec = obj.get("spec") or {}
    if resource == "cronjobs.batch":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template")
    return template if isinstance(template, dict) else {}


def _significant(new: Obj, old: Obj) -> bool:
    """isSignificantPodUpdate: only images and the containers' number matter (the rest of a
    pod's spec is immutable), and ephemeral containers added or changed."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    for field in ("containers", "initContainers"):
        containers, before = spec.get(field) or [], old_spec.get(field) or []
        if len(containers) != len(before):
            return True
        if any(c.get("image") != b.get("image") for c, b in zip(containers, before, strict=True)):
            return True
    before_by_name = {c.get("name"): c for c in old_spec.get("ephemeralContainers") or []}
    for container in spec.get("ephemeralContainers") or []:
        was = before_by_name.get(container.get("name"))
        if was is None or was.get("image") != container.get("image"):
            return True
    return False


def _violation(policy: LevelVersion, meta: Obj, spec: Obj) -> str | None:
    refusals = evaluate(policy, meta, spec)
    return f'PodSecurity "{policy}": {forbidden_detail(refusals)}' if refusals else None


class PodSecurityAdmission:
    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission("namespaces", self.admit_namespace)
        self.store.register_admission("pods", self.admit_pod)
        for resource in WORKLOADS:
            self.store.register_admission(
                resource, functools.partial(self.admit_workload, resource)
            )

    def _policy(self, namespace: str) -> tuple[Policy, bool]:
        """The namespace's policy, and whether its labels are valid."""
        try:
            labels = self.store.get_entry("namespaces", None, namespace)[0]["metadata"]
        except errors.ApiError:
            return Policy(), True  # NamespaceLifecycle has refused the write already
        policy, invalid = policy_of(labels.get("labels"))
        return policy, not invalid

    def admit_pod(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if new is None or op not in ("CREATE", "UPDATE"):
            return
        meta, spec = new["metadata"], new.get("spec") or {}
        policy, valid = self._policy(meta.get("namespace", ""))
        if valid and policy.fully_privileged():
            return
        if op == "UPDATE" and old is not None and not _significant(new, old):
            return
        if refused := _violation(policy.enforce, meta, spec):
            raise errors.forbidden("pods", meta.get("name", ""), "violates " + refused)
        if policy.warn != policy.enforce and (said := _violation(policy.warn, meta, spec)):
            self.store.warn("would violate " + said)

    def admit_workload(self, resource: str, op: str, new: Obj | None, old: Obj | None) -> None:
        """ValidatePodController: the template, evaluated for the warn level only."""
        if new is None or op not in ("CREATE", "UPDATE") or not self.store.wants_warnings():
            return
        policy, _ = self._policy(new["metadata"].get("namespace", ""))
        if policy.warn.level == PRIVILEGED:
            return
        template = _template(resource, new)
        if said := _violation(
            policy.warn, template.get("metadata") or {}, template.get("spec") or {}
        ):
            self.store.warn("would violate " + said)

    def admit_namespace(self, op: str, new: Obj | None, old: Obj | None) -> None:
        """ValidateNamespace: valid labels, and a stricter enforce level's word on the pods
        already there."""
        if new is None or op not in ("CREATE", "UPDATE"):
            return
        meta = new["metadata"]
        policy, invalid = policy_of(meta.get("labels"))
        if op == "CREATE" or old is None:
            if invalid:
                raise errors.invalid("Namespace", "", meta["name"], invalid)
            return
        before, was_invalid = policy_of(old["metadata"].get("labels"))
        said = [(e.field, e.value, e.detail) for e in invalid]
        if invalid and (
            not was_invalid or said != [(e.field, e.value, e.detail) for e in was_invalid]
        ):
            raise errors.invalid("Namespace", "", meta["name"], invalid)
        enforce, was = policy.enforce, before.enforce
        if (
            enforce == was
            or enforce.level == PRIVILEGED
            or (enforce.version == was.version and relaxed_or_same(enforce.level, was.level))
            or not self.store.wants_warnings()
        ):
            return
        for warning in self._existing_pods(meta["name"], enforce):
            self.store.warn(warning)

    def _existing_pods(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """EvaluatePodsInNamespace: the pods the new level refuses, one warning per set of
        reasons, named by the first pod's name and how many more."""
        pods: dict[str, list[str]] = {}  # forbidden reasons: the names of the pods refused
        entries = self.store.list_entries("pods", namespace)[0]
        for pod, _ in entries:
            refusals = evaluate(enforce, pod["metadata"], pod.get("spec") or {})
            if refusals:
                pods.setdefault(forbidden_reason(refusals), []).append(pod["metadata"]["name"])
        if not pods:
            return []
        said = []
        for reason, names in pods.items():
            others = len(names) - 1
            more = "" if not others else f" (and {others} other pod{'s' if others > 1 else ''})"
            said.append(f"{min(names)}{more}: {reason}")
        head = (
            f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce '
            f'level "{enforce}"'
        )
        return [head, *sorted(said)]
