"""A pod's log as the API server and a kubelet serve it (pure).

Which of a container's runs a request reads follows the kubelet's rules
(validateContainerLogStatus in v1.28): the running one, else the one that ended, else the
one before a restart that has not come yet (a crash loop's back-off), or `previous`; a
container waiting with no run behind it has no log, and says why. The options are
validated as ValidatePodLogOptions does, and cut the lines as the kubelet's log reader does:
tailLines first, then sinceSeconds or sinceTime, timestamps as a prefix, limitBytes last.
With `follow`, the log of a running container grows as it writes, until it exits or its pod
goes (the kubelet's reader stops with the container): `still` tells the run as it is now.

kubesim runs no process in a container, so a run's log holds only what its runtime can tell
truly: that it started, from which image on which node, and how it exited.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kubesim import errors
from kubesim.cluster.names import parse_time
from kubesim.query_options import bool_option, int_option

Obj = dict[str, Any]


class LogOptions:
    """The options of a log request that cut or stamp its lines."""

    def __init__(self, query: dict[str, str], now: datetime) -> None:
        self.container = query.get("container") or ""
        self.previous = bool_option(query, "previous")
        self.follow = bool_option(query, "follow")
        self.timestamps = bool_option(query, "timestamps")
        self.tail = int_option(query, "tailLines")
        self.limit = int_option(query, "limitBytes")
        since_seconds = int_option(query, "sinceSeconds")
        since_time = query.get("sinceTime")
        problems: list[errors.FieldError] = []
        if self.tail is not None and self.tail < 0:
            problems.append(errors.FieldError("Invalid", "tailLines", self.tail,
                                              "must be greater than or equal to 0"))  # fmt: skip
        if self.limit is not None and self.limit < 1:
            problems.append(errors.FieldError("Invalid", "limitBytes", self.limit,
                                              "must be greater than 0"))  # fmt: skip
        if since_seconds is not None and since_time is not None:
            problems.append(errors.FieldError(
                "Forbidden", "", detail="at most one of `sinceTime` or `sinceSeconds` may be specified"
            ))  # fmt: skip
        elif since_seconds is not None and since_seconds < 1:
            problems.append(errors.FieldError("Invalid", "sinceSeconds", since_seconds,
                                              "must be greater than 0"))  # fmt: skip
        self.problems = problems
        self.since: datetime | None = None
        if since_seconds is not None and since_seconds > 0:
            self.since = now - timedelta(seconds=since_seconds)
        elif since_time is not None:
            self.since = _parse_time(since_time)


def _parse_time(value: str) -> datetime:
    try:
        parsed = parse_time(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise errors.bad_request(
            f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse "{value}"'
        )
    return parsed.astimezone(UTC)


def container_name(pod: Obj, wanted: str) -> str:
    """The container a request names, or the pod's only one (LogLocation's
    validateContainer: every kind of container is named, init containers first)."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = [str(c.get("name")) for c in spec.get("containers") or []]
    every = [str(c.get("name")) for k in ("initContainers", "containers", "ephemeralContainers")
             for c in spec.get(k) or []]  # fmt: skip
    if wanted:
        if wanted not in every:
            raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    if len(containers) == 1:
        return containers[0]
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]"
    )


def run_of(pod: Obj, container: str, *, previous: bool) -> Obj:
    """The run of `container` the kubelet reads for a request: {"startedAt", and for one that
    has ended "terminated"} (the kubelet's validateContainerLogStatus)."""
    name = pod["metadata"]["name"]
    found = _status_of(pod, container)
    if found is None:
        raise errors.bad_request(f'container "{container}" in pod "{name}" is not available')
    last = (found.get("lastState") or {}).get("terminated")
    state = found.get("state") or {}
    if previous:
        if not last or not last.get("containerID"):
            raise errors.bad_request(
                f'previous terminated container "{container}" in pod "{name}" not found'
            )
        return _ended(last)
    if running := state.get("running"):
        return {"startedAt": running.get("startedAt", "")}
    if ended := state.get("terminated"):
        if ended.get("containerID"):
            return _ended(ended)
        if last and last.get("containerID"):
            return _ended(last)
        raise errors.bad_request(f'container "{container}" in pod "{name}" is terminated')
    if last:
        if not last.get("containerID"):
            raise errors.bad_request(f'container "{container}" in pod "{name}" is terminated')
        return _ended(last)
    if waiting := state.get("waiting"):
        reason = waiting.get("reason", "")
        said = {
            "ErrImagePull": "image can't be pulled",
            "ImagePullBackOff": "trying and failing to pull image",
        }.get(reason, reason)
        raise errors.bad_request(
            f'container "{container}" in pod "{name}" is waiting to start: {said}'
        )
    raise errors.bad_request(
        f'container "{container}" in pod "{name}" is waiting to start - no logs yet'
    )


def _status_of(pod: Obj, container: str) -> Obj | None:
    """The status of `container`, of whichever kind (names are unique in a pod)."""
    status = pod.get("status") or {}
    return next(
        (s for k in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
         for s in status.get(k) or [] if s.get("name") == container),
        None,
    )  # fmt: skip


def _ended(terminated: Obj) -> Obj:
    return {"startedAt": terminated.get("startedAt", ""), "terminated": terminated}


def still(pod: Obj | None, container: str, run: Obj) -> Obj:
    """The followed `run` (run_of's) as `pod` tells it now: ended ("terminated") once the
    container stopped, restarted or was removed, or the pod is gone (None); the exit is
    known where the status still holds this run (by its start)."""
    found = _status_of(pod, container) if pod is not None else None
    if found is None:
        return {**run, "terminated": {}}
    states = [found.get("state") or {}, found.get("lastState") or {}]
    started = run.get("startedAt")
    if any((state.get("running") or {}).get("startedAt") == started for state in states):
        return run
    ended: Obj = next(
        (e for state in states if (e := state.get("terminated")) and e.get("startedAt") == started),
        {},
    )
    return {**run, "terminated": ended}


def lines_of(pod: Obj, container: str, run: Obj) -> list[tuple[datetime, str]]:
    """What the run wrote, each line with its time: all kubesim's runtime can tell of it."""
    spec = pod.get("spec") or {}
    image = next(
        (c.get("image", "") for k in ("containers", "initContainers", "ephemeralContainers")
         for c in spec.get(k) or [] if c.get("name") == container),
        "",
    )  # fmt: skip
    lines = []
    if started := _time(run.get("startedAt")):
        lines.append((started, (
            f"kubesim: container {container} started from image {image} on node "
            f"{spec.get('nodeName', '')}; kubesim runs no process in it, so it writes no more"
        )))  # fmt: skip
    ended = run.get("terminated") or {}
    if finished := _time(ended.get("finishedAt")):
        why = f" ({ended['reason']})" if ended.get("reason") else ""
        lines.append((finished, f"kubesim: container {container} exited with code "
                                f"{ended.get('exitCode', 0)}{why}"))  # fmt: skip
    return lines


def _time(value: Any) -> datetime | None:
    try:
        parsed = parse_time(str(value)) if value else None
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed else None


def tail_start(lines: int, options: LogOptions) -> int:
    """The first of `lines` that the last tailLines take: a followed log keeps it as it
    grows, so each rendering extends the one before."""
    if options.tail is None:
        return 0
    return max(0, lines - options.tail)


def render(
    lines: list[tuple[datetime, str]], options: LogOptions, *, start: int | None = None
) -> bytes:
    """The log's bytes as the kubelet's reader writes them: the last tailLines lines (from
    `start` on, where a followed log began), those not older than `since`, each after its
    RFC3339NanoFixed time with `timestamps`, then cut at limitBytes (mid-line, as the
    kubelet does)."""
    lines = lines[tail_start(len(lines), options) if start is None else start :]
    if options.since is not None:
        since = options.since
        lines = [(t, text) for t, text in lines if t >= since]
    out = b"".join(
        (f"{_stamp(t)} " if options.timestamps else "").encode() + text.encode() + b"\n"
        for t, text in lines
    )
    return out[: options.limit] if options.limit is not None else out


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond * 1000:09d}Z"
