"""A throwaway PostgreSQL server on 127.0.0.1, for the test suite and the benchmarks.

`initdb` into a fresh directory, then `postgres` on a free port with its socket in that
directory, trust authentication (it listens on 127.0.0.1 only) and a small footprint.
Debian installs the binaries in /usr/lib/postgresql/<version>/bin, off PATH;
OPSBOARD_TEST_PG_BIN names another directory. initdb and postgres refuse to run as root, so
as root they run as the `postgres` user (Debian's package creates it) or `nobody`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from opsboard.embedded.ports import free_port

SUPERUSER = "opsboard"


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def postgres_bin_dir() -> Path:
    """The directory holding initdb and postgres: OPSBOARD_TEST_PG_BIN, PATH, or Debian's."""
    named = os.environ.get("OPSBOARD_TEST_PG_BIN", "")
    if named:
        candidates = [Path(named)]
        where = f"OPSBOARD_TEST_PG_BIN={named}"
    else:
        on_path = shutil.which("initdb")
        candidates = [Path(on_path).parent] if on_path else []
        candidates += sorted(  # the newest version first
            Path("/usr/lib/postgresql").glob("*/bin"),
            key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
            reverse=True,
        )
        where = "PATH or /usr/lib/postgresql/*/bin"
    for directory in candidates:
        if (directory / "initdb").exists() and (directory / "postgres").exists():
            return directory
    raise PostgresMissing(
        f"no PostgreSQL server binaries (initdb, postgres) in {where}: install Debian's "
        "`postgresql` package (apt-get install postgresql) or set OPSBOARD_TEST_PG_BIN"
    )


def _unprivileged_user() -> str | None:
    """None when not root; else the account the server runs as."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise PostgresMissing("running as root and no `postgres` or `nobody` user to run initdb as")


@dataclass
class EmbeddedPostgres:
    """`start()` then `url(database)`; `stop()` removes the data directory."""

    port: int = 0
    max_connections: int = 200
    root: Path | None = None
    settings: dict[str, str] = field(default_factory=dict)  # more `-c name=value`
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data_dir(self) -> Path:
        assert self.root is not None, "start() first"
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgres://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, argv: list[str], user: str | None) -> None:
        done = subprocess.run(argv, user=user, capture_output=True, check=False)
        if done.returncode:
            output = (done.stdout + done.stderr).decode(errors="replace")[-2000:]
            raise RuntimeError(f"{Path(argv[0]).name} failed ({done.returncode}):\n{output}")

    def start(self, *, timeout: float = 30.0) -> EmbeddedPostgres:
        bin_dir = postgres_bin_dir()
        user = _unprivileged_user()
        # In TMPDIR, not pytest's 0700 tree, so that the unprivileged user can reach it.
        self.root = Path(tempfile.mkdtemp(prefix="opsboard-pg-"))
        if user:
            entry = pwd.getpwnam(user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(
            [
                str(bin_dir / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER,
                "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
            ],
            user,
        )  # fmt: skip
        for _attempt in range(5):  # another process may take the free port first
            self.port = self.port or free_port()
            if self._launch(bin_dir, user, timeout):
                return self
            self.port = 0
        log = (self.root / "postgres.log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"postgres did not start:\n{log}")

    def _launch(self, bin_dir: Path, user: str | None, timeout: float) -> bool:
        assert self.root is not None
        log = (self.root / "postgres.log").open("ab")
        if user:
            entry = pwd.getpwnam(user)
            os.chown(log.name, entry.pw_uid, entry.pw_gid)
        argv = [
            str(bin_dir / "postgres"), "-D", str(self.data_dir),
            "-c", "listen_addresses=127.0.0.1", "-c", f"port={self.port}",
            "-c", f"unix_socket_directories={self.data_dir}",
            "-c", f"max_connections={self.max_connections}",
            # A test server: durability buys nothing, memory is shared with the suite.
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning",
            *(arg for name, value in self.settings.items() for arg in ("-c", f"{name}={value}")),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            argv, user=user, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if self._accepts():
                return True
            time.sleep(0.05)
        self.process.kill()
        self.process.wait()
        return False

    def _accepts(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url(), connect_timeout=1):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self, *, timeout: float = 15.0) -> None:
        """SIGINT is PostgreSQL's fast shutdown: it ends sessions and exits cleanly."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)
