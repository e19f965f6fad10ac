"""The one module that talks to the Kubernetes API, with the official client's
configuration, token refresh and connections (`controllers.wire` speaks HTTP on them).

It loads the client configuration (a kubeconfig file, or the in-cluster service account),
implements `controllers.base.Kube` with optimistic concurrency, lists and watches any kind
for the engine's watcher, and posts Events aggregated as client-go's recorder does. API
failures become the contract's errors: a 409 is a `Conflict` (temporary: retry from fresh
state), 429/5xx and network trouble are temporary, an invalid or forbidden write is
permanent, because retrying it cannot help until someone changes something; but a port or
IP another Service holds is temporary: it clears when that Service goes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3
from kubernetes import client, config

from controllers.base import (
    EVENT,
    Body,
    ConflictOn,
    Kind,
    Manifest,
    PermanentError,
    TemporaryError,
)
from controllers.kubeconfig import hold_in_memory, loader_files
from controllers.refusals import NOT_GRANTED, WEBHOOK_DENIED, WEBHOOK_DOWN
from controllers.wire import Answer, Wire

log = logging.getLogger(__name__)
MERGE_PATCH = "application/merge-patch+json"
# Who wrote, as the API server records it (managedFields, and the audit log's userAgent):
# without a name the Python client's writes all say "OpenAPI-Generator".
OPERATOR_FIELD_MANAGER = "opsboard"
_WRITES = frozenset({"POST", "PUT", "PATCH"})


class Conflict(TemporaryError):
    """409: someone wrote the object since we read it (or it already exists)."""


class NotFound(TemporaryError):
    """404 on a write: the object went away under us; the next reconcile sees it gone."""


class Forbidden(PermanentError):
    """403: refused by authorization (NotGranted: RBAC must change) or by admission (a quota,
    a webhook, PodSecurity, a StorageClass that cannot grow a claim; a webhook's denial of
    any code). Either may change with no change of the object: the engine retries a
    reconcile's 403, slowly."""

    def __init__(self, text: str, *, said: str = "") -> None:
        super().__init__(text, said=said)
        # Set by a controller that has told it itself, in its own words (its Degraded
        # condition and that condition's Warning Event): the engine retries it the same,
        # and posts no Warning of its own, so one refusal is one Warning, not two.
        self.told = False


class NotGranted(Forbidden):
    """403 from authorization (RBAC): the caller lacks this verb on this resource. Other 403s
    come from admission (a quota, a StorageClass that cannot grow a claim, PodSecurity)."""


class NamespaceTerminating(Forbidden):
    """403 on a create in a namespace being deleted: not a want of rights, and nothing to do:
    the namespace takes the object's owner with it."""


# kube-apiserver's NamespaceLifecycle admission, word for word.
_TERMINATING = "because it is being terminated"


class AlreadyAllocated(TemporaryError):
    """422 for a NodePort or ClusterIP that another Service holds: a valid write that
    succeeds once that Service lets go of it, so retried with the key's backoff rather than
    left waiting for a change of the CR (a permanent error would be)."""

    needs_someone = True


class Invalid(PermanentError):
    """422: the object the write would leave fails validation. `fields`: those the API
    server names (its Status's details.causes), which may be fields the write did not touch:
    the whole object is validated on every write of its spec."""

    def __init__(self, text: str, *, fields: tuple[str, ...] = (), said: str = "") -> None:
        super().__init__(text, said=said)
        self.fields = fields


class WebhookUnreachable(TemporaryError):
    """500 when the API server could not call an admission webhook whose failurePolicy is
    Fail: retried with the key's backoff (it may come back), but someone may have to act."""

    needs_someone = True


# kube-apiserver's Service allocators, word for word.
_PORT_TAKEN = "provided port is already allocated"
_ALLOCATED = (_PORT_TAKEN, "provided IP is already allocated")
# The ways it refuses a nodePort asked for (a 422 on spec.ports[i].nodePort), in plain words.
_NODE_PORT_REFUSALS = {
    _PORT_TAKEN: "in use by another Service",
    "provided port is not in the valid range": "outside the cluster's NodePort range",
}


def node_port_refusal(error: Exception) -> str | None:
    """Why the API server refused a Service's nodePort, if that is what `error` says."""
    text = str(error)
    if ".nodePort: Invalid value: " not in text:
        return None
    return next((why for said, why in _NODE_PORT_REFUSALS.items() if said in text), None)


class Gone(Exception):
    """410 on a watch: the resourceVersion is too old; list again."""


class KubeconfigError(config.ConfigException):
    """The kubeconfig cannot be used: unreadable, incomplete, or without the context named."""


def load_api_client(
    *, kubeconfig: str = "", context: str = "", pool_size: int = 32, user_agent: str = ""
) -> client.ApiClient:
    """A client for the kubeconfig file, or the in-cluster service account when it is "".
    `context`: the kubeconfig's context to use (else its current-context), as kubectl's
    --context. `user_agent`: what the API server's audit log names the caller (else the
    client's own).

    `pool_size` is how many idle connections are kept, not a limit: the watcher holds a
    stream per watched kind (more than a dozen) besides its other requests, and with the
    client's 8 the streams ending together (their common timeout, a server restart)
    discarded the surplus with a warning each."""
    configuration = client.Configuration()
    with loader_files() as written:
        if kubeconfig:
            try:
                _check_context(kubeconfig, context)
                config.load_kube_config(
                    config_file=kubeconfig,
                    context=context or None,
                    client_configuration=configuration,
                    temp_file_path=written,
                )
            except config.ConfigException as exc:
                raise KubeconfigError(str(exc)) from exc
        else:
            try:
                config.load_incluster_config(client_configuration=configuration)
            except config.ConfigException as exc:  # no service account token mounted
                raise KubeconfigError(str(exc)) from exc
        configuration.connection_pool_maxsize = pool_size
        _throttle_refresh(configuration)
        say_unverified(configuration)
        api_client = client.ApiClient(configuration)
        hold_in_memory(api_client, written)
    if user_agent:
        api_client.user_agent = user_agent
    return api_client


def context_in_use(kubeconfig: str, context: str = "") -> str:
    """The name of the kubeconfig's context a client of `load_api_client` uses: `context`,
    else its current-context; "" for none, or a kubeconfig that cannot be read."""
    if context:
        return context
    try:
        _, current = config.list_kube_config_contexts(config_file=kubeconfig)
    except (config.ConfigException, OSError, ValueError):
        return ""
    return str((current or {}).get("name", ""))


def _check_context(kubeconfig: str, context: str) -> None:
    """A context the kubeconfig lacks, said with the ones it has (the loader's own words
    are "Invalid kube-config file. Expected object with name …")."""
    if not context:
        return
    contexts, _ = config.list_kube_config_contexts(config_file=kubeconfig)
    names = [c["name"] for c in contexts or []]
    if context not in names:
        raise KubeconfigError(
            f"{kubeconfig} has no context {context!r} (it has: {', '.join(names) or 'none'}): "
            "name one of those in OPSBOARD_KUBE_CONTEXT, or leave it empty for the "
            "kubeconfig's current-context"
        )


_unverified: set[str] = set()  # the hosts say_unverified has warned of in this process


def say_unverified(configuration: client.Configuration) -> None:
    """A kubeconfig that skips TLS verification (insecure-skip-tls-verify) is said once per
    host and process, here, instead of by urllib3's warning on every request: against the
    rig (whose kubeconfig skips it) that was 146 lines in a `make run`'s first half minute,
    and a twentieth of a request's CPU. Only that host's warning is silenced."""
    if configuration.verify_ssl or not configuration.host.startswith("https:"):
        return
    hostname = urllib3.util.parse_url(configuration.host).host or ""
    warnings.filterwarnings(
        "ignore",
        message=f"Unverified HTTPS request is being made to host '{re.escape(hostname)}'",
        category=urllib3.exceptions.InsecureRequestWarning,
    )
    if configuration.host not in _unverified:
        _unverified.add(configuration.host)
        log.warning(
            "TLS verification is off for %s (the kubeconfig's insecure-skip-tls-verify): "
            "the API server's identity is not checked. Give the kubeconfig the server's "
            "certificate-authority to check it.",
            configuration.host,
        )


def _throttle_refresh(configuration: client.Configuration, every: float = 1.0) -> None:
    """The loaders' refresh hook runs before every request; it reloads a token only when
    it is within minutes of expiring, but re-applies the whole configuration each time
    (host, proxies from the environment): a fifth of a request's client CPU. Once a
    second is often enough for a check with minutes of margin."""
    if configuration.refresh_api_key_hook is None:
        return
    state = {"hook": configuration.refresh_api_key_hook, "at": float("-inf")}

    def refresh(config: client.Configuration) -> None:
        now = time.monotonic()
        if now - state["at"] >= every:
            state["at"] = now
            state["hook"](config)
            # The kubeconfig loader installs its hook again each time it runs.
            if config.refresh_api_key_hook is not refresh:
                state["hook"] = config.refresh_api_key_hook
                config.refresh_api_key_hook = refresh

    configuration.refresh_api_key_hook = refresh


def _merge_patch(patch: Body, resource_version: str | None) -> dict[str, Any]:
    """A PATCH request's body and content type; with `resource_version`, a precondition."""
    if resource_version:
        metadata = {**patch.get("metadata", {}), "resourceVersion": resource_version}
        patch = {**patch, "metadata": metadata}
    return {"body": patch, "content_type": MERGE_PATCH}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(status: int, data: bytes, headers: Any, what: str) -> Exception:
    try:
        body = orjson.loads(data)
        message = body.get("message") or ""
    except (ValueError, AttributeError):
        body, message = {}, data[:200].decode(errors="replace")
    text = f"{what}: {status} {message}".strip()
    if status == 409:
        return Conflict(text)  # retried with the key's backoff: 5 ms first, then doubling
    if status == 404:
        return NotFound(text)
    # A webhook's denial is admission's whatever its code (400 when the webhook gives none):
    # retried slowly as a 403 is, since a policy changes as a quota does.
    if status == 403 or (400 <= status < 500 and WEBHOOK_DENIED.search(message)):
        if _TERMINATING in message:
            return NamespaceTerminating(text, said=message)
        refused = NotGranted if NOT_GRANTED.search(message) else Forbidden
        return refused(text, said=message)
    if status == 410:
        return Gone(text)
    if status == 429 or status >= 500:
        retry_after = headers.get("retry-after") if headers else None
        delay = float(retry_after) if retry_after and retry_after.isdigit() else None
        if WEBHOOK_DOWN.search(message):
            return WebhookUnreachable(text, delay=delay)
        return TemporaryError(text, delay=delay)
    if status == 422 and any(taken in message for taken in _ALLOCATED):
        return AlreadyAllocated(text)
    if status == 422:
        causes = (body.get("details") or {}).get("causes") or []
        fields = [str(c.get("field")) for c in causes if isinstance(c, dict) and c.get("field")]
        return Invalid(text, fields=tuple(dict.fromkeys(fields)), said=message)
    # 400, 403, 405, 415, 422: the request itself is wrong; the user (or RBAC) must change.
    return PermanentError(text, said=message)


@contextlib.contextmanager
def _as_api_errors(method: str, path: str) -> Iterator[None]:
    """A request's failure to reach the server, or to be answered, as the contract's error."""
    try:
        yield
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise TemporaryError(f"{method} {path}: {exc}") from exc
    except ValueError as exc:  # a header that would end early and start another
        raise PermanentError(f"{method} {path}: {exc}") from exc


class ApiKube:
    """`controllers.base.Kube` over HTTP, plus the list/watch/Event calls the engine needs.
    Every write names `field_manager` (the operators' by default; the web app's its own)."""

    def __init__(
        self,
        api_client: client.ApiClient,
        *,
        timeout: float = 10.0,
        field_manager: str = OPERATOR_FIELD_MANAGER,
    ) -> None:
        self.api = api_client
        self.timeout = timeout
        self.field_manager = field_manager
        # (the configured host, its connection pool, its wire, its path prefix): _direct_to
        self._direct: tuple[str, urllib3.HTTPConnectionPool, Wire, str] | None = None

    # -- plumbing ----------------------------------------------------------------------

    @staticmethod
    def path(kind: Kind, namespace: str = "", name: str = "", subresource: str = "") -> str:
        base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        if kind.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{kind.plural}"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base

    def _prepare(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        content_type: str,
        extra_headers: Sequence[tuple[str, str]],
        accept: str = "application/json",
    ) -> tuple[str, list[tuple[str, str]]]:
        """The URL and headers of a request: the client's own (its token, refreshed by its
        hook, and its default headers), with `extra_headers` (a header may repeat:
        Impersonate-Group, once per group)."""
        if query:
            path += "?" + urlencode(query)
        headers = {"Accept": accept, "Content-Type": content_type}
        _, url, headers, _, _ = self.api.param_serialize(
            method, path, header_params=headers, auth_settings=["BearerToken"]
        )
        return url, [*headers.items(), *extra_headers]

    def _begin(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: tuple[float, float] | None = None,
        extra_headers: Sequence[tuple[str, str]] = (),
        accept: str = "application/json",
    ) -> Callable[[], Answer]:
        """The request, sent now, and the call that reads its whole answer. A body here is
        always a JSON object, encoded with orjson (the client's `call_api` wraps the same
        in layers of checks and json.dumps: about a tenth of a request's client CPU); sent
        by `wire` on the client's connections, or through urllib3 where they cannot be (a
        proxy: answered before this returns)."""
        url, headers = self._prepare(method, path, query, content_type, extra_headers, accept)
        data = None if body is None else orjson.dumps(body)
        timeout = timeout or (min(self.timeout, 5.0), self.timeout)
        with _as_api_errors(method, path):
            direct = self._direct_to(url)
            if direct is None:
                response = self._by_urllib3(method, url, headers, data, timeout)
                try:
                    said = {name.lower(): value for name, value in response.headers.items()}
                    whole = Answer(response.status, said, response.read())
                finally:
                    response.release_conn()
                return lambda: whole
            wire, target = direct
            pending = wire.begin(method, target, headers, data, timeout)

        def answered() -> Answer:
            with _as_api_errors(method, path):
                return pending()

        return answered

    def _by_urllib3(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        data: bytes | None,
        timeout: tuple[float, float],
    ) -> urllib3.BaseHTTPResponse:
        return self.api.rest_client.pool_manager.request(
            method,
            url,
            body=data,
            headers=urllib3.HTTPHeaderDict(headers),
            timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
            preload_content=False,
        )

    def _direct_to(self, url: str) -> tuple[Wire, str] | None:
        """The wire to the API server and the URL's path on it: the client's connection
        pool makes its connections, `wire` speaks on them (see there why). None through a
        proxy, or for a URL not on the configured host: the pool manager's way then. The
        wire is made again if the host changed or the manager closed the pool."""
        manager = self.api.rest_client.pool_manager
        host = self.api.configuration.host
        if isinstance(manager, urllib3.ProxyManager) or not url.startswith(host):
            return None
        if self._direct is None or self._direct[0] != host or self._direct[1].pool is None:
            if self._direct is not None:
                self._direct[2].close()
            parsed = urllib3.util.parse_url(host)
            pool = manager.connection_from_host(parsed.host, parsed.port, parsed.scheme)
            self._direct = (host, pool, Wire(pool), (parsed.path or "").rstrip("/"))
        _, _, wire, prefix = self._direct
        return wire, prefix + url[len(host) :]

    def request(self, method: str, path: str, **kwargs: Any) -> Body:
        return self.begin_request(method, path, **kwargs)()

    def read_text(self, path: str, **kwargs: Any) -> str:
        """A GET whose answer is text, not an object: a pod's log. Errors as `request`'s."""
        answer = self._begin("GET", path, accept="text/plain, */*", **kwargs)()
        if not 200 <= answer.status < 300:
            raise _error(answer.status, answer.body, answer.headers, f"GET {path}")
        return answer.body.decode(errors="replace")

    def begin_request(self, method: str, path: str, **kwargs: Any) -> Callable[[], Body]:
        """`request`, sent now; the call returned reads its answer (and raises what
        `request` would), and must be made: until then its connection is in use."""
        if method in _WRITES and self.field_manager:
            kwargs["query"] = {"fieldManager": self.field_manager, **(kwargs.get("query") or {})}
        pending = self._begin(method, path, **kwargs)

        def answered() -> Body:
            answer = pending()
            if not 200 <= answer.status < 300:
                raise _error(answer.status, answer.body, answer.headers, f"{method} {path}")
            return orjson.loads(answer.body) if answer.body else {}  # orjson: a tenth the time

        return answered

    # -- controllers.base.Kube ---------------------------------------------------------

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        try:
            return self.request("GET", self.path(kind, namespace, name))
        except NotFound:
            return None

    def create(self, kind: Kind, body: Manifest) -> Body:
        namespace = body.get("metadata", {}).get("namespace", "")
        return self.request("POST", self.path(kind, namespace), body=body)

    def replace(self, kind: Kind, body: Manifest) -> Body:
        """PUT: fails with Conflict unless body's resourceVersion is still current."""
        meta = body["metadata"]
        path = self.path(kind, meta.get("namespace", ""), meta["name"])
        return self.request("PUT", path, body=body)

    def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Body:
        """A JSON merge patch; with `resource_version`, a Conflict if the object moved on.
        `conflict_on` is taken as "any": this client keeps no record of its writes."""
        return self.begin_patch(
            kind, namespace, name, patch, resource_version=resource_version, conflict_on=conflict_on
        )()

    def begin_patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Callable[[], Body]:
        del conflict_on
        path = self.path(kind, namespace, name)
        return self.begin_request("PATCH", path, **_merge_patch(patch, resource_version))

    def patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Body:
        return self.begin_patch_status(
            kind, namespace, name, status, resource_version=resource_version
        )()

    def begin_patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Callable[[], Body]:
        path = self.path(kind, namespace, name, "status")
        return self.begin_request(
            "PATCH", path, **_merge_patch({"status": status}, resource_version)
        )

    def delete(self, kind: Kind, namespace: str, name: str) -> None:
        with contextlib.suppress(NotFound):  # already gone is what we wanted
            self.request("DELETE", self.path(kind, namespace, name))

    # -- list and watch, for the engine's watcher ---------------------------------------

    def list(
        self, kind: Kind, namespace: str = "", *, limit: int = 500, fields: str = ""
    ) -> tuple[list[Body], str]:
        """Every object of a kind (paged; `fields`: a field selector), and the list's
        resourceVersion to watch from."""
        items: list[Body] = []
        query: dict[str, Any] = {"limit": limit, **({"fieldSelector": fields} if fields else {})}
        while True:
            page = self.request("GET", self.path(kind, namespace), query=query)
            items.extend(page.get("items") or [])
            meta = page.get("metadata") or {}
            if not meta.get("continue"):
                return items, str(meta.get("resourceVersion", ""))
            query = {**query, "continue": meta["continue"]}

    def watch(
        self,
        kind: Kind,
        namespace: str = "",
        *,
        resource_version: str,
        timeout_seconds: int = 300,
        fields: str = "",
    ) -> Iterator[tuple[str, Body]]:
        """Yields (type, object) from resource_version on, BOOKMARKs included; raises Gone.
        `fields`: a field selector."""
        query: dict[str, Any] = {
            "watch": "1",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_seconds,
            **({"fieldSelector": fields} if fields else {}),
        }
        path = self.path(kind, namespace)
        try:
            timeout = (min(self.timeout, 5.0), timeout_seconds + 30.0)
            for line in self._stream(path, query, timeout, f"WATCH {kind}"):
                yield self._watch_event(kind, orjson.loads(line))
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TemporaryError(f"WATCH {kind}: {exc}") from exc

    def _stream(
        self, path: str, query: dict[str, Any], timeout: tuple[float, float], what: str
    ) -> Iterator[bytes]:
        """A GET's answer line by line as it comes; an answer not 2xx raised as an error."""
        url, headers = self._prepare("GET", path, query, "application/json", ())
        direct = self._direct_to(url)
        if direct is not None:
            wire, target = direct
            answer, lines = wire.stream("GET", target, headers, timeout)
            if not 200 <= answer.status < 300:
                raise _error(answer.status, answer.body, answer.headers, what)
            yield from lines
            return
        response = self._by_urllib3("GET", url, headers, None, timeout)
        try:
            if not 200 <= response.status < 300:
                raise _error(response.status, response.read(), response.headers, what)
            buffer = b""
            for chunk in response.stream(65536, decode_content=True):
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                yield from (line for line in complete if line.strip())
        finally:
            response.release_conn()

    @staticmethod
    def _watch_event(kind: Kind, event: Body) -> tuple[str, Body]:
        if event.get("type") == "ERROR":
            status = event.get("object") or {}
            code = int(status.get("code") or 500)
            raise _error(code, json.dumps(status).encode(), None, f"WATCH {kind}")
        return str(event["type"]), event["object"]


class EventRecorder:
    """Posts Events about an object, aggregated as client-go's EventCorrelator does.

    The same reason and message bump a count: an Event is named after what it says, so
    repeats find and patch it (count+1, lastTimestamp) instead of piling up new objects.
    And like its EventAggregator, once SIMILAR_MAX different messages with one reason
    came within SIMILAR_SECONDS, the next ones join one series, "(combined from similar
    events): <the latest message>", so a CR scaled back and forth makes no Event storm.
    """

    SIMILAR_MAX = 10
    SIMILAR_SECONDS = 600.0
    COMBINED = "(combined from similar events): "

    def __init__(self, kube: ApiKube, *, component: str = "opsboard") -> None:
        self.kube = kube
        self.component = component
        self._counts: dict[tuple[str, str], int] = {}
        # (uid, type, reason) → the distinct messages seen lately, with when
        self._similar: dict[tuple[str, str, str], dict[str, float]] = {}
        self._lock = threading.Lock()

    def post(self, involved: Body, type_: str, reason: str, message: str) -> None:
        meta = involved["metadata"]
        namespace = meta.get("namespace") or "default"
        combined = self._combine(str(meta.get("uid")), type_, reason, message)
        said = "" if combined else message  # a combined series is named without its message
        digest = hashlib.sha1(f"{meta.get('uid')}\0{type_}\0{reason}\0{said}".encode()).hexdigest()
        name = f"{meta['name']}.{digest[:16]}"
        if combined:
            message = self.COMBINED + message
        with self._lock:
            count = self._counts.get((namespace, name))
        now = _now()
        update = {"message": message} if combined else {}
        if count is None:
            try:
                self.kube.create(
                    EVENT, self._event(involved, namespace, name, type_, reason, message)
                )
                count = 1
            except Conflict:  # posted before, by us or an earlier process
                existing = self.kube.get(EVENT, namespace, name) or {}
                count = self._bump(namespace, name, int(existing.get("count") or 1), now, update)
        else:
            try:
                count = self._bump(namespace, name, count, now, update)
            except NotFound:  # expired (Events have a TTL): start again
                with self._lock:
                    self._counts.pop((namespace, name), None)
                return self.post(involved, type_, reason, message.removeprefix(self.COMBINED))
        with self._lock:
            self._counts[(namespace, name)] = count
        return None

    def _combine(self, uid: str, type_: str, reason: str, message: str) -> bool:
        """True once this reason has said SIMILAR_MAX different things lately."""
        now = time.monotonic()
        with self._lock:
            seen = self._similar.setdefault((uid, type_, reason), {})
            for old in [m for m, at in seen.items() if now - at > self.SIMILAR_SECONDS]:
                del seen[old]
            seen[message] = now
            return len(seen) > self.SIMILAR_MAX

    def _bump(
        self, namespace: str, name: str, count: int, now: str, update: Body | None = None
    ) -> int:
        patch = {"count": count + 1, "lastTimestamp": now, **(update or {})}
        self.kube.patch(EVENT, namespace, name, patch)
        return count + 1

    def _event(
        self, involved: Body, namespace: str, name: str, type_: str, reason: str, message: str
    ) -> Body:
        meta = involved["metadata"]
        now = _now()
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {
                "apiVersion": involved.get("apiVersion", ""),
                "kind": involved.get("kind", ""),
                "namespace": meta.get("namespace", ""),
                "name": meta["name"],
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "type": type_,
            "reason": reason,
            "message": message,
            "count": 1,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": self.component},
            "reportingComponent": self.component,
        }
