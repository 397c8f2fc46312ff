"""Where SambaTune keeps its own files on this computer.

``SAMBATUNE_HOME`` (used by the tests, and handy for portable installs) puts
everything under one folder; otherwise the platform's usual places are used.

They hold whole smb.conf files, server names, benchmark results and the log: on POSIX
systems the folders are 0700 and the files 0600, also when an older version (or a
umask) left them looser. On Windows these modes mean nothing; the profile folder's
ACLs already keep other users out.
"""

from __future__ import annotations

import contextlib
import os
import stat
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
        variable, fallback = (
            ("XDG_CONFIG_HOME", "~/.config") if kind == "config" else ("XDG_DATA_HOME", "~/.local/share")
        )
        base = os.environ.get(variable, "")
        if not os.path.isabs(base):
            base = os.path.expanduser(fallback)
        path = Path(base) / APP_NAME
    else:
        import platformdirs

        finder = platformdirs.user_config_dir if kind == "config" else platformdirs.user_data_dir
        path = Path(finder(APP_NAME, appauthor=False))
    return private_dir(path)


def config_dir() -> Path:
    """Server profiles, preferences, our own known_hosts. Never secrets."""
    return _app_dir("config")


def data_dir() -> Path:
    """The results database, backups of this computer's settings, reports."""
    return _app_dir("data")


def log_dir() -> Path:
    """The app's log and crash report: the platform's place for logs
    (``~/.local/state/SambaTune/log``, ``~/Library/Logs/SambaTune``,
    ``%LOCALAPPDATA%\\SambaTune\\Logs``), or ``logs`` under ``SAMBATUNE_HOME``.

    The desktop app and the command line's verbs that reach a server write there; the
    CLI's fast local verbs (conf effective, lint, explain) never ask for it, so they do
    not pay for importing platformdirs.
    """
    override = _home_override()
    if override is not None:
        return private_dir(override / "logs")
    import platformdirs

    return private_dir(Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)))


def known_hosts_file() -> Path:
    """Host keys the user accepted inside SambaTune (OpenSSH format).

    Made here, empty and private, if missing: keys are appended to it later, and an
    appended file keeps the mode it was created with.
    """
    path = config_dir() / "known_hosts"
    create_private_file(path)
    return private_file(path)


def private_dir(path: Path) -> Path:
    """``path`` made if missing (parents with their usual modes), readable by this user only.

    Only for SambaTune's own folders: an existing folder loses its group and other bits.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    _owner_only(path)
    return path


def private_file(path: Path) -> Path:
    """``path``, if it exists, without group and other permissions."""
    _owner_only(path)
    return path


def private_database(path: Path) -> Path:
    """``path`` ready for ``sqlite3.connect``: the database and its side files private.

    SQLite gives the -journal, -wal and -shm files it creates the database file's mode,
    so a new database starts here as an empty 0600 file (SQLite takes an empty file for
    a new database); existing ones, side files included, are tightened.
    """
    create_private_file(path)
    for name in (path.name, *(path.name + suffix for suffix in ("-journal", "-wal", "-shm"))):
        _owner_only(path.with_name(name))
    return path


def create_private_file(path: Path | str) -> None:
    """Create ``path`` empty with mode 0600 unless it exists: a file that others write to
    later (SQLite, a log handler, appends) keeps the mode it was created with."""
    if os.name == "posix":
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _owner_only(path: Path) -> None:
    if os.name != "posix":
        return
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        os.chmod(path, mode & ~0o077)
