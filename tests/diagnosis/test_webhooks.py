"""Admission webhooks, diagnosed: a policy webhook that denies the operator's own write, one
that denies its pods, and one whose server does not answer while its failurePolicy is Fail.
Each is named, with its words and what to do; once the webhook lets them through (its policy
changed, the CR meets it, it is gone) the CR converges with nothing else done. A real
webhook server on 127.0.0.1 (tests/support/webhook.py), a real watcher and worker, on kubesim
and on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.test import Client
from kubernetes import client

from controllers.base import DEPLOYMENT
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.refusals import WEBHOOKS_LISTED
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import (
    create_memcached,
    page_finding,
    start_operator_in,
    wait_degraded,
)
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for
from tests.support.webhook import Judge, Webhook, admission_webhook, until_in_force

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def _registered(
    api: client.ApiClient, judge: Judge, namespace: str, **rules: Any
) -> Iterator[tuple[Webhook, str]]:
    """A webhook serving `judge`, registered for `namespace`'s writes `rules` name; yields
    it and its name, and unregisters it at the end."""
    registrations = client.AdmissionregistrationV1Api(api)
    name = f"policy-{namespace}"
    with admission_webhook(judge) as webhook:
        registrations.create_validating_webhook_configuration(
            webhook.configuration(name, namespace, **rules)
        )
        try:
            resource = rules.get("resources", ("pods",))[0]
            until_in_force(webhook, lambda: _refused_dry_run(api, namespace, resource))
            yield webhook, f"{name}.opsboard.test"
        finally:
            registrations.delete_validating_webhook_configuration(name)


def _refused_dry_run(api: client.ApiClient, namespace: str, resource: str) -> bool:
    """Whether a webhook refuses a dry-run create of a plain pod (or Deployment)."""
    pod = {"containers": [{"name": "c", "image": "pause"}]}
    try:
        if resource == "deployments":
            labels = {"app": "probe"}
            body = {"metadata": {"name": "probe"}, "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": pod},
            }}  # fmt: skip
            client.AppsV1Api(api).create_namespaced_deployment(namespace, body, dry_run="All")
        else:
            body = {"metadata": {"name": "probe"}, "spec": pod}
            client.CoreV1Api(api).create_namespaced_pod(namespace, body, dry_run="All")
    except client.ApiException as exc:
        return "webhook" in str(exc.body)
    return False


def _available(namespace: str, name: str) -> bool:
    return KubeObject.objects.filter(
        kind="Memcached", namespace=namespace, name=name, health="Available"
    ).exists()


def test_a_write_a_webhook_denies_names_the_webhook_and_is_made_once_it_allows_it(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    said = '[required-labels] you must provide labels: {"team"}'
    policy = {"enforced": True}

    def judge(request: dict[str, Any]) -> tuple[str, int] | None:
        return (said, 0) if policy["enforced"] else None  # no code: the API server says 400

    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"  # a changed policy is looked for so often
    rules = {"resources": ("deployments",), "api_groups": ("apps",)}
    with _registered(kube_api_client, judge, namespace, **rules) as (webhook, name):
        start_operator_in(engine, namespace)
        create_memcached(cluster_kube, namespace, "labelled", size=1)
        wait_for(
            lambda: ReconcileRun.objects.filter(namespace=namespace, name="labelled",
                                                error__contains="denied the request").exists(),
            what="a run the webhook refused",
        )  # fmt: skip
        assert webhook.reviews[0]["kind"]["kind"] == "Deployment"
        assert webhook.reviews[0]["operation"] == "CREATE"

        finding = wait_for(
            lambda: page_finding(viewer_client, f"/k/memcached/{namespace}/labelled/", "Webhook"),
            what="the webhook's refusal on the page",
        )
        assert f'400 admission webhook "{name}" denied the request: {said}' in finding.what
        assert finding.todo.startswith(
            f"Admission webhook {name} refuses this write (its words above): change what it "
            "objects to, or ask the webhook's owners for an exception."
        )
        assert WEBHOOKS_LISTED in finding.todo and "ClusterRole" not in finding.todo

        policy["enforced"] = False  # the policy changed; nothing else is done
        wait_for(
            lambda: cluster_kube.get(DEPLOYMENT, namespace, "labelled"),
            what="the Deployment made once the webhook lets it through",
        )
        wait_for(lambda: _available(namespace, "labelled"), what="the Memcached available")


def _memory_limited(request: dict[str, Any]) -> tuple[str, int] | None:
    containers = request["object"]["spec"]["containers"]
    if all((c.get("resources") or {}).get("limits", {}).get("memory") for c in containers):
        return None
    return "every container must set a memory limit", 403


def test_pods_a_webhook_denies_are_told_with_its_words_and_made_once_the_cr_meets_it(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    with _registered(kube_api_client, _memory_limited, namespace) as (_, name):
        start_operator_in(engine, namespace)
        create_memcached(cluster_kube, namespace, "cache", size=1)

        degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "cache", "PodsRefused")
        denial = f'admission webhook "{name}" denied the request: every container must set'
        assert denial in degraded["message"]
        advice = (
            f"Admission webhook {name} refuses these pods (its words above): change what it "
            "objects to, or ask the webhook's owners for an exception. Which configuration "
            f"holds it: {WEBHOOKS_LISTED}."
        )
        assert degraded["message"].endswith(advice)
        finding = wait_for(
            lambda: page_finding(viewer_client, f"/k/memcached/{namespace}/cache/", "ReplicaFailure"),
            what="the refused pods on the page",
        )  # fmt: skip
        assert denial in finding.what and finding.todo == advice

        limits = {"limits": {"memory": "64Mi"}}
        cluster_kube.patch(MEMCACHED, namespace, "cache", {"spec": {"resources": limits}})
        wait_for(
            lambda: _available(namespace, "cache"), what="the Memcached available", timeout=120
        )


def test_a_webhook_that_does_not_answer_is_told_as_such_and_its_pods_made_once_it_is_gone(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str,
) -> None:  # fmt: skip
    nowhere = "https://127.0.0.1:9/validate"  # nothing listens there
    with _registered(kube_api_client, _memory_limited, namespace, url=nowhere) as (_, name):
        start_operator_in(engine, namespace)
        create_memcached(cluster_kube, namespace, "cache", size=1)

        degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "cache", "PodsRefused")
        assert (
            f'failed calling webhook "{name}": failed to call webhook: Post'
            in (degraded["message"])
        )
        assert (
            f"Admission webhook {name} does not answer, and its failurePolicy is Fail: the API "
            "server refuses these pods until it does."
        ) in degraded["message"]
    # Unregistered: the ReplicaSet's next try makes the pod.
    wait_for(lambda: _available(namespace, "cache"), what="the Memcached available", timeout=120)


def test_a_webhook_that_does_not_answer_the_operators_write_is_said_on_the_cr_too(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    engine.extra_env["OPSBOARD_BACKOFF_TEMPORARY_MAX"] = "1"  # it may come back any moment
    rules = {"resources": ("deployments",), "api_groups": ("apps",)}
    nowhere = "https://127.0.0.1:9/validate"
    with _registered(kube_api_client, _memory_limited, namespace, url=nowhere, **rules) as (
        _, name,
    ):  # fmt: skip
        start_operator_in(engine, namespace)
        create_memcached(cluster_kube, namespace, "cache", size=1)

        degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "cache", "ReconcileFailed")
        assert (
            f'500 Internal error occurred: failed calling webhook "{name}"' in (degraded["message"])
        )
        finding = wait_for(
            lambda: page_finding(viewer_client, f"/k/memcached/{namespace}/cache/", "Webhook"),
            what="the webhook on the page",
        )
        assert finding.todo.startswith(
            f"Admission webhook {name} does not answer, and its failurePolicy is Fail: the API "
            "server refuses this write until it does."
        )
    # Unregistered: the next retry makes the Deployment, and the CR says Degraded no more.
    wait_for(lambda: _available(namespace, "cache"), what="the Memcached available", timeout=120)
    assert (
        condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded")["status"]
        == "False"
    )


def test_a_size_change_a_webhook_refuses_is_seen_and_degraded_until_it_is_let_through(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str,
) -> None:  # fmt: skip
    """The status goes beside the Deployment's patch (controllers.apply.
    ensure_child_and_finish): refused, the generation is seen and Degraded says why, on
    that generation, and stays so through the retries; let through, the scale is made."""
    said = "[frozen] the replicas of this namespace's Deployments may not change"
    policy = {"frozen": False}

    def judge(request: dict[str, Any]) -> tuple[str, int] | None:
        if request.get("name") == "probe":  # until_in_force's dry run
            return said, 403
        replicas = [(o or {}).get("spec", {}).get("replicas") for o in
                    (request.get("object"), request.get("oldObject"))]  # fmt: skip
        if policy["frozen"] and request["operation"] == "UPDATE" and replicas[0] != replicas[1]:
            return said, 403
        return None

    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"
    rules = {
        "resources": ("deployments",),
        "api_groups": ("apps",),
        "operations": ("CREATE", "UPDATE"),
    }
    with _registered(kube_api_client, judge, namespace, **rules):
        start_operator_in(engine, namespace)
        create_memcached(cluster_kube, namespace, "cache", size=1)
        wait_for(lambda: _available(namespace, "cache"), what="the Memcached available")

        policy["frozen"] = True
        patched = cluster_kube.patch(MEMCACHED, namespace, "cache", {"spec": {"size": 2}})
        generation = patched["metadata"]["generation"]
        degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "cache", "ReconcileFailed")
        assert said in degraded["message"]
        assert degraded["observedGeneration"] == generation
        cr = cluster_kube.get(MEMCACHED, namespace, "cache") or {}
        assert cr["status"]["observedGeneration"] == generation
        wait_for(
            lambda: ReconcileRun.objects.filter(
                namespace=namespace, name="cache", error__contains="frozen"
            ).count() >= 3,
            what="the refused scale retried",
        )  # fmt: skip
        still = condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded")
        assert (still["reason"], still["lastTransitionTime"]) == (
            "ReconcileFailed", degraded["lastTransitionTime"],
        )  # fmt: skip  # not cleared and set again by each retry
        assert (cluster_kube.get(DEPLOYMENT, namespace, "cache") or {})["spec"]["replicas"] == 1

        policy["frozen"] = False
        wait_for(
            lambda: (
                (cluster_kube.get(DEPLOYMENT, namespace, "cache") or {})["spec"]["replicas"] == 2
            ),
            what="the scale made once the webhook lets it through",
        )
        wait_for(
            lambda: (
                condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded").get(
                    "status"
                )
                == "False"
            ),
            what="Degraded cleared",
        )
