"""kubectl against the server: get tables, apply, patch, scale, wait, describe, delete."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.kubesim.conftest import Kubectl
from tests.kubesim.support import memcached_crd, to_yaml

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]}
                ]
            },
        },
    },
}


@pytest.fixture
def crd(kubectl: Kubectl) -> Iterator[dict[str, Any]]:
    body = memcached_crd(group=f"k{uuid.uuid4().hex[:8]}.example.com")
    kubectl("apply", "-f", "-", input=to_yaml(body))
    kubectl(
        "wait", "--for=condition=Established", "--timeout=10s", f"crd/{body['metadata']['name']}"
    )
    yield body
    kubectl("delete", "crd", body["metadata"]["name"], "--wait=false")


def test_get_prints_the_server_table(kubectl: Kubectl, namespace: str) -> None:
    kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    out = kubectl("get", "deployments", namespace=namespace).stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert out[1].split()[0] == "web"
    wide = kubectl("get", "deploy", "web", "-o", "wide", namespace=namespace).stdout
    assert "nginx:1.25" in wide and "app=web" in wide


def test_apply_twice_then_change(kubectl: Kubectl, namespace: str) -> None:
    first = kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    assert first.stdout.strip() == "deployment.apps/web created"
    again = kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    assert again.stdout.strip() == "deployment.apps/web unchanged"
    changed = json.loads(json.dumps(DEPLOYMENT))
    changed["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "B", "value": "2"}]
    out = kubectl("apply", "-f", "-", input=to_yaml(changed), namespace=namespace)
    assert out.stdout.strip() == "deployment.apps/web configured"
    got = json.loads(kubectl("get", "deploy", "web", "-o", "json", namespace=namespace).stdout)
    assert got["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "B", "value": "2"}]


def test_server_side_apply(kubectl: Kubectl, namespace: str) -> None:
    out = kubectl(
        "apply", "--server-side", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace
    )
    assert "serverside-applied" in out.stdout
    got = json.loads(kubectl("get", "deploy", "web", "-o", "json", namespace=namespace).stdout)
    assert got["spec"]["replicas"] == 1


def test_patch_types(kubectl: Kubectl, namespace: str) -> None:
    kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    kubectl("patch", "deploy", "web", "-p", '{"spec":{"replicas":2}}', namespace=namespace)
    kubectl(
        "patch",
        "deploy",
        "web",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/labels/tier","value":"front"}]',
        namespace=namespace,
    )
    kubectl(
        "patch",
        "deploy",
        "web",
        "--type=merge",
        "-p",
        '{"metadata":{"annotations":{"a":"b"}}}',
        namespace=namespace,
    )
    got = json.loads(kubectl("get", "deploy", "web", "-o", "json", namespace=namespace).stdout)
    assert got["spec"]["replicas"] == 2
    assert got["metadata"]["labels"]["tier"] == "front"
    assert got["metadata"]["annotations"]["a"] == "b"


def test_scale_a_deployment(kubectl: Kubectl, namespace: str) -> None:
    kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    out = kubectl("scale", "deploy/web", "--replicas=3", namespace=namespace)
    assert out.stdout.strip() == "deployment.apps/web scaled"
    replicas = kubectl(
        "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}", namespace=namespace
    ).stdout
    assert replicas == "3"


def test_scale_a_custom_resource(kubectl: Kubectl, namespace: str, crd: dict) -> None:
    group = crd["spec"]["group"]
    cr = {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "mc"},
        "spec": {"size": 1},
    }
    kubectl("apply", "-f", "-", input=to_yaml(cr), namespace=namespace)
    out = kubectl("scale", f"memcacheds.{group}/mc", "--replicas=4", namespace=namespace)
    assert out.stdout.strip() == f"memcached.{group}/mc scaled"
    size = kubectl(
        "get", f"memcacheds.{group}", "mc", "-o", "jsonpath={.spec.size}", namespace=namespace
    ).stdout
    assert size == "4"
    table = kubectl("get", f"memcacheds.{group}", namespace=namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE", "IMAGE", "AGE"]
    assert table[1].split()[:3] == ["mc", "4", "memcached:1.6"]


def test_validation_error_reaches_the_user(kubectl: Kubectl, namespace: str, crd: dict) -> None:
    group = crd["spec"]["group"]
    cr = {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "bad"},
        "spec": {"size": -1},
    }
    proc = kubectl("apply", "-f", "-", input=to_yaml(cr), namespace=namespace, check=False)
    assert proc.returncode != 0
    # two causes (the schema's, the scale subresource's), which kubectl prints as a list
    assert (
        'The Memcached "bad" is invalid: \n'
        "* spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0\n"
        "* .spec.size: Invalid value: -1: should be a non-negative integer"
    ) in proc.stderr


def test_wait_for_a_condition(kubectl: Kubectl, namespace: str, crd: dict) -> None:
    group = crd["spec"]["group"]
    cr = {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "w"},
        "spec": {"size": 1},
    }
    kubectl("apply", "-f", "-", input=to_yaml(cr), namespace=namespace)
    # kubectl wait --for=condition=... is exercised on the CRD by the crd fixture
    kubectl(
        "patch",
        f"memcacheds.{group}",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"replicas": 1}}),
        namespace=namespace,
    )
    out = kubectl(
        "wait",
        f"memcacheds.{group}/w",
        "--for=jsonpath={.status.replicas}=1",
        "--timeout=10s",
        namespace=namespace,
    )
    assert "condition met" in out.stdout


def test_describe(kubectl: Kubectl, namespace: str) -> None:
    kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    out = kubectl("describe", "deployment", "web", namespace=namespace).stdout
    assert "Name:" in out and "web" in out
    assert "Selector:               app=web" in out
    assert "Image:      nginx:1.25" in out


def test_delete(kubectl: Kubectl, namespace: str) -> None:
    kubectl("apply", "-f", "-", input=to_yaml(DEPLOYMENT), namespace=namespace)
    out = kubectl("delete", "deployment", "web", namespace=namespace)
    assert out.stdout.strip() == 'deployment.apps "web" deleted'
    proc = kubectl("get", "deployment", "web", namespace=namespace, check=False)
    assert proc.returncode != 0
    assert 'deployments.apps "web" not found' in proc.stderr


def test_get_with_a_malformed_label_selector(kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl("get", "pods", "-l", "a in (b", namespace=namespace, check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip() == (
        'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label '
        'selector "a in (b", field selector "": unable to parse requirement: found \'\', '
        "expected: ',' or ')'"
    )


def test_api_resources_and_versions(kubectl: Kubectl) -> None:
    out = kubectl("api-resources").stdout
    for line in ("deployments", "customresourcedefinitions", "leases", "endpointslices"):
        assert line in out
    assert "apps/v1" in kubectl("api-versions").stdout


def test_logs_of_a_running_pod(kubectl: Kubectl, namespace: str, kube_api_client: Any) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lg"},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]},
    }
    kubectl("apply", "-f", "-", input=to_yaml(pod), namespace=namespace)
    kubectl("wait", "pod/lg", "--for=condition=Ready", "--timeout=20s", namespace=namespace)
    assert kubectl("logs", "lg", namespace=namespace).returncode == 0


def test_unknown_kind_is_reported_as_on_a_real_cluster(kubectl: Kubectl, namespace: str) -> None:
    doc = {"apiVersion": "nothing.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    proc = kubectl("apply", "-f", "-", input=to_yaml(doc), namespace=namespace, check=False)
    assert proc.returncode != 0
    assert 'no matches for kind "Widget" in version "nothing.example.com/v1"' in proc.stderr
