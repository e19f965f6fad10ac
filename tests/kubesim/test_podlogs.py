"""A pod's log, pure: the run the kubelet reads by its rules (v1.28's
validateContainerLogStatus), the options checked as ValidatePodLogOptions does, and the
lines cut as the kubelet's log reader cuts them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubesim import podlogs
from kubesim.errors import ApiError

NOW = datetime(2026, 12, 2, 8, 0, 0, tzinfo=UTC)
STARTED, FINISHED = "2026-12-02T07:50:00Z", "2026-12-02T07:55:00Z"
ENDED = {"exitCode": 137, "reason": "OOMKilled", "startedAt": STARTED, "finishedAt": FINISHED}


def _pod(state: dict[str, Any], last: dict[str, Any] | None = None) -> dict[str, Any]:
    status = {"name": "main", "state": state, "lastState": {"terminated": last} if last else {}}
    return {
        "metadata": {"name": "p"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "memcached:1.6"}]},
        "status": {"containerStatuses": [status]},
    }


def _said(pod: dict[str, Any], *, previous: bool = False) -> str:
    with pytest.raises(ApiError) as refused:
        podlogs.run_of(pod, "main", previous=previous)
    assert refused.value.code == 400
    return refused.value.message


def test_the_run_read_is_the_kubelets_choice() -> None:
    running = {"running": {"startedAt": STARTED}}
    with_id = {**ENDED, "containerID": "containerd://a"}
    # Running: this run; with previous, the one before its restart.
    assert podlogs.run_of(_pod(running), "main", previous=False) == {"startedAt": STARTED}
    assert podlogs.run_of(_pod(running, with_id), "main", previous=True)["terminated"] == with_id
    # In a crash loop's back-off the last run is read, with or without previous.
    backing_off = _pod({"waiting": {"reason": "CrashLoopBackOff"}}, with_id)
    for previous in (False, True):
        assert podlogs.run_of(backing_off, "main", previous=previous)["terminated"] == with_id
    # Ended for good: that run; one that never got an ID falls back to the run before.
    assert podlogs.run_of(_pod({"terminated": with_id}), "main", previous=False) == {
        "startedAt": STARTED, "terminated": with_id,
    }  # fmt: skip
    fallback = _pod({"terminated": ENDED}, {**with_id, "exitCode": 1})
    assert podlogs.run_of(fallback, "main", previous=False)["terminated"]["exitCode"] == 1


def test_a_container_with_no_run_to_read_says_why() -> None:
    container = 'container "main" in pod "p"'
    assert _said(_pod({"running": {}}), previous=True) == (
        'previous terminated container "main" in pod "p" not found'
    )
    assert _said(_pod({"waiting": {"reason": "ErrImagePull"}})) == (
        f"{container} is waiting to start: image can't be pulled"
    )
    assert _said(_pod({"waiting": {"reason": "ImagePullBackOff"}})) == (
        f"{container} is waiting to start: trying and failing to pull image"
    )
    assert _said(_pod({"waiting": {"reason": "ContainerCreating"}})) == (
        f"{container} is waiting to start: ContainerCreating"
    )
    assert _said(_pod({})) == f"{container} is waiting to start - no logs yet"
    assert _said(_pod({"terminated": ENDED})) == f"{container} is terminated"
    unreported = _pod({})
    unreported["status"] = {}
    assert _said(unreported) == f"{container} is not available"


def test_the_container_is_the_one_named_or_the_only_one() -> None:
    pod = _pod({})
    assert podlogs.container_name(pod, "") == "main"
    pod["spec"]["initContainers"] = [{"name": "init"}]
    assert podlogs.container_name(pod, "init") == "init"
    pod["spec"]["containers"].append({"name": "side"})
    for wanted, said in [
        ("", "a container name must be specified for pod p, choose one of: [init main side]"),
        ("nope", "container nope is not valid for pod p"),
    ]:
        with pytest.raises(ApiError) as refused:
            podlogs.container_name(pod, wanted)
        assert (refused.value.code, refused.value.message) == (400, said)


def _options(**query: str) -> podlogs.LogOptions:
    return podlogs.LogOptions(query, NOW)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"tailLines": "-1"}, "tailLines: Invalid value: -1: must be greater than or equal to 0"),
        ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0"),
        ({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
        (
            {"sinceSeconds": "5", "sinceTime": STARTED},
            ": Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ),
    ],
)
def test_options_out_of_range_are_told_as_the_api_server_does(
    query: dict[str, str], said: str
) -> None:
    assert [p.text() for p in _options(**query).problems] == [said]


def test_an_option_that_is_no_number_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as refused:
        _options(tailLines="ten")
    assert refused.value.code == 400
    assert refused.value.message == 'strconv.ParseInt: parsing "ten": invalid syntax'


def test_lines_are_cut_and_stamped_as_the_kubelet_reads_them() -> None:
    run = {"startedAt": STARTED, "terminated": ENDED}
    lines = podlogs.lines_of(_pod({}), "main", run)
    started = (
        "kubesim: container main started from image memcached:1.6 on node node-1; kubesim "
        "runs no process in it, so it writes no more"
    )
    exited = "kubesim: container main exited with code 137 (OOMKilled)"
    assert [text for _, text in lines] == [started, exited]

    def render(**query: str) -> str:
        return podlogs.render(lines, _options(**query)).decode()

    assert render() == f"{started}\n{exited}\n"
    assert render(tailLines="1") == f"{exited}\n"
    assert render(tailLines="0") == ""
    assert render(tailLines="5") == render()
    assert render(timestamps="true", tailLines="1") == f"2026-12-02T07:55:00.000000000Z {exited}\n"
    assert render(sinceSeconds="400") == f"{exited}\n"  # started 600 s before NOW
    assert render(sinceTime="2026-12-02T07:55:00Z") == f"{exited}\n"
    assert render(limitBytes="7") == "kubesim"


def test_a_followed_run_ends_when_its_container_stops_or_its_pod_goes() -> None:
    run = {"startedAt": STARTED}
    running = _pod({"running": {"startedAt": STARTED}})
    assert podlogs.still(running, "main", run) == run
    # Stopped, or stopped and restarted since: its exit is read from where the status has it.
    assert podlogs.still(_pod({"terminated": ENDED}), "main", run) == {**run, "terminated": ENDED}
    restarted = _pod({"running": {"startedAt": FINISHED}}, last=ENDED)
    assert podlogs.still(restarted, "main", run) == {**run, "terminated": ENDED}
    # Gone, or its run no longer in the status: ended, how unknown.
    assert podlogs.still(None, "main", run) == {**run, "terminated": {}}
    later = _pod({"running": {"startedAt": FINISHED}})
    assert podlogs.still(later, "main", run) == {**run, "terminated": {}}


def test_a_followed_log_keeps_where_its_tail_began_as_it_grows() -> None:
    first = podlogs.lines_of(_pod({}), "main", {"startedAt": STARTED})
    grown = podlogs.lines_of(_pod({}), "main", {"startedAt": STARTED, "terminated": ENDED})
    tail = _options(tailLines="1")
    start = podlogs.tail_start(len(first), tail)
    before = podlogs.render(first, tail, start=start)
    after = podlogs.render(grown, tail, start=start)
    assert after.startswith(before) and after.count(b"\n") == 2  # the exit line added
    assert podlogs.render(grown, tail) == after[len(before) :]  # read afresh: the last only
    assert podlogs.tail_start(len(first), _options(tailLines="0")) == 1  # nothing old shown
