from __future__ import annotations

from controllers.memcached.desired import desired_deployment
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
