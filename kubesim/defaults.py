"""Server-side defaulting and validation of built-in kinds, the parts clients observe.

kube-apiserver fills many fields on create (restartPolicy, imagePullPolicy, strategy, ...);
operators that compare desired with observed state depend on them, so kubesim fills the
common ones the same way. Validation covers names and the checks workloads hit in practice.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from kubesim import names, podspec, workload_spec
from kubesim.errors import FieldError, GoLiteral, render_value, unsupported

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def validate_name(resource: str, name: str) -> list[FieldError]:
    if resource.endswith(".rbac.authorization.k8s.io"):
        # RBAC names are path segments (ValidateRBACName), so "system:discovery" is valid.
        return [
            FieldError("Invalid", "metadata.name", name, why)
            for bad, why in (
                (name in (".", ".."), f"may not be '{name}'"),
                ("/" in name, "may not contain '/'"),
                ("%" in name, "may not contain '%'"),
            )
            if bad
        ]
    if resource in ("namespaces",):
        ok, msg, limit = names.LABEL.match(name), names.LABEL_MSG, 63
    elif resource in ("services",):
        ok, msg, limit = _DNS1035.match(name), DNS1035_MSG, 63
    else:
        ok, msg, limit = names.SUBDOMAIN.match(name), names.SUBDOMAIN_MSG, 253
    errors = []
    if len(name) > limit:
        errors.append(
            FieldError("Invalid", "metadata.name", name, f"must be no more than {limit} characters")
        )
    if not ok:
        errors.append(FieldError("Invalid", "metadata.name", name, msg))
    return errors


def _key_errors(path: str, key: str) -> list[FieldError]:
    return [FieldError("Invalid", path, key, why) for why in names.qualified_name_errors(key)]


def validate_metadata(meta: dict[str, Any]) -> list[FieldError]:
    """Label keys and values, and annotation keys, as ObjectMeta validation checks them."""
    errors: list[FieldError] = []
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    if not isinstance(labels, dict) or not isinstance(annotations, dict):
        return [FieldError("Invalid", "metadata", None, "labels and annotations are maps")]
    for key, value in labels.items():
        errors += _key_errors("metadata.labels", key)
        if not isinstance(value, str) or len(value) > 63 or not names.LABEL_VALUE.match(value):
            detail = (
                "must be no more than 63 characters"
                if isinstance(value, str) and len(value) > 63
                else names.LABEL_VALUE_MSG
            )
            errors.append(FieldError("Invalid", "metadata.labels", value, detail))
    for key in annotations:
        errors += _key_errors("metadata.annotations", key)
    return errors


def _container_defaults(c: dict[str, Any]) -> None:
    image = c.get("image", "")
    if "imagePullPolicy" not in c:
        tagged = ":" in image.rpartition("/")[2] or "@" in image
        latest = image.endswith(":latest") or not tagged
        c["imagePullPolicy"] = "Always" if latest and "@" not in image else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")
    for var in c.get("env") or []:
        source = var.get("valueFrom") if isinstance(var, dict) else None
        ref = source.get("fieldRef") if isinstance(source, dict) else None
        if isinstance(ref, dict) and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"  # SetDefaults_ObjectFieldSelector
        ref = source.get("resourceFieldRef") if isinstance(source, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("divisor", "0")  # a Quantity, never omitted
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(c.get(probe), dict):
            pr = c[probe]
            for k, v in (
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ):
                pr.setdefault(k, v)


def pod_spec_defaults(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            _container_defaults(c)
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict):
            # dropDisabledFields: the SidecarContainers gate is off in v1.28, so no init
            # container is restartable (kept only for a pod that had one, which none has here)
            c.pop("restartPolicy", None)
    for field in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(field) or []:
            context = c.get("securityContext") if isinstance(c, dict) else None
            if isinstance(context, dict) and context.get("procMount") is not None:
                # dropDisabledProcMountField: the ProcMountType gate is off in v1.28
                context["procMount"] = "Default"
    for v in spec.get("volumes") or []:
        if isinstance(v, dict) and not any(v.get(s) is not None for s in podspec.VOLUME_SOURCES):
            v["emptyDir"] = {}  # SetDefaults_Volume
        for src in ("configMap", "secret"):
            if isinstance(v.get(src), dict):
                v[src].setdefault("defaultMode", 420)
    if spec.get("serviceAccountName"):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])


def _template_defaults(spec: dict[str, Any]) -> None:
    tpl = spec.setdefault("template", {})
    tpl.setdefault("metadata", {})
    if isinstance(tpl.get("spec"), dict):
        pod_spec_defaults(tpl["spec"])


def _rolling(strategy: dict[str, Any], kind: str) -> None:
    if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        if kind == "deployments":
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        elif kind == "daemonsets":
            ru.setdefault("maxUnavailable", 1)
            ru.setdefault("maxSurge", 0)
        else:
            ru.setdefault("partition", 0)


_WORKLOADS = ("deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps")


def apply_defaults(resource: str, obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if spec is None and resource in _WORKLOADS:
        spec = obj["spec"] = {}  # a struct in Go: defaulted even when not sent
    if resource == "namespaces":
        # kube-apiserver labels every namespace with its own name (immutable).
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    if resource == "pods" and isinstance(spec, dict):
        # The ServiceAccount admission plugin's default.
        spec.setdefault("serviceAccountName", "default")
        pod_spec_defaults(spec)
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            # SetDefaults_Pod (pods only, not templates): a limit without a request is both.
            resources = c.get("resources") or {}
            if limits := resources.get("limits"):
                requests = {**limits, **(resources.get("requests") or {})}
                c["resources"] = {**resources, "requests": requests}
        if spec.get("hostNetwork") is True:  # SetDefaults_Pod: a host port for each port
            for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
                for p in (c.get("ports") if isinstance(c, dict) else None) or []:
                    if isinstance(p, dict) and not p.get("hostPort"):
                        p["hostPort"] = p.get("containerPort")
        spec.setdefault("enableServiceLinks", True)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        spec.setdefault("priority", 0)
        # The DefaultTolerationSeconds admission plugin: 5 min on a node that stops
        # reporting, unless a toleration of the key (or of every key) already has effect
        # NoExecute (or every effect); a NoSchedule one does not count.
        tolerations = spec.setdefault("tolerations", [])
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(
                t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None)
                for t in tolerations
            ):
                tolerations.append(
                    {
                        "key": key,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                )
    elif resource in _WORKLOADS and isinstance(spec, dict):
        plural = resource.partition(".")[0]
        _template_defaults(spec)
        if plural != "daemonsets":
            spec.setdefault("replicas", 1)
        if plural == "deployments":
            _rolling(spec.setdefault("strategy", {}), plural)
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
        elif plural == "statefulsets":
            _rolling(spec.setdefault("updateStrategy", {}), plural)
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault(
                "persistentVolumeClaimRetentionPolicy",
                {"whenDeleted": "Retain", "whenScaled": "Retain"},
            )
            for pvc in spec.get("volumeClaimTemplates") or []:
                pvc.setdefault("apiVersion", "v1")
                pvc.setdefault("kind", "PersistentVolumeClaim")
                pvc.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
                pvc.setdefault("status", {"phase": "Pending"})
        elif plural == "daemonsets":
            _rolling(spec.setdefault("updateStrategy", {}), plural)
            spec.setdefault("revisionHistoryLimit", 10)
    elif resource == "services" and isinstance(spec, dict):
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["type"] != "ExternalName":
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if spec["type"] in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        for p in spec.get("ports") or []:
            p.setdefault("protocol", "TCP")
            p.setdefault("targetPort", p.get("port"))
    elif resource == "persistentvolumeclaims" and isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    elif resource == "networkpolicies.networking.k8s.io":
        _network_policy_defaults(obj.setdefault("spec", {}))
    elif resource == "secrets":
        _string_data(obj)
        if not obj.get("type"):
            obj["type"] = "Opaque"


def _string_data(secret: dict[str, Any]) -> None:
    """stringData is write-only: v1 conversion merges it into data (it wins a shared key)
    and no client ever reads it back, so a pod or a client reading .data sees every key."""
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        data = data if isinstance(data, dict) else {}
        encoded = {k: base64.b64encode(str(v).encode()).decode() for k, v in string_data.items()}
        secret["data"] = {**data, **encoded}


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def template_generation(new: dict[str, Any], old: dict[str, Any] | None) -> None:
    """A DaemonSet's template generation, kept in this annotation as apps/v1 shows it: the
    client's own number (1 if none) at create; then the old one, plus one when the pod
    template changed, whatever the client sent (the registry's PrepareForUpdate)."""
    annotations = new["metadata"].setdefault("annotations", {})
    if old is None:
        given = annotations.get(TEMPLATE_GENERATION, "")
        annotations[TEMPLATE_GENERATION] = given if given.isdigit() and int(given) else "1"
        return
    kept = int((old["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION) or 1)
    changed = new.get("spec", {}).get("template") != old.get("spec", {}).get("template")
    annotations[TEMPLATE_GENERATION] = str(kept + changed)


def _network_policy_defaults(spec: dict[str, Any]) -> None:
    spec.setdefault("podSelector", {})  # a struct, not a pointer: always serialised
    if not spec.get("policyTypes"):
        # No policyTypes means Ingress, and Egress too when there are egress rules.
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")


def _qos(spec: dict[str, Any]) -> str:
    containers = spec.get("containers") or []
    reqs = [(c.get("resources") or {}) for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in reqs):
        return "BestEffort"
    for r in reqs:
        limits, requests = r.get("limits") or {}, r.get("requests") or {}
        if not all(
            limits.get(k) and requests.get(k, limits.get(k)) == limits.get(k)
            for k in ("cpu", "memory")
        ):
            return "Burstable"
    return "Guaranteed"


def initial_status(resource: str, obj: dict[str, Any]) -> dict[str, Any] | None:
    """The status kube-apiserver sets on create, or None to keep what the client sent."""
    if resource == "pods":
        return {"phase": "Pending", "qosClass": _qos(obj.get("spec") or {})}
    if resource == "namespaces":
        return {"phase": "Active"}
    if resource == "services":
        return {"loadBalancer": {}}
    if resource in ("persistentvolumeclaims", "persistentvolumes"):
        return {"phase": "Pending"}
    if resource in _ZERO_STATUS or resource == "deployments.apps":
        return dict(_ZERO_STATUS.get(resource, {}))
    return None


# Status counters Go serialises even when zero (no omitempty); clients require them.
_ZERO_STATUS: dict[str, dict[str, int]] = {
    "replicasets.apps": {"replicas": 0},
    "statefulsets.apps": {"replicas": 0, "availableReplicas": 0},
    "daemonsets.apps": {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
    "poddisruptionbudgets.policy": {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    },
}


def validate(resource: str, kind: str, obj: dict[str, Any]) -> list[FieldError]:
    raw_spec = obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    errors: list[FieldError] = []
    if resource == "pods":
        errors += podspec.validate_pod_spec(spec, "spec")
    elif resource in (
        "deployments.apps",
        "replicasets.apps",
        "statefulsets.apps",
        "daemonsets.apps",
    ):
        errors += workload_spec.validate_workload(resource, spec)
    elif resource == "services":
        if spec.get("type") not in _SERVICE_TYPES:
            errors.append(unsupported("spec.type", spec.get("type"), _SERVICE_TYPES))
        for i, p in enumerate(spec.get("ports") or []):
            port = p.get("port")
            if not isinstance(port, int) or not 1 <= port <= 65535:
                field = f"spec.ports[{i}].port"
                errors.append(FieldError("Invalid", field, port, podspec.PORT_RANGE))
    elif resource == "poddisruptionbudgets.policy":
        errors += _validate_budget(spec)
    elif resource == "configmaps":
        for k in obj.get("data") or {}:
            if not re.match(r"^[-._a-zA-Z0-9]+$", k):
                errors.append(
                    FieldError(
                        "Invalid",
                        f"data[{k}]",
                        k,
                        "a valid config key must consist of alphanumeric "
                        "characters, '-', '_' or '.' (e.g. 'key.name',  or "
                        "'KEY_NAME',  or 'key-name', regex used for validation "
                        "is '[-._a-zA-Z0-9]+')",
                    )
                )
    return errors


_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PERCENT = re.compile(r"^[0-9]+%$")
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
    "or '93%', regex used for validation is '[0-9]+%')"
)


def _validate_budget(spec: dict[str, Any]) -> list[FieldError]:
    """ValidatePodDisruptionBudgetSpec: one bound, a non-negative count or a percent <= 100."""
    errors: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        literal = GoLiteral("policy.PodDisruptionBudgetSpec{...}")  # Go prints pointers here
        errors.append(
            FieldError(
                "Invalid", "spec", literal, "minAvailable and maxUnavailable cannot be both set"
            )
        )
    for field in ("minAvailable", "maxUnavailable"):
        value, path = spec.get(field), f"spec.{field}"
        if isinstance(value, int) and value < 0:
            errors.append(FieldError("Invalid", path, value, "must be greater than or equal to 0"))
        elif isinstance(value, str) and not _PERCENT.match(value):
            errors.append(FieldError("Invalid", path, _int_or_string(value), PERCENT_MSG))
        elif isinstance(value, str) and int(value[:-1]) > 100:
            errors.append(
                FieldError("Invalid", path, _int_or_string(value), "must not be greater than 100%")
            )
    return errors


def _int_or_string(value: str) -> GoLiteral:
    """A string IntOrString as field.Invalid prints it (%#v of the struct)."""
    return GoLiteral(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{render_value(value)}}}")
