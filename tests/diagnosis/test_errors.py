"""The last error of a run, classified: what the API said and what to change."""

from __future__ import annotations

from opsboard.diagnosis.errors import OPERATOR_CLUSTER_ROLE, ClaimFields, classify_error

# kube-apiserver's wording, as controllers.kube turns a 403 into an error text.
FORBIDDEN = (
    'PATCH /apis/apps/v1/namespaces/shop/deployments/cache: 403 deployments.apps "cache" is '
    'forbidden: User "system:serviceaccount:opsboard:opsboard-operator" cannot patch resource '
    '"deployments" in API group "apps" in the namespace "shop"'
)


def test_a_403_names_the_missing_verb_resource_group_and_the_cluster_role() -> None:
    error = classify_error(FORBIDDEN)
    assert (error.code, error.verb, error.resource, error.group) == (
        "Forbidden", "patch", "deployments", "apps",
    )  # fmt: skip
    assert "lacks verb patch on resource deployments in API group apps" in error.what
    assert OPERATOR_CLUSTER_ROLE in error.todo and '"patch"' in error.todo
    # Or the role has it, and the identity lacks the binding (a person's make run, say).
    assert error.todo.endswith(
        "If it has it, system:serviceaccount:opsboard:opsboard-operator is not bound to it: "
        f"kubectl -n shop create rolebinding {OPERATOR_CLUSTER_ROLE} "
        f"--clusterrole={OPERATOR_CLUSTER_ROLE} --serviceaccount=opsboard:opsboard-operator"
    )


def test_a_403_across_namespaces_binds_cluster_wide_and_a_person_is_not_told_to_bind() -> None:
    listing = classify_error(
        'LIST /api/v1/pods: 403 pods is forbidden: User "system:serviceaccount:ci:bot" '
        'cannot list resource "pods" in API group "" at the cluster scope'
    )
    assert listing.todo.endswith(
        f"kubectl create clusterrolebinding {OPERATOR_CLUSTER_ROLE} "
        f"--clusterrole={OPERATOR_CLUSTER_ROLE} --serviceaccount=ci:bot"
    )
    person = classify_error(
        FORBIDDEN.replace("system:serviceaccount:opsboard:opsboard-operator", "ann")
    )
    assert "a role bound to that user" in person.todo and "kubectl" not in person.todo


def test_a_403_on_a_core_resource_says_the_core_group() -> None:
    text = (
        'GET /api/v1/namespaces/x/secrets/pull: 403 secrets "pull" is forbidden: User '
        '"system:serviceaccount:opsboard:opsboard-operator" cannot get resource "secrets" in '
        'API group "" in the namespace "x"'
    )
    error = classify_error(text)
    assert (error.verb, error.resource, error.group) == ("get", "secrets", "")
    assert 'core ("")' in error.what


# kube-apiserver's ResourceQuota admission, and a webhook's refusal.
QUOTA_REFUSED = (
    'POST /api/v1/namespaces/shop/services: 403 services "web-service" is forbidden: exceeded '
    "quota: q, requested: services=1, used: services=1, limited: services=1"
)
WEBHOOK_REFUSED = (
    "POST /apis/apps/v1/namespaces/shop/deployments: 403 admission webhook "
    '"policy.example.com" denied the request: images must come from registry.example.com'
)


def test_a_403_from_admission_is_not_a_missing_grant() -> None:
    quota = classify_error(QUOTA_REFUSED, namespace="shop")
    assert quota.code == "Forbidden" and "exceeded quota: q" in quota.what
    assert quota.todo.startswith("Raise ResourceQuota q (kubectl -n shop describe resourcequota q)")
    webhook = classify_error(WEBHOOK_REFUSED, namespace="shop")
    assert webhook.code == "Webhook"
    assert webhook.todo.startswith("Admission webhook policy.example.com refuses this write")
    assert webhook.todo.endswith("The engine retries with backoff.")
    for error in (quota, webhook):
        assert "Grant" not in error.todo and "ClusterRole" not in error.todo, error.todo


def test_a_422_names_the_field_and_the_message() -> None:
    text = (
        "PATCH /apis/cache.example.com/v1alpha1/namespaces/x/memcacheds/m: 422 Memcached.cache"
        '.example.com "m" is invalid: spec.size: Invalid value: -1: spec.size in body should be '
        "greater than or equal to 0"
    )
    error = classify_error(text)
    assert error.code == "Invalid"
    assert "spec.size: Invalid value: -1" in error.what and "Change spec.size" in error.todo


def test_a_409_and_an_unreachable_server_are_told_apart() -> None:
    conflict = classify_error("PATCH /api/v1/x: 409 Operation cannot be fulfilled")
    down = classify_error(
        "GET /api/v1/pods: HTTPSConnectionPool(host='127.0.0.1', port=1): Max retries "
        "exceeded (Caused by NewConnectionError: [Errno 111] Connection refused)"
    )
    assert conflict.code == "Conflict" and down.code == "Unreachable"
    assert "KUBECONFIG" in down.todo


def test_an_unknown_error_is_passed_on_as_it_is() -> None:
    error = classify_error("KeyError: 'spec'")
    assert error.code == "Error" and "KeyError: 'spec'" in error.what


def test_a_permanent_error_never_says_the_engine_retries() -> None:
    for text in (FORBIDDEN, "GET /api/v1/x: 503 unavailable", "KeyError: 'spec'"):
        todo = classify_error(text, permanent=True).todo
        assert (
            "retries" not in todo
            and "not retried until the object changes or someone presses Reconcile now." in todo
        ), text


# kube-apiserver's 422 when the operator's patch would change a Deployment's selector.
IMMUTABLE_SELECTOR = (
    'PATCH /apis/apps/v1/namespaces/shop/deployments/cache: 422 Deployment.apps "cache" is '
    'invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app'
    '.kubernetes.io/instance":"cache", "app.kubernetes.io/name":"memcached"}, MatchExpressions:'
    "[]v1.LabelSelectorRequirement(nil)}: field is immutable"
)
PORT_TAKEN = (
    'POST /api/v1/namespaces/shop/services: 422 Service "web-service" is invalid: '
    "spec.ports[0].nodePort: Invalid value: 32361: provided port is already allocated"
)


def test_a_422_on_a_child_names_the_child_and_never_a_field_of_the_cr() -> None:
    error = classify_error(IMMUTABLE_SELECTOR, kind="Memcached", namespace="shop", permanent=True)
    assert (error.code, error.refused, error.field) == (
        "Invalid", ("Deployment", "cache"), "spec.selector",
    )  # fmt: skip
    assert error.what.startswith("422 Invalid: the API server refused Deployment cache (PATCH")
    # The long Go-printed value is elided; the reason stays.
    assert "spec.selector: Invalid value: v1.LabelSelector{" in error.what
    assert error.what.endswith("…: field is immutable")
    assert "Change spec.selector" not in error.todo


def test_an_immutable_field_of_a_child_says_to_delete_and_recreate_it() -> None:
    todo = classify_error(IMMUTABLE_SELECTOR, kind="Memcached", namespace="shop").todo
    assert "The spec.selector of an existing Deployment cannot be changed" in todo
    assert "delete Deployment cache (kubectl -n shop delete deployment cache)" in todo
    assert "or rename this Memcached" in todo


def test_a_nodeport_in_use_is_told_as_such_with_the_port() -> None:
    error = classify_error(PORT_TAKEN, kind="WebServer", namespace="shop")
    assert (error.code, error.port) == ("PortTaken", 32361)
    assert "NodePort 32361 is already in use by another Service" in error.what
    assert "the engine retries with backoff" in error.todo


def test_a_long_error_is_cut_at_a_word_with_an_ellipsis() -> None:
    error = classify_error("GET /api/v1/x: 500 " + "word " * 100)
    assert len(error.what) <= 300 and error.what.endswith("word…")


def test_a_claim_whose_growth_its_class_refuses_is_told_how_to_allow_it() -> None:
    text = (
        "PATCH /api/v1/namespaces/shop/persistentvolumeclaims/data-shop-db-0: 403 "
        'persistentvolumeclaims "data-shop-db-0" is forbidden: only dynamically provisioned '
        "pvc can be resized and the storageclass that provisions the pvc must support resize"
    )
    claims = ClaimFields("spec.bookDB.dbSize", "fixed")
    error = classify_error(text, kind="BookStore", namespace="shop", claims=claims)
    assert error.code == "Forbidden" and "must support resize" in error.what
    assert error.todo.startswith("StorageClass fixed does not allow volumes to grow")
    assert "set the CR's spec.bookDB.dbSize back" in error.todo
    assert error.todo.endswith("No grant changes this.")
    assert "ClusterRole" not in error.todo
