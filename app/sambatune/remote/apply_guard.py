"""One apply at a time per file, and nothing left behind by runs that died.

Each run holds an exclusive ``flock`` on the directory of the config file (so no lock
file is ever left there) through a process that lives exactly as long as our
connection: ``cat`` reading the channel.
When the run ends, is cut off or killed, the channel closes, ``cat`` sees the end of
its input and the lock is gone, with no process left on the server. Holding the
lock, every temporary file of our naming beside the config is a leftover of a run
that is no longer alive, so it is removed. Without ``flock`` on the server only
leftovers older than an hour are removed (a live run never takes that long).
"""

from __future__ import annotations

import posixpath

from sambatune.errors import CommandFailed, ConnectionFailed
from sambatune.remote.transport import RemoteProcess, Transport

BUSY_EXIT = 75
STALE_MINUTES = 60


class ApplyBusy(CommandFailed):
    """Another SambaTune run is applying to the same file right now."""


def _glob_escape(name: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in name)


def leftover_patterns(base: str) -> list[str]:
    """Names (find -name) of the temporary files an apply of ``base`` creates beside it."""
    quoted = _glob_escape(base)
    return [f".{quoted}.sambatune-*.new", f".{quoted}.sambatune.??????",
            f".{quoted}.sambatune-restore.*", f".{quoted}.sambatune-theirs.*"]


def backup_leftover_patterns(base: str) -> list[str]:
    """... and in the backup directory (a backup or its sidecar half written)."""
    return [f".{_glob_escape(base)}.*.sambatune.??????"]


class ApplyLock:
    def __init__(self, transport: Transport, config_path: str, *, sudo: bool) -> None:
        self.transport = transport
        self.sudo = sudo
        self.path = posixpath.dirname(config_path) or "."
        self._process: RemoteProcess | None = None
        self.held = False

    def acquire(self) -> bool:
        """Take the lock; False when the server has no flock. Raises ApplyBusy."""
        t = self.transport
        if not t.run(["sh", "-c", "command -v flock"], timeout=30).ok:
            return False
        process = t.start(["flock", "-n", "-E", str(BUSY_EXIT), self.path,
                           "sh", "-c", "echo locked; exec cat"], sudo=self.sudo)
        line = process.readline()
        if line.strip() == b"locked":
            self._process = process
            self.held = True
            return True
        process.close_stdin()
        code = _exit_code(process)
        process.kill()
        if code == BUSY_EXIT:
            raise ApplyBusy(
                "Another SambaTune run is applying a change to this file right now; "
                "nothing was changed. Try again when it has finished.",
                details=f"lock: {self.path}")
        if not t.is_connected():
            raise ConnectionFailed("The connection dropped while taking the apply lock.")
        raise CommandFailed("Could not take the apply lock on the server.",
                            details=f"lock: {self.path}\n{process.stderr_text()}")

    def release(self) -> None:
        if self._process is not None:
            self._process.close_stdin()
            self._process.kill()
            self._process = None
        self.held = False


def _exit_code(process: RemoteProcess) -> int | None:
    try:
        return process.wait(timeout=10)
    except Exception:
        return None


def remove_leftovers(transport: Transport, config_path: str, backup_dir: str, *,
                     sudo: bool, locked: bool) -> list[str]:
    """Delete temporary files of earlier runs that died; returns what was removed."""
    base = posixpath.basename(config_path)
    removed: list[str] = []
    for directory, patterns in ((posixpath.dirname(config_path) or ".", leftover_patterns(base)),
                                (backup_dir, backup_leftover_patterns(base))):
        argv = ["find", directory, "-maxdepth", "1", "-type", "f", "("]
        for index, pattern in enumerate(patterns):
            argv += (["-o"] if index else []) + ["-name", pattern]
        argv += [")"]
        if not locked:
            argv += ["-mmin", f"+{STALE_MINUTES}"]
        argv += ["-print", "-delete"]
        result = transport.run(argv, sudo=sudo, timeout=60)
        removed += [line for line in result.text.splitlines() if line]
    return removed
