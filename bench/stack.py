"""One disposable opsboard (or kopf) installation for a measurement.

Every measurement gets a fresh stack under the run's work directory: kubesim
with its own data dir, a real redis-server, a SQLite database, and the
product's processes (N Celery worker processes, the watcher, gunicorn) or the
kopf peer, each a subprocess with its output in a log file. Nothing is shared
between stacks, so one scenario's leftovers never slow the next.

Given a kubeconfig (`python -m bench --kubeconfig FILE`), a stack uses that cluster
instead of starting kubesim: a namespace of its own, deleted when the stack stops,
which the operator alone watches and where it keeps its leader-election Lease, so
stacks and other users of a shared cluster stay apart. There the operator signs in as
an account of that namespace, whose requests the server counts (bench.flowschemas).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bench import flowschemas
from bench.fleet import Fleet
from bench.kube import ApiError, KubeApi
from opsboard.embedded.ports import free_port
from opsboard.embedded.postgres import EmbeddedPostgres
from opsboard.embedded.redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# kubesim's simulated kubelet: a pod turns Running/Ready this long after it is
# scheduled (±50% jitter). Stated next to every figure that includes it.
POD_START_DELAY = 0.2
KOPF_PEER = ROOT / "bench" / "peers" / "kopf_memcached.py"


class StackError(RuntimeError):
    """A piece of the stack did not start; the message names it and quotes its log."""


@dataclass
class Process:
    role: str  # "kubesim", "worker", "watcher", "web", "kopf"
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, chars: int = 1500) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.popen.poll() is not None:
            return
        try:  # each child leads its own process group: this reaches its pool too
            os.killpg(self.popen.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()


@dataclass
class RssSampler:
    """Peak resident memory per role, sampled every 100 ms from the process trees."""

    processes: list[Process]
    peak_mb: dict[str, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> RssSampler:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            for proc in list(self.processes):
                for role, rss in self._sample(proc):
                    self.peak_mb[role] = max(self.peak_mb.get(role, 0.0), rss / 2**20)

    @staticmethod
    def _sample(proc: Process) -> list[tuple[str, int]]:
        """A worker or web server is a parent plus a pool: report one pool process, the
        biggest (what each added worker costs), and the parent apart."""
        try:
            parent = psutil.Process(proc.popen.pid)
            if proc.role not in {"worker", "web"}:
                return [(proc.role, parent.memory_info().rss)]
            samples = [(f"{proc.role} (main)", parent.memory_info().rss)]
            pool = [child.memory_info().rss for child in parent.children(recursive=True)]
            if pool:
                samples.append((f"{proc.role} (one pool process)", max(pool)))
            return samples
        except psutil.Error:
            return []


def _tree_cpu_seconds(pid: int) -> float:
    """CPU (user + system) of a process and its children, reaped ones included."""
    total = 0.0
    try:
        parent = psutil.Process(pid)
        for one in [parent, *parent.children(recursive=True)]:
            times = one.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    except psutil.Error:
        pass
    return total


class Stack:
    def __init__(
        self, workdir: Path, *, name: str, kubeconfig: Path | None = None, pool: str = "prefork"
    ) -> None:
        self.dir = workdir / name
        self.pool = pool  # the Celery pool of the bench's workers: prefork or threads
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.processes: list[Process] = []
        self.followers: list[Fleet] = []  # watches on this stack's API: stopped first
        self.redis: EmbeddedRedis | None = None
        self.postgres: EmbeddedPostgres | None = None  # when use_postgres() replaced SQLite
        self.external = kubeconfig  # a cluster that is not ours to start: no kubesim
        self.kubeconfig = kubeconfig or self.dir / "kubeconfig"  # the bench's own
        self.requests_counted = False  # on a real cluster: the operator's, by the server
        # On a shared cluster a left-over namespace may still be terminating: a fresh name.
        self.namespace = f"bench-{name}-{secrets.token_hex(2)}" if kubeconfig else "bench"
        self.rss = RssSampler(self.processes)
        self.web_url = ""
        self.web_password = ""  # the bench's viewer, once bench.web created it
        self.db = self.dir / "opsboard.sqlite3"
        self.env = {
            **os.environ,
            "OPSBOARD_STATE_DIR": str(self.dir),
            "OPSBOARD_SECRET_KEY": "bench-only-not-secret",
            "DATABASE_URL": f"sqlite:///{self.db}",
            "OPSBOARD_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            # Settings put the caller's own in os.environ (pytest's, under the smoke test):
            # each stack's processes keep their metrics files apart, as everything else.
            "PROMETHEUS_MULTIPROC_DIR": str(self.dir / "metrics"),
            # Temp files under the stack's dir, emptied by the next run: the kopf peer loads
            # its kubeconfig through the official loader, which leaves the certificates'
            # files behind in a process that is killed.
            "TMPDIR": str(self.dir / "tmp"),
        }
        (self.dir / "tmp").mkdir()
        self.env.pop("KUBECONFIG", None)
        self._api: KubeApi | None = None

    # -- infrastructure -------------------------------------------------------------
    def start_cluster(self, *, pods: int = 0) -> Stack:
        """kubesim, with the product's CRDs applied and enough nodes for `pods` pods: a
        node takes at most 110, as a real kubelet does."""
        if self.external is not None:
            return self._use_cluster()
        nodes = max(3, math.ceil(pods / 100) + 1)
        self.spawn(
            "kubesim",
            [PYTHON, "-m", "kubesim", "serve", "--host", "127.0.0.1", "--port", "0",
             "--data-dir", str(self.dir / "kubesim"), "--kubeconfig-out", str(self.kubeconfig),
             "--pod-start-delay", str(POD_START_DELAY), "--nodes", str(nodes)],
        )  # fmt: skip
        # Said once the kubeconfig is written: the file exists, empty, a moment before.
        kubesim = self.processes[-1]
        self.wait_for("kubesim", lambda: "kubeconfig written to" in kubesim.tail(), timeout=60)
        self.env["KUBECONFIG"] = str(self.kubeconfig)
        self.api.apply_crds()
        self.wait_for("the Memcached CRD", self._crd_served, timeout=30)
        self.rss.start()
        return self

    def _use_cluster(self) -> Stack:
        self.env["KUBECONFIG"] = str(self.kubeconfig)
        self.env["OPSBOARD_WATCH_NAMESPACES"] = self.namespace
        self.env["OPSBOARD_LEASE_NAMESPACE"] = self.namespace
        # A kubeconfig that skips TLS verification (a dev cluster's) makes urllib3 warn on
        # every request: pages of it would bury what the logs are kept for.
        self.env["PYTHONWARNINGS"] = "ignore:Unverified HTTPS request"
        self.api.apply_crds()
        self.wait_for("the Memcached CRD", self._crd_served, timeout=30)
        self.api.create_namespace(self.namespace)
        operator = flowschemas.install(self.api, self.namespace, self.kubeconfig,
                                       self.dir / "operator.kubeconfig")  # fmt: skip
        if operator is not None:
            self.env["KUBECONFIG"] = str(operator)
            self.requests_counted = True
        self.rss.start()
        return self

    def _crd_served(self) -> bool:
        try:
            self.api.request("GET", "/apis/cache.example.com/v1alpha1/memcacheds")
        except Exception:
            return False
        return True

    @property
    def api(self) -> KubeApi:
        if self._api is None:
            self._api = KubeApi(self.kubeconfig)
        return self._api

    def use_postgres(self) -> Stack:
        """opsboard on a PostgreSQL server of its own (127.0.0.1, a throwaway cluster)
        instead of its SQLite file: call before start_opsboard. Raises PostgresMissing."""
        self.postgres = EmbeddedPostgres().start()
        self.env["DATABASE_URL"] = self.postgres.url()
        return self

    def postgres_cpu_seconds(self) -> float:
        """CPU so far of the PostgreSQL server and its backends (0 without one)."""
        if self.postgres is None or self.postgres.process is None:
            return 0.0
        return _tree_cpu_seconds(self.postgres.process.pid)

    def start_redis(self) -> Stack:
        self.redis = EmbeddedRedis(self.dir / "redis").start()
        self.env["REDIS_URL"] = self.redis.url
        return self

    def migrate(self) -> Stack:
        self.manage("migrate", "--noinput", "-v", "0")
        return self

    def manage(self, *args: str, extra_env: dict[str, str] | None = None) -> None:
        result = subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=ROOT,
            env={**self.env, **(extra_env or {})},
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise StackError(f"manage.py {args[0]} failed:\n{result.stderr[-1500:]}")

    # -- the product ------------------------------------------------------------------
    def start_opsboard(self, *, workers: int) -> Stack:
        """Redis, the database, the watcher and `workers` Celery worker processes.

        Readiness is proven by the caller's warm-up CR converging, not by log lines."""
        self.start_redis().migrate()
        self.start_worker(workers)
        self.spawn("watcher", [PYTHON, "manage.py", "runwatcher"])
        return self

    def start_worker(self, workers: int, *, as_make_run: bool = False) -> Process:
        """The Celery worker: the bench's (no gossip, mingle or heartbeat: nothing but the
        reconciles), or `as_make_run`, with what opsboard/launcher.py gives it, whose idle
        cost (heartbeat events every 2 s, the gossip subscription) is part of the product's."""
        extra = (
            ["-n", "worker@%h"]
            if as_make_run
            else ["--pool", self.pool, "-n", f"bench-{workers}@%h", "--without-gossip",
                  "--without-mingle", "--without-heartbeat"]
        )  # fmt: skip
        return self.spawn(
            "worker",
            [PYTHON, "-m", "celery", "-A", "opsboard", "worker", "--loglevel", "WARNING",
             "--concurrency", str(workers), *extra],
        )  # fmt: skip

    def start_beat(self) -> Process:
        """Celery beat, as `make run` starts it: the periodic resync (every 10 min)."""
        return self.spawn(
            "beat",
            [PYTHON, "-m", "celery", "-A", "opsboard", "beat", "--loglevel", "WARNING",
             "--schedule", str(self.dir / "celerybeat-schedule")],
        )  # fmt: skip

    def retire(self, role: str) -> None:
        """Stop the processes of `role` and forget them: a successor takes the role."""
        for proc in [p for p in self.processes if p.role == role]:
            proc.stop()
            self.processes.remove(proc)

    def start_web(self) -> None:
        port = free_port()
        self.spawn(
            "web",
            [PYTHON, "-m", "gunicorn", "opsboard.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", "2", "--threads", "4"],
        )  # fmt: skip
        self.web_url = f"http://127.0.0.1:{port}"
        self.wait_for("gunicorn", lambda: _http_ok(f"{self.web_url}/healthz"), 60)

    def start_kopf(self, namespace: str) -> Stack:
        self.spawn(
            "kopf",
            [PYTHON, "-m", "kopf", "run", "--standalone", "--namespace", namespace,
             "--log-format", "plain", str(KOPF_PEER)],
        )  # fmt: skip
        return self

    # -- processes -----------------------------------------------------------------------
    def spawn(self, role: str, args: list[str]) -> Process:
        log = self.dir / f"{role}.log"
        popen = subprocess.Popen(
            args,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        proc = Process(role, popen, log)
        self.processes.append(proc)
        return proc

    def process(self, role: str) -> Process:
        return next(p for p in self.processes if p.role == role)

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            for proc in self.processes:
                if proc.popen.poll() is not None:
                    raise StackError(
                        f"{proc.role} exited ({proc.popen.returncode}):\n{proc.tail()}"
                    )
            if time.monotonic() > deadline:
                raise StackError(f"{what} not ready within {timeout:.0f} s")
            time.sleep(0.05)

    def stop(self) -> None:
        self.rss.stop()
        for follower in self.followers:
            follower.stop()
        try:
            for proc in reversed(self.processes):
                proc.stop()
            if self.redis:
                self.redis.stop()
            if self.postgres:
                self.postgres.stop()
        except BaseException:  # interrupted while stopping: leave no server behind
            for proc in self.processes:
                proc.kill()
            if self.redis and self.redis.process:
                self.redis.process.kill()
            raise
        finally:
            self.processes.clear()
            if self.external is not None:
                flowschemas.uninstall(self.api, self.namespace)
                self._delete_namespace()

    def _delete_namespace(self, timeout: float = 180.0) -> None:
        """Leave the shared cluster as found, and wait for it, so that the garbage
        collection of one measurement's objects does not load the next one."""
        path = f"/api/v1/namespaces/{self.namespace}"
        try:
            self.api.request("DELETE", path)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                self.api.request("GET", path)
                time.sleep(1)
        except ApiError as exc:
            if exc.status != 404:
                raise

    def cpu_seconds(self, *roles: str) -> float:
        """CPU (user + system) used so far by the processes of `roles` and their children."""
        return sum(_tree_cpu_seconds(p.popen.pid) for p in self.processes if p.role in roles)

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _http_ok(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            status: int = response.status
            return status == 200
    except OSError:
        return False
