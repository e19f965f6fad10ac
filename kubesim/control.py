"""The control API under /_kubesim/: a tiny router the server and the cluster register on."""

from __future__ import annotations

import re
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesim import errors
from kubesim.errors import ApiError
from kubesim.jsonutil import JSONDecodeError, loads

if TYPE_CHECKING:
    from kubesim.handler import Handler


@dataclass
class ControlRequest:
    method: str
    path: str
    params: dict[str, str]  # from {placeholders} in the registered path
    query: dict[str, str]
    body: Any


# A handler returns a JSON-able body (status 200) or (status, body).
ControlHandler = Callable[[ControlRequest], Any]


class ControlRouter:
    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], str, ControlHandler]] = []
        self._lock = threading.Lock()

    def register(self, method: str, path: str, handler: ControlHandler) -> None:
        """Route `method path` (e.g. "POST", "/_kubesim/nodes/{name}/ready") to `handler`."""
        if not path.startswith("/_kubesim/"):
            path = "/_kubesim/" + path.lstrip("/")
        pattern = re.compile(
            "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path.rstrip("/"))) + "/?$"
        )
        with self._lock:
            self._routes.append((method.upper(), pattern, path, handler))

    def routes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, _, p, _ in self._routes]

    def dispatch(self, h: Handler, path: str) -> None:
        raw = h._read_body()
        body = None
        if raw.strip():
            try:
                body = loads(raw)
            except JSONDecodeError as exc:
                raise errors.bad_request(f"invalid JSON: {exc}") from None
        path_matched = False
        for method, pattern, _, handler in list(self._routes):
            m = pattern.match(path)
            if not m:
                continue
            path_matched = True
            if method != h.command:
                continue
            req = ControlRequest(h.command, path, m.groupdict(), dict(h.query), body)
            try:
                result = handler(req)
            except (ValueError, TypeError, KeyError) as exc:
                raise errors.bad_request(str(exc)) from None
            code, doc = result if isinstance(result, tuple) else (200, result)
            h.send_obj(code, doc if doc is not None else {})
            return
        if path_matched:
            raise errors.method_not_allowed()
        raise ApiError(404, "NotFound", f"no kubesim control endpoint {h.command} {path}")


def client_context(server: str) -> ssl.SSLContext | None:
    """The TLS context the control CLIs call a kubesim with. The control API is a loopback
    test hook and these callers hold no kubeconfig with kubesim's CA, so it is not verified."""
    if not server.startswith("https:"):
        return None
    return ssl._create_unverified_context()
