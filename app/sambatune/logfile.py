"""The app's log file (GUI): what happened, for the admin and for bug reports.

Secrets never reach it: passwords travel only on stdin and through prompt objects,
and no code formats them into a message.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
from pathlib import Path

from sambatune.appdirs import create_private_file, data_dir, private_dir, private_file


def log_path() -> Path:
    return private_dir(data_dir() / "logs") / "sambatune.log"


class PrivateRotatingLog(logging.handlers.RotatingFileHandler):
    """A rotating log whose files only this user reads: the log names servers, paths
    and what went wrong on them, and each rotation opens a new file (with the umask)."""

    def _open(self) -> io.TextIOWrapper:
        create_private_file(self.baseFilename)
        return super()._open()


def start_file_log(level: int = logging.INFO) -> Path:
    path = log_path()
    for old in path.parent.glob(path.name + "*"):
        private_file(old)
    handler = PrivateRotatingLog(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # paramiko is chatty at INFO (every auth attempt); keep its warnings and errors.
    logging.getLogger("paramiko").setLevel(logging.WARNING)
    return path
