"""The HTTP layer: one handler thread per connection, HTTP/1.1 keep-alive, JSON bodies.

Every request passes through the request log and the fault injector, then to discovery,
the control API under /_kubesim/, or the resource verbs backed by the store.
"""

from __future__ import annotations

import base64
import contextlib
import re
import select
import socket
import ssl
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import yaml

from kubesim import (
    apply_patch,
    discovery,
    duplicates,
    errors,
    eviction,
    gojson,
    managedfields,
    openapi,
    podlogs,
    protobuf,
    query_options,
    reviews,
    routing,
    tables,
    write_options,
)
from kubesim.authn import UserInfo, certificate_user
from kubesim.errors import ApiError
from kubesim.faults import RequestRecord
from kubesim.jsonutil import JSONDecodeError, dumps, loads
from kubesim.watch import serve_watch

if TYPE_CHECKING:
    from kubesim.server import KubeSim

MAX_BODY = 3 * 1024 * 1024
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
PATCH_ACCEPTED = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/strategic-merge-patch+json",
]
TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
BODY_ACCEPTED = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubesim"
    timeout = 300  # idle keep-alive connections give their thread back after this
    sim: KubeSim  # set on the subclass the server builds
    # Per request, set by _serve before anything reads them.
    _status: int
    _logged: tuple[dict[str, str], float, int | None] | None
    _warnings: list[str]
    _duplicates: duplicates.Duplicates | None  # the fields the request's JSON body repeated
    _body_read: bool
    _audit_id: str
    _url_path: str

    # --- plumbing -----------------------------------------------------------------------------

    _user: UserInfo
    _certified: UserInfo | None = None  # whom the connection's client certificate names

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()
            self._certified = certificate_user(self.connection.getpeercert())

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def _record(self, status: int) -> None:
        """Log the request as its answer starts, so a client that got it can read the log."""
        self._status = status
        if self._logged is None:
            return
        info, started, fault_id = self._logged
        self._logged = None
        self.sim.requests.add(
            RequestRecord(
                time.time(),
                self.command,
                self._url_path,
                info["verb"],
                info["resource"],
                info["subresource"],
                info["namespace"],
                info["name"],
                status,
                round((time.perf_counter() - started) * 1000, 3),
                self.headers.get("User-Agent", ""),
                fault_id,
                self.query.get("fieldManager", ""),
            )
        )

    def send_bytes(
        self,
        code: int,
        body: bytes,
        *,
        content_type: str | None = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        """`content_type` None sends none (an empty answer of Go's, such as http.NotFound's)."""
        if not self._body_read:  # else it would be read as the next request on this connection
            self._drain()
        self._record(code)
        lines = [
            f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}",
            *([f"Content-Type: {content_type}"] if content_type else []),
            f"Content-Length: {len(body)}",
            f"Cache-Control: {(headers or {}).get('Cache-Control', 'no-cache, private')}",
            f"Audit-Id: {self._audit_id}",
        ]
        for k, v in (headers or {}).items():
            if k != "Cache-Control":
                lines.append(f"{k}: {v}")
        for w in self._warnings:
            lines.append(f'Warning: 299 - "{_escape(w)}"')
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        self.wfile.write(head if self.command == "HEAD" else head + body)

    def send_obj(self, code: int, obj: Any, **kw: Any) -> None:
        self.send_bytes(code, dumps(obj), **kw)

    def send_error_status(self, exc: ApiError) -> None:
        self.send_obj(exc.code, exc.status(), headers=exc.headers)

    @contextlib.contextmanager
    def streamed(self, content_type: str = "application/json") -> Iterator[None]:
        """A chunked answer written in the block, ended with its last chunk when the block
        ends. That leaves the connection open for the next request, as Go's server does
        (closing it under a client that already reuses it loses that request); one the
        client dropped, or a server stopping, is closed."""
        self.start_stream(content_type)
        ended = False
        try:
            yield
            self.end_stream()
            ended = not (self.sim.store.closed or self.sim.stopping)
        except OSError:
            pass
        finally:
            self.close_connection = not ended

    def start_stream(self, content_type: str = "application/json") -> None:
        self._record(200)
        lines = [
            "HTTP/1.1 200 OK",
            f"Content-Type: {content_type}",
            "Transfer-Encoding: chunked",
            "Cache-Control: no-cache, private",
            f"Audit-Id: {self._audit_id}",
        ]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode())

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def _read_body(self) -> bytes:
        if self._body_read:
            return b""
        self._body_read = True
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks, total = [], 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > MAX_BODY:
                    self.close_connection = True
                    raise errors.too_large(MAX_BODY)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        if length > MAX_BODY:
            self.close_connection = True
            # Read what was sent (within reason) before answering: over TLS a client still
            # writing when the server closes sees an EOF, not the 413.
            left = min(length, 4 * MAX_BODY)
            while left > 0 and (chunk := self.rfile.read(min(left, 1 << 16))):
                left -= len(chunk)
            raise errors.too_large(MAX_BODY)
        return self.rfile.read(length) if length else b""

    # --- dispatch -----------------------------------------------------------------------------

    def _serve(self) -> None:
        started = time.perf_counter()
        self._status = 0
        self._logged = None
        self._warnings = []
        self._duplicates = None
        self._body_read = False
        self._audit_id = self.sim.next_audit_id()
        url = urlsplit(self.path)
        self._url_path = url.path
        self._query_lists = parse_qs(url.query, keep_blank_values=True)
        # single-valued options take the first of repeated values; dryRun is a list
        self.query = query_options.first_values(self._query_lists)
        parts = [p for p in url.path.split("/") if p]
        info = {"verb": "", "resource": "", "subresource": "", "namespace": "", "name": ""}
        if parts[:1] != ["_kubesim"]:
            self._logged = (info, started, None)
        try:
            if parts and parts[0] == "_kubesim":
                self.sim.control.dispatch(self, url.path)
                return
            target = routing.parse(self.sim.store.registry, parts)
            if target is not None:
                info.update(self._describe(target))
            # Authentication, impersonation and authorization come first, as in
            # kube-apiserver's filter chain: a path is only looked up for whom may ask.
            self._user, _ = self.sim.access.admit(
                self.command, url.path, self.query, self.headers, self._certified
            )
            self.sim.store.requested_by(self._user)  # admission webhooks tell who asks
            if target is not None:
                delay, err, fault_id = self.sim.faults.before(
                    info["verb"], info["resource"], info["namespace"] or None, info["name"]
                )
                self._logged = (info, started, fault_id)
                if delay:
                    time.sleep(delay)
                if err is not None:
                    self._drain()
                    raise err
                if info["verb"] == "watch":
                    self._resource(target, info["verb"])
                else:
                    with self.sim.serving.request():
                        self._resource(target, info["verb"])
            else:
                self._non_resource(parts)
        except ApiError as exc:
            self.send_error_status(exc)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # never leave a client without an answer
            self.sim.log.exception("kubesim: %s %s failed", self.command, self.path)
            try:
                self.send_error_status(errors.internal(str(exc)))
            except OSError:
                self.close_connection = True

    def _drain(self) -> None:
        with contextlib.suppress(ApiError):
            self._read_body()

    def _describe(self, t: routing.Target) -> dict[str, str]:
        method = self.command
        if method == "GET":
            if t.watch_path or query_options.bool_option(self.query, "watch"):
                verb = "watch"
            else:
                verb = "get" if t.name else "list"
        elif method == "POST":
            verb = "create"
        elif method == "PUT":
            verb = "update"
        elif method == "PATCH":
            verb = "patch"
        elif method == "DELETE":
            verb = "delete" if t.name else "deletecollection"
        else:
            verb = method.lower()
        return {
            "verb": verb,
            "resource": t.rt.key,
            "subresource": t.subresource or "",
            "namespace": t.namespace or "",
            "name": t.name or "",
        }

    def _non_resource(self, parts: list[str]) -> None:
        if self.command not in ("GET", "HEAD"):
            discovery_path = (parts[:1] == ["api"] and len(parts) <= 2) or (
                parts[:1] == ["apis"] and len(parts) <= 3
            )
            if discovery_path and self._served(parts):
                raise errors.method_not_allowed()
            self._not_found(parts)
            return
        reg = self.sim.store.registry
        doc: Any = None
        if parts == ["version"]:
            doc = discovery.KUBE_VERSION
        elif parts in (["healthz"], ["livez"], ["readyz"]):
            self.send_bytes(200, b"ok", content_type="text/plain; charset=utf-8")
            return
        elif parts == ["api"]:
            doc = discovery.api_versions(self.sim.address)
        elif parts == ["apis"]:
            doc = discovery.api_group_list(reg)
        elif parts == ["api", "v1"]:
            doc = discovery.resource_list(reg, "", "v1")
        elif len(parts) == 2 and parts[0] == "apis":
            doc = discovery.api_group(reg, parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            doc = discovery.resource_list(reg, parts[1], parts[2])
        elif parts[:2] == ["openapi", "v3"]:
            answer = openapi.v3(
                reg,
                parts[2:],
                asked=self.query.get("hash"),
                if_none_match=self.headers.get("If-None-Match"),
            )
            # the empty 404 of Go's http.NotFound has no content type
            content_type = None if answer.code == 404 else "application/json"
            self.send_bytes(
                answer.code, answer.body, content_type=content_type, headers=answer.headers
            )
            return
        elif parts == ["openapi", "v2"]:
            if "protobuf" in self.headers.get("Accept", ""):
                # An empty gnostic Document: kubectl then skips client-side validation of
                # kinds it cannot find, and reports unknown kinds as a real cluster does.
                self.send_bytes(200, b"", content_type=openapi.V2_PROTOBUF)
                return
            doc = openapi.V2_EMPTY
        if doc is None:
            self._not_found(parts)
            return
        self.send_obj(200, doc)

    def _served(self, parts: list[str]) -> bool:
        return parts[:1] == ["api"] or (
            parts[:1] == ["apis"]
            and (len(parts) < 2 or parts[1] in self.sim.store.registry.groups())
        )

    def _not_found(self, parts: list[str]) -> None:
        """A Status under /api and a served group; the mux's plain text anywhere else
        (kube-apiserver has no handler at all for a group it does not serve)."""
        if self._served(parts):
            raise errors.resource_not_found()
        self.send_bytes(404, b"404 page not found\n", content_type="text/plain; charset=utf-8")

    # --- resources ----------------------------------------------------------------------------

    def _resource(self, t: routing.Target, verb: str) -> None:
        rt = t.rt
        if (rt.namespaced is False and t.namespace) or (
            rt.namespaced and t.name and not t.namespace
        ):
            raise errors.resource_not_found()
        if t.subresource and t.subresource not in rt.subresources():
            raise errors.resource_not_found()
        base = verb.split("/")[0]
        allowed = rt.verbs if not t.subresource else rt.subresources()[t.subresource]
        if base not in allowed and not (base == "watch" and "watch" in rt.verbs):
            self._drain()
            raise errors.method_not_allowed()
        if verb in ("create", "update"):  # a patch's are checked once its type is known
            write_options.check_write(verb, self._query_lists)
        dry_run = write_options.dry_run(self._query_lists.get("dryRun", []))
        fv = self.query.get("fieldValidation") or None
        store = self.sim.store
        if verb == "watch":
            serve_watch(self, t)
        elif verb == "list":
            self._list(t)
        elif verb == "get":
            if t.subresource == "scale":
                obj = store.get_scale(rt.key, t.namespace, t.name or "")
                self.send_obj(200, obj)
                return
            obj, data = store.get_entry(rt.key, t.namespace, t.name or "")
            if t.subresource == "log":
                self._log(obj)
                return
            self._send_object(t, 200, obj, data)
        elif verb == "create":
            body = self._body(t)
            if reviews.is_review(rt.key):
                self.send_obj(
                    201, reviews.review(self.sim.access, self._user, rt.key, t.namespace, body)
                )
                return
            if t.subresource == "token":
                answer = reviews.token_request(
                    self.sim.access, t.namespace or "", t.name or "", body
                )
                self.send_obj(201, answer)
                return
            if t.subresource == "binding":
                self.send_obj(201, store.bind(t.namespace or "", t.name or "", body))
                return
            if t.subresource == "eviction":
                self._evict(t, body, dry_run)
                return
            if t.name:
                raise errors.method_not_allowed()
            obj, data = store.create_entry(
                rt.key,
                body,
                namespace=t.namespace,
                dry_run=dry_run,
                field_validation=fv,
                warnings=self._warnings,
                field_manager=self._manager(),
                duplicates=self._duplicates,
            )
            self._send_object(t, 201, obj, data)
        elif verb == "update":
            body = self._body(t)
            obj, data = store.update_entry(
                rt.key,
                body,
                subresource=t.subresource,
                namespace=t.namespace,
                name=t.name,
                dry_run=dry_run,
                field_validation=fv,
                warnings=self._warnings,
                field_manager=self._manager(),
                duplicates=self._duplicates,
            )
            self._send_object(t, 200, obj, data)
        elif verb == "patch":
            self._patch(t, dry_run, fv)
        elif verb == "delete":
            self._delete(t)
        elif verb == "deletecollection":
            opts = self._delete_options()
            dry_run = bool(opts.get("dryRun"))
            items = store.delete_collection(
                rt.key,
                t.namespace,
                label_selector=self.query.get("labelSelector"),
                field_selector=self.query.get("fieldSelector"),
                propagation=opts.get("propagationPolicy"),
                grace_period_seconds=opts.get("gracePeriodSeconds"),
                dry_run=dry_run,
            )
            self.send_obj(
                200,
                {
                    "kind": rt.list_kind,
                    "apiVersion": rt.api_version_for(t.version),
                    "metadata": {},
                    "items": items,
                },
            )
        else:
            raise errors.method_not_allowed()

    def _log(self, pod: dict[str, Any]) -> None:
        """pods/log: the options checked, the container found, then what its kubelet would
        send (kubesim.podlogs); a pod on no node yet has none to ask: 204, as the API
        server's empty location gives."""
        options = podlogs.LogOptions(self.query, datetime.now(UTC))
        if options.problems:
            raise errors.invalid("PodLogOptions", "", pod["metadata"]["name"], options.problems)
        container = podlogs.container_name(pod, options.container)
        if not (pod.get("spec") or {}).get("nodeName"):
            self.send_bytes(204, b"", content_type=None)
            return
        run = podlogs.run_of(pod, container, previous=options.previous)
        lines = podlogs.lines_of(pod, container, run)
        if not options.follow or "terminated" in run:
            self.send_bytes(200, podlogs.render(lines, options), content_type="text/plain")
            return
        self._follow(pod, container, run, options, podlogs.tail_start(len(lines), options))

    def _follow(
        self,
        pod: dict[str, Any],
        container: str,
        run: dict[str, Any],
        options: podlogs.LogOptions,
        start: int,
    ) -> None:
        """A running container's log, streamed as it grows until the container stops, its
        pod goes, the client hangs up or the server stops (the kubelet's follow)."""
        store, meta = self.sim.store, pod["metadata"]
        changed, written = store.changed_of("pods"), 0
        with self.streamed(content_type="text/plain"):
            while True:
                seen = store.writes_to(("pods",))
                out = podlogs.render(podlogs.lines_of(pod, container, run), options, start=start)
                if len(out) > written:
                    self.write_chunk(out[written:])
                    written = len(out)
                full = options.limit is not None and written >= options.limit
                if "terminated" in run or full or store.closed or self.sim.stopping:
                    break
                if self._hung_up():
                    break
                with changed:
                    if store.writes_to(("pods",)) == seen:
                        changed.wait(1.0)
                try:
                    now = store.get("pods", meta.get("namespace"), meta["name"])
                except ApiError:
                    now = None
                if now is not None and now["metadata"].get("uid") != meta.get("uid"):
                    now = None  # another pod of that name: this one went
                pod, run = now or pod, podlogs.still(now, container, run)

    def _hung_up(self) -> bool:
        """A client waiting for a streamed answer sends nothing: a readable connection is
        one it closed."""
        readable, _, _ = select.select([self.connection], [], [], 0)
        return bool(readable)

    def _evict(self, t: routing.Target, body: dict[str, Any], dry_run: bool) -> None:
        """policy/v1 Eviction: delete the pod if its disruption budget allows it."""
        opts = body.get("deleteOptions") or {}
        eviction.evict(
            self.sim.store,
            t.namespace or "",
            t.name or "",
            opts,
            dry_run=dry_run or "All" in (opts.get("dryRun") or []),
        )
        self.send_obj(
            201,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": 201,
            },
        )

    def _manager(self) -> str:
        """Who the write's managedFields entry names."""
        return managedfields.manager_name(
            self.query.get("fieldManager"), self.headers.get("User-Agent", "")
        )

    def _content_type(self) -> str:
        return (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()

    def _decode(self, raw: bytes, content_type: str, *, struct: bool = False) -> Any:
        """A JSON or YAML body; DecodeError carries the Go decoder's words. Repeated fields
        are kept as Go keeps them (a JSON body's into a `struct`, a built-in kind's, merged;
        else the last), and noted in _duplicates."""
        if content_type in ("application/yaml", "application/apply-patch+yaml"):
            if not raw.strip():
                return None
            try:
                body, repeated = duplicates.load_yaml(raw)
            except yaml.YAMLError as exc:
                raise DecodeError(_yaml_message(exc)) from None
            if repeated:
                self._duplicates = duplicates.Duplicates(struct, yaml=repeated)
            return body
        try:
            body = loads(raw)
        except JSONDecodeError:
            raise DecodeError(gojson.syntax_error(raw) or gojson.END) from None
        if duplicates.suspected(raw, body):
            again, found = duplicates.decode(raw, merge=struct)
            if found.found:
                body, self._duplicates = again, found
        return body

    def _body(self, t: routing.Target) -> Any:
        ct = self._content_type()
        raw = self._read_body()
        if ct == "application/vnd.kubernetes.protobuf":
            return protobuf.decode(raw, BODY_ACCEPTED)
        if ct not in ("application/json", "application/yaml", "*/*", ""):
            raise errors.unsupported_media(BODY_ACCEPTED)
        # The words of rest.go's transformDecodeError, with its summary of the body.
        kind = _SUBRESOURCE_KINDS.get(t.subresource or "", t.rt.kind)
        unrecognized = f"the object provided is unrecognized (must be of type {kind})"
        try:
            body = self._decode(raw, ct, struct=not t.rt.crd)
        except DecodeError as exc:
            if ct == "application/yaml":
                raise errors.bad_request(f"{unrecognized}: {exc} ({_summary(raw)})") from None
            raise errors.bad_request(
                f"{unrecognized}: couldn't get version/kind; json parse error: {exc} "
                f"({_summary(raw)})"
            ) from None
        if body is not None and not isinstance(body, dict):
            why = gojson.unmarshal_type_error(body, _TYPE_META)
            raise errors.bad_request(
                f"{unrecognized}: couldn't get version/kind; json parse error: {why} "
                f"({_summary(raw)})"
            )
        if not isinstance(body, dict):
            raise errors.bad_request(
                "Object 'Kind' is missing in '" + raw[:200].decode("utf-8", "replace") + "'"
            )
        return body

    def _version_data(self, t: routing.Target, obj: dict[str, Any], data: bytes) -> bytes:
        want = t.rt.api_version_for(t.version)
        if t.subresource == "scale" or obj.get("apiVersion") in (want, None):
            return data
        return dumps(obj | {"apiVersion": want})

    def _send_object(self, t: routing.Target, code: int, obj: dict[str, Any], data: bytes) -> None:
        accept = self.headers.get("Accept", "")
        if "as=Table" in accept:
            doc = tables.table(
                t.rt,
                t.version,
                [obj],
                include=self.query.get("includeObject", "Metadata"),
                list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")},
            )
            self.send_obj(code, doc, content_type=TABLE_TYPE)
            return
        if "as=PartialObjectMetadata" in accept and "as=PartialObjectMetadataList" not in accept:
            self.send_obj(
                code,
                {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj["metadata"],
                },
            )
            return
        self.send_bytes(code, self._version_data(t, obj, data))

    def _list(self, t: routing.Target) -> None:
        rt, q = t.rt, self.query
        _, limit = query_options.list_ints(q)
        start = None
        if q.get("continue"):
            start = _decode_continue(q["continue"])
        entries, rv, last, remaining = self.sim.store.list_entries(
            rt.key,
            t.namespace,
            label_selector=q.get("labelSelector"),
            field_selector=q.get("fieldSelector"),
            limit=limit if limit and limit > 0 else None,
            start_after=start,
        )
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if last is not None:
            meta["continue"] = _encode_continue(rv, last)
            if not q.get("labelSelector") and not q.get("fieldSelector"):
                meta["remainingItemCount"] = remaining
        accept = self.headers.get("Accept", "")
        if "as=Table" in accept:
            objs = [e[0] for e in entries]
            doc = tables.table(
                rt, t.version, objs, include=q.get("includeObject", "Metadata"), list_meta=meta
            )
            self.send_obj(200, doc, content_type=TABLE_TYPE)
            return
        if "as=PartialObjectMetadataList" in accept:
            self.send_obj(
                200,
                {
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": meta,
                    "items": [
                        {
                            "kind": "PartialObjectMetadata",
                            "apiVersion": "meta.k8s.io/v1",
                            "metadata": e[0]["metadata"],
                        }
                        for e in entries
                    ],
                },
            )
            return
        want = rt.api_version_for(t.version)
        items = [
            d if o.get("apiVersion") == want else dumps(o | {"apiVersion": want})
            for o, d in entries
        ]
        head = dumps({"kind": rt.list_kind, "apiVersion": want, "metadata": meta})
        self.send_bytes(200, head[:-1] + b',"items":[' + b",".join(items) + b"]}")

    def _patch(self, t: routing.Target, dry_run: bool, fv: str | None) -> None:
        ct = self._content_type()
        patch_type = PATCH_TYPES.get(ct)
        raw = self._read_body()
        if patch_type is None:
            raise errors.unsupported_media(PATCH_ACCEPTED)
        if patch_type == "strategic" and t.rt.crd:
            raise errors.unsupported_media(PATCH_ACCEPTED[:3])
        write_options.check_write("patch", self._query_lists, apply=patch_type == "apply")
        try:
            body = self._decode(raw, ct, struct=False)
        except DecodeError as exc:
            # patch.go: merge and JSON patches name the step, a strategic merge patch does not
            prefix = "" if patch_type in ("strategic", "apply") else "error decoding patch: "
            raise errors.bad_request(f"{prefix}{exc}") from None
        if patch_type == "json":
            self._duplicates = None  # a JSON patch's operations are not checked
        existed = True
        if patch_type == "apply":
            try:
                self.sim.store.get_entry(t.rt.key, t.namespace, t.name or "")
            except ApiError:
                existed = False
            # A subresource is never created by an apply: its 404 comes before the body's check.
            if existed or t.subresource is None:
                if t.subresource == "scale":
                    body = apply_patch.applied_object(body, "autoscaling", "v1", "Scale")
                else:
                    body = apply_patch.applied_object(body, t.rt.group, t.version, t.rt.kind)
                    if not t.rt.crd:
                        apply_patch.check_typed(body, t.rt.key, t.rt.group, t.version)
            if isinstance(body, dict):
                meta = body.setdefault("metadata", {})
                if isinstance(meta, dict):
                    meta.setdefault("name", t.name)
        obj, data = self.sim.store.patch_entry(
            t.rt.key,
            t.namespace,
            t.name or "",
            body,
            patch_type=patch_type,
            subresource=t.subresource,
            dry_run=dry_run,
            field_validation=fv,
            warnings=self._warnings,
            field_manager=self._manager(),
            force=patch_type == "apply" and query_options.bool_option(self.query, "force"),
            duplicates=self._duplicates,
        )
        self._send_object(t, 200 if existed else 201, obj, data)

    def _delete_options(self) -> dict[str, Any]:
        raw = self._read_body()
        opts: dict[str, Any] = {}
        dry_runs = self._query_lists.get("dryRun", [])
        if raw.strip():
            try:
                body = self._decode(raw, self._content_type())
            except DecodeError as exc:
                raise errors.bad_request(str(exc)) from None
            if isinstance(body, dict):
                opts = body
            # options come from the body when there is one, else from the query
            dry_runs = opts.get("dryRun") or []
        q = self.query
        if q.get("propagationPolicy"):
            opts["propagationPolicy"] = q["propagationPolicy"]
        if "gracePeriodSeconds" in q:
            opts["gracePeriodSeconds"] = query_options.int_option(q, "gracePeriodSeconds")
        if q.get("orphanDependents") == "true" or opts.get("orphanDependents") is True:
            opts.setdefault("propagationPolicy", "Orphan")
        elif opts.get("orphanDependents") is False:
            opts.setdefault("propagationPolicy", "Background")
        write_options.check_delete(opts.get("propagationPolicy"), dry_runs)
        opts["dryRun"] = dry_runs
        return opts

    def _delete(self, t: routing.Target) -> None:
        opts = self._delete_options()
        dry_run = bool(opts["dryRun"])
        (obj, data), gone = self.sim.store.delete_entry(
            t.rt.key,
            t.namespace,
            t.name or "",
            propagation=opts.get("propagationPolicy"),
            grace_period_seconds=opts.get("gracePeriodSeconds"),
            preconditions=opts.get("preconditions"),
            dry_run=dry_run,
        )
        # kube-apiserver answers 202 only for a pending delete that asked orphanDependents=false.
        code = 202 if not gone and opts.get("orphanDependents") is False else 200
        if gone and not t.rt.returns_deleted:
            # Stores without ReturnDeletedObject answer a Status naming what went; a pending
            # delete (finalizers, graceful pods) answers the object on every store.
            details = {
                "name": obj["metadata"]["name"],
                "group": t.rt.group,
                "kind": t.rt.plural,
                "uid": obj["metadata"]["uid"],
            }
            if not t.rt.group:
                del details["group"]
            self.send_obj(
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                },
            )
            return
        self._send_object(t, code, obj, data)


class DecodeError(Exception):
    """A body that is not JSON or YAML; the message is the Go decoder's."""


# What a body sent to these subresources must be, for the decode error's wording.
_SUBRESOURCE_KINDS = {
    "scale": "Scale",
    "eviction": "Eviction",
    "binding": "Binding",
    "token": "TokenRequest",
}
# The struct apimachinery first decodes a body into, to find its apiVersion and kind.
_TYPE_META = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


def _summary(data: bytes, limit: int = 30) -> str:
    """rest.go's summarizeData: JSON objects as text, anything else in hex, cut at 30 bytes."""
    if not data:
        return "<empty>"
    cut, more = data[:limit], " ..." if len(data) > limit else ""
    if data[:1] == b"{":
        return cut.decode("utf-8", "replace") + more
    return cut.hex() + more


def _yaml_message(exc: yaml.YAMLError) -> str:
    """go-yaml's wording, close enough: both descend from libyaml, but go-yaml says
    "did not find expected X" where PyYAML says "expected X, but found Y"."""
    problem = str(getattr(exc, "problem", None) or exc)
    expected = re.match(r"expected (.*), but (?:found|got) ", problem)
    if expected:
        problem = f"did not find expected {expected.group(1)}"
    mark = getattr(exc, "problem_mark", None)
    return f"yaml: line {mark.line + 1}: {problem}" if mark else f"yaml: {problem}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _encode_continue(rv: int, last: tuple[str, str]) -> str:
    token = dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{last[0]}/{last[1]}\x00"})
    return base64.urlsafe_b64encode(token).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        data = loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = data["start"].rstrip("\x00").partition("/")
        return ns, name
    except Exception:
        raise errors.bad_request("continue key is not valid: invalid continue token") from None
