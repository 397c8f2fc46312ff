"""The bundled app as its own Python, for agents that run on this computer.

An agent for this computer runs under the app's own interpreter
(``sys.executable -u -c BOOTSTRAP``, see ``remote/agents.py``). Inside a PyInstaller
bundle ``sys.executable`` is the SambaTune program itself, so the program accepts
that one form of python's command line and runs the code the way python3 would.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Sequence


def run_python_command_line(argv: Sequence[str]) -> bool:
    """Run ``[-u] -c CODE [ARG...]`` when frozen; False when ``argv`` is not that.

    The code's own ``SystemExit`` (and any error) propagates, as in python3.
    """
    if not getattr(sys, "frozen", False):
        return False
    args = list(argv)
    unbuffered = args[:1] == ["-u"]
    if unbuffered:
        args = args[1:]
    if len(args) < 2 or args[0] != "-c":
        return False
    if unbuffered:
        # A windowed program started without pipes has no streams at all.
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.reconfigure(write_through=True)  # type: ignore[union-attr]
    sys.argv = ["-c", *args[2:]]
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    exec(compile(args[1], "<string>", "exec"), namespace)
    return True
