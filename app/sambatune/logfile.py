"""The app's log file (GUI): what happened, for the admin and for bug reports.

It lives in the platform's folder for logs (:func:`sambatune.appdirs.log_dir`), readable
by this user only, and rotates at 2 MB keeping three old files. What goes in:

- every command run on a target: its argv (shell-quoted, long scripts shortened), exit
  status and duration (``sambatune.remote.transport``), never its stdin;
- every error: anticipated ones (a refused connection, a failed command: a
  :class:`~sambatune.errors.SambaTuneError`) at WARNING, with traceback and details;
  anything else (a bug) at ERROR with its traceback;
- Qt's own warnings, and uncaught exceptions of any thread (``sambatune.ui.error_hooks``).

Secrets never reach it: passwords travel only on stdin and through prompt objects, no
code formats them into a message, and command lines go through the transport's redaction
of the sudo password before they are logged.

A hard crash (a segfault in a library) leaves no Python traceback to log:
:func:`start_crash_log` has :mod:`faulthandler` write every thread's stack to
``crash.log`` beside the log instead.

The command line does not write this file: its runs are often scripted or run in
parallel (several processes rotating one file lose lines), and everything goes to the
terminal already. ``--verbose`` sends the same records to stderr (``sambatune.cli.output``).
"""

from __future__ import annotations

import datetime
import faulthandler
import io
import logging
import logging.handlers
import os
from pathlib import Path
from typing import TextIO

from sambatune.appdirs import create_private_file, log_dir, private_file

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: A crash report grows only when the app crashes (plus one line per start); past
#: this it starts afresh, keeping the previous one as ``crash.log.1``.
CRASH_LOG_LIMIT = 1_000_000

_crash_file: TextIO | None = None  # faulthandler needs it open for the whole run


def log_path() -> Path:
    return log_dir() / "sambatune.log"


def crash_log_path() -> Path:
    return log_dir() / "crash.log"


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
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # paramiko is chatty at INFO (every auth attempt); keep its warnings and errors.
    logging.getLogger("paramiko").setLevel(logging.WARNING)
    return path


def start_crash_log() -> Path:
    """Have :mod:`faulthandler` write the stacks of all threads to ``crash.log`` if the
    process dies of a fatal signal (SIGSEGV, SIGABRT, ...), where no logging can run."""
    global _crash_file
    path = crash_log_path()
    for old in path.parent.glob(path.name + "*"):
        private_file(old)
    if path.exists() and path.stat().st_size > CRASH_LOG_LIMIT:
        path.replace(path.with_name(path.name + ".1"))
    create_private_file(path)
    handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole run
    from sambatune import __version__

    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    handle.write(f"--- SambaTune {__version__} started {started}, pid {os.getpid()}\n")
    handle.flush()
    faulthandler.enable(handle, all_threads=True)
    if _crash_file is not None:
        _crash_file.close()
    _crash_file = handle
    return path
