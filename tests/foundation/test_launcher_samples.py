"""`make run` applies the sample CRs to its own kubesim, not to a cluster of the user's
(which may be shared) unless OPSBOARD_SAMPLES says so; a bad value stops it, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from opsboard.launcher import Launcher


@pytest.fixture
def launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Launcher:
    monkeypatch.setenv("OPSBOARD_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("OPSBOARD_SAMPLES", raising=False)
    return Launcher()


@pytest.mark.parametrize(
    ("own_cluster", "setting", "flag"),
    [
        (True, None, []),
        (False, None, ["--no-samples"]),
        (False, "true", []),
        (True, "false", ["--no-samples"]),
    ],
)
def test_the_samples_go_to_kubesim_and_to_a_users_cluster_only_when_asked(
    launcher: Launcher,
    monkeypatch: pytest.MonkeyPatch,
    own_cluster: bool,
    setting: str | None,
    flag: list[str],
) -> None:
    if setting is not None:
        monkeypatch.setenv("OPSBOARD_SAMPLES", setting)
    launcher.own_cluster = own_cluster
    assert launcher.samples_flag() == flag


def test_a_value_that_is_not_a_boolean_names_the_variable(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSBOARD_SAMPLES", "sometimes")
    with pytest.raises(ImproperlyConfigured, match="OPSBOARD_SAMPLES='sometimes'"):
        launcher.samples_flag()
