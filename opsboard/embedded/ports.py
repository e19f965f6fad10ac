"""Ports on 127.0.0.1, where `make run` and the tests start their servers."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the OS hands out as free now (another process may take it before we do)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    """Whether a server could not listen on 127.0.0.1:`port` now: another one listens there
    (on 127.0.0.1 or on every address). SO_REUSEADDR, as gunicorn, redis-server and kubesim
    bind, so the closing connections of a server just stopped do not count."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False
