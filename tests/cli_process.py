"""``sambatune`` run as the admin runs it: a process of its own, from this checkout's Python."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from sambatune.remote.connection import ConnectionOptions


def sambatune_cli(
    *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``sambatune ARGS`` and return what it did. Whatever the outcome, the CLI never
    shows the admin a traceback: a failure is one clear message."""
    done = subprocess.run(
        [sys.executable, "-m", "sambatune", *args],
        input=stdin,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def ssh_args(options: ConnectionOptions) -> list[str]:
    """The CLI's options that reach the server ``options`` describes."""
    return [
        "--host",
        str(options.host),
        "--port",
        str(options.port),
        "--user",
        str(options.user),
        "--identity",
        str(options.identity_file),
        "--known-hosts",
        str(options.known_hosts),
    ]
