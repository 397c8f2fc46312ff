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

The command line writes its own file beside it, ``sambatune-cli.log``
(:func:`cli_file_log`), for the verbs that reach a server or change this computer: the
same records, one line naming the verb and its exit status. Its runs are often scripted
or parallel, so it is never rotated by a process that writes to it: each run appends
(one ``write`` per record with ``O_APPEND``) and only the run that starts when the file
is past its limit rotates it, under an exclusive lock, while runs still writing keep
appending to the renamed file. ``--verbose`` also sends the records to stderr
(``sambatune.cli.output``).
"""

from __future__ import annotations

import contextlib
import datetime
import faulthandler
import io
import logging
import logging.handlers
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from sambatune.appdirs import create_private_file, log_dir, private_file
from sambatune.visible_text import visible

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: A crash report grows only when the app crashes (plus one line per start); past
#: this it starts afresh, keeping the previous one as ``crash.log.1``.
CRASH_LOG_LIMIT = 1_000_000

_crash_file: TextIO | None = None  # faulthandler needs it open for the whole run


class LogFormatter(logging.Formatter):
    """FORMAT, each record on lines of its own: text from a server (a path, a testparm
    message, an error's text) can neither forge a record nor drive a terminal.

    Control characters are written out (ESC as ``^[``); a line break inside a message
    or an exception's text starts an indented line, so only a record itself starts a
    line with a time. A traceback keeps its shape.
    """

    def __init__(self, fmt: str = FORMAT) -> None:
        super().__init__(fmt)

    def format(self, record: logging.LogRecord) -> str:
        # A copy: another handler may format the same record its own way, and
        # logging.Formatter caches the exception's text on the record it formats.
        shown = logging.makeLogRecord(record.__dict__)
        shown.msg, shown.args = _indented(visible(record.getMessage())), None
        shown.exc_info = shown.exc_text = shown.stack_info = None
        text = super().format(shown)
        if record.exc_info and record.exc_info[0] is not None:
            # One chunk per frame, header or exception: the exception's own text
            # (first line kept, its line breaks indented) is the server's part.
            chunks = traceback.TracebackException(*record.exc_info).format()
            text += "\n" + "\n".join(_indented(visible(chunk.strip("\n"))) for chunk in chunks)
        elif record.exc_text:
            text += "\n" + _indented(visible(record.exc_text))
        if record.stack_info:
            text += "\n" + _indented(visible(record.stack_info))
        return text


def _indented(text: str) -> str:
    """Every line after the first that starts at the margin is indented: a traceback's
    own lines (frames) are already; a message's line breaks come from its text.
    Unicode's line separators, which some viewers break lines on, are written out."""
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    first, *rest = text.split("\n")
    return "\n".join([first, *(line if line[:1] in (" ", "") else "    " + line for line in rest)])


def log_path() -> Path:
    return log_dir() / "sambatune.log"


def cli_log_path() -> Path:
    return log_dir() / "sambatune-cli.log"


#: The logger of a command-line run's own lines (started, exit status): they go to its
#: log file only, so on a terminal the verb's one clear message stays the last line.
CLI_RUN_LOGGER = "sambatune.cli.run"
#: The command line's log rotates past this size at the start of a run, keeping three.
CLI_LOG_LIMIT = 2_000_000
CLI_LOG_KEEP = 3


def _private_logs(path: Path) -> None:
    """Tighten the mode of ``path`` and its rotations (made by an older version, or
    copied in) before anything is written to them."""
    for old in path.parent.glob(path.name + "*"):
        private_file(old)


def _open_cli_log(path: Path) -> PrivateRotatingLog:
    """The file handler, rotated first if the file is past its limit. Rotation happens
    only here, under an exclusive lock, so two runs starting together rotate once, and
    runs still writing keep appending to the renamed file. Windows cannot rename a file
    another run has open: the rotation then waits for a start when no run writes."""
    lock_path = path.with_name(path.name + ".lock")
    create_private_file(lock_path)
    with open(lock_path, "a", encoding="utf-8") as lock:
        try:
            import fcntl

            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        except ImportError:  # Windows: the rename below fails instead
            pass
        # maxBytes=0: it never rolls over by itself while a run writes.
        handler = PrivateRotatingLog(path, maxBytes=0, backupCount=CLI_LOG_KEEP, encoding="utf-8")
        if path.stat().st_size > CLI_LOG_LIMIT:
            with contextlib.suppress(OSError):
                handler.doRollover()
    return handler


@contextlib.contextmanager
def cli_file_log(verb: str) -> Iterator[logging.Logger]:
    """The command line's log for one run of ``verb`` (see the module's docstring). It
    yields the run's own logger, for the exit status; an error that is not SambaTune's
    is logged with its traceback on its way out.

    Records below WARNING never reached the terminal before this file existed, and
    warnings still do: Python shows them through its last-resort handler only while no
    handler is set, so one for stderr stands in for it."""
    run = logging.getLogger(CLI_RUN_LOGGER)
    run.propagate = False
    run.setLevel(logging.INFO)
    path = cli_log_path()
    try:
        _private_logs(path)
        handler = _open_cli_log(path)
    except OSError:  # a full disk, another account's file: the verb runs without a log
        yield run
        return
    handler.setFormatter(LogFormatter())
    root, paramiko = logging.getLogger(), logging.getLogger("paramiko")
    saved = root.level, paramiko.level
    terminal: logging.Handler | None = None
    if not any(type(h) is logging.StreamHandler for h in root.handlers):  # --verbose has one
        terminal = logging.StreamHandler()  # sys.stderr as it is now: the terminal-safe one
        terminal.setFormatter(LogFormatter("%(message)s"))
        terminal.setLevel(logging.WARNING)
        # paramiko's own errors ("Socket exception: ...", a traceback line by line) stay in
        # the file: the verb reports the failure once, in its own words.
        terminal.addFilter(lambda record: not record.name.startswith("paramiko"))
        root.addHandler(terminal)
    root.addHandler(handler)
    root.setLevel(min(logging.INFO, saved[0]) if saved[0] else logging.INFO)
    paramiko.setLevel(logging.WARNING)  # every auth attempt at INFO otherwise
    run.addHandler(handler)
    run.info("sambatune %s started (pid %d)", verb, os.getpid())
    try:
        yield run
    except Exception:
        # A bug: its traceback goes to the file for the report (Python prints it too).
        run.info("sambatune %s stopped by an unexpected error", verb, exc_info=True)
        raise
    finally:
        run.removeHandler(handler)
        root.removeHandler(handler)
        handler.close()
        if terminal is not None:
            root.removeHandler(terminal)
        root.setLevel(saved[0])
        paramiko.setLevel(saved[1])


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
    _private_logs(path)
    handler = PrivateRotatingLog(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(LogFormatter())
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
    _private_logs(path)
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
