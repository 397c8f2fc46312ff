"""Where SambaTune keeps its own files on this computer.

``SAMBATUNE_HOME`` (used by the tests, and handy for portable installs) puts
everything under one folder; otherwise the platform's usual places are used.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "SambaTune"


def _home_override() -> Path | None:
    value = os.environ.get("SAMBATUNE_HOME")
    return Path(value) if value else None


def config_dir() -> Path:
    """Server profiles, preferences, our own known_hosts. Never secrets."""
    override = _home_override()
    if override is not None:
        path = override / "config"
    else:
        import platformdirs

        path = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """The results database, backups of this computer's settings, reports."""
    override = _home_override()
    if override is not None:
        path = override / "data"
    else:
        import platformdirs

        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def known_hosts_file() -> Path:
    """Host keys the user accepted inside SambaTune (OpenSSH format)."""
    return config_dir() / "known_hosts"
