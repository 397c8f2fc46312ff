"""How verbs report: JSON on stdout with ``--json``, plain text otherwise; errors alike.

Much of what verbs print comes from the server: smb.conf text, share names, testparm's
messages, error details. A hostile server can put terminal escape sequences in them
(retitle the window, clear the screen, write the clipboard with OSC 52), so text goes
out with its control characters shown instead of obeyed, the way ``cat -v`` shows
them: :func:`terminal_safe_streams` puts that between every verb and its streams.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO, cast

from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, SambaTuneError
from sambatune.visible_text import visible

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CANCELLED = 130


_JSON_RAW = re.compile(r"[\x7f-\x9f]")


def escape_json_controls(text: str) -> str:
    """JSON text with DEL and C1 characters as ``\\u`` escapes: the same JSON value.

    json.dumps escapes the other controls itself, but with ``ensure_ascii=False`` leaves
    these raw. Outside strings JSON has only ASCII, so any of them sits inside a string,
    where the escape means the same character.
    """
    if text.isascii() and "\x7f" not in text:  # the common case: nothing to look for
        return text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TerminalSafeStream(io.TextIOBase):
    """A text stream that writes control characters visibly (see :func:`visible`)."""

    def __init__(self, wrapped: TextIO) -> None:
        super().__init__()
        self.wrapped = wrapped

    def write(self, text: str) -> int:
        self.wrapped.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.wrapped.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.wrapped.isatty()

    def fileno(self) -> int:
        return self.wrapped.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.wrapped.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.wrapped.errors


def unwrapped(stream: TextIO) -> TextIO:
    """The stream underneath, for what must keep its control characters (``\\r``)."""
    return stream.wrapped if isinstance(stream, TerminalSafeStream) else stream


@contextlib.contextmanager
def terminal_safe_streams(json_stdout: bool) -> Iterator[None]:
    """Show control characters on stderr, and on stdout unless it carries JSON.

    JSON needs no filter: :func:`print_json` escapes every control character.
    """
    saved = sys.stdout, sys.stderr
    # None when a windowed program has no console.
    if not json_stdout and sys.stdout is not None:
        sys.stdout = cast(TextIO, TerminalSafeStream(sys.stdout))
    if sys.stderr is not None:
        sys.stderr = cast(TextIO, TerminalSafeStream(sys.stderr))
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.flush()
        sys.stdout, sys.stderr = saved


def data_stdout() -> TextIO:
    """Where a verb writes a file's worth of data (CSV, HTML) when no ``-o`` was given:
    shown safely on a terminal, byte for byte into a pipe or a file."""
    return sys.stdout if sys.stdout.isatty() else unwrapped(sys.stdout)


def print_json(value: Any) -> None:
    # ensure_ascii (the default) also escapes DEL and the C1 controls.
    json.dump(value, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")
    sys.stdout.flush()


def run_verb(args: argparse.Namespace) -> int:
    """Run the verb's handler; turn our errors into one clear line (or a JSON error).

    With ``--verbose`` the log goes to stderr as it happens (see :func:`verbose_log`).
    """
    verbose = bool(getattr(args, "verbose", False))
    if getattr(args, "keeps_no_log", False):
        with verbose_log(verbose):
            return _run_handler(args, verbose)
    from sambatune.logfile import cli_file_log

    with verbose_log(verbose), cli_file_log(_verb_name(args)) as run:
        code = _run_handler(args, verbose)
        run.info("sambatune %s exit status %d", _verb_name(args), code)
        return code


#: For the verbs that only read or write a local file (conf effective, lint, ...): they
#: reach no server and change nothing of this computer's settings, and must start fast.
#: The elevated helper keeps none either: it runs as root, and files it made in the
#: user's log folder would be root's.
KEEPS_NO_LOG = {"keeps_no_log": True}


def _verb_name(args: argparse.Namespace) -> str:
    verb = str(getattr(args, "verb", "") or "")
    sub = getattr(args, f"{verb}_verb", None) or getattr(args, "bench_test", None)
    return f"{verb} {sub}" if sub else verb


def _run_handler(args: argparse.Namespace, verbose: bool) -> int:
    wants_json = bool(getattr(args, "json", False))
    try:
        if getattr(args, "profile", None):
            from sambatune.cli.connect import apply_profile

            apply_profile(args)
        code = args.handler(args)
        return EXIT_OK if code is None else int(code)
    except KeyboardInterrupt:
        report_error(Cancelled("Interrupted."), wants_json)
        return EXIT_CANCELLED
    except BrokenPipeError:
        # The reader went away (``| head``): nothing more to say, and Python must not
        # complain again when it flushes stdout on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except SambaTuneError as error:
        import logging

        # Where it came from, for a bug report: in the log file, and on stderr with
        # --verbose (INFO, so the terminal never shows a traceback otherwise).
        logging.getLogger(__name__).info(
            "sambatune %s failed: %s", _verb_name(args), error.message, exc_info=True
        )
        report_error(error, wants_json, verbose=verbose)
        return EXIT_CANCELLED if isinstance(error, Cancelled) else EXIT_ERROR


@contextlib.contextmanager
def verbose_log(enabled: bool) -> Iterator[None]:
    """With ``--verbose``, SambaTune's log on stderr while the verb runs: every command on
    the target (exit status, duration), apply steps, warnings, and an error's traceback.

    The same records go to the command line's log file (``sambatune.logfile``).
    Lines pass through the same filter as the rest of stderr: a server's text cannot
    drive the terminal from the log either.
    """
    if not enabled:
        yield
        return
    import logging

    from sambatune.logfile import LogFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter())
    root, paramiko = logging.getLogger(), logging.getLogger("paramiko")
    saved = root.level, paramiko.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    paramiko.setLevel(logging.WARNING)  # every auth attempt at INFO otherwise
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        paramiko.setLevel(saved[1])


def report_error(error: SambaTuneError, wants_json: bool, *, verbose: bool = False) -> None:
    if wants_json:
        print_json({"ok": False, "error": error.to_json()})
    print(f"sambatune: {error.message}", file=sys.stderr)
    if error.details and (verbose or not wants_json):
        for line in error.details.splitlines():
            print(f"  {line}", file=sys.stderr)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show error details, and the log (every command run) on stderr",
    )


class TerminalProgress:
    """A one-line progress display on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = ""

    def update(self, fraction: float | None, message: str) -> None:
        if not self.enabled:
            return
        if fraction is None:
            text = message
        else:
            filled = int(max(0.0, min(1.0, fraction)) * 30)
            text = f"[{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%} {message}"
        text = visible(text)
        pad = max(0, len(self._last) - len(text))
        # Past the filter: the carriage returns are what redraws the line.
        stream = unwrapped(sys.stderr)
        stream.write("\r" + text + " " * pad)
        stream.flush()
        self._last = text

    def done(self) -> None:
        if self.enabled and self._last:
            stream = unwrapped(sys.stderr)
            stream.write("\r" + " " * len(self._last) + "\r")
            stream.flush()
            self._last = ""


@contextlib.contextmanager
def ctrl_c_cancels(cancel: CancelToken, message: str) -> Iterator[None]:
    """Ctrl-C cancels the token (after saying ``message`` once) instead of raising
    KeyboardInterrupt: work that changes servers stops at its next safe point and still
    records what is live, which a bare KeyboardInterrupt mid-step would skip.

    Signal handlers can only be set from the main thread; elsewhere Ctrl-C keeps its
    default meaning."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_signum: int, _frame: Any) -> None:
        if not cancel.cancelled:
            print(f"\n{message}", file=sys.stderr)
        cancel.cancel()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
