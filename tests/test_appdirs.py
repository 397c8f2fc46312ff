"""SambaTune's folders: on Linux found without importing platformdirs, yet the same."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from sambatune import appdirs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fast path is Linux's")
@pytest.mark.parametrize("xdg", [None, "", "relative/dir", "/tmp/xdg-base", "  /tmp/padded"])
def test_linux_folders_match_platformdirs(xdg: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SAMBATUNE_HOME", raising=False)
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        if xdg is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, xdg)
    monkeypatch.setattr(appdirs.Path, "mkdir", lambda *args, **kwargs: None)
    assert str(appdirs.data_dir()) == platformdirs.user_data_dir("SambaTune", appauthor=False)
    assert str(appdirs.config_dir()) == platformdirs.user_config_dir("SambaTune", appauthor=False)


def test_sambatune_home_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAMBATUNE_HOME", str(tmp_path))
    assert appdirs.data_dir() == tmp_path / "data"
    assert appdirs.config_dir() == tmp_path / "config"


def test_the_log_goes_where_the_platform_keeps_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SAMBATUNE_HOME", raising=False)
    monkeypatch.setattr(appdirs.Path, "mkdir", lambda *args, **kwargs: None)
    assert str(appdirs.log_dir()) == platformdirs.user_log_dir("SambaTune", appauthor=False)


def test_the_log_under_sambatune_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAMBATUNE_HOME", str(tmp_path))
    assert appdirs.log_dir() == tmp_path / "logs"
