"""A pod's log on its CR's page, read from the API server (kubesim, or a real cluster with
OPSBOARD_TEST_KUBECONFIG) with the Memcached operator running its pods: the page shows what
the API server gives for that container (each server's kubelet writes its own lines), its
refusals in words, and nothing of a pod the CR does not own."""

from __future__ import annotations

import html as html_text
import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from opsboard.accounts.roles import Role, grant_assign
from opsboard.mirror.models import KubeObject
from tests.dashboard.cluster_fixtures import operator_in_group
from tests.diagnosis.memcached_run import create_memcached, start_operator_in
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _pod_of(namespace: str, cache: str, *, ready: bool) -> str:
    """The name of `cache`'s pod once the mirror has it (ready, or waiting for its image)."""

    def found() -> str | None:
        for pod in KubeObject.objects.filter(kind="Pod", namespace=namespace):
            if not pod.name.startswith(f"{cache}-"):
                continue
            statuses = (pod.status or {}).get("containerStatuses") or []
            if ready and statuses and statuses[0].get("ready"):
                return pod.name
            if not ready and statuses and "waiting" in (statuses[0].get("state") or {}):
                return pod.name
        return None

    name: str = wait_for(found, what=f"a pod of {cache} in the mirror", timeout=90)
    return name


def _server_log(api: client.ApiClient, namespace: str, pod: str, **kwargs: Any) -> str:
    kwargs.setdefault("tail_lines", 200)
    text: str = client.CoreV1Api(api).read_namespaced_pod_log(
        pod, namespace, container="memcached", **kwargs
    )
    return text


def test_a_pods_log_is_what_the_api_server_gives_and_its_name_links_to_it(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    pod = _pod_of(namespace, "cache", ready=True)
    page = f"/k/memcached/{namespace}/cache/"
    wait_for(
        lambda: f'<a href="{page}pods/{pod}/log/"' in viewer_client.get(page).content.decode(),
        what="the pod's row, linking to its log",
    )

    answer = viewer_client.get(f"{page}pods/{pod}/log/")
    assert answer.status_code == 200
    shown = answer.content.decode()
    expected = _server_log(kube_api_client, namespace, pod)
    if expected:  # the rig's kubelet writes three lines, kubesim's containers two
        assert f'<pre class="log" tabindex="0">{html_text.escape(expected)}</pre>' in shown
    else:
        assert "The container has written nothing." in shown
    assert f"kubectl logs -n {namespace} {pod} -c memcached --tail 200" in shown
    assert f'href="{page}">cache</a>' in shown and f"pod {pod}</nav>" in shown

    # The whole log, as a file: what the API server gives with no tail.
    assert '<a href="whole/?container=memcached" download>the whole log, as a file</a>' in shown
    whole = viewer_client.get(f"{page}pods/{pod}/log/whole/?container=memcached")
    assert whole.status_code == 200 and whole["Content-Type"] == "text/plain; charset=utf-8"
    assert whole["Content-Disposition"] == f'attachment; filename="{pod}.memcached.log"'
    assert whole.content.decode() == _server_log(kube_api_client, namespace, pod, tail_lines=None)

    # Its previous run: none to show, unless a server's kubelet shows one anyway.
    shown = viewer_client.get(f"{page}pods/{pod}/log/?container=memcached&previous=1")
    try:
        previous = _server_log(kube_api_client, namespace, pod, previous=True)
    except client.ApiException as exc:
        said = html_text.escape(json.loads(exc.body)["message"])
        assert f"The API server has no such log: {said}" in shown.content.decode()
    else:
        assert html_text.escape(previous) in shown.content.decode()


def test_a_container_waiting_for_its_image_says_so_and_another_pod_is_not_found(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, viewer_client: Client
) -> None:
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "broken", size=1, image="memcached:does-not-exist")
    create_memcached(cluster_kube, namespace, "other", size=1)
    pod = _pod_of(namespace, "broken", ready=False)
    shown = viewer_client.get(f"/k/memcached/{namespace}/broken/pods/{pod}/log/")
    assert re.search(
        rf"The API server has no such log: container &quot;memcached&quot; in pod "
        rf"&quot;{pod}&quot; is waiting to start: ",
        shown.content.decode(),
    )
    other = _pod_of(namespace, "other", ready=True)
    # A pod of another CR, through this one's page: no way to read pods it does not own.
    for log in ("log/", "log/whole/"):
        url = f"/k/memcached/{namespace}/broken/pods/{other}/{log}"
        assert viewer_client.get(url).status_code == 404
    # A log not there to download: the page says why, nothing is downloaded.
    refused = viewer_client.get(f"/k/memcached/{namespace}/broken/pods/{pod}/log/whole/")
    assert (
        "Content-Disposition" not in refused and "is waiting to start" in refused.content.decode()
    )
    assert viewer_client.get(f"/k/memcached/{namespace}/other/pods/{other}/log/").status_code == 200
    # A person with a role in another namespace only: the page is not there for them.
    elsewhere = User.objects.create_user("nina")
    grant_assign(user=elsewhere, role=Role.ADMIN, namespace=f"{namespace}-other")
    nina = Client()
    nina.force_login(elsewhere)
    assert nina.get(f"/k/memcached/{namespace}/other/pods/{other}/log/").status_code == 404


def test_with_impersonation_the_clusters_rbac_decides_who_reads_a_log(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, settings: Any,
) -> None:  # fmt: skip
    """A person whose groups may read memcacheds but not pods/log, as `view` would not be:
    the page says the cluster's refusal, and shows nothing of the log."""
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    rbac.create_namespaced_role(namespace, {
        "metadata": {"name": "cache-readers"},
        "rules": [{"apiGroups": ["cache.example.com"], "resources": ["memcacheds"],
                   "verbs": ["get", "list", "watch"]}],
    })  # fmt: skip
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "cache-readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "cache-readers"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                      "name": f"{namespace}-readers"}],
    })  # fmt: skip
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    pod = _pod_of(namespace, "cache", ready=True)
    settings.OPSBOARD_KUBE_IMPERSONATE = True
    person = operator_in_group(settings, f"{namespace}-readers")
    shown = person.get(f"/k/memcached/{namespace}/cache/pods/{pod}/log/").content.decode()
    assert "The cluster&#x27;s RBAC refuses: " in shown
    assert "cannot get resource &quot;pods/log&quot;" in shown
    assert '<pre class="log"' not in shown


def test_a_followed_log_is_read_again_until_its_pod_is_gone(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    """`follow=1` polls the log (the answer: nothing to swap while it reads the same); once
    the pod is gone, its last answer says so and stops the polling (htmx's 286)."""
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    pod = _pod_of(namespace, "cache", ready=True)
    log = f"/k/memcached/{namespace}/cache/pods/{pod}/log/"
    page = viewer_client.get(f"{log}?container=memcached").content.decode()
    assert "data-follow" not in page and "hx-get" not in page.split('id="pod-log"')[1]
    assert '<a href="?container=memcached&amp;follow=1">follow</a>' in page

    page = viewer_client.get(f"{log}?container=memcached&follow=1").content.decode()
    poll = re.search(r'<div id="pod-log" data-follow hx-get="([^"]+)" hx-trigger="every 3s"', page)
    assert poll, page
    url = html_text.unescape(poll[1])
    assert url.startswith(f"{log}?container=memcached&follow=1&shown=")
    assert f"kubectl logs -n {namespace} {pod} -c memcached --tail 200 -f" in page
    assert '<a href="?container=memcached">stop following</a>' in page
    hx = {"HTTP_HX_REQUEST": "true"}
    assert viewer_client.get(url, **hx).status_code == 204  # the same log, read again
    stale = viewer_client.get(url.replace("shown=", "shown=x"), **hx)
    assert stale.status_code == 200
    assert stale.content.decode().lstrip().startswith('<div id="pod-log" data-follow hx-get=')
    # A previous run's log does not change: it is not followed.
    ended = viewer_client.get(f"{log}?container=memcached&previous=1&follow=1").content.decode()
    assert "data-follow" not in ended

    client.CoreV1Api(kube_api_client).delete_namespaced_pod(pod, namespace, grace_period_seconds=0)
    wait_for(
        lambda: not KubeObject.objects.filter(kind="Pod", namespace=namespace, name=pod).exists(),
        what="the deleted pod gone from the mirror",
    )
    gone = viewer_client.get(url, **hx)
    assert gone.status_code == 286
    assert f"{pod}</span> is gone (deleted, or replaced in a rollout)" in gone.content.decode()
    assert viewer_client.get(log).status_code == 404  # not followed: there is no such page
