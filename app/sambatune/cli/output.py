"""How verbs report: JSON on stdout with ``--json``, plain text otherwise; errors alike."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from sambatune.errors import Cancelled, SambaTuneError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CANCELLED = 130


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")
    sys.stdout.flush()


def run_verb(args: argparse.Namespace) -> int:
    """Run the verb's handler; turn our errors into one clear line (or a JSON error)."""
    wants_json = bool(getattr(args, "json", False))
    try:
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
        report_error(error, wants_json, verbose=getattr(args, "verbose", False))
        return EXIT_CANCELLED if isinstance(error, Cancelled) else EXIT_ERROR


def report_error(error: SambaTuneError, wants_json: bool, *, verbose: bool = False) -> None:
    if wants_json:
        print_json({"ok": False, "error": error.to_json()})
    print(f"sambatune: {error.message}", file=sys.stderr)
    if error.details and (verbose or not wants_json):
        for line in error.details.splitlines():
            print(f"  {line}", file=sys.stderr)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("-v", "--verbose", action="store_true", help="show error details")


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
        pad = max(0, len(self._last) - len(text))
        sys.stderr.write("\r" + text + " " * pad)
        sys.stderr.flush()
        self._last = text

    def done(self) -> None:
        if self.enabled and self._last:
            sys.stderr.write("\r" + " " * len(self._last) + "\r")
            sys.stderr.flush()
            self._last = ""
