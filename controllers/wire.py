"""HTTP/1.1 with the API server over connections urllib3 opened: each request written and
its answer read here, in a few lines, instead of through urllib3's and http.client's layers.

urllib3 still makes every connection (its TLS context: the kubeconfig's CA, its client
certificate, the server's name, or no verification at all), so what a connection is
stays the official client's. What this module saves is the work per request, a third of
a pool process's CPU on a real API server (`bench.cpu_profile` on the rig): http.client
parses each answer's headers with the e-mail package, and urllib3 wraps each request in
its retry, timeout and response objects and each watch chunk in a few more calls.

The answer's framing is HTTP/1.1's: a Content-Length, chunks, or (HTTP/1.0, or a server
that says so) the rest of the connection; an idle connection the server has closed is
noticed before it is used, and a request whose reused connection turns out dead before
any answer is sent once more on a new one, as urllib3 and Go's transport do.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from urllib3.util.wait import wait_for_read

from controllers import trace

_NO_BODY = frozenset({204, 304})
_READ = 65536
# How a connection the server closed while it was idle fails (a timeout is not one of
# them: the server may be working on the request, and a write must not be sent twice).
_STALE = (ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


class Answer(NamedTuple):
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes


class Dropped(ConnectionError):
    """The connection ended before the answer did."""


class _Link:
    """One connection: its socket, what was read from it beyond the last answer, and the
    urllib3 connection that opened it (closed with it)."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.sock = connection.sock
        self.buffer = bytearray()
        self.answered = False  # any byte of an answer read: a retry could repeat a write

    def alive(self) -> bool:
        """Idle and still open: nothing to read (the server's close would be readable)."""
        return not self.buffer and not wait_for_read(self.sock, timeout=0.0)

    def close(self) -> None:
        self.connection.close()

    def _fill(self) -> None:
        data = self.sock.recv(_READ)
        if not data:
            raise Dropped("the API server closed the connection before its answer ended")
        self.answered = True
        self.buffer += data

    def _through(self, marker: bytes) -> bytes:
        """The bytes up to `marker`, consumed with it."""
        buffer = self.buffer
        end = buffer.find(marker)
        while end < 0:
            start = max(0, len(buffer) - len(marker) + 1)
            self._fill()
            end = buffer.find(marker, start)
        line = bytes(buffer[:end])
        del buffer[: end + len(marker)]
        return line

    def exactly(self, length: str) -> bytes:
        """A body of Content-Length `length`."""
        if not length.isdigit():
            raise Dropped(f"a malformed Content-Length: {length[:40]!r}")
        size = int(length)
        while len(self.buffer) < size:
            self._fill()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def head(self) -> tuple[int, dict[str, str], bool]:
        """The status, the headers and whether HTTP/1.1 keeps the connection open."""
        status_line, *lines = self._through(b"\r\n\r\n").decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        if not version.startswith("HTTP/") or not rest[:3].isdigit():
            raise Dropped(f"not an HTTP answer: {status_line[:80]!r}")
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        return int(rest[:3]), headers, keep

    def chunks(self) -> Iterator[bytes]:
        """A chunked body's chunks, to the last (its trailer consumed)."""
        buffer = self.buffer
        while True:
            end = buffer.find(b"\r\n")
            while end < 0:
                self._fill()
                end = buffer.find(b"\r\n")
            try:
                size = int(bytes(buffer[:end]).partition(b";")[0], 16)
            except ValueError:
                raise Dropped(f"a malformed chunk: {bytes(buffer[:40])!r}") from None
            if size == 0:
                del buffer[: end + 2]
                while self._through(b"\r\n"):  # trailer fields, to the empty line
                    pass
                return
            whole = end + 2 + size + 2
            while len(buffer) < whole:
                self._fill()
            chunk = bytes(buffer[end + 2 : whole - 2])
            del buffer[:whole]
            yield chunk

    def rest(self) -> bytes:
        """A body that ends with the connection."""
        while True:
            try:
                self._fill()
            except Dropped:
                data = bytes(self.buffer)
                self.buffer.clear()
                return data


class Wire:
    """Requests to the host of one urllib3 pool, on connections of its making, kept open
    between requests (up to `keep` idle ones). Safe to share between threads; a forked
    child opens its own."""

    def __init__(self, pool: Any, *, keep: int = 32) -> None:
        self._pool = pool
        port = pool.port
        default = 443 if pool.scheme == "https" else 80
        self._host = pool.host if port in (None, default) else f"{pool.host}:{port}"
        self._keep = keep
        self._idle: list[_Link] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def begin(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]],
        body: bytes | None,
        timeout: tuple[float, float],
    ) -> Callable[[], Answer]:
        """One request, sent now; its answer read, whole, by the call returned, which
        must be made: the connection is in use until then. Meanwhile the caller may work
        while the server does (a reconcile tells its status while its child's patch is in
        flight)."""
        request = self._request(method, target, headers, body)
        if trace.ON:
            what = f"{method} {target.partition('?')[0]}"
            trace.mark("send", what)
        link, reused = self._sent(request, timeout)
        if trace.ON:
            trace.mark("sent", what)

        def answer() -> Answer:
            answered, status, said, keep = self._head(link, reused, request, timeout)
            whole = Answer(status, said, self._body(answered, method, status, said, keep))
            if trace.ON:
                trace.mark("answered", what)
            return whole

        return answer

    def stream(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]],
        timeout: tuple[float, float],
    ) -> tuple[Answer, Iterator[bytes]]:
        """A chunked answer's head, and its body's non-empty lines as they come (a watch).
        An answer not 2xx, or not chunked, comes whole, with no lines. The connection is
        kept for another request only if the lines are read to their end."""
        link, status, said, keep = self._ask(method, target, headers, None, timeout)
        if 200 <= status < 300 and said.get("transfer-encoding", "").lower() == "chunked":
            return Answer(status, said, b""), self._lines(link, keep)
        return Answer(status, said, self._body(link, method, status, said, keep)), iter(())

    def _ask(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[str, str]],
        body: bytes | None,
        timeout: tuple[float, float],
    ) -> tuple[_Link, int, dict[str, str], bool]:
        """The request sent and its answer's head read, on the link returned with it."""
        request = self._request(method, target, headers, body)
        return self._head(*self._sent(request, timeout), request, timeout)

    def _sent(self, request: bytes, timeout: tuple[float, float]) -> tuple[_Link, bool]:
        """`request` sent on a link, and whether the link was an idle one reused."""
        while True:
            link, reused = self._take(timeout[0])
            try:
                link.sock.settimeout(timeout[1])
                link.sock.sendall(request)
                return link, reused
            except _STALE:
                link.close()
                if reused:
                    continue  # closed while idle, before our request: not seen by the server
                raise
            except BaseException:
                link.close()
                raise

    def _head(
        self, link: _Link, reused: bool, request: bytes, timeout: tuple[float, float]
    ) -> tuple[_Link, int, dict[str, str], bool]:
        """The head of the answer to `request`, sent on `link`; sent once more, on a new
        link, if the reused one turns out to have been closed before any answer."""
        while True:
            try:
                return (link, *link.head())
            except _STALE:
                link.close()
                if not reused or link.answered:
                    raise
                link, reused = self._sent(request, timeout)
            except BaseException:
                link.close()
                raise

    def _body(
        self, link: _Link, method: str, status: int, said: dict[str, str], keep: bool
    ) -> bytes:
        """The answer's body, by its framing; the link kept or closed after it."""
        try:
            if method == "HEAD" or status in _NO_BODY:
                data = b""
            elif said.get("transfer-encoding", "").lower() == "chunked":
                data = b"".join(link.chunks())
            elif (length := said.get("content-length")) is not None:
                data = link.exactly(length)
            else:
                data, keep = link.rest(), False
        except BaseException:
            link.close()
            raise
        self._give(link) if keep else link.close()
        return data

    def _lines(self, link: _Link, keep: bool) -> Iterator[bytes]:
        done = False
        try:
            pending = b""
            for chunk in link.chunks():
                if pending:
                    chunk = pending + chunk
                *lines, pending = chunk.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield line
            if pending.strip():
                yield pending
            done = True
        finally:
            self._give(link) if done and keep else link.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for link in idle:
            link.close()

    # -- connections ------------------------------------------------------------------

    def _request(
        self, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes | None
    ) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host}"]
        for name, value in headers:
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ValueError(f"the header {name!r} has a line break in it")
            lines.append(f"{name}: {value}")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")

    def _take(self, connect_timeout: float) -> tuple[_Link, bool]:
        """An idle connection still open, or a new one; and whether it was idle."""
        if self._pid != os.getpid():  # forked: the parent's connections and lock are not ours
            self._idle, self._lock, self._pid = [], threading.Lock(), os.getpid()
        with self._lock:
            while self._idle:
                link = self._idle.pop()
                if link.alive():
                    link.answered = False
                    return link, True
                link.close()
        connection = self._pool._new_conn()  # the pool's TLS settings, host and port
        connection.timeout = connect_timeout
        connection.connect()
        return _Link(connection), False

    def _give(self, link: _Link) -> None:
        with self._lock:
            if len(self._idle) < self._keep and self._pid == os.getpid():
                self._idle.append(link)
                return
        link.close()
