from __future__ import annotations

from controllers.drift import owned_diff
from controllers.memcached.desired import DEPLOYMENT_EXACT, desired_deployment
from tests.controllers.builders import memcached


def _container(deployment: dict) -> dict:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return container


def test_desired_deployment_takes_replicas_from_spec_size() -> None:
    assert desired_deployment(memcached(size=3))["spec"]["replicas"] == 3


def test_desired_deployment_defaults_size_image_and_port() -> None:
    deployment = desired_deployment(memcached())
    assert deployment["spec"]["replicas"] == 1
    assert _container(deployment)["image"] == "memcached:1.4.36-alpine"
    assert _container(deployment)["ports"][0]["containerPort"] == 11211


def test_desired_deployment_uses_the_image_and_port_of_the_spec() -> None:
    container = _container(
        desired_deployment(memcached(image="memcached:1.6", containerPort=11311))
    )
    assert container["image"] == "memcached:1.6"
    assert container["ports"][0]["containerPort"] == 11311


def test_desired_deployment_runs_memcached_as_the_tutorial_does() -> None:
    assert _container(desired_deployment(memcached()))["command"] == [
        "memcached",
        "-m=64",
        "-o",
        "modern",
        "-v",
    ]


def test_desired_deployment_is_owned_by_the_cr_and_named_after_it() -> None:
    meta = desired_deployment(memcached("cache-a"))["metadata"]
    assert (meta["name"], meta["namespace"]) == ("cache-a", "shop")
    assert meta["ownerReferences"][0]["uid"] == "uid-cache-a"
    assert meta["ownerReferences"][0]["controller"] is True


def test_two_crs_in_one_namespace_never_share_a_selector() -> None:
    a = desired_deployment(memcached("a"))["spec"]["selector"]["matchLabels"]
    b = desired_deployment(memcached("b"))["spec"]["selector"]["matchLabels"]
    assert a != b
    assert a["app.kubernetes.io/instance"] == "a"


def test_desired_deployment_pod_labels_match_its_selector() -> None:
    spec = desired_deployment(memcached())["spec"]
    assert spec["template"]["metadata"]["labels"] == spec["selector"]["matchLabels"]


def test_desired_deployment_has_a_restricted_security_context() -> None:
    deployment = desired_deployment(memcached())
    pod = deployment["spec"]["template"]["spec"]["securityContext"]
    container = _container(deployment)["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["allowPrivilegeEscalation"] is False
    assert container["capabilities"] == {"drop": ["ALL"]}
    assert container["runAsUser"] > 0


def test_the_crs_resources_are_the_containers_and_a_removed_limit_goes() -> None:
    limited = memcached(resources={"limits": {"memory": "128Mi"}, "requests": {"cpu": "0.1"}})
    have = desired_deployment(limited)
    assert _container(have)["resources"] == {
        "limits": {"memory": "128Mi"},
        "requests": {"cpu": "100m"},
    }
    patch = owned_diff(
        desired_deployment(memcached(resources={"requests": {"cpu": "100m"}})),
        have,
        exact=DEPLOYMENT_EXACT,
    )
    assert patch is not None
    [container] = patch["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == {"requests": {"cpu": "100m"}}


def test_resources_written_otherwise_but_equal_need_no_patch() -> None:
    have = desired_deployment(memcached(resources={"limits": {"memory": "1Gi", "cpu": "500m"}}))
    want = desired_deployment(memcached(resources={"limits": {"memory": "1024Mi", "cpu": "0.5"}}))
    assert owned_diff(want, have, exact=DEPLOYMENT_EXACT) is None


def test_a_deployment_with_no_resources_and_a_cr_with_none_agree() -> None:
    have = desired_deployment(memcached())
    del _container(have)["resources"]  # as a server that leaves an empty map out returns it
    assert owned_diff(desired_deployment(memcached()), have, exact=DEPLOYMENT_EXACT) is None
