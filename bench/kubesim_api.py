"""kubesim API speed: GET, write, watch delivery, LIST of 10,000 objects and RSS.

Runs kubesim in a subprocess pinned to one core (as the targets say), talks to it over
keep-alive HTTPS with the admin's token like any client (and, with --mode both, over plain
HTTP too: the lines of that run end in "(plain HTTP)"), and prints p50/p95 figures. No assertions: targets are
GET p50 <= 2 ms, write p50 <= 5 ms, watch delivery p50 <= 5 ms after the write returns,
LIST of 10,000 objects <= 500 ms, 10,000 CRs in <= 250 MB RSS.

    .venv/bin/python bench/kubesim_api.py [--objects 10000] [--samples 500] [--mode both]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

ROOT = Path(__file__).resolve().parents[1]
GROUP = "bench.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"memcacheds.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "memcacheds", "singular": "memcached", "kind": "Memcached"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "minimum": 0},
                                    "image": {"type": "string"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "nodes": {"type": "array", "items": {"type": "string"}}
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}
CRS = f"/apis/{GROUP}/v1/namespaces/default/memcacheds"


class Client:
    """One keep-alive HTTP/1.1 connection, over TLS when the URL is https, as the admin."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None, f"no host in {url!r}"
        server = SERVERS[url]
        self.token = server.token
        if parts.scheme == "https":
            context = ssl.create_default_context(cafile=server.ca)
            self.conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                parts.hostname, parts.port, timeout=60, context=context
            )
        else:
            self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)

    def call(
        self, method: str, path: str, body: object = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type} if data is not None else {}
        headers["Authorization"] = f"Bearer {self.token}"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        return resp.status, resp.read()


def cr(name: str, size: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Memcached",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": str(hash(name) % 8)}},
        "spec": {"size": size, "image": "memcached:1.6.21-alpine"},
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values) * 1000:7.3f} ms   p95 {pct(values, 0.95) * 1000:7.3f} ms"
    )


@dataclass(frozen=True)
class Server:
    token: str
    ca: str


SERVERS: dict[str, Server] = {}  # url -> what a client needs to talk to it


def start_server(data_dir: str, *, tls: bool = True) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesim",
            "serve",
            "--port",
            "0",
            "--data-dir",
            data_dir,
            "--no-cluster",
            *([] if tls else ["--plain-http"]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("kubesim serving "):
        raise SystemExit(f"kubesim did not start: {line!r}")
    with contextlib.suppress(AttributeError, psutil.Error):
        psutil.Process(proc.pid).cpu_affinity([0])  # one core, as the targets are stated
    url = line.split()[-1]
    token = (Path(data_dir) / "auth" / "admin.token").read_text().strip()
    SERVERS[url] = Server(token, str(Path(data_dir) / "pki" / "ca.crt"))
    return proc, url


def bench_get(url: str, samples: int) -> list[float]:
    c = Client(url)
    c.call("POST", CRS, cr("get-me"))
    out = []
    for _ in range(samples):
        t = time.perf_counter()
        status, _ = c.call("GET", f"{CRS}/get-me")
        out.append(time.perf_counter() - t)
        assert status == 200
    return out


def bench_write(url: str, samples: int) -> list[float]:
    c = Client(url)
    c.call("POST", CRS, cr("write-me"))
    out = []
    for i in range(samples):
        t = time.perf_counter()
        status, _ = c.call(
            "PATCH",
            f"{CRS}/write-me",
            {"spec": {"size": i % 10 + 1}},
            "application/merge-patch+json",
        )
        out.append(time.perf_counter() - t)
        assert status == 200, status
    return out


def bench_watch(url: str, samples: int) -> list[float]:
    c = Client(url)
    _status, body = c.call("GET", CRS + "?limit=1")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    arrived: dict[int, float] = {}
    ready = threading.Event()

    def watcher() -> None:
        w = Client(url)
        w.conn.request(
            "GET",
            f"{CRS}?watch=true&resourceVersion={rv}&timeoutSeconds=120"
            "&fieldSelector=metadata.name%3Dwatch-me",
            headers={"Authorization": f"Bearer {w.token}"},
        )
        resp = w.conn.getresponse()
        ready.set()
        while len(arrived) < samples:
            line = resp.readline()
            if not line:
                return
            ev = json.loads(line)
            if ev["type"] == "MODIFIED":
                arrived[ev["object"]["spec"]["size"]] = time.perf_counter()

    t = threading.Thread(target=watcher, daemon=True)
    c.call("POST", CRS, cr("watch-me", size=0))
    t.start()
    ready.wait(10)
    time.sleep(0.2)
    returned: dict[int, float] = {}
    for i in range(1, samples + 1):
        c.call("PATCH", f"{CRS}/watch-me", {"spec": {"size": i}}, "application/merge-patch+json")
        returned[i] = time.perf_counter()
        deadline = time.monotonic() + 5
        while i not in arrived and time.monotonic() < deadline:
            time.sleep(0.0002)
    t.join(timeout=5)
    # 0 means the event reached the watcher before the writer had read its own response.
    return [max(arrived[i] - returned[i], 0.0) for i in returned if i in arrived]


def populate(url: str, count: int) -> float:
    names = [f"cr-{i:05d}" for i in range(count)]
    local = threading.local()

    def create(name: str) -> None:
        if not hasattr(local, "client"):
            local.client = Client(url)
        status, _ = local.client.call("POST", CRS, cr(name))
        assert status == 201, status

    t = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, names))
    return time.perf_counter() - t


def bench_list(url: str, rounds: int = 5) -> tuple[list[float], list[float], int]:
    """Time to receive the whole list, and the same plus decoding it into Python objects."""
    c = Client(url)
    received, decoded, size = [], [], 0
    for _ in range(rounds):
        t = time.perf_counter()
        _status, body = c.call("GET", CRS)
        received.append(time.perf_counter() - t)
        size = len(json.loads(body)["items"])
        decoded.append(time.perf_counter() - t)
    return received, decoded, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument(
        "--mode", choices=("tls", "plain", "both"), default="both", help="kubesim's transport"
    )
    args = parser.parse_args(argv)
    for tls in {"tls": [True], "plain": [False], "both": [True, False]}[args.mode]:
        measure(args.objects, args.samples, tls=tls)
    return 0


def measure(objects: int, samples: int, *, tls: bool) -> None:
    mode = "" if tls else " (plain HTTP)"
    with tempfile.TemporaryDirectory(prefix="kubesim-bench-") as data_dir:
        proc, url = start_server(data_dir, tls=tls)
        try:
            c = Client(url)
            c.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
            time.sleep(0.2)
            print(f"kubesim {url} (pid {proc.pid}, pinned to one core)")
            print(f"GET one object{mode}   {ms(bench_get(url, samples))}")
            print(f"write (merge patch){mode}   {ms(bench_write(url, samples))}")
            print(f"watch delivery after the write{mode}   {ms(bench_watch(url, samples))}")
            took = populate(url, objects)
            print(
                f"created {objects} CRs{mode} in {took:.1f} s "
                f"({took / objects * 1000:.2f} ms each, 4 clients)"
            )
            received, decoded, size = bench_list(url)
            print(f"LIST of {size} objects{mode}   {ms(received)}")
            print(f"  ... and json.loads of it     {ms(decoded)}")
            rss = psutil.Process(proc.pid).memory_info().rss / 2**20
            print(f"RSS with {size} CRs{mode}   {rss:7.1f} MB")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    raise SystemExit(main())
