"""The command line's log: nothing extra by default, everything on stderr with --verbose."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


def sambatune(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sambatune", *args], capture_output=True, text=True, timeout=120
    )


def test_verbose_logs_every_command_on_stderr(
    sshd: SshServer,
    user_key: Path,
    smbd: SmbServer,
    tmp_path: Path,
) -> None:
    base = [
        "survey",
        "--host",
        "127.0.0.1",
        "--port",
        str(sshd.port),
        "--user",
        current_user(),
        "--identity",
        str(user_key),
        "--known-hosts",
        str(tmp_path / "kh"),
        "--accept-new-host-key",
        "--config-path",
        str(smbd.config),
        "--json",
    ]
    quiet = sambatune(*base)
    assert quiet.returncode == 0, quiet.stderr
    assert " INFO " not in quiet.stderr and " -> exit " not in quiet.stderr
    verbose = sambatune(*base, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert json.loads(verbose.stdout)["samba"]["version_text"]  # stdout stays pure JSON
    label = f"{current_user()}@127.0.0.1:{sshd.port}"
    assert f"INFO sambatune.remote.agents: {label}: agent sysinfo" in verbose.stderr
    assert f"INFO sambatune.remote.transport: {label}: started python3 -u -c '<script of " in verbose.stderr
    # An agent ends when SambaTune closes its stdin, having read its result.
    assert re.search(
        rf"{re.escape(label)}: ended python3 -u -c '<script of \d+ characters: "
        r"import sys,json>' -> closed by SambaTune in \d+\.\d\d s\n",
        verbose.stderr,
    )
    assert not [line for line in verbose.stderr.splitlines() if " DEBUG " in line or "paramiko" in line]


def test_verbose_error_shows_where_it_came_from(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.conf")
    quiet = sambatune("conf", "lint", missing)
    assert quiet.returncode == 1
    assert "Traceback" not in quiet.stderr
    verbose = sambatune("conf", "lint", missing, "--verbose")
    assert verbose.returncode == 1
    assert (
        "INFO sambatune.cli.output: sambatune conf failed\nTraceback (most recent call last):"
        in verbose.stderr
    )
    # The one clear line still comes last, as without --verbose.
    assert verbose.stderr.splitlines()[-1].startswith(("sambatune: ", "  "))
    assert quiet.stderr in verbose.stderr
