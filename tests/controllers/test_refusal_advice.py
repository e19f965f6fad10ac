"""What the advice for refused pods says, by what refused them (pure)."""

from __future__ import annotations

import pytest

from controllers.refusals import claim_advice, refusal_advice

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


POD_BOUND = 'pods "m-x" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi'


def test_a_limitranges_bound_on_a_pod_says_its_containers_together() -> None:
    assert "bounds what each pod (its containers together) may ask for" in refusal_advice(
        "shop", POD_BOUND, "spec.size", resources="spec.resources"
    )


# A StatefulSet's claim, refused before its pod (the pod's FailedCreate names it too).
CLAIM_STORAGE = (
    "create Pod shop-db-1 in StatefulSet shop-db failed error: failed to create PVC "
    'data-shop-db-1: persistentvolumeclaims "data-shop-db-1" is forbidden: exceeded quota: q, '
    "requested: requests.storage=1Gi, used: requests.storage=1Gi, limited: requests.storage=1536Mi"
)
CLAIM_COUNT = (
    "create Claim data-shop-db-1 for Pod shop-db-1 in StatefulSet shop-db failed error: "
    'persistentvolumeclaims "data-shop-db-1" is forbidden: exceeded quota: q, requested: '
    "persistentvolumeclaims=1, used: persistentvolumeclaims=1, limited: persistentvolumeclaims=1"
)
CLAIM_BOUND = (
    'persistentvolumeclaims "data-shop-db-1" is forbidden: maximum storage usage per '
    "PersistentVolumeClaim is 1536Mi, but request is 2Gi"
)


def test_a_refused_claim_names_the_field_its_refusal_is_about() -> None:
    def advice(message: str) -> str:
        return refusal_advice(
            "shop", message, "spec.bookDB.replicas", resources="spec.bookDB.resources",
            storage="spec.bookDB.dbSize",
        )  # fmt: skip

    assert advice(CLAIM_STORAGE).startswith(
        "Raise ResourceQuota q (kubectl -n shop describe resourcequota q) or lower the CR's "
        "spec.bookDB.dbSize (no lower than the claims already are"
    )
    assert "or lower the CR's spec.bookDB.replicas;" in advice(CLAIM_COUNT)
    assert advice(CLAIM_BOUND) == (
        "A LimitRange in the namespace bounds the storage each PersistentVolumeClaim may ask "
        "for (kubectl -n shop describe limitrange): bring the CR's spec.bookDB.dbSize within "
        "it, or ask for the bounds to change."
    )
    for message in (CLAIM_STORAGE, CLAIM_COUNT, CLAIM_BOUND):
        assert "resources" not in advice(message)


def test_a_class_that_cannot_grow_a_claim_says_how_to_allow_it() -> None:
    message = (
        'persistentvolumeclaims "data-shop-db-0" is forbidden: only dynamically provisioned '
        "pvc can be resized and the storageclass that provisions the pvc must support resize"
    )
    told = claim_advice("shop", message, "spec.bookDB.dbSize", storage_class="fixed")
    assert told.startswith("StorageClass fixed does not allow volumes to grow")
    assert """kubectl patch storageclass fixed -p '{"allowVolumeExpansion": true}'""" in told
    assert told.endswith("else set the CR's spec.bookDB.dbSize back to the claims' size.")
    assert "the claim's StorageClass does not allow" in claim_advice("shop", message, None)
