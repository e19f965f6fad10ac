"""Pod Security levels and versions: a namespace's labels read as pod-security-admission's
api.PolicyToEvaluate reads them, and the checks a level and version run (its registry).

A level label that is not a level reads as restricted for enforce, privileged for audit and
warn; a version that is not `latest` or `v1.N` reads as latest; each is also an error, which
the admission of namespaces turns into a 422. Any version past the newest a check was
revised in (v1.27 for v1.28's checks) runs as that one, so `v1.28` and `latest` agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kubesim.cluster.podsecurity_checks import (
    BASELINE,
    CHECKS,
    RESTRICTED,
    CheckFn,
    Obj,
    Refusal,
    Version,
)
from kubesim.errors import FieldError

PRIVILEGED = "privileged"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)  # from the least to the most strict
LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE, AUDIT, WARN = "enforce", "audit", "warn"
_VERSION = re.compile(r"v1\.([0-9]|[1-9][0-9]*)")
_INT64_DIGITS = 18  # strconv.Atoi fails on what an int64 cannot hold: that many always fit


@dataclass(frozen=True)
class LevelVersion:
    level: str
    version: Version | None = None  # None: latest

    def __str__(self) -> str:
        version = "latest" if self.version is None else f"v{self.version[0]}.{self.version[1]}"
        return f"{self.level}:{version}"


@dataclass(frozen=True)
class Policy:
    enforce: LevelVersion = LevelVersion(PRIVILEGED)
    audit: LevelVersion = LevelVersion(PRIVILEGED)
    warn: LevelVersion = LevelVersion(PRIVILEGED)

    def fully_privileged(self) -> bool:
        return all(m.level == PRIVILEGED for m in (self.enforce, self.audit, self.warn))


def _invalid(label: str, value: str, why: str) -> FieldError:
    return FieldError("Invalid", f"metadata.labels[{label}]", value, why)


def _version(value: str) -> Version | None:
    """ParseVersion: None for latest; raises ValueError for anything else."""
    if value == "latest":
        return None
    match = _VERSION.fullmatch(value)
    if match is None or len(match[1]) > _INT64_DIGITS:
        raise ValueError('must be "latest" or "v1.x"')
    return (1, int(match[1]))


def policy_of(labels: dict[str, str] | None) -> tuple[Policy, list[FieldError]]:
    """PolicyToEvaluate with the API server's defaults (privileged:latest in every mode)."""
    labels = labels or {}
    modes = dict.fromkeys((ENFORCE, AUDIT, WARN), LevelVersion(PRIVILEGED))
    errors: list[FieldError] = []
    set_levels: set[str] = set()  # modes whose level label was set (and valid, for enforce)
    for mode in (ENFORCE, AUDIT, WARN):
        label = LABEL_PREFIX + mode
        if label in labels:
            level = labels[label]
            if level in LEVELS:
                set_levels.add(mode)
            else:
                errors.append(_invalid(label, level, "must be one of " + ", ".join(LEVELS)))
                level = RESTRICTED if mode == ENFORCE else PRIVILEGED  # audit and warn fail open
                if mode == WARN:
                    set_levels.add(mode)  # a warn label counts as set, even when invalid
            modes[mode] = replace(modes[mode], level=level)
        label += "-version"
        if label in labels:
            try:
                modes[mode] = replace(modes[mode], version=_version(labels[label]))
            except ValueError as exc:
                errors.append(_invalid(label, labels[label], str(exc)))
                modes[mode] = replace(modes[mode], version=None)
    enforce, warn = modes[ENFORCE], modes[WARN]
    if WARN not in set_levels and ENFORCE in set_levels and _stricter(enforce.level, warn.level):
        # warn defaults to an enforce level stricter than its own, and to its version
        version = warn.version if LABEL_PREFIX + "warn-version" in labels else enforce.version
        modes[WARN] = LevelVersion(enforce.level, version)
    return Policy(modes[ENFORCE], modes[AUDIT], modes[WARN]), errors


def _stricter(a: str, b: str) -> bool:
    return LEVELS.index(a) > LEVELS.index(b)


def relaxed_or_same(new: str, old: str) -> bool:
    """api.CompareLevels(new, old) < 1."""
    return not _stricter(new, old)


# --- the registry (checkRegistry) ---------------------------------------------------------

# Its maxVersion: "latest", and any newer version, evaluate as this one.
NEWEST: Version = max(v.since for c in CHECKS for v in c.versions)
_ORDER = sorted(CHECKS, key=lambda c: (c.level == RESTRICTED, c.id))  # baseline IDs first


def checks_for(policy: LevelVersion) -> list[CheckFn]:
    """The checks a level and version run: for restricted, the baseline ones its restricted
    checks do not override, and its own; in the order of their IDs, baseline first."""
    if policy.level == PRIVILEGED:
        return []
    at = NEWEST if policy.version is None else min(policy.version, NEWEST)
    versioned = {c.id: (c, v) for c in _ORDER if (v := c.at(at)) is not None}
    if policy.level == BASELINE:
        return [v.check for c, v in versioned.values() if c.level == BASELINE]
    overridden = {o for c, v in versioned.values() if c.level == RESTRICTED for o in v.overrides}
    return [v.check for check_id, (_, v) in versioned.items() if check_id not in overridden]


def evaluate(policy: LevelVersion, meta: Obj, spec: Obj) -> list[Refusal]:
    """The refusals of the checks a pod (or a pod template) fails, in the registry's order."""
    return [r for check in checks_for(policy) if (r := check(meta, spec)) is not None]


def forbidden_detail(refusals: list[Refusal]) -> str:
    """AggregateCheckResult.ForbiddenDetail: each `reason (detail)`, comma-separated."""
    return ", ".join(f"{reason} ({detail})" if detail else reason for reason, detail in refusals)


def forbidden_reason(refusals: list[Refusal]) -> str:
    return ", ".join(reason for reason, _ in refusals)
