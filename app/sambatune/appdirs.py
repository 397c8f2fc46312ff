"""Where SambaTune keeps its own files on this computer.

``SAMBATUNE_HOME`` (used by the tests, and handy for portable installs) puts
everything under one folder; otherwise the platform's usual places are used.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "SambaTune"


def _home_override() -> Path | None:
    value = os.environ.get("SAMBATUNE_HOME")
    return Path(value) if value else None


def _app_dir(kind: str) -> Path:
    override = _home_override()
    if override is not None:
        path = override / kind
    elif sys.platform.startswith("linux"):
        # The XDG rule platformdirs applies on Linux, without importing it: that import
        # costs ~10 ms, a tenth of what `sambatune conf effective` may take in all.
        # tests/test_appdirs.py checks it gives what platformdirs gives.
        variable, fallback = (("XDG_CONFIG_HOME", "~/.config") if kind == "config"
                              else ("XDG_DATA_HOME", "~/.local/share"))
        base = os.environ.get(variable, "")
        if not os.path.isabs(base):
            base = os.path.expanduser(fallback)
        path = Path(base) / APP_NAME
    else:
        import platformdirs

        finder = platformdirs.user_config_dir if kind == "config" else platformdirs.user_data_dir
        path = Path(finder(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    """Server profiles, preferences, our own known_hosts. Never secrets."""
    return _app_dir("config")


def data_dir() -> Path:
    """The results database, backups of this computer's settings, reports, the log."""
    return _app_dir("data")


def known_hosts_file() -> Path:
    """Host keys the user accepted inside SambaTune (OpenSSH format)."""
    return config_dir() / "known_hosts"
