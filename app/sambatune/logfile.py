"""The app's log file (GUI): what happened, for the admin and for bug reports.

Secrets never reach it: passwords travel only on stdin and through prompt objects,
and no code formats them into a message.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from sambatune.appdirs import data_dir


def log_path() -> Path:
    folder = data_dir() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "sambatune.log"


def start_file_log(level: int = logging.INFO) -> Path:
    path = log_path()
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
    )
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # paramiko is chatty at INFO (every auth attempt); keep its warnings and errors.
    logging.getLogger("paramiko").setLevel(logging.WARNING)
    return path
