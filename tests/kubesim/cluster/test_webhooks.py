"""ValidatingAdmissionWebhook: a webhook's refusal in kube-apiserver's words (ToStatusErr),
the AdmissionReview it is sent, the pods of a Deployment refused alike (ReplicaFailure,
FailedCreate), a webhook that does not answer under failurePolicy Fail and Ignore, the
namespaceSelector and the operations matched, and the configurations' defaults and
validation, as on v1.28."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from tests.kubesim.cluster.helpers import deployment, events_for, pod, wait_for
from tests.kubesim.support import Raw, raw
from tests.support.webhook import Judge, Webhook, admission_webhook, deny_all, until_in_force

Api = client.ApiClient
CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
UNREACHABLE = "https://127.0.0.1:9/validate"
IMAGES = "images must come from registry.example.com"


def allow_all(request: dict[str, Any]) -> None:
    return None


def _pods(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


def _name(namespace: str, what: str) -> str:
    """A configuration's name: cluster-scoped, so it carries the test's namespace."""
    return f"{namespace}-{what}"


@contextmanager
def _configured(api: Api, config: dict[str, Any]) -> Iterator[None]:
    created = raw(api, "POST", CONFIGURATIONS, body=config)
    assert created.status == 201, created.data
    try:
        yield
    finally:
        raw(api, "DELETE", f"{CONFIGURATIONS}/{config['metadata']['name']}")


@contextmanager
def _webhook(
    api: Api, namespace: str, judge: Judge, what: str, **options: Any
) -> Iterator[Webhook]:
    """A webhook judging the pods created in `namespace` (the configuration's `options`),
    in force: the API server reads configurations from its informer, so a dry-run create
    is made until the webhook has been asked or has answered for it."""
    with (
        admission_webhook(judge) as webhook,
        _configured(api, webhook.configuration(_name(namespace, what), namespace, **options)),
    ):
        _until_in_force(webhook, lambda: _dry_create(api, namespace))
        yield webhook


def _dry_create(api: Api, namespace: str) -> Raw:
    return raw(api, "POST", _pods(namespace) + "?dryRun=All", body=pod("probe"))


def _until_in_force(webhook: Webhook, probe: Callable[[], Raw], *, admitted: int = 201) -> None:
    """Makes `probe`'s dry-run write until a webhook took part in it, then forgets its reviews.
    `admitted`: the status of the write let through (a create's 201, a patch's 200)."""
    until_in_force(webhook, lambda: probe().status != admitted)


def _username(api: Api) -> str:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    answer = raw(api, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=review)
    name: str = answer.json()["status"]["userInfo"]["username"]
    return name


def _own_reviews(api: Api, webhook: Webhook) -> list[dict[str, Any]]:
    """The reviews of this test's own writes. A kubelet's are another's (its pods' status
    writes, its DELETE once a pod's grace ends), and a real server that meets a conflict
    applying a PATCH (the kubelet writing the pod's status meanwhile) applies it again, and
    admits it again: one write of ours may be reviewed more than once."""
    me = _username(api)
    return [review for review in webhook.reviews if review["userInfo"]["username"] == me]


def test_a_denied_pod_create_is_refused_in_the_webhooks_words(
    kube_api_client: Api, namespace: str
) -> None:
    with _webhook(kube_api_client, namespace, deny_all(IMAGES), "deny"):
        refused = raw(kube_api_client, "POST", _pods(namespace), body=pod("web"))
    assert refused.status == 403
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'admission webhook "{_name(namespace, "deny")}.opsboard.test" denied the '
        f"request: {IMAGES}",
        "code": 403,
    }


def test_a_denial_without_a_code_is_a_400(kube_api_client: Api, namespace: str) -> None:
    with _webhook(kube_api_client, namespace, deny_all("no", 0), "nocode"):
        refused = raw(kube_api_client, "POST", _pods(namespace), body=pod("web"))
    assert refused.status == 400
    assert refused.json()["message"] == (
        f'admission webhook "{_name(namespace, "nocode")}.opsboard.test" denied the request: no'
    )


def test_an_allowed_write_goes_through_and_the_webhook_is_told_of_it(
    kube_api_client: Api, namespace: str
) -> None:
    with _webhook(kube_api_client, namespace, allow_all, "allow") as webhook:
        created = raw(kube_api_client, "POST", _pods(namespace), body=pod("web"))
        assert created.status == 201, created.data
        [request] = webhook.reviews
    assert set(request) == {
        "dryRun", "kind", "name", "namespace", "object", "oldObject", "operation", "options",
        "requestKind", "requestResource", "resource", "uid", "userInfo",
    }  # fmt: skip
    assert request["operation"] == "CREATE"
    assert (
        request["kind"] == request["requestKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    )
    assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert (request["namespace"], request["name"]) == (namespace, "web")
    assert request["object"]["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.9"
    assert request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert request["userInfo"]["username"] == _username(kube_api_client)


def test_the_pods_of_a_deployment_denied_are_told_in_replica_failure_and_failed_create(
    apps: client.AppsV1Api, core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    refused = f'admission webhook "{_name(namespace, "rs")}.opsboard.test" denied the request: {IMAGES}'  # fmt: skip
    with _webhook(kube_api_client, namespace, deny_all(IMAGES), "rs") as webhook:
        apps.create_namespaced_deployment(namespace, deployment("web", replicas=2))
        [rs] = wait_for(lambda: apps.list_namespaced_replica_set(namespace).items, what="the RS")
        path = f"/apis/apps/v1/namespaces/{namespace}/replicasets/{rs.metadata.name}"

        def failure() -> dict[str, Any] | None:
            conditions = raw(kube_api_client, "GET", path).json()["status"].get("conditions")
            return next((c for c in conditions or [] if c["type"] == "ReplicaFailure"), None)

        condition = wait_for(failure, what="ReplicaFailure on the ReplicaSet")
        assert (condition["status"], condition["reason"]) == ("True", "FailedCreate")
        assert condition["message"] == refused

        def told() -> list[client.CoreV1Event]:
            events = events_for(core, namespace, rs.metadata.name)
            return [e for e in events if e.reason == "FailedCreate"]

        events = wait_for(told, what="FailedCreate on the ReplicaSet")
        assert {(e.type, e.source.component) for e in events} == {("Warning", "replicaset-controller")}  # fmt: skip
        assert all(re.fullmatch(r"(\(combined from similar events\): )?Error creating: " + re.escape(refused),
                                e.message) for e in events), [e.message for e in events]  # fmt: skip
        assert core.list_namespaced_pod(namespace).items == []
        asked = {(r["operation"], r["object"]["metadata"]["generateName"]) for r in webhook.reviews}
    # Who asks is the controller-manager's identity: its replicaset-controller service
    # account where it uses one per controller (kubeadm's default), the rig's own user there.
    assert asked == {("CREATE", f"{rs.metadata.name}-")}


def test_a_webhook_that_does_not_answer_refuses_under_fail(
    kube_api_client: Api, namespace: str
) -> None:
    name = _name(namespace, "fail")
    with _webhook(kube_api_client, namespace, allow_all, "fail", url=UNREACHABLE):
        refused = raw(kube_api_client, "POST", _pods(namespace), body=pod("web"))
    assert refused.status == 500
    why = (
        f'failed calling webhook "{name}.opsboard.test": failed to call webhook: Post '
        f'"{UNREACHABLE}?timeout=5s": dial tcp 127.0.0.1:9: connect: connection refused'
    )
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {why}",
        "reason": "InternalError",
        "details": {"causes": [{"message": why}]},
        "code": 500,
    }


def test_a_webhook_that_does_not_answer_is_passed_over_under_ignore(
    kube_api_client: Api, namespace: str
) -> None:
    with admission_webhook(allow_all) as webhook:
        config = webhook.configuration(
            _name(namespace, "ignore"), namespace, failure_policy="Ignore", url=UNREACHABLE
        )
        # A second webhook that answers: once it is asked, the first is in force too.
        witness = webhook.configuration(_name(namespace, "witness"), namespace)["webhooks"][0]
        config["webhooks"].append(witness)
        with _configured(kube_api_client, config):
            _until_in_force(webhook, lambda: _dry_create(kube_api_client, namespace))
            created = raw(kube_api_client, "POST", _pods(namespace), body=pod("web"))
            assert created.status == 201, created.data
            assert [r["name"] for r in webhook.reviews] == ["web"]


def test_a_write_in_a_namespace_the_selector_leaves_out_is_not_sent(
    core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    other = f"{namespace}-other"[:63]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=other)))
    try:
        with _webhook(kube_api_client, namespace, deny_all(IMAGES), "selector") as webhook:
            created = raw(kube_api_client, "POST", _pods(other), body=pod("web"))
            assert created.status == 201, created.data
            assert webhook.reviews == []
    finally:
        core.delete_namespace(other)


def test_updates_and_deletes_are_sent_only_when_their_operation_is_listed(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"{_pods(namespace)}/web"
    label = {"metadata": {"labels": {"touched": "yes"}}}

    def patch(dry: bool = False) -> Raw:
        return raw(kube_api_client, "PATCH", path + ("?dryRun=All" if dry else ""), body=label,
                   content_type="application/merge-patch+json")  # fmt: skip

    with _webhook(kube_api_client, namespace, allow_all, "create") as creates:
        assert raw(kube_api_client, "POST", _pods(namespace), body=pod("web")).status == 201
        assert patch().status == 200
        assert [r["operation"] for r in creates.reviews] == ["CREATE"]

        with admission_webhook(allow_all) as changes:
            config = changes.configuration(
                _name(namespace, "change"), namespace, operations=("UPDATE", "DELETE")
            )
            with _configured(kube_api_client, config):
                _until_in_force(changes, lambda: patch(dry=True), admitted=200)
                assert patch().status == 200
                assert raw(kube_api_client, "DELETE", path).status == 200
                *updates, delete = _own_reviews(kube_api_client, changes)
        assert [r["operation"] for r in creates.reviews] == ["CREATE"]
    assert updates
    for update in updates:
        assert update["operation"] == "UPDATE"
        assert update["oldObject"]["metadata"]["name"] == update["object"]["metadata"]["name"]
        assert update["object"]["metadata"]["name"] == "web"
        assert update["options"] == {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert (delete["operation"], delete["name"], delete["object"]) == ("DELETE", "web", None)
    assert delete["oldObject"]["metadata"]["labels"]["touched"] == "yes"


def test_a_configuration_is_defaulted_and_validated(kube_api_client: Api, namespace: str) -> None:
    name = _name(namespace, "defaults")
    hook = {
        "name": f"{name}.opsboard.test",
        "clientConfig": {"url": UNREACHABLE},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                   "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
    }  # fmt: skip
    config = {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
              "webhooks": [hook]}  # fmt: skip
    with _configured(kube_api_client, config):
        [stored] = raw(kube_api_client, "GET", f"{CONFIGURATIONS}/{name}").json()["webhooks"]
    assert {k: stored[k] for k in ("failurePolicy", "matchPolicy", "objectSelector",
                                   "timeoutSeconds")} == {
        "failurePolicy": "Fail", "matchPolicy": "Equivalent", "objectSelector": {},
        "timeoutSeconds": 10,
    }  # fmt: skip
    assert stored["rules"][0]["scope"] == "*"

    bad = {**hook, "name": "short"}
    del bad["sideEffects"], bad["admissionReviewVersions"]
    refused = raw(kube_api_client, "POST", CONFIGURATIONS, body={**config, "webhooks": [bad]})
    assert refused.status == 422
    assert refused.json()["message"] == (
        f'ValidatingWebhookConfiguration.admissionregistration.k8s.io "{name}" is invalid: ['
        'webhooks[0].name: Invalid value: "short": should be a domain with at least three '
        "segments separated by dots, webhooks[0].sideEffects: Required value: must specify "
        "one of None, NoneOnDryRun, webhooks[0].admissionReviewVersions: Required value: must "
        "specify one of v1, v1beta1]"
    )


def test_a_subresource_is_sent_only_to_a_rule_that_names_it(
    kube_api_client: Api, namespace: str
) -> None:
    status = {"status": {"conditions": [{"type": "Example", "status": "True"}]}}

    def write_status(dry: bool = False) -> Raw:
        path = f"{_pods(namespace)}/web/status" + ("?dryRun=All" if dry else "")
        return raw(kube_api_client, "PATCH", path, body=status,
                   content_type="application/merge-patch+json")  # fmt: skip

    with _webhook(kube_api_client, namespace, allow_all, "pods", operations=("CREATE", "UPDATE")
                  ) as pods:  # fmt: skip
        assert raw(kube_api_client, "POST", _pods(namespace), body=pod("web")).status == 201
        with admission_webhook(allow_all) as statuses:
            config = statuses.configuration(_name(namespace, "status"), namespace,
                                            resources=("pods/status",), operations=("UPDATE",))  # fmt: skip
            with _configured(kube_api_client, config):
                _until_in_force(statuses, lambda: write_status(dry=True), admitted=200)
                assert write_status().status == 200
                mine = _own_reviews(kube_api_client, statuses)
        assert [r["operation"] for r in pods.reviews] == ["CREATE"]
    assert mine
    for request in mine:
        assert (request["operation"], request["subResource"], request["requestSubResource"]) == (
            "UPDATE", "status", "status",
        )  # fmt: skip
        assert request["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    # The rig's fake kubelet writes its pods' status as the same admin: only some are ours.
    said = [[c["type"] for c in r["object"]["status"].get("conditions", [])] for r in mine]
    assert ["Example"] in said, said


def test_an_object_selector_picks_the_objects_sent(kube_api_client: Api, namespace: str) -> None:
    with admission_webhook(deny_all(IMAGES)) as webhook:
        config = webhook.configuration(_name(namespace, "objects"), namespace)
        config["webhooks"][0]["objectSelector"] = {"matchLabels": {"app": "probe"}}
        with _configured(kube_api_client, config):
            _until_in_force(webhook, lambda: _dry_create(kube_api_client, namespace))
            assert raw(kube_api_client, "POST", _pods(namespace), body=pod("web")).status == 201
            refused = raw(kube_api_client, "POST", _pods(namespace), body=pod("probe"))
            assert refused.status == 403
            assert [r["name"] for r in webhook.reviews] == ["probe"]


def test_a_dry_run_write_is_sent_as_such(kube_api_client: Api, namespace: str) -> None:
    with _webhook(kube_api_client, namespace, allow_all, "dry") as webhook:
        assert _dry_create(kube_api_client, namespace).status == 201
        [request] = webhook.reviews
    assert (request["dryRun"], request["name"]) == (True, "probe")
    assert raw(kube_api_client, "GET", f"{_pods(namespace)}/probe").status == 404
