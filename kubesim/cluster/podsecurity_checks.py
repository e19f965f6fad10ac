"""The Pod Security Standards' checks, ported from pod-security-admission v1.28's policy/.

Each check says why it refuses a pod in the words of its Go original: a forbidden reason,
and a detail naming the containers and values. A check may have several versions, each
applying from a policy version on (`CHECKS`; `podsecurity_policy` picks those a level and
version run). A Go pointer left nil is a key absent or null here: `is None`, never
falsiness, tells it apart from `{}` or `false`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kubesim.gojson import go_quote

Obj = dict[str, Any]
Version = tuple[int, int]  # (1, minor); the registry's newest stands for "latest"
Refusal = tuple[str, str]  # (forbidden reason, forbidden detail)
CheckFn = Callable[[Obj, Obj], Refusal | None]  # (pod or template metadata, pod spec)

BASELINE, RESTRICTED = "baseline", "restricted"


@dataclass(frozen=True)
class Versioned:
    since: Version
    check: CheckFn
    overrides: tuple[str, ...] = ()  # baseline checks this restricted one replaces


@dataclass(frozen=True)
class Check:
    id: str
    level: str
    versions: tuple[Versioned, ...]  # by increasing `since`

    def at(self, version: Version) -> Versioned | None:
        applying = [v for v in self.versions if v.since <= version]
        return applying[-1] if applying else None


# --- helpers.go and visitor.go ------------------------------------------------------------


def _join_quote(items: list[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def _pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers(spec: Obj) -> Iterator[Obj]:
    """visitContainers' order: init containers, containers, ephemeral containers."""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(field) or []:
            if isinstance(container, dict):
                yield container


def _context(obj: Obj) -> Obj | None:
    context = obj.get("securityContext")
    return context if isinstance(context, dict) else None


def _name(container: Obj) -> str:
    return str(container.get("name") or "")


def _named(names: list[str]) -> str:
    """`container "a"` or `containers "a", "b"`."""
    return f"{_pluralize('container', 'containers', len(names))} {_join_quote(names)}"


def _windows(spec: Obj) -> bool:
    """The 1.25 versions let a pod whose spec.os is windows through."""
    os = spec.get("os")
    return isinstance(os, dict) and os.get("name") == "windows"


def _exempting_windows(check: CheckFn) -> CheckFn:
    def versioned(meta: Obj, spec: Obj) -> Refusal | None:
        return None if _windows(spec) else check(meta, spec)

    return versioned


# --- baseline -----------------------------------------------------------------------------

APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def app_armor_profile(meta: Obj, spec: Obj) -> Refusal | None:
    forbidden = sorted(
        f"{key}={go_quote(str(value))}"
        for key, value in (meta.get("annotations") or {}).items()
        if key.startswith(APPARMOR_PREFIX)
        and value
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    )
    if not forbidden:
        return None
    reason = _pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(forbidden))
    return reason, ", ".join(forbidden)


# fmt: off
DEFAULT_CAPABILITIES = frozenset((
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
))
# fmt: on


def capabilities_baseline(meta: Obj, spec: Obj) -> Refusal | None:
    bad: list[str] = []
    capabilities: set[str] = set()
    for container in _containers(spec):
        context = _context(container)
        caps = context.get("capabilities") if context is not None else None
        if not isinstance(caps, dict):
            continue
        added = {str(c) for c in caps.get("add") or [] if c not in DEFAULT_CAPABILITIES}
        if added:
            capabilities |= added
            bad.append(_name(container))
    if not bad:
        return None
    return "non-default capabilities", (
        f"{_named(bad)} must not include {_join_quote(sorted(capabilities))} in "
        "securityContext.capabilities.add"
    )


def host_namespaces(meta: Obj, spec: Obj) -> Refusal | None:
    shared = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    return ("host namespaces", ", ".join(shared)) if shared else None


def host_path_volumes(meta: Obj, spec: Obj) -> Refusal | None:
    volumes = [
        str(v.get("name") or "")
        for v in spec.get("volumes") or []
        if isinstance(v, dict) and v.get("hostPath") is not None
    ]
    if not volumes:
        return None
    named = f"{_pluralize('volume', 'volumes', len(volumes))} {_join_quote(volumes)}"
    return "hostPath volumes", named


def host_ports(meta: Obj, spec: Obj) -> Refusal | None:
    bad: list[str] = []
    ports: set[str] = set()  # sorted as strings, as sets.String lists them
    for container in _containers(spec):
        used = {
            str(p["hostPort"])
            for p in container.get("ports") or []
            if isinstance(p, dict) and p.get("hostPort")
        }
        if used:
            ports |= used
            bad.append(_name(container))
    if not bad:
        return None
    return "hostPort", (
        f"{_named(bad)} {_pluralize('uses', 'use', len(bad))} "
        f"{_pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}"
    )


def privileged(meta: Obj, spec: Obj) -> Refusal | None:
    bad = [
        _name(c)
        for c in _containers(spec)
        if (context := _context(c)) is not None and context.get("privileged") is True
    ]
    if not bad:
        return None
    return "privileged", f"{_named(bad)} must not set securityContext.privileged=true"


def proc_mount(meta: Obj, spec: Obj) -> Refusal | None:
    bad: list[str] = []
    types: set[str] = set()
    for container in _containers(spec):
        context = _context(container)
        mount = context.get("procMount") if context is not None else None
        if mount is not None and mount != "Default":
            bad.append(_name(container))
            types.add(str(mount))
    if not bad:
        return None
    return "procMount", (
        f"{_named(bad)} must not set securityContext.procMount to {_join_quote(sorted(types))}"
    )


SELINUX_TYPES = frozenset(("", "container_t", "container_init_t", "container_kvm_t"))


def se_linux_options(meta: Obj, spec: Obj) -> Refusal | None:
    bad_types: set[str] = set()
    said: set[str] = set()  # "user", "role"

    def valid(options: Any) -> bool:
        if not isinstance(options, dict):
            return True
        ok = True
        kind = str(options.get("type") or "")
        if kind not in SELINUX_TYPES:
            ok = False
            bad_types.add(kind)
        for field in ("user", "role"):
            if options.get(field):
                ok = False
                said.add(field)
        return ok

    setters = []
    pod_context = _context(spec)
    if pod_context is not None and not valid(pod_context.get("seLinuxOptions")):
        setters.append("pod")
    bad = [
        _name(c)
        for c in _containers(spec)
        if (context := _context(c)) is not None and not valid(context.get("seLinuxOptions"))
    ]
    if bad:
        setters.append(_named(bad))
    if not setters:
        return None
    data = []
    if bad_types:
        kinds = sorted(bad_types)
        data.append(f"{_pluralize('type', 'types', len(kinds))} {_join_quote(kinds)}")
    data += [f"{field} may not be set" for field in ("user", "role") if field in said]
    return "seLinuxOptions", (
        f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(data)}"
    )


SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline_1_0(meta: Obj, spec: Obj) -> Refusal | None:
    """Before v1.19 the policy reads the seccomp annotations."""
    annotations = meta.get("annotations") or {}
    keys = [SECCOMP_POD_ANNOTATION]
    keys += [SECCOMP_CONTAINER_PREFIX + _name(c) for c in _containers(spec)]
    forbidden = {
        f"{key}={go_quote(str(annotations[key]))}"
        for key in keys
        if key in annotations and not _valid_seccomp_annotation(str(annotations[key]))
    }
    if not forbidden:
        return None
    said = _pluralize("annotation", "annotations", len(forbidden))
    return "seccompProfile", f"forbidden {said} {', '.join(sorted(forbidden))}"


def _seccomp_type(context: Obj | None) -> str | None:
    """The seccompProfile's type, "" if unset; None when there is no profile."""
    profile = context.get("seccompProfile") if context is not None else None
    return str(profile.get("type") or "") if isinstance(profile, dict) else None


def _seccomp(spec: Obj, *, required: bool) -> Refusal | None:
    """seccompProfileBaseline_1_19 and, `required`, seccompProfileRestricted_1_19."""
    setters: list[str] = []
    values: set[str] = set()
    pod_set = False
    pod_type = _seccomp_type(_context(spec))
    if pod_type is not None:
        if pod_type in ("RuntimeDefault", "Localhost"):
            pod_set = True
        else:
            setters.append("pod")
            values.add(pod_type)
    explicit: list[str] = []
    implicit: list[str] = []
    for container in _containers(spec):
        kind = _seccomp_type(_context(container))
        if kind is None:
            if not pod_set:
                implicit.append(_name(container))
        elif kind not in ("RuntimeDefault", "Localhost"):
            explicit.append(_name(container))
            values.add(kind)
    if explicit:
        setters.append(_named(explicit))
    if setters:
        return "seccompProfile", (
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
            f"{_join_quote(sorted(values))}"
        )
    if required and implicit:
        return "seccompProfile", (
            f"pod or {_named(implicit)} must set securityContext.seccompProfile.type to "
            '"RuntimeDefault" or "Localhost"'
        )
    return None


def seccomp_profile_baseline_1_19(meta: Obj, spec: Obj) -> Refusal | None:
    return _seccomp(spec, required=False)


# fmt: off
SAFE_SYSCTLS_1_0 = frozenset((
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
))
# fmt: on
SAFE_SYSCTLS_1_27 = SAFE_SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}


def _sysctls(safe: frozenset[str]) -> CheckFn:
    def check(meta: Obj, spec: Obj) -> Refusal | None:
        context = _context(spec)
        sysctls = (context.get("sysctls") if context is not None else None) or []
        forbidden = [
            str(s.get("name") or "")
            for s in sysctls
            if isinstance(s, dict) and s.get("name") not in safe
        ]
        return ("forbidden sysctls", ", ".join(forbidden)) if forbidden else None

    return check


def _host_process(context: Obj | None) -> bool:
    options = context.get("windowsOptions") if context is not None else None
    return isinstance(options, dict) and options.get("hostProcess") is True


def windows_host_process(meta: Obj, spec: Obj) -> Refusal | None:
    setters = ["pod"] if _host_process(_context(spec)) else []
    bad = [_name(c) for c in _containers(spec) if _host_process(_context(c))]
    if bad:
        setters.append(_named(bad))
    if not setters:
        return None
    return "hostProcess", (
        f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"
    )


# --- restricted ---------------------------------------------------------------------------


def allow_privilege_escalation(meta: Obj, spec: Obj) -> Refusal | None:
    bad = [
        _name(c)
        for c in _containers(spec)
        if (context := _context(c)) is None or context.get("allowPrivilegeEscalation") is not False
    ]
    if not bad:
        return None
    return "allowPrivilegeEscalation != false", (
        f"{_named(bad)} must set securityContext.allowPrivilegeEscalation=false"
    )


def capabilities_restricted(meta: Obj, spec: Obj) -> Refusal | None:
    missing_drop: list[str] = []
    adding: list[str] = []
    capabilities: set[str] = set()
    for container in _containers(spec):
        context = _context(container)
        caps = context.get("capabilities") if context is not None else None
        if not isinstance(caps, dict):
            missing_drop.append(_name(container))
            continue
        if "ALL" not in (caps.get("drop") or []):
            missing_drop.append(_name(container))
        added = {str(c) for c in caps.get("add") or [] if c != "NET_BIND_SERVICE"}
        if added:
            capabilities |= added
            adding.append(_name(container))
    details = []
    if missing_drop:
        details.append(f'{_named(missing_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(
            f"{_named(adding)} must not include {_join_quote(sorted(capabilities))} in "
            "securityContext.capabilities.add"
        )
    return ("unrestricted capabilities", "; ".join(details)) if details else None


# fmt: off
ALLOWED_VOLUMES = (
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
)
RESTRICTED_VOLUMES = (  # in the order the check names the first a volume has
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
    "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
    "scaleIO", "storageos",
)
# fmt: on


def restricted_volumes(meta: Obj, spec: Obj) -> Refusal | None:
    bad: list[str] = []
    types: set[str] = set()
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict) or any(volume.get(k) is not None for k in ALLOWED_VOLUMES):
            continue
        bad.append(str(volume.get("name") or ""))
        types.add(next((k for k in RESTRICTED_VOLUMES if volume.get(k) is not None), "unknown"))
    if not bad:
        return None
    kinds = sorted(types)
    return "restricted volume types", (
        f"{_pluralize('volume', 'volumes', len(bad))} {_join_quote(bad)} "
        f"{_pluralize('uses', 'use', len(bad))} "
        f"{_pluralize('restricted volume type', 'restricted volume types', len(kinds))} "
        f"{_join_quote(kinds)}"
    )


def run_as_non_root(meta: Obj, spec: Obj) -> Refusal | None:
    setters = []
    pod_non_root = False
    pod_context = _context(spec)
    if pod_context is not None and pod_context.get("runAsNonRoot") is not None:
        if pod_context["runAsNonRoot"] is False:
            setters.append("pod")
        else:
            pod_non_root = True
    explicit: list[str] = []
    implicit: list[str] = []
    for container in _containers(spec):
        context = _context(container)
        stated = context.get("runAsNonRoot") if context is not None else None
        if stated is not None:
            if stated is False:
                explicit.append(_name(container))
        elif not pod_non_root:
            implicit.append(_name(container))
    if explicit:
        setters.append(_named(explicit))
    if setters:
        detail = f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
        return "runAsNonRoot != true", detail
    if implicit:
        detail = f"pod or {_named(implicit)} must set securityContext.runAsNonRoot=true"
        return "runAsNonRoot != true", detail
    return None


def _root(context: Obj | None) -> bool:
    user = context.get("runAsUser") if context is not None else None
    return user is not None and user is not False and user == 0


def run_as_user(meta: Obj, spec: Obj) -> Refusal | None:
    setters = ["pod"] if _root(_context(spec)) else []
    bad = [_name(c) for c in _containers(spec) if _root(_context(c))]
    if bad:
        setters.append(_named(bad))
    if not setters:
        return None
    return "runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0"


def seccomp_profile_restricted(meta: Obj, spec: Obj) -> Refusal | None:
    return _seccomp(spec, required=True)


# --- the registry: each check's versions, as each check_*.go registers them ----------------

CHECKS = (
    Check("appArmorProfile", BASELINE, (Versioned((1, 0), app_armor_profile),)),
    Check("capabilities_baseline", BASELINE, (Versioned((1, 0), capabilities_baseline),)),
    Check("hostNamespaces", BASELINE, (Versioned((1, 0), host_namespaces),)),
    Check("hostPathVolumes", BASELINE, (Versioned((1, 0), host_path_volumes),)),
    Check("hostPorts", BASELINE, (Versioned((1, 0), host_ports),)),
    Check("privileged", BASELINE, (Versioned((1, 0), privileged),)),
    Check("procMount", BASELINE, (Versioned((1, 0), proc_mount),)),
    Check("seLinuxOptions", BASELINE, (Versioned((1, 0), se_linux_options),)),
    Check(
        "seccompProfile_baseline",
        BASELINE,
        (
            Versioned((1, 0), seccomp_profile_baseline_1_0),
            Versioned((1, 19), seccomp_profile_baseline_1_19),
        ),
    ),
    Check(
        "sysctls",
        BASELINE,
        (
            Versioned((1, 0), _sysctls(SAFE_SYSCTLS_1_0)),
            Versioned((1, 27), _sysctls(SAFE_SYSCTLS_1_27)),
        ),
    ),
    Check("windowsHostProcess", BASELINE, (Versioned((1, 0), windows_host_process),)),
    Check(
        "allowPrivilegeEscalation",
        RESTRICTED,
        (
            Versioned((1, 8), allow_privilege_escalation),
            Versioned((1, 25), _exempting_windows(allow_privilege_escalation)),
        ),
    ),
    Check(
        "capabilities_restricted",
        RESTRICTED,
        (
            Versioned((1, 22), capabilities_restricted, ("capabilities_baseline",)),
            Versioned(
                (1, 25), _exempting_windows(capabilities_restricted), ("capabilities_baseline",)
            ),
        ),
    ),
    Check(
        "restrictedVolumes",
        RESTRICTED,
        (Versioned((1, 0), restricted_volumes, ("hostPathVolumes",)),),
    ),
    Check("runAsNonRoot", RESTRICTED, (Versioned((1, 0), run_as_non_root),)),
    Check("runAsUser", RESTRICTED, (Versioned((1, 23), run_as_user),)),
    Check(
        "seccompProfile_restricted",
        RESTRICTED,
        (
            Versioned((1, 19), seccomp_profile_restricted, ("seccompProfile_baseline",)),
            Versioned(
                (1, 25),
                _exempting_windows(seccomp_profile_restricted),
                ("seccompProfile_baseline",),
            ),
        ),
    ),
)
