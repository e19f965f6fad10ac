"""`make run`: the whole product on one machine, under one supervisor.

Starts what it needs and what exists: an embedded redis-server (unless REDIS_URL
is set), kubesim as the cluster (unless KUBECONFIG is set or we run in a
cluster), migrations, the admin user, the CRDs and samples, then the watcher,
a Celery worker, beat and the web server. Ctrl-C stops everything, in reverse
order; state stays under .opsboard/ for the next start, and nothing is written
outside it. A start first stops what a launcher killed outright left running (the
processes it recorded under .opsboard/pids/), and refuses while another launcher runs
from the same state dir.

The console is for people: one line per reconcile that did something, warnings and
errors in full, and the URL and login last. `make url` prints them again from the state
dir, as does SIGUSR1 to this process (`kill -USR1 $(cat .opsboard/launcher.pid)`);
OPSBOARD_LOG_LEVEL=DEBUG brings back Celery's per-task lines and
the web server's access log.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from opsboard.core.identities import NAMESPACE, OPERATOR, WEB
from opsboard.embedded import leftovers
from opsboard.embedded.ports import free_port, port_in_use
from opsboard.embedded.redis import EmbeddedRedis
from opsboard.env import env_bool
from opsboard.signal_actions import on_signals

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
COLOURS = ["36", "33", "35", "32", "34", "31"]
# A child that exits this many times within RESTART_WINDOW seconds is crash-looping and
# stops the product; one that exits now and then (a worker whose consumer stalled after
# a Redis restart, a watcher that lost its lease) is always started again.
MAX_RESTARTS = 5
RESTART_WINDOW = 600.0


def log(message: str) -> None:
    print(f"\033[1mopsboard\033[0m | {message}", flush=True)


@dataclass
class Child:
    name: str
    args: list[str]
    colour: str = "0"
    env: dict[str, str] = field(default_factory=dict)  # over the launcher's environment
    exits: list[float] = field(default_factory=list)  # monotonic times of recent exits
    printed_at: float = 0.0  # time.monotonic() of its last line
    process: subprocess.Popen[str] | None = field(default=None, repr=False)

    def start(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            self.args,
            cwd=ROOT,
            env={**env, **self.env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,  # Ctrl-C reaches us only; we stop children in order
        )
        threading.Thread(target=self._pump, args=(self.process,), daemon=True).start()

    def _pump(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout
        prefix = f"\033[{self.colour}m{self.name:>8}\033[0m | "
        for line in process.stdout:
            if not line.strip():  # a bare "worker |" (Celery's blank line as it stops)
                continue
            sys.stdout.write(prefix + line)
            sys.stdout.flush()
            self.printed_at = time.monotonic()

    def stop(self, timeout: float = 10.0) -> None:
        if not self.process or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def kept_port(port_file: Path, what: str) -> int:
    """The port `what` had at the last start (so its URL stays the same), unless another
    program has taken it since: then a free one."""
    kept = int(port_file.read_text()) if port_file.exists() else None
    if kept is not None and not port_in_use(kept):
        return kept
    port = free_port()
    if kept is not None:
        log(f"{what}: port {kept}, its port last time, is taken by another program; using {port}")
    return port


def port_near(port: int) -> int:
    """A free port just above `port`, for a person to type; else any free one."""
    return next((p for p in range(port + 1, port + 100) if not port_in_use(p)), free_port())


def has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


class Launcher:
    def __init__(self) -> None:
        self.state = Path(os.environ.get("OPSBOARD_STATE_DIR", ROOT / ".opsboard")).resolve()
        self.port = int(os.environ.get("OPSBOARD_PORT", "8000"))
        self.env = dict(os.environ, OPSBOARD_STATE_DIR=str(self.state), PYTHONUNBUFFERED="1")
        self.env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(self.state / "metrics"))
        self.env.setdefault("OPSBOARD_LOG_FORMAT", "console")
        # Celery warns at length when run as root (a container, a VM); not news at a console.
        self.env.setdefault("PYTHONWARNINGS", "ignore:You're running the worker with superuser")
        self.debug = self.env.get("OPSBOARD_LOG_LEVEL", "").upper() == "DEBUG"
        self.password = ""
        self.redis: EmbeddedRedis | None = None
        self.children: list[Child] = []
        self.stopping = threading.Event()
        self.own_cluster = False  # kubesim, started here: processes get the install's identities

    # -- infrastructure -------------------------------------------------------------
    def start_redis(self) -> None:
        if self.env.get("REDIS_URL"):
            log(f"using REDIS_URL={self.env['REDIS_URL']}")
            return
        data = self.state / "redis"
        port_file = data / "port"
        port = kept_port(port_file, "redis-server")
        self.redis = EmbeddedRedis(data, port=port).start()
        if self.redis.process:
            leftovers.record(self.state, "redis-server", self.redis.process.pid)
        port_file.write_text(str(port))
        self.env["REDIS_URL"] = self.redis.url
        log(f"redis-server on {self.redis.url} (append-only, data in {data})")

    def start_kubesim(self) -> None:
        context = self.env.get("OPSBOARD_KUBE_CONTEXT", "")
        if self.env.get("KUBECONFIG") or self.env.get("KUBERNETES_SERVICE_HOST"):
            named = f", context {context}" if context else ""
            log(
                f"using the cluster of KUBECONFIG={self.env.get('KUBECONFIG', '(in-cluster)')}{named}"
            )
            return
        if context:  # a context of the user's kubeconfig: kubesim's has one of its own
            log(f"OPSBOARD_KUBE_CONTEXT={context} is for a KUBECONFIG of yours: ignored on kubesim")
            self.env.pop("OPSBOARD_KUBE_CONTEXT")
        if not has_module("kubesim.__main__"):
            log("kubesim is not available yet: running without a cluster")
            return
        kubeconfig = self.state / "kubeconfig"
        kubeconfig.unlink(missing_ok=True)
        # One port for good, so a restarted kubesim keeps the URL every process was given.
        port_file = self.state / "kubesim" / "port"
        port_file.parent.mkdir(parents=True, exist_ok=True)
        if chosen := os.environ.get("OPSBOARD_KUBESIM_PORT"):
            if not chosen.isdigit() or port_in_use(int(chosen)):
                raise SystemExit(
                    f"OPSBOARD_KUBESIM_PORT={chosen}: not a port on 127.0.0.1 that is free; "
                    "choose another, or unset it and one is found"
                )
            port = chosen
        else:
            port = str(kept_port(port_file, "kubesim"))
        port_file.write_text(port)
        child = Child(
            "kubesim",
            [PYTHON, "-m", "kubesim", "serve", "--host", "127.0.0.1", "--port", port,
             "--data-dir", str(self.state / "kubesim"), "--kubeconfig-out", str(kubeconfig),
             # The devices the Ptemplate sample asks for, as its device plugin would advertise.
             "--node-resource", "example.com/accel=2"],
        )  # fmt: skip
        self.launch(child)
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            if child.process and child.process.poll() is not None:
                raise SystemExit("kubesim exited during start-up; see its output above")
            if time.monotonic() > deadline:
                raise SystemExit("kubesim did not write its kubeconfig within 30 s")
            time.sleep(0.05)
        self.env["KUBECONFIG"] = str(kubeconfig)
        self.own_cluster = True
        log(f"kubesim cluster up; kubeconfig at {kubeconfig}")

    def samples_flag(self) -> list[str]:
        """The sample CRs go into kubesim; into a cluster of the user's only when asked for:
        it may be shared, and the samples would be reconciled by every opsboard on it."""
        if env_bool("OPSBOARD_SAMPLES", self.own_cluster):
            return []
        if not self.own_cluster:
            log("not applying the sample CRs to your cluster (OPSBOARD_SAMPLES=true would)")
        return ["--no-samples"]

    def manage(self, *args: str) -> None:
        subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=self.env, check=True)

    # -- processes ------------------------------------------------------------------
    def launch(self, child: Child) -> None:
        child.colour = COLOURS[len(self.children) % len(COLOURS)]
        self.children.append(child)
        self.start(child)

    def start(self, child: Child) -> None:
        child.start(self.env)
        if child.process:
            leftovers.record(self.state, child.name, child.process.pid)

    def identity_env(self, kubeconfig_name: str) -> dict[str, str]:
        """On kubesim, a process runs as the ServiceAccount the install gives it (bootstrap
        wrote its kubeconfig); on a cluster of the user's, as the user's KUBECONFIG."""
        if not self.own_cluster:
            return {}
        env = {"KUBECONFIG": str(self.state / kubeconfig_name)}
        env["OPSBOARD_LEASE_NAMESPACE"] = self.env.get("OPSBOARD_LEASE_NAMESPACE", NAMESPACE)
        return env

    def start_processes(self) -> None:
        operator = self.identity_env(OPERATOR.kubeconfig)
        if (
            has_module("opsboard.engine.management.commands.runwatcher")
            and "KUBECONFIG" in self.env
        ):
            self.launch(Child("watcher", [PYTHON, "manage.py", "runwatcher"], env=operator))
        if "KUBECONFIG" in self.env:
            quiet = [] if self.debug else ["--quiet"]  # no banner of settings and queues
            self.launch(
                Child("worker", [PYTHON, "-m", "celery", *quiet, "-A", "opsboard", "worker",
                                 "--loglevel", "INFO", "--concurrency", "2", "-n", "worker@%h"],
                      env=operator)
            )  # fmt: skip
            self.launch(
                Child("beat", [PYTHON, "-m", "celery", *quiet, "-A", "opsboard", "beat",
                               "--loglevel", "INFO" if self.debug else "WARNING",
                               "--schedule", str(self.state / "celerybeat-schedule")],
                      env=operator)
            )  # fmt: skip
        access = ["--access-logfile", "-"] if self.debug else []
        self.launch(
            Child("web", [PYTHON, "-m", "gunicorn", "opsboard.wsgi:application",
                          "--bind", f"127.0.0.1:{self.port}", "--workers", "2", "--threads", "4",
                          "--graceful-timeout", "5", *access, *self.control_socket(),
                          "--log-level", "info" if self.debug else "warning"],
                  env=self.identity_env(WEB.kubeconfig))
        )  # fmt: skip

    def control_socket(self) -> list[str]:
        """gunicorn's control socket in the state dir (its default is ~/.gunicorn/), or none
        where that path is too long for a Unix socket."""
        path = self.state / "gunicorn.ctl"
        if len(os.fsencode(path)) > 100:
            return ["--no-control-socket"]
        return ["--control-socket", str(path)]

    def clear_metrics(self) -> None:
        """Samples of processes from an earlier run would be summed with the new ones."""
        metrics = Path(self.env["PROMETHEUS_MULTIPROC_DIR"])
        metrics.mkdir(parents=True, exist_ok=True)
        for stale in metrics.glob("*.db"):
            stale.unlink()

    def wait_for_web(self, timeout: float = 30.0) -> bool:
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1):
                    return True
            except OSError:
                time.sleep(0.1)
        return False

    def run(self) -> int:
        self.state.mkdir(parents=True, exist_ok=True)
        other = leftovers.running_launcher(self.state)
        if other is not None:
            log(
                f"opsboard is already running from {self.state} (launcher pid {other}): stop "
                f"it first (Ctrl-C where it runs, or kill {other}), or give this one its own "
                "OPSBOARD_STATE_DIR and OPSBOARD_PORT"
            )
            return 1
        for what in leftovers.stop_leftovers(self.state):
            log(f"stopped {what}, left running by a start that was not stopped cleanly")
        if port_in_use(self.port):  # else the web server retries, and fails, at length
            log(
                f"port {self.port} on 127.0.0.1 is taken by another program, so opsboard's "
                "web server cannot listen there: stop that program, or choose another port: "
                f"OPSBOARD_PORT={port_near(self.port)} make run"
            )
            return 1
        self.clear_metrics()
        on_signals((signal.SIGINT, signal.SIGTERM), self.stopping.set)
        on_signals((signal.SIGUSR1,), self.banner)
        (self.state / leftovers.LAUNCHER).write_text(str(os.getpid()))
        try:
            self.start_redis()
            self.start_kubesim()
            log("applying database migrations")
            self.manage("migrate", "--noinput", "-v", "0")
            self.password = self.admin_password()
            # As the admin: CRDs, samples and, on kubesim, the install's RBAC and identities.
            identities = ["--identities"] if self.own_cluster else []
            self.manage("bootstrap", "--admin-password-file", str(self.state / "admin_password"),
                        *identities, *self.samples_flag())  # fmt: skip
            self.start_processes()
            if self.wait_for_web():
                (self.state / "url").write_text(self.url + "\n")
                self.wait_quiet()
                self.banner()
            else:
                log(
                    f"the web server did not answer on {self.url} within 30 s; its output "
                    "above says why"
                )
            while not self.stopping.wait(0.5):
                self.restart_exited()
            return 0
        except subprocess.CalledProcessError as exc:
            log(f"start-up step failed: {' '.join(exc.cmd)} exited with {exc.returncode}")
            return 1
        except ImproperlyConfigured as exc:
            log(str(exc))
            return 1
        finally:
            self.shutdown()

    def wait_quiet(self, *, quiet: float = 3.0, limit: float = 60.0) -> None:
        """Waits until no process has printed for `quiet` seconds (the samples' first
        reconciles are done), at most `limit`, so that the banner comes last."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not self.stopping.is_set():
            last = max((child.printed_at for child in self.children), default=0.0)
            if time.monotonic() - last >= quiet:
                return
            time.sleep(0.2)

    def restart_exited(self) -> None:
        """A process that dies is started again (a watcher that lost its lease exits, as
        controller-runtime's do); one that keeps dying stops the product."""
        now = time.monotonic()
        for child in self.children:
            if not child.process or child.process.poll() is None:
                continue
            child.exits = [at for at in child.exits if now - at < RESTART_WINDOW] + [now]
            if len(child.exits) > MAX_RESTARTS:
                log(
                    f"{child.name} exited {len(child.exits)} times in {RESTART_WINDOW:.0f} s "
                    f"(last code {child.process.returncode}); stopping"
                )
                self.stopping.set()
                return
            log(f"{child.name} exited with {child.process.returncode}; starting it again")
            self.start(child)

    def admin_password(self) -> str:
        """OPSBOARD_ADMIN_PASSWORD, or one generated once and kept in the state dir."""
        path = self.state / "admin_password"
        password = self.env.get("OPSBOARD_ADMIN_PASSWORD") or (
            path.read_text().strip() if path.exists() else secrets.token_urlsafe(12)
        )
        path.write_text(password)
        path.chmod(0o600)
        return password

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def banner(self) -> None:
        """The URL and login, printed last at start-up and again on SIGUSR1 (`make url`)."""
        if not self.password:
            return  # not up yet: the banner comes when it is
        log("")
        log(f"opsboard is up:  {self.url}")
        log(f"log in as admin with password: {self.password}")
        if "KUBECONFIG" in self.env:
            context = self.env.get("OPSBOARD_KUBE_CONTEXT", "")
            named = f" --context {context}" if context else ""
            log(f"kubectl: kubectl --kubeconfig {self.env['KUBECONFIG']}{named} get opsboard")
        log("press Ctrl-C to stop; `make url` prints this again")
        log("")

    def shutdown(self) -> None:
        log("stopping")
        for child in reversed(self.children):
            child.stop()
        if self.redis:
            self.redis.stop()
        leftovers.forget_all(self.state)
        for gone in (leftovers.LAUNCHER, "url"):
            (self.state / gone).unlink(missing_ok=True)
        log("stopped; state kept in " + str(self.state))


def main() -> None:
    sys.exit(Launcher().run())


if __name__ == "__main__":
    main()
