"""`make run` on a machine where another program holds a port it wants."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from opsboard.embedded import leftovers
from opsboard.embedded.ports import free_port, port_in_use
from opsboard.launcher import Launcher, kept_port


@pytest.fixture
def listening() -> Iterator[int]:
    """A port another program listens on, on every address (as a dev server often does)."""
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_port_is_in_use_while_a_server_listens_and_free_once_it_stops() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = int(sock.getsockname()[1])
        assert port_in_use(port)
    assert not port_in_use(port)


def test_a_taken_web_port_stops_the_start_with_what_to_do(
    listening: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPSBOARD_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("OPSBOARD_PORT", str(listening))
    launcher = Launcher()

    assert launcher.run() == 1

    out = capsys.readouterr().out
    assert f"port {listening} on 127.0.0.1 is taken by another program" in out
    suggested = int(out.split("OPSBOARD_PORT=")[1].split()[0])
    assert suggested != listening and not port_in_use(suggested)
    assert launcher.children == [] and launcher.redis is None  # nothing was started
    assert not (tmp_path / leftovers.LAUNCHER).exists()


def test_a_kept_port_is_used_again_while_free(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    kept = free_port()
    port_file.write_text(str(kept))
    assert kept_port(port_file, "kubesim") == kept


def test_a_kept_port_another_program_took_since_is_replaced_and_said(
    listening: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port_file = tmp_path / "port"
    port_file.write_text(str(listening))

    port = kept_port(port_file, "kubesim")

    assert port != listening and not port_in_use(port)
    assert f"kubesim: port {listening}, its port last time, is taken by another program; " in (
        capsys.readouterr().out
    )


def test_no_kept_port_gives_a_free_one_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not port_in_use(kept_port(tmp_path / "port", "redis-server"))
    assert capsys.readouterr().out == ""


def test_a_chosen_kubesim_port_that_is_taken_stops_the_start_saying_so(
    listening: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSBOARD_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("OPSBOARD_KUBESIM_PORT", str(listening))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)
    launcher = Launcher()

    with pytest.raises(SystemExit) as stopped:
        launcher.start_kubesim()

    assert str(stopped.value).startswith(f"OPSBOARD_KUBESIM_PORT={listening}: not a port")
    assert launcher.children == []  # kubesim was not started
