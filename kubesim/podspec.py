"""A pod spec's validation as v1.28's ValidatePodSpec does it, in its order and words: volumes,
then containers (each one's name, image, ports, env, mounts, pull policy, resources and
securityContext, then its probes), then the pod-wide fields. Pods and workload templates
share it; what a workload adds (restartPolicy Always) its caller checks after.

Ephemeral containers, affinity, topology spread and most volume sources' own fields
are not checked."""

from __future__ import annotations

import re
from typing import Any

from kubesim import names
from kubesim.errors import FieldError, GoLiteral, render_value, unsupported
from kubesim.quantity import canonical_quantity, parse_quantity

PORT_RANGE = "must be between 1 and 65535, inclusive"
_NON_NEGATIVE = "must be greater than or equal to 0"
_ID_RANGE = "must be between 0 and 2147483647, inclusive"

# validateVolumeSource's order: a second source is refused under its own name.
VOLUME_SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
)
# The one field a common source cannot do without.
_SOURCE_REQUIRES = {
    "hostPath": "path",
    "secret": "secretName",
    "persistentVolumeClaim": "claimName",
    "configMap": "name",
}
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_PROBE_COUNTS = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)
_STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# IsStandardResourceName's list besides those (what a quota may count)
_QUOTA_RESOURCES = (
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
)
_NO_READINESS_GRACE = "must not be set for readinessProbes"


def _dicts(value: Any) -> list[dict[str, Any]]:
    """A list's objects; anything else in it (or a non-list) the schema refuses first."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def validate_pod_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    """ValidatePodSpec's checks, in its order."""
    errors, volumes = _volumes(_dicts(spec.get("volumes")), f"{path}.volumes")
    errors += _containers(spec.get("containers"), volumes, f"{path}.containers")
    errors += _init_containers(spec, volumes, f"{path}.initContainers")
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in ("Always", "OnFailure", "Never"):
        errors.append(
            unsupported(f"{path}.restartPolicy", policy, ("Always", "OnFailure", "Never"))
        )
    dns = spec.get("dnsPolicy")
    dns_policies = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
    if dns is not None and dns not in dns_policies:
        errors.append(unsupported(f"{path}.dnsPolicy", dns, dns_policies))
    selector = spec.get("nodeSelector")
    for key, value in (selector if isinstance(selector, dict) else {}).items():
        where = f"{path}.nodeSelector"
        errors += [FieldError("Invalid", where, key, m) for m in names.qualified_name_errors(key)]
        if isinstance(value, str):
            errors += [
                FieldError("Invalid", where, value, m) for m in names.label_value_errors(value)
            ]
    errors += _pod_security_context(spec.get("securityContext"), f"{path}.securityContext")
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= 2**31 - 1:
        why = "must be between 1 and 2147483647, inclusive"
        errors.append(FieldError("Invalid", f"{path}.activeDeadlineSeconds", deadline, why))
    errors += _tolerations(_dicts(spec.get("tolerations")), f"{path}.tolerations")
    return errors


def _volumes(volumes: list[dict[str, Any]], path: str) -> tuple[list[FieldError], set[str]]:
    """ValidateVolumes: each source, then the name. Only a volume without errors can be
    mounted, so a mount of a broken one is also Not found."""
    errors: list[FieldError] = []
    valid: set[str] = set()
    for i, volume in enumerate(volumes):
        where, name = f"{path}[{i}]", volume.get("name") or ""
        found = _volume_source(volume, where)
        if not name:
            found.append(FieldError("Required", f"{where}.name"))
        else:
            found += [
                FieldError("Invalid", f"{where}.name", name, m)
                for m in names.dns_label_errors(name)
            ]
        if name in valid:
            found.append(FieldError("Duplicate", f"{where}.name", name))
        if found:
            errors += found
        else:
            valid.add(name)
    return errors, valid


def _volume_source(volume: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    sources = [s for s in VOLUME_SOURCES if volume.get(s) is not None]
    for extra in sources[1:]:
        errors.append(
            FieldError(
                "Forbidden", f"{path}.{extra}", None, "may not specify more than 1 volume type"
            )
        )
    if not sources:
        # v1 defaulting makes a volume without a source an emptyDir; this is left for
        # objects that skip it
        return [FieldError("Required", path, None, "must specify a volume type")]
    first, body = sources[0], volume[sources[0]]
    if first == "emptyDir" and isinstance(body, dict) and body.get("sizeLimit") is not None:
        try:
            negative = parse_quantity(body["sizeLimit"]) < 0
        except ValueError:
            negative = False
        if negative:
            why = "SizeLimit field must be a valid resource quantity"
            errors.insert(0, FieldError("Forbidden", f"{path}.emptyDir.sizeLimit", None, why))
    required = _SOURCE_REQUIRES.get(first)
    if required and isinstance(body, dict) and not body.get(required):
        errors.insert(0, FieldError("Required", f"{path}.{first}.{required}"))
    return errors


def _containers(containers: Any, volumes: set[str], path: str) -> list[FieldError]:
    """validateContainers: each container's common checks, its name once, its probes."""
    if not containers or not isinstance(containers, list):
        return [FieldError("Required", path)]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(_dicts(containers)):
        where = f"{path}[{i}]"
        errors += _container_common(c, volumes, where)
        name = c.get("name") or ""
        if name in seen:
            errors.append(FieldError("Duplicate", f"{where}.name", name))
        seen.add(name)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(c.get(probe), dict):
                errors += _probe(probe, c[probe], f"{where}.{probe}")
    return errors


def _init_containers(spec: dict[str, Any], volumes: set[str], path: str) -> list[FieldError]:
    """validateInitContainers: the common checks, a name no other container has, and no
    probes (restartPolicy Always, which allows them, is behind a gate v1.28 leaves off)."""
    errors: list[FieldError] = []
    seen = {c.get("name") or "" for c in _dicts(spec.get("containers"))}
    for i, c in enumerate(_dicts(spec.get("initContainers"))):
        where, name = f"{path}[{i}]", c.get("name") or ""
        errors += _container_common(c, volumes, where)
        if name in seen:
            errors.append(FieldError("Duplicate", f"{where}.name", name))
        elif name:
            seen.add(name)
        for field in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if c.get(field) is not None:
                why = "may not be set for init containers without restartPolicy=Always"
                errors.append(FieldError("Forbidden", f"{where}.{field}", None, why))
    return errors


def _container_common(c: dict[str, Any], volumes: set[str], where: str) -> list[FieldError]:
    """validateContainerCommon, in its order."""
    errors: list[FieldError] = []
    name = c.get("name")
    if not name:
        errors.append(FieldError("Required", f"{where}.name"))
    elif isinstance(name, str):
        errors += [
            FieldError("Invalid", f"{where}.name", name, m) for m in names.dns_label_errors(name)
        ]
    if not c.get("image"):
        errors.append(FieldError("Required", f"{where}.image"))
    policy = c.get("terminationMessagePolicy")
    if policy is not None and policy not in ("File", "FallbackToLogsOnError"):
        errors.append(
            unsupported(
                f"{where}.terminationMessagePolicy", policy, ("File", "FallbackToLogsOnError")
            )
        )
    errors += _ports(_dicts(c.get("ports")), f"{where}.ports")
    errors += validate_env(c.get("env") or [], f"{where}.env")
    errors += _mounts(_dicts(c.get("volumeMounts")), volumes, f"{where}.volumeMounts")
    pull = c.get("imagePullPolicy")
    if pull is not None and pull not in ("Always", "IfNotPresent", "Never"):
        errors.append(
            unsupported(f"{where}.imagePullPolicy", pull, ("Always", "IfNotPresent", "Never"))
        )
    if isinstance(c.get("resources"), dict):
        errors += _resources(c["resources"], f"{where}.resources")
    if isinstance(c.get("securityContext"), dict):
        errors += _ids(
            c["securityContext"], f"{where}.securityContext", ("runAsUser", "runAsGroup")
        )
    return errors


def port_name_errors(name: str) -> list[str]:
    """IsValidPortName."""
    errors = ["must be no more than 15 characters"] if len(name) > 15 else []
    if not re.fullmatch(r"[-a-z0-9]+", name):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", name):
        errors.append("must contain at least one letter (a-z)")
    if "--" in name:
        errors.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def _ports(ports: list[dict[str, Any]], path: str) -> list[FieldError]:
    """validateContainerPorts: a name valid and unique, a number, a hostPort, a protocol."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for j, port in enumerate(ports):
        where = f"{path}[{j}]"
        name = port.get("name")
        if name and isinstance(name, str):
            problems = port_name_errors(name)
            errors += [FieldError("Invalid", f"{where}.name", name, p) for p in problems]
            if not problems and name in seen:
                errors.append(FieldError("Duplicate", f"{where}.name", name))
            seen.add(name)
        number = port.get("containerPort")
        if not number:  # Go's zero value: left out
            errors.append(FieldError("Required", f"{where}.containerPort"))
        elif isinstance(number, int) and not 1 <= number <= 65535:
            errors.append(FieldError("Invalid", f"{where}.containerPort", number, PORT_RANGE))
        host = port.get("hostPort")
        if isinstance(host, int) and host and not 1 <= host <= 65535:
            errors.append(FieldError("Invalid", f"{where}.hostPort", host, PORT_RANGE))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in ("SCTP", "TCP", "UDP"):
            errors.append(unsupported(f"{where}.protocol", protocol, ("SCTP", "TCP", "UDP")))
    return errors


def _mounts(mounts: list[dict[str, Any]], volumes: set[str], path: str) -> list[FieldError]:
    """ValidateVolumeMounts: a name that is one of the pod's volumes, a unique mountPath."""
    errors: list[FieldError] = []
    paths: set[str] = set()
    for k, mount in enumerate(mounts):
        where, name = f"{path}[{k}]", mount.get("name") or ""
        if not name:
            errors.append(FieldError("Required", f"{where}.name"))
        if name not in volumes:
            errors.append(FieldError("NotFound", f"{where}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            errors.append(FieldError("Required", f"{where}.mountPath"))
        if mount_path in paths:
            errors.append(FieldError("Invalid", f"{where}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
    return errors


def _resources(resources: dict[str, Any], path: str) -> list[FieldError]:
    """ValidateResourceRequirements: standard names, no negative quantity, requests within
    limits (equal to them for extended resources, which cannot be overcommitted)."""
    errors: list[FieldError] = []
    limits: dict[str, Any] = resources.get("limits") or {}
    requests: dict[str, Any] = resources.get("requests") or {}
    if not isinstance(limits, dict) or not isinstance(requests, dict):
        return []  # the schema refuses them first
    for name, value in limits.items():
        errors += _resource_value(name, value, f"{path}.limits[{name}]")
    for name, value in requests.items():
        errors += _resource_value(name, value, f"{path}.requests[{name}]")
        try:
            wanted = canonical_quantity(value)
        except ValueError:
            continue
        overcommit = "/" not in name or "kubernetes.io/" in name
        overcommit = overcommit and not name.startswith("hugepages-")
        if name in limits:
            try:
                limit, cmp = canonical_quantity(limits[name]), _compare(value, limits[name])
            except ValueError:
                continue
            if cmp != 0 and not overcommit:
                why = f"must be equal to {name} limit of {limit}"
                errors.append(FieldError("Invalid", f"{path}.requests", wanted, why))
            elif cmp > 0:
                why = f"must be less than or equal to {name} limit of {limit}"
                errors.append(FieldError("Invalid", f"{path}.requests", wanted, why))
        elif not overcommit:
            why = "Limit must be set for non overcommitable resources"
            errors.append(FieldError("Required", f"{path}.limits", None, why))
    return errors


def _compare(a: Any, b: Any) -> int:
    x, y = parse_quantity(a), parse_quantity(b)
    return (x > y) - (x < y)


def _resource_value(name: str, value: Any, path: str) -> list[FieldError]:
    """validateContainerResourceName, then ValidateResourceQuantityValue (whatever the name
    said)."""
    errors = [FieldError("Invalid", path, name, m) for m in names.qualified_name_errors(name)]
    known = name in _STANDARD_RESOURCES + _QUOTA_RESOURCES
    known = known or name.startswith(("hugepages-", "requests.hugepages-"))
    if not errors and "/" not in name and not known:
        why = "must be a standard resource type or fully qualified"
        errors.append(FieldError("Invalid", path, name, why))
    if "/" not in name and name not in _STANDARD_RESOURCES and not name.startswith("hugepages-"):
        why = "must be a standard resource for containers"
        errors.append(FieldError("Invalid", path, name, why))
    try:
        text = canonical_quantity(value)
    except ValueError:  # the real server refuses it while decoding; kubesim lets it by
        return errors
    if parse_quantity(value) < 0:
        errors.append(FieldError("Invalid", path, text, _NON_NEGATIVE))
    return errors


def _probe(kind: str, probe: dict[str, Any], path: str) -> list[FieldError]:
    """validateProbe: validateHandler (exactly one), the counts that may not be negative, a
    positive grace period; then what its kind adds (one success, or no grace period)."""
    errors: list[FieldError] = []
    handlers = [h for h in _PROBE_HANDLERS if probe.get(h) is not None]
    for h in handlers[1:]:
        errors.append(
            FieldError("Forbidden", f"{path}.{h}", None, "may not specify more than 1 handler type")
        )
    if not handlers:
        errors.append(FieldError("Required", path, None, "must specify a handler type"))
    else:
        errors[:0] = _handler(handlers[0], probe[handlers[0]], f"{path}.{handlers[0]}")
    for count in _PROBE_COUNTS:
        value = probe.get(count)
        if isinstance(value, int) and value < 0:
            errors.append(FieldError("Invalid", f"{path}.{count}", value, _NON_NEGATIVE))
    grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace <= 0:
        field = f"{path}.terminationGracePeriodSeconds"
        errors.append(FieldError("Invalid", field, grace, "must be greater than 0"))
    success = probe.get("successThreshold")
    if kind != "readinessProbe" and isinstance(success, int) and success != 1:
        errors.append(FieldError("Invalid", f"{path}.successThreshold", success, "must be 1"))
    if kind == "readinessProbe" and grace is not None:
        field = f"{path}.terminationGracePeriodSeconds"
        errors.append(FieldError("Invalid", field, grace, _NO_READINESS_GRACE))
    return errors


def _handler(kind: str, action: Any, path: str) -> list[FieldError]:
    if not isinstance(action, dict):
        return []
    if kind == "exec":
        return [] if action.get("command") else [FieldError("Required", f"{path}.command")]
    errors: list[FieldError] = []
    port = action.get("port")
    if isinstance(port, int) and not isinstance(port, bool):
        if not 1 <= port <= 65535:
            errors.append(FieldError("Invalid", f"{path}.port", port, PORT_RANGE))
    elif isinstance(port, str) and kind != "grpc":
        errors += [FieldError("Invalid", f"{path}.port", port, m) for m in port_name_errors(port)]
    scheme = action.get("scheme")
    if kind == "httpGet" and scheme is not None and scheme not in ("HTTP", "HTTPS"):
        errors.append(unsupported(f"{path}.scheme", scheme, ("HTTP", "HTTPS")))
    return errors


def _ids(context: dict[str, Any], path: str, fields: tuple[str, ...]) -> list[FieldError]:
    """IsValidUserID / IsValidGroupID on each field given."""
    errors: list[FieldError] = []
    for field in fields:
        value = context.get(field)
        if isinstance(value, int) and not 0 <= value <= 2**31 - 1:
            errors.append(FieldError("Invalid", f"{path}.{field}", value, _ID_RANGE))
    return errors


def _pod_security_context(context: Any, path: str) -> list[FieldError]:
    if not isinstance(context, dict):
        return []
    errors = _ids(context, path, ("fsGroup", "runAsUser", "runAsGroup"))
    for g, gid in enumerate(context.get("supplementalGroups") or []):
        if isinstance(gid, int) and not 0 <= gid <= 2**31 - 1:
            errors.append(FieldError("Invalid", f"{path}.supplementalGroups[{g}]", gid, _ID_RANGE))
    return errors


def _tolerations(tolerations: list[dict[str, Any]], path: str) -> list[FieldError]:
    """ValidateTolerations: key, operator with key and value, effect."""
    errors: list[FieldError] = []
    for i, t in enumerate(tolerations):
        where = f"{path}[{i}]"
        key, operator = t.get("key") or "", t.get("operator") or ""
        value, effect = t.get("value") or "", t.get("effect") or ""
        errors += (
            [
                FieldError("Invalid", f"{where}.key", key, m)
                for m in names.qualified_name_errors(key)
            ]
            if key
            else []
        )
        if not key and operator != "Exists":
            why = 'operator must be Exists when `key` is empty, which means "match all values and '
            why += 'all keys"'
            errors.append(FieldError("Invalid", f"{where}.operator", operator, why))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            why = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            errors.append(FieldError("Invalid", f"{where}.effect", effect, why))
        if operator in ("Equal", ""):
            problems = names.label_value_errors(value)
            if problems:
                errors.append(FieldError("Invalid", f"{where}.operator", value, ";".join(problems)))
        elif operator == "Exists":
            if value:
                literal = GoLiteral(_toleration_literal(t))
                why = "value must be empty when `operator` is 'Exists'"
                errors.append(FieldError("Invalid", f"{where}.operator", literal, why))
        else:
            errors.append(unsupported(f"{where}.operator", operator, ("Equal", "Exists")))
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            supported = ("NoSchedule", "PreferNoSchedule", "NoExecute")
            errors.append(unsupported(f"{where}.effect", effect, supported))
    return errors


def _toleration_literal(t: dict[str, Any]) -> str:
    """core.Toleration as %#v prints it (a set tolerationSeconds prints as an address)."""
    fields = ", ".join(
        f"{go}:{render_value(t.get(js) or '')}"
        for go, js in (("Key", "key"), ("Operator", "operator"), ("Value", "value"))
    )
    effect = render_value(t.get("effect") or "")
    return f"core.Toleration{{{fields}, Effect:{effect}, TolerationSeconds:(*int64)(nil)}}"


_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
ENV_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', "
    "'-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or "
    "'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"
)
_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
# validEnvDownwardAPIFieldPathExpressions, sorted as the Unsupported message lists them
_ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
# what ConvertDownwardAPIFieldLabel knows of a v1 pod, beyond those (spec.host is spec.nodeName)
_POD_FIELD_LABELS = (
    "metadata.annotations",
    "metadata.labels",
    "spec.restartPolicy",
    "spec.schedulerName",
    "status.phase",
)
_ENV_RESOURCES = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
_UNITS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
_UNITS_MSG = f"only divisor's values {', '.join(_UNITS)} are supported with the "
# validateContainerResourceDivisor: the divisors each resource allows, and the complaint
_DIVISORS = {
    "cpu": (("1m", "1"), "only divisor's values 1m and 1 are supported with the cpu resource"),
    "memory": (_UNITS, _UNITS_MSG + "memory resource"),
    "ephemeral-storage": (_UNITS, _UNITS_MSG + "local ephemeral storage resource"),
    "hugepages": (_UNITS, _UNITS_MSG + "hugepages resource"),
}


def validate_env(env: list[Any], path: str) -> list[FieldError]:
    """ValidateEnv: each variable's name (IsEnvVarName, then the chdir prefixes), then its
    valueFrom: each source's own fields, then that there is one source, and no value."""
    errors: list[FieldError] = []
    for i, var in enumerate(env):
        if not isinstance(var, dict):
            continue
        where, name = f"{path}[{i}]", var.get("name") or ""
        if not name:
            errors.append(FieldError("Required", f"{where}.name"))
        else:
            problems = [] if _ENV_NAME.match(name) else [ENV_NAME_MSG]
            if name in (".", ".."):
                problems.append(f"must not be '{name}'")
            elif name.startswith(".."):
                problems.append("must not start with '..'")
            errors += [FieldError("Invalid", f"{where}.name", name, p) for p in problems]
        if isinstance(var.get("valueFrom"), dict):
            errors += _env_value_from(
                var["valueFrom"], bool(var.get("value")), f"{where}.valueFrom"
            )
    return errors


def _env_value_from(source: dict[str, Any], has_value: bool, path: str) -> list[FieldError]:
    """validateEnvVarValueFrom: a source given as {} is still a source (a non-nil pointer)."""
    errors: list[FieldError] = []
    refs = {s: source[s] for s in _ENV_SOURCES if isinstance(source.get(s), dict)}
    if "fieldRef" in refs:
        errors += _field_ref(refs["fieldRef"], f"{path}.fieldRef")
    if "resourceFieldRef" in refs:
        errors += _resource_field_ref(refs["resourceFieldRef"], f"{path}.resourceFieldRef")
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if kind in refs:
            errors += _key_ref(refs[kind], f"{path}.{kind}")
    if not refs:
        why = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
        why += "`secretKeyRef`"
    elif has_value:
        why = "may not be specified when `value` is not empty"
    elif len(refs) > 1:
        why = "may not have more than one field specified at a time"
    else:
        return errors
    return [*errors, FieldError("Invalid", path, "", why)]


def _key_ref(ref: dict[str, Any], path: str) -> list[FieldError]:
    """validateConfigMapKeySelector / validateSecretKeySelector: a subdomain name (an empty one
    is invalid, not missing), then a key."""
    name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
    errors = [
        FieldError("Invalid", f"{path}.name", name, m) for m in names.dns_subdomain_errors(name)
    ]
    if not key:
        return [*errors, FieldError("Required", f"{path}.key")]
    return errors + [
        FieldError("Invalid", f"{path}.key", key, m) for m in names.config_key_errors(key)
    ]


def _subscripted(field_path: str) -> tuple[str, str] | None:
    """fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['app']` is the path and `app`."""
    if not field_path.endswith("']"):
        return None
    head, sep, subscript = field_path[:-2].partition("['")
    return (head, subscript) if sep and head else None


def _field_ref(ref: dict[str, Any], path: str) -> list[FieldError]:
    """validateObjectFieldSelector with the env's paths, then the PodHostIPs gate (off in
    v1.28)."""
    version, field_path = str(ref.get("apiVersion") or ""), str(ref.get("fieldPath") or "")
    if not version:
        return [FieldError("Required", f"{path}.apiVersion")]
    if not field_path:
        return [FieldError("Required", f"{path}.fieldPath")]
    split = _subscripted(field_path)
    converted = None  # ConvertDownwardAPIFieldLabel's error
    if version != "v1":
        converted = f"unsupported pod version: {version}"
    elif split and split[0] not in ("metadata.annotations", "metadata.labels"):
        converted = f"field label does not support subscript: {field_path}"
    elif not split and field_path not in (*_ENV_FIELD_PATHS, *_POD_FIELD_LABELS, "spec.host"):
        converted = f"field label not supported: {field_path}"
    if converted:
        why = f"error converting fieldPath: {converted}"
        return [FieldError("Invalid", f"{path}.fieldPath", field_path, why)]
    internal = "spec.nodeName" if field_path == "spec.host" else field_path
    if split:
        key = split[1].lower() if split[0] == "metadata.annotations" else split[1]
        return [FieldError("Invalid", path, key, m) for m in names.qualified_name_errors(key)]
    if internal not in _ENV_FIELD_PATHS:
        return [unsupported(f"{path}.fieldPath", internal, _ENV_FIELD_PATHS)]
    if internal == "status.hostIPs":
        why = "may not be set when feature gate 'PodHostIPs' is not enabled"
        return [FieldError("Forbidden", path, None, why)]
    return []


def _resource_field_ref(ref: dict[str, Any], path: str) -> list[FieldError]:
    """validateContainerResourceFieldSelector (hugepages by prefix), then the divisor, which
    must be a unit of the resource's (a zero divisor is unset)."""
    resource = str(ref.get("resource") or "")
    errors: list[FieldError] = []
    hugepages = resource.startswith(("requests.hugepages-", "limits.hugepages-"))
    if not resource:
        errors.append(FieldError("Required", f"{path}.resource"))
    elif resource not in _ENV_RESOURCES and not hugepages:
        errors.append(unsupported(f"{path}.resource", resource, _ENV_RESOURCES))
    try:
        divisor = canonical_quantity(ref.get("divisor") or "0")
    except ValueError:  # the real server refuses it while decoding
        return errors
    scope, _, name = resource.partition(".")
    kind = "hugepages" if hugepages else name if scope in ("limits", "requests") else ""
    allowed, why = _DIVISORS.get(kind, ((), ""))
    if divisor != "0" and allowed and divisor not in allowed:
        errors.append(FieldError("Invalid", f"{path}.divisor", resource, why))
    return errors
