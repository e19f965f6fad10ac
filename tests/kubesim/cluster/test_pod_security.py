"""Pod Security Admission, built into kube-apiserver v1.28: a namespace's
`pod-security.kubernetes.io/*` labels, each level's refusals word for word, enforce
versions, invalid labels, the refused pods of workloads, pod updates, and the warnings of
warn mode and of a stricter enforce level (every message below is the rig's)."""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import deployment, events_for, pod, statefulset, wait_for
from tests.kubesim.support import raw

Api = client.ApiClient
PREFIX = "pod-security.kubernetes.io/"
PAUSE = "registry.k8s.io/pause:3.9"
RESTRICTED_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def _restricted_of(container: str) -> str:
    """What restricted says of a plain container "`container`"."""
    return (
        f'allowPrivilegeEscalation != false (container "{container}" must set '
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
        f'(container "{container}" must set securityContext.capabilities.drop=["ALL"]), '
        f'runAsNonRoot != true (pod or container "{container}" must set '
        "securityContext.runAsNonRoot=true), seccompProfile (pod or container "
        f'"{container}" must set securityContext.seccompProfile.type to "RuntimeDefault" '
        'or "Localhost")'
    )


RESTRICTED_OF_MAIN = _restricted_of("main")


def _warnings(resp: Any) -> list[str]:
    """The texts of a response's `Warning: 299 - "..."` headers."""
    return [json.loads(w.removeprefix("299 - ")) for w in resp.headers.getlist("Warning")]


def _label(api: Api, namespace: str, **modes: str | None) -> Any:
    """Sets (None: removes) `pod-security.kubernetes.io/<mode>` labels, modes spelled
    enforce_version for enforce-version, and waits until pod admission reads them (the API
    server reads namespaces from its informer's cache). Returns the answer, for its warnings."""
    labels = {PREFIX + mode.replace("_", "-"): value for mode, value in modes.items()}
    body = {"metadata": {"labels": labels}}
    path = f"/api/v1/namespaces/{namespace}"
    resp = raw(api, "PATCH", path, body=body, content_type="application/merge-patch+json")
    if resp.status == 200:
        now = resp.json()["metadata"]["labels"]
        wait_for(lambda: _in_force(api, namespace, now), what=f"{namespace}'s labels in force")
    return resp


PROBE = pod("probe", hostNetwork=True)  # what baseline and restricted refuse


def _in_force(api: Api, namespace: str, labels: dict[str, str]) -> bool:
    """Whether a dry run of PROBE meets the enforce (else warn) level `labels` set."""
    path = f"/api/v1/namespaces/{namespace}/pods?dryRun=All"
    resp = raw(api, "POST", path, body=PROBE)
    enforce, warn = (labels.get(PREFIX + m, "privileged") for m in ("enforce", "warn"))
    if enforce != "privileged":
        said = (
            f'violates PodSecurity "{enforce}:{labels.get(PREFIX + "enforce-version", "latest")}"'
        )
        return resp.status == 403 and said in resp.json()["message"]
    if warn != "privileged":
        said = f'would violate PodSecurity "{warn}:{labels.get(PREFIX + "warn-version", "latest")}"'
        return resp.status == 201 and any(w.startswith(said) for w in _warnings(resp))
    return resp.status == 201 and not _warnings(resp)


def _create_pod(api: Api, namespace: str, body: dict[str, Any]) -> Any:
    return raw(api, "POST", f"/api/v1/namespaces/{namespace}/pods", body=body)


def _refusal(api: Api, namespace: str, body: dict[str, Any]) -> str:
    resp = _create_pod(api, namespace, body)
    assert resp.status == 403, resp.json()
    assert _warnings(resp) == []
    message: str = resp.json()["message"]
    return message


def _restricted_pod(name: str, **spec: Any) -> dict[str, Any]:
    body = pod(name, **spec)
    body["spec"]["containers"][0]["securityContext"] = copy.deepcopy(RESTRICTED_CONTEXT)
    return body


def _container(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": PAUSE, **fields}


def test_a_restricted_namespace_refuses_a_plain_pod_naming_every_check(
    kube_api_client: Api, namespace: str
) -> None:
    assert _label(kube_api_client, namespace, enforce="restricted").status == 200
    resp = _create_pod(kube_api_client, namespace, pod("plain"))
    assert resp.status == 403
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "plain" is forbidden: violates PodSecurity "restricted:latest": '
        + RESTRICTED_OF_MAIN,
        "reason": "Forbidden",
        "details": {"name": "plain", "kind": "pods"},
        "code": 403,
    }


def test_a_pod_that_meets_restricted_is_admitted_without_a_warning(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted", warn="restricted")
    resp = _create_pod(kube_api_client, namespace, _restricted_pod("ok"))
    assert (resp.status, _warnings(resp)) == (201, [])
    # At the pod level, the container's may be left out; NET_BIND_SERVICE may be added.
    body = pod("pod-level", securityContext={
        "runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "Localhost",
        "localhostProfile": "profiles/audit.json"}})  # fmt: skip
    body["spec"]["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
    }
    assert _create_pod(kube_api_client, namespace, body).status == 201


BASELINE_REFUSALS = [
    pytest.param(
        {"containers": [_container("main", securityContext={"privileged": True})]},
        'privileged (container "main" must not set securityContext.privileged=true)',
        id="privileged",
    ),
    pytest.param(
        {"hostNetwork": True, "containers": [_container("main", ports=[{"containerPort": 8080}])]},
        # a host network's pod gets a hostPort for each port (SetDefaults_Pod)
        'host namespaces (hostNetwork=true), hostPort (container "main" uses hostPort 8080)',
        id="hostNetwork",
    ),
    pytest.param(
        {"volumes": [{"name": "data", "hostPath": {"path": "/var/lib/data"}}]},
        'hostPath volumes (volume "data")',
        id="hostPath",
    ),
    pytest.param(
        {
            "hostPID": True,
            "hostIPC": True,
            "initContainers": [_container("init", ports=[{"containerPort": 80, "hostPort": 9000}])],
            "containers": [
                _container(
                    "a",
                    securityContext={
                        "privileged": True,
                        "capabilities": {"add": ["SYS_TIME", "NET_ADMIN", "CHOWN"]},
                    },
                    ports=[{"containerPort": 81, "hostPort": 10000}],
                ),
                _container(
                    "b",
                    securityContext={
                        "privileged": True,
                        "procMount": "Unmasked",
                        "capabilities": {"add": ["NET_ADMIN"]},
                        "seccompProfile": {"type": "Unconfined"},
                        "seLinuxOptions": {"type": "spc_t", "user": "root"},
                    },
                ),
            ],
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]},
            "volumes": [
                {"name": "x", "hostPath": {"path": "/x"}},
                {"name": "y", "hostPath": {"path": "/y"}},
            ],
        },
        'non-default capabilities (containers "a", "b" must not include "NET_ADMIN", '
        '"SYS_TIME" in securityContext.capabilities.add), host namespaces (hostPID=true, '
        'hostIPC=true), hostPath volumes (volumes "x", "y"), hostPort (containers "init", "a" '
        'use hostPorts 10000, 9000), privileged (containers "a", "b" must not set '
        'securityContext.privileged=true), seLinuxOptions (container "b" set '
        'forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), '
        'seccompProfile (container "b" must not set securityContext.seccompProfile.type to '
        '"Unconfined"), forbidden sysctls (kernel.msgmax)',
        id="all-at-once",  # procMount: reset to Default while the ProcMountType gate is off
    ),
]


@pytest.mark.parametrize(("spec", "said"), BASELINE_REFUSALS)
def test_baseline_refuses_what_breaks_it_in_the_checks_order(
    kube_api_client: Api, namespace: str, spec: dict[str, Any], said: str
) -> None:
    _label(kube_api_client, namespace, enforce="baseline")
    refused = _refusal(kube_api_client, namespace, pod("bad", **spec))
    assert refused == f'pods "bad" is forbidden: violates PodSecurity "baseline:latest": {said}'


def test_baseline_admits_a_plain_pod_and_privileged_admits_anything(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="baseline")
    assert _create_pod(kube_api_client, namespace, pod("plain")).status == 201
    _label(kube_api_client, namespace, enforce="privileged")
    for i, param in enumerate(BASELINE_REFUSALS):
        resp = _create_pod(kube_api_client, namespace, pod(f"p{i}", **param.values[0]))
        assert (resp.status, _warnings(resp)) == (201, []), resp.json()


def test_restricted_refuses_volume_types_root_and_added_capabilities(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted")
    body = _restricted_pod("vols", volumes=[
        {"name": "h", "hostPath": {"path": "/h"}},
        {"name": "n", "nfs": {"server": "nfs.example.com", "path": "/"}},
        {"name": "e", "emptyDir": {}},
    ], securityContext={"runAsUser": 0})  # fmt: skip
    body["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] = ["SYS_ADMIN"]
    body["spec"]["containers"].append(_container("side", securityContext={
        **copy.deepcopy(RESTRICTED_CONTEXT), "runAsNonRoot": False, "runAsUser": 0}))  # fmt: skip
    assert _refusal(kube_api_client, namespace, body) == (
        'pods "vols" is forbidden: violates PodSecurity "restricted:latest": unrestricted '
        'capabilities (container "main" must not include "SYS_ADMIN" in '
        'securityContext.capabilities.add), restricted volume types (volumes "h", "n" use '
        'restricted volume types "hostPath", "nfs"), runAsNonRoot != true (container "side" '
        "must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod and container "
        '"side" must not set runAsUser=0)'
    )


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("v1.28", RESTRICTED_OF_MAIN),
        ("v1.99", RESTRICTED_OF_MAIN),  # a version past the newest runs as the newest
        # no allowPrivilegeEscalation before v1.8, no seccompProfile field before v1.19, no
        # capabilities before v1.22
        ("v1.0", 'runAsNonRoot != true (pod or container "main" must set '
                 "securityContext.runAsNonRoot=true)"),
        ("v1.21", 'allowPrivilegeEscalation != false (container "main" must set '
                  "securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or "
                  'container "main" must set securityContext.runAsNonRoot=true), seccompProfile '
                  '(pod or container "main" must set securityContext.seccompProfile.type to '
                  '"RuntimeDefault" or "Localhost")'),
    ],
)  # fmt: skip
def test_an_enforce_version_runs_that_versions_checks_and_is_named(
    kube_api_client: Api, namespace: str, version: str, said: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted", enforce_version=version)
    refused = _refusal(kube_api_client, namespace, pod("plain"))
    assert refused == f'pods "plain" is forbidden: violates PodSecurity "restricted:{version}": {said}'  # fmt: skip


def test_checks_added_in_later_versions_pass_at_earlier_ones(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted", enforce_version="v1.22")
    root = _restricted_pod("root", securityContext={"runAsUser": 0})  # runAsUser=0: v1.23 on
    assert _create_pod(kube_api_client, namespace, root).status == 201
    _label(kube_api_client, namespace, enforce="baseline", enforce_version="v1.26")
    ports = pod("ports", securityContext={
        "sysctls": [{"name": "net.ipv4.ip_local_reserved_ports", "value": "30000-30100"}]})  # fmt: skip
    assert _refusal(kube_api_client, namespace, ports) == (
        'pods "ports" is forbidden: violates PodSecurity "baseline:v1.26": forbidden sysctls '
        "(net.ipv4.ip_local_reserved_ports)"
    )
    _label(kube_api_client, namespace, enforce_version="v1.27")  # safe from v1.27
    assert _create_pod(kube_api_client, namespace, ports).status == 201


@pytest.fixture
def unlabelled_name(kube_api_client: Api) -> Iterator[str]:
    """A namespace name of the test's own, deleted afterwards should it have been created."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    yield name
    try:
        client.CoreV1Api(kube_api_client).delete_namespace(name)
    except client.ApiException as exc:
        assert exc.status == 404


def test_a_namespace_with_an_invalid_level_is_refused(
    kube_api_client: Api, unlabelled_name: str
) -> None:
    body = {"metadata": {"name": unlabelled_name, "labels": {PREFIX + "enforce": "bogus"}}}
    resp = raw(kube_api_client, "POST", "/api/v1/namespaces", body=body)
    cause = 'Invalid value: "bogus": must be one of privileged, baseline, restricted'
    assert resp.status == 422
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Namespace "{unlabelled_name}" is invalid: '
        f"metadata.labels[pod-security.kubernetes.io/enforce]: {cause}",
        "reason": "Invalid",
        "details": {
            "name": unlabelled_name,
            "kind": "Namespace",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": cause,
                    "field": "metadata.labels[pod-security.kubernetes.io/enforce]",
                }
            ],
        },
        "code": 422,
    }


def test_invalid_labels_are_refused_when_they_change_every_one_said(
    kube_api_client: Api, namespace: str
) -> None:
    resp = _label(kube_api_client, namespace, enforce_version="v2.0", warn="nope", audit="baseline")
    assert resp.status == 422
    assert resp.json()["message"] == (
        f'Namespace "{namespace}" is invalid: ['
        'metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v2.0": '
        'must be "latest" or "v1.x", metadata.labels[pod-security.kubernetes.io/warn]: '
        'Invalid value: "nope": must be one of privileged, baseline, restricted]'
    )
    labels = client.CoreV1Api(kube_api_client).read_namespace(namespace).metadata.labels
    assert not [k for k in labels if k.startswith(PREFIX)]


def _failure(api: Api, path: str) -> dict[str, Any] | None:
    conditions = raw(api, "GET", path).json()["status"].get("conditions") or []
    return next((c for c in conditions if c["type"] == "ReplicaFailure"), None)


def test_a_deployment_whose_pods_restricted_refuses_carries_replica_failure(
    apps: client.AppsV1Api, core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted")
    created = raw(kube_api_client, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments",
                  body=deployment("web", replicas=2))  # fmt: skip
    assert created.status == 201
    # enforce set and warn not: warn takes enforce's level, and is said of the template
    said = 'PodSecurity "restricted:latest": ' + _restricted_of("memcached")
    assert _warnings(created) == ["would violate " + said]

    [rs] = wait_for(lambda: apps.list_namespaced_replica_set(namespace).items, what="the RS")
    refused = rf'pods "{re.escape(rs.metadata.name)}-[a-z0-9]{{5}}" is forbidden: violates {re.escape(said)}'  # fmt: skip
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"
    failure = wait_for(lambda: _failure(kube_api_client, path), what="ReplicaFailure on web")
    assert (failure["status"], failure["reason"]) == ("True", "FailedCreate")
    assert re.fullmatch(refused, failure["message"]), failure["message"]

    def told() -> list[client.CoreV1Event]:
        events = events_for(core, namespace, rs.metadata.name)
        return [e for e in events if e.reason == "FailedCreate"]

    events = wait_for(told, what="FailedCreate on the ReplicaSet")
    assert {(e.type, e.source.component) for e in events} == {("Warning", "replicaset-controller")}
    assert all(re.fullmatch(r"(\(combined from similar events\): )?Error creating: " + refused,
                            e.message) for e in events), [e.message for e in events]  # fmt: skip
    assert core.list_namespaced_pod(namespace).items == []


def test_a_statefulsets_refused_pod_is_told_in_a_failed_create_event(
    apps: client.AppsV1Api, core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="restricted")
    apps.create_namespaced_stateful_set(namespace, statefulset("db", replicas=1))

    def told() -> list[client.CoreV1Event]:
        return [e for e in events_for(core, namespace, "db") if e.reason == "FailedCreate"]

    [event, *_] = wait_for(told, what="FailedCreate on db")
    assert (event.type, event.source.component) == ("Warning", "statefulset-controller")
    assert event.message == (
        'create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: violates '
        'PodSecurity "restricted:latest": ' + _restricted_of("web")
    )


def test_a_pod_update_is_evaluated_only_when_it_changes_an_image(
    core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    core.create_namespaced_pod(namespace, pod("old"))
    _label(kube_api_client, namespace, enforce="restricted")
    path = f"/api/v1/namespaces/{namespace}/pods/old"
    relabelled = raw(kube_api_client, "PATCH", path, body={"metadata": {"labels": {"a": "b"}}},
                     content_type="application/merge-patch+json")  # fmt: skip
    assert relabelled.status == 200
    image = {"spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.8"}]}}
    changed = raw(kube_api_client, "PATCH", path, body=image,
                  content_type="application/strategic-merge-patch+json")  # fmt: skip
    assert changed.status == 403
    assert changed.json()["message"] == (
        'pods "old" is forbidden: violates PodSecurity "restricted:latest": ' + RESTRICTED_OF_MAIN
    )


def test_a_stricter_enforce_level_warns_of_the_existing_pods_it_would_refuse(
    kube_api_client: Api, namespace: str
) -> None:
    privileged = {"containers": [_container("main", securityContext={"privileged": True})]}
    for body in (pod("a1"), pod("a2", **privileged), pod("a0", **privileged)):
        assert _create_pod(kube_api_client, namespace, body).status == 201
    existing = f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level'
    expected = [f'{existing} "baseline:latest"', "a0 (and 1 other pod): privileged"]

    def tightened() -> list[str]:
        """The warnings of a change to baseline, once they name every pod: the API server
        reads the pods from its informer's cache, which the last create may not be in yet."""
        _label(kube_api_client, namespace, enforce=None)
        said = _warnings(_label(kube_api_client, namespace, enforce="baseline"))
        return said if said == expected else []

    wait_for(tightened, what="the warnings of a change to baseline naming the three pods")
    assert _warnings(_label(kube_api_client, namespace, enforce="restricted")) == [
        f'{existing} "restricted:latest"',
        "a0 (and 1 other pod): privileged, allowPrivilegeEscalation != false, unrestricted "
        "capabilities, runAsNonRoot != true, seccompProfile",
        "a1: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != "
        "true, seccompProfile",
    ]
    # relaxed, or the same level at another version: not a word
    assert _warnings(_label(kube_api_client, namespace, enforce="baseline")) == []
    assert _warnings(_label(kube_api_client, namespace, enforce="privileged")) == []


def test_warn_mode_admits_with_a_warning_and_says_nothing_of_a_refusal(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, warn="restricted")
    warned = _create_pod(kube_api_client, namespace, pod("warned"))
    assert warned.status == 201
    assert _warnings(warned) == [
        'would violate PodSecurity "restricted:latest": ' + RESTRICTED_OF_MAIN
    ]
    _label(kube_api_client, namespace, enforce="baseline", warn_version="v1.0")
    assert _warnings(_create_pod(kube_api_client, namespace, pod("plain"))) == [
        'would violate PodSecurity "restricted:v1.0": runAsNonRoot != true (pod or container '
        '"main" must set securityContext.runAsNonRoot=true)'
    ]
    bad = pod("bad", hostNetwork=True)
    assert _refusal(kube_api_client, namespace, bad) == (
        'pods "bad" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
        "(hostNetwork=true)"
    )


def test_baseline_refuses_an_unconfined_apparmor_profile(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, enforce="baseline")
    body = pod("armor")
    body["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/main": "unconfined"
    }
    assert _refusal(kube_api_client, namespace, body) == (
        'pods "armor" is forbidden: violates PodSecurity "baseline:latest": forbidden AppArmor '
        'profile (container.apparmor.security.beta.kubernetes.io/main="unconfined")'
    )
    body["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/main": "runtime/default"
    }
    assert _create_pod(kube_api_client, namespace, body).status == 201


def _job(name: str) -> dict[str, Any]:
    template = {"spec": {"restartPolicy": "Never", "containers": [_container("work")]}}
    return {"metadata": {"name": name}, "spec": {"template": template}}


def test_workloads_are_warned_of_on_create_and_update_not_on_their_subresources(
    kube_api_client: Api, namespace: str
) -> None:
    _label(kube_api_client, namespace, warn="baseline")
    said = 'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'
    job = _job("job")
    job["spec"]["template"]["spec"]["hostNetwork"] = True
    cronjob = {"metadata": {"name": "cron"}, "spec": {"schedule": "@daily", "jobTemplate": job}}
    for path, body in (("jobs", job), ("cronjobs", cronjob)):
        resp = raw(kube_api_client, "POST", f"/apis/batch/v1/namespaces/{namespace}/{path}",
                   body=body)  # fmt: skip
        assert (resp.status, _warnings(resp)) == (201, [said]), resp.json()

    apps_path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    web = deployment("web", replicas=0)
    web["spec"]["template"]["spec"]["hostNetwork"] = True
    resp = raw(kube_api_client, "POST", apps_path, body=web)
    # the template's ports get no hostPort (the DefaultHostNetworkHostPortsInPodTemplates gate
    # is off): only a pod's do
    assert (resp.status, _warnings(resp)) == (201, [said])
    merge = "application/merge-patch+json"
    relabelled = raw(kube_api_client, "PATCH", f"{apps_path}/web",
                     body={"metadata": {"labels": {"x": "y"}}}, content_type=merge)  # fmt: skip
    assert (relabelled.status, _warnings(relabelled)) == (200, [said])
    scaled = raw(kube_api_client, "PATCH", f"{apps_path}/web/scale",
                 body={"spec": {"replicas": 0}}, content_type=merge)  # fmt: skip
    assert (scaled.status, _warnings(scaled)) == (200, [])
