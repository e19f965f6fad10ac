"""What the advice for refused pods says, by what refused them (pure)."""

from __future__ import annotations

import pytest

from controllers.refusals import refusal_advice

BOUND = 'pods "m-x" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi'
RATIO = (
    'pods "m-x" is forbidden: cpu max limit to request ratio per Container is 4, but '
    "provided ratio is 10.000000"
)


@pytest.mark.parametrize("message", [BOUND, RATIO])
def test_a_limitranges_bound_says_to_come_within_it(message: str) -> None:
    assert refusal_advice("shop", message, "spec.size", resources="spec.resources") == (
        "A LimitRange in the namespace bounds what each container may ask for (kubectl -n "
        "shop describe limitrange): bring the CR's spec.resources within it, or ask for the "
        "bounds to change."
    )
    assert "bring the pods' requests and limits within it" in refusal_advice("shop", message, None)


def test_a_quota_exceeded_on_pods_alone_does_not_name_the_resources() -> None:
    message = 'pods "m-x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2'
    advice = refusal_advice("shop", message, "spec.size", resources="spec.resources")
    assert "or lower the CR's spec.size;" in advice


RESTRICTED = (
    'pods "b-app-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != '
    'true (pod or container "bookstore" must set securityContext.runAsNonRoot=true)'
)


def test_a_pod_security_refusal_names_the_level_and_the_one_below_it() -> None:
    assert refusal_advice("shop", RESTRICTED, "spec.bookApp.replicas") == (
        "Namespace shop enforces the restricted Pod Security Standard, and these pods need "
        "what it forbids (the checks above). Run the CR in a namespace at baseline, or, if "
        "your cluster's policy lets this one be baseline: kubectl label namespace shop "
        "pod-security.kubernetes.io/enforce=baseline --overwrite."
    )
    baseline = 'violates PodSecurity "baseline:v1.28": privileged (container "c" must not set …)'
    assert "enforce=privileged --overwrite" in refusal_advice("shop", baseline, None)
