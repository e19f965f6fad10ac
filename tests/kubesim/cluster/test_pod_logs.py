"""pods/log through the official client and kubectl: the options checked and a pod on no
node answered as the API server does (on either server), and what kubesim's containers
log, run by run, through a crash loop, and followed until their container exits (kubesim's
hooks; the rig's fake kubelet answers a follow at once)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config

from tests.kubesim.cluster.helpers import is_ready, pod, wait_for
from tests.kubesim.conftest import KUBECTL, Kubectl


def _refusal(call: Any) -> tuple[int, str]:
    with pytest.raises(client.ApiException) as refused:
        call()
    return refused.value.status, json.loads(refused.value.body)["message"]


def test_log_options_out_of_range_are_refused_as_invalid(
    core: client.CoreV1Api, namespace: str
) -> None:
    core.create_namespaced_pod(namespace, pod("opts"))

    def read(**options: Any) -> tuple[int, str]:
        return _refusal(lambda: core.read_namespaced_pod_log("opts", namespace, **options))

    invalid = 'PodLogOptions "opts" is invalid: '
    assert read(tail_lines=-1) == (
        422, f"{invalid}tailLines: Invalid value: -1: must be greater than or equal to 0"
    )  # fmt: skip
    assert read(limit_bytes=0) == (
        422, f"{invalid}limitBytes: Invalid value: 0: must be greater than 0"
    )  # fmt: skip
    assert read(since_seconds=0) == (
        422, f"{invalid}sinceSeconds: Invalid value: 0: must be greater than 0"
    )  # fmt: skip
    assert read(container="nope") == (400, "container nope is not valid for pod opts")


def test_a_pod_on_no_node_has_no_log_to_read(core: client.CoreV1Api, namespace: str) -> None:
    """No kubelet to ask: the API server answers 204, no content."""
    core.create_namespaced_pod(namespace, pod("nowhere", nodeSelector={"no-such": "node"}))
    answer = core.read_namespaced_pod_log("nowhere", namespace, _preload_content=False)
    assert (answer.status, answer.data) == (204, b"")


@pytest.fixture
def short_backoff(kubesim_server: Any) -> Iterator[Any]:
    cluster = kubesim_server.cluster
    cluster.options.crash_backoff = 0.5  # a real node's 10 s, here shortened
    yield cluster
    cluster.options.crash_backoff = 10.0


@pytest.mark.kubesim_only
def test_each_run_of_a_kubesim_container_logs_its_start_and_its_exit(
    short_backoff: Any, core: client.CoreV1Api, kubectl: Kubectl, namespace: str
) -> None:
    core.create_namespaced_pod(namespace, pod("runs", image="memcached:1.6"))
    running = wait_for(
        lambda: (p := core.read_namespaced_pod("runs", namespace)) and is_ready(p) and p,
        what="Ready",
    )
    started = (
        "kubesim: container main started from image memcached:1.6 on node "
        f"{running.spec.node_name}; kubesim runs no process in it, so it writes no more"
    )
    assert core.read_namespaced_pod_log("runs", namespace) == f"{started}\n"
    stamped = kubectl("logs", "runs", "--timestamps", namespace=namespace).stdout
    at = running.status.container_statuses[0].state.running.started_at
    assert stamped == f"{at.strftime('%Y-%m-%dT%H:%M:%S')}.000000000Z {started}\n"
    refused = kubectl("logs", "runs", "--previous", namespace=namespace, check=False)
    assert refused.returncode != 0
    assert 'previous terminated container "main" in pod "runs" not found' in refused.stderr

    # In the crash loop's back-off the last run is read, as a kubelet reads it.
    short_backoff.crash_pod(namespace, "runs", reason="OOMKilled", exit_code=137, loop=True)

    def backing_off() -> Any:
        status = core.read_namespaced_pod("runs", namespace).status.container_statuses[0]
        return status if status.state.waiting and status.restart_count >= 2 else None

    wait_for(backing_off, what="CrashLoopBackOff")
    exited = "kubesim: container main exited with code 137 (OOMKilled)"
    assert core.read_namespaced_pod_log("runs", namespace) == f"{started}\n{exited}\n"
    assert kubectl("logs", "runs", "--previous", "--tail=1", namespace=namespace).stdout == (
        f"{exited}\n"
    )


def _running(core: client.CoreV1Api, namespace: str, name: str) -> None:
    core.create_namespaced_pod(namespace, pod(name, image="memcached:1.6"))
    wait_for(lambda: is_ready(core.read_namespaced_pod(name, namespace)), what=f"{name} Ready")


def _followed(core: client.CoreV1Api, namespace: str, name: str) -> Any:
    """The log of pod `name`, followed: its answer, whose body is read as it comes."""
    return core.read_namespaced_pod_log(
        name, namespace, follow=True, _preload_content=False, _request_timeout=30
    )


@pytest.mark.kubesim_only
def test_a_followed_log_streams_until_its_container_exits(
    kubesim_server: Any, core: client.CoreV1Api, namespace: str
) -> None:
    _running(core, namespace, "tailed")
    assert KUBECTL is not None
    follower = subprocess.Popen(
        [KUBECTL, f"--kubeconfig={kubesim_server.kubeconfig_path}", "-n", namespace,
         "logs", "-f", "tailed"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        chunks = _followed(core, namespace, "tailed").read_chunked()
        started = next(chunks).decode()
        assert started.startswith("kubesim: container main started from image memcached:1.6")
        assert follower.stdout is not None and follower.stdout.readline() == started
        # The stream stays open: the exit the container comes to later arrives on it, and ends it.
        kubesim_server.cluster.crash_pod(namespace, "tailed", reason="Error", exit_code=2)
        exited = "kubesim: container main exited with code 2 (Error)\n"
        assert b"".join(chunks).decode() == exited
        out, err = follower.communicate(timeout=30)
        assert (follower.returncode, out) == (0, exited), err
    finally:
        follower.kill()


@pytest.mark.kubesim_only
def test_a_followed_log_ends_when_its_pod_is_deleted(
    core: client.CoreV1Api, namespace: str
) -> None:
    _running(core, namespace, "going")
    chunks = _followed(core, namespace, "going").read_chunked()
    assert b"started from image memcached:1.6" in next(chunks)
    core.delete_namespaced_pod("going", namespace, grace_period_seconds=0)
    rest = b"".join(chunks).decode()  # a stream that outlived its pod would time out
    assert rest in ("", "kubesim: container main exited with code 0 (Completed)\n"), rest


@pytest.mark.kubesim_only
def test_a_followed_log_whose_client_hangs_up_frees_its_server_thread(
    kubesim_server: Any, core: client.CoreV1Api, namespace: str
) -> None:
    _running(core, namespace, "watched")
    before = set(threading.enumerate())
    # A client of its own: a new connection, served by a thread of its own.
    api = config.new_client_from_config(config_file=str(kubesim_server.kubeconfig_path))
    stream = _followed(client.CoreV1Api(api), namespace, "watched")
    assert b"started from image" in next(stream.read_chunked())
    serving = [t for t in set(threading.enumerate()) - before if "process_request" in t.name]
    assert serving, "no new thread serves the followed log"
    stream.close()
    api.close()
    wait_for(lambda: not any(t.is_alive() for t in serving), what="the stream's thread ended")
