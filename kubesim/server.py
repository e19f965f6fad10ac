"""The kubesim server: the store, the HTTP API, the control API and (when present) the cluster."""

from __future__ import annotations

import base64
import importlib
import importlib.util
import itertools
import logging
import os
import socket
import ssl
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from kubesim import builtin_schema, http_headers
from kubesim.access import Access
from kubesim.control import ControlHandler, ControlRequest, ControlRouter
from kubesim.faults import Fault, Faults, RequestLog, RequestRecord
from kubesim.gc import GarbageCollector
from kubesim.handler import Handler
from kubesim.serving import Serving
from kubesim.store import Store
from kubesim.tls import Authority

log = logging.getLogger("kubesim")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        if self.tls is None:
            return conn, addr
        # The handshake happens in the connection's own thread (Handler.setup), so one slow
        # or broken client never holds up the accept loop.
        return self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up or refuses the certificate is not the server's error


class KubeSim:
    """One emulated cluster. `start()` serves it; `stop()` ends every thread it started."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: str | Path | None = None,
        seed: int | None = None,
        nodes: int = 3,
        pod_start_delay: float = 0.2,
        cluster: bool = True,
        cluster_options: dict[str, Any] | None = None,
        tls: bool = True,
        tls_names: tuple[str, ...] = (),
    ) -> None:
        self.log = log
        data = Path(data_dir) if data_dir is not None else None
        self.authority = Authority(data / "pki" if data is not None else None)
        self.store = Store(data_dir, seed=seed, root_ca=self.authority.cert_pem.decode())
        self.gc = GarbageCollector(self.store)
        self.access = Access(self.store, data / "auth" if data is not None else None)
        self.access.start()
        self.faults = Faults(seed)
        self.serving = Serving()  # the cluster's controllers give way to requests
        self.requests = RequestLog()
        self.control = ControlRouter()
        self.stopping = False
        self._audit = itertools.count(1)
        handler = type("KubeSimHandler", (Handler,), {"sim": self})
        http_headers.install()  # for every request's headers: see http_headers
        self.httpd = _HTTPServer((host, port), handler)
        self.tls = tls
        if tls:
            self.httpd.tls = self.authority.server_context(host, tls_names)
        self._thread: threading.Thread | None = None
        self.cluster: Any = None
        self._want_cluster = cluster
        self.cluster_options = {
            "nodes": nodes,
            "pod_start_delay": pod_start_delay,
            "seed": seed,
            **(cluster_options or {}),
        }
        self._register_builtin_routes()

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return str(self.httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.address}"

    @property
    def admin_token(self) -> str:
        return self.access.authenticator.admin_token

    @property
    def ca_pem(self) -> bytes:
        return self.authority.cert_pem

    def start(self) -> KubeSim:
        builtin_schema.warm_up()
        self._thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="kubesim-http",
            daemon=True,
        )
        self._thread.start()
        if self._want_cluster and importlib.util.find_spec("kubesim.cluster") is not None:
            module = importlib.import_module("kubesim.cluster")
            self.cluster = module.Cluster(
                self.store, self.cluster_options, give_way=self.serving.give_way
            )
            if hasattr(self.cluster, "register_routes"):
                self.cluster.register_routes(self.register_control)
            self.cluster.start()
        return self

    def stop(self) -> None:
        self.stopping = True
        if self.cluster is not None:
            self.cluster.stop()
        self.store.wake_watches()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.gc.stop()
        self.store.close()

    def __enter__(self) -> KubeSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_audit_id(self) -> str:
        return f"kubesim-{next(self._audit)}"

    def kubeconfig(self, *, context: str = "kubesim", token: str | None = None) -> dict[str, Any]:
        """A kubeconfig for this server: the admin's token unless another one is given."""
        cluster: dict[str, Any] = {"server": self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": {"token": token or self.admin_token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": context, "namespace": "default"},
                }
            ],
            "current-context": context,
            "preferences": {},
        }

    def write_kubeconfig(self, path: str | Path, *, token: str | None = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Whole or not at all: callers poll for the file and read it once it exists (an
        # empty one, read between open and write, failed a bench scenario under load).
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds a token
        with os.fdopen(fd, "w") as f:
            f.write(yaml.safe_dump(self.kubeconfig(token=token), sort_keys=False))
        os.replace(partial, path)
        return path

    # --- the control API ----------------------------------------------------------------------

    def register_control(self, method: str, path: str, handler: ControlHandler) -> None:
        self.control.register(method, path, handler)

    def _register_builtin_routes(self) -> None:
        reg = self.control.register
        reg("GET", "/_kubesim/healthz", lambda r: {"ok": True, "url": self.url})
        reg("GET", "/_kubesim/requests", self._get_requests)
        reg("DELETE", "/_kubesim/requests", self._clear_requests)
        reg("GET", "/_kubesim/faults", lambda r: {"items": self.faults.list()})
        reg("POST", "/_kubesim/faults", self._post_fault)
        reg("DELETE", "/_kubesim/faults", self._clear_faults)
        reg("DELETE", "/_kubesim/faults/{id}", self._delete_fault)
        reg("POST", "/_kubesim/faults/seed", self._seed)
        reg("POST", "/_kubesim/watches/close", self._close_watches)

    def _get_requests(self, r: ControlRequest) -> dict[str, Any]:
        since = float(r.query["since"]) if r.query.get("since") else None
        items = self.requests.records(
            verb=r.query.get("verb") or None, resource=r.query.get("resource") or None, since=since
        )
        return {"items": [i.to_dict() for i in items]}

    def _post_fault(self, r: ControlRequest) -> tuple[int, dict[str, Any]]:
        return 201, self.add_fault(dict(r.body or {})).to_dict()

    def _clear_requests(self, r: ControlRequest) -> dict[str, Any]:
        self.requests.clear()
        return {"cleared": True}

    def _clear_faults(self, r: ControlRequest) -> dict[str, Any]:
        self.faults.clear()
        return {"cleared": True}

    def _delete_fault(self, r: ControlRequest) -> tuple[int, dict[str, Any]]:
        if self.faults.remove(int(r.params["id"])):
            return 200, {"deleted": int(r.params["id"])}
        return 404, {"error": f"no fault {r.params['id']}"}

    def _seed(self, r: ControlRequest) -> dict[str, Any]:
        self.faults.seed(int((r.body or {})["seed"]))
        return {"seeded": True}

    def _close_watches(self, r: ControlRequest) -> dict[str, Any]:
        self.close_watches((r.body or {}).get("resource"))
        return {"closed": True}

    # --- Python API for tests -----------------------------------------------------------------

    def add_fault(self, spec: dict[str, Any]) -> Fault:
        """Add a fault from its JSON form: {"type": "latency"|"error"|"expire-watch", ...}."""
        kind = spec.pop("type", None)
        common = {k: spec.pop(k) for k in ("verb", "resource", "namespace") if k in spec}
        if kind == "latency":
            return self.faults.add_latency(
                float(spec.pop("latency_ms", spec.pop("ms", 0))),
                jitter_ms=float(spec.pop("jitter_ms", 0)),
                count=spec.pop("count", None),
                **common,
            )
        if kind == "error":
            return self.faults.add_error(
                int(spec.pop("code")),
                probability=float(spec.pop("probability", 1.0)),
                count=spec.pop("count", None),
                retry_after=int(spec.pop("retry_after", 1)),
                message=spec.pop("message", None),
                **common,
            )
        if kind == "expire-watch":
            return self.faults.expire_next_watch(
                resource=common.get("resource"), count=int(spec.pop("count", 1))
            )
        raise ValueError('type must be "latency", "error" or "expire-watch"')

    def add_latency(self, ms: float, **kw: Any) -> Fault:
        return self.faults.add_latency(ms, **kw)

    def add_error(self, code: int, **kw: Any) -> Fault:
        return self.faults.add_error(code, **kw)

    def expire_next_watch(self, **kw: Any) -> Fault:
        return self.faults.expire_next_watch(**kw)

    def close_watches(self, resource: str | None = None) -> None:
        self.faults.close_watches(resource)
        self.store.wake_watches()

    def clear_faults(self) -> None:
        self.faults.clear()

    def request_log(self, **kw: Any) -> list[RequestRecord]:
        return self.requests.records(**kw)

    def clear_request_log(self) -> None:
        self.requests.clear()
