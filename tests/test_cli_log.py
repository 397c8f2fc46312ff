"""The command line's log: nothing extra on the terminal by default, everything on stderr
with --verbose, and the verbs that reach a server or this computer's settings in a file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from cli_process import sambatune_cli, ssh_args
from sambatune.logfile import cli_log_path
from sambatune.remote.connection import ConnectionOptions
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
        "INFO sambatune.cli.output: sambatune conf lint failed: " in verbose.stderr
        and "\nTraceback (most recent call last):" in verbose.stderr
    )
    # The one clear line still comes last, as without --verbose.
    assert verbose.stderr.splitlines()[-1].startswith(("sambatune: ", "  "))
    assert quiet.stderr in verbose.stderr


def _log_dir() -> Path:
    return cli_log_path().parent


def test_the_log_file_holds_every_command_and_error_and_no_secret(
    sshd: SshServer, ssh_options: ConnectionOptions, smbd: SmbServer
) -> None:
    """What happened, afterwards: each run names its verb and exit status, every command on
    the target with its status and time, an error with its traceback; the terminal shows
    no more than before, and a password read from stdin is in neither."""
    done = sambatune_cli("survey", *ssh_args(ssh_options), "--config-path", str(smbd.config), "--json")
    assert done.returncode == 0, done.stderr
    assert " INFO " not in done.stderr
    secret = "Not-A-Real-Pass-9"
    elsewhere = replace(ssh_options, host="nowhere.invalid")
    refused = sambatune_cli("survey", *ssh_args(elsewhere), "--password-stdin", stdin=secret + "\n")
    assert refused.returncode == 1
    assert sambatune("conf", "lint", str(smbd.config)).returncode in (0, 1)  # local: no log
    log = cli_log_path().read_text()
    label = f"{current_user()}@127.0.0.1:{sshd.port}"
    assert re.search(r"INFO sambatune.cli.run: sambatune survey started \(pid \d+\)", log)
    assert f"INFO sambatune.remote.agents: {label}: agent sysinfo" in log
    assert re.search(rf"{re.escape(label)}: ended .* in \d+\.\d\d s\n", log)
    assert "sambatune survey exit status 0" in log
    assert "sambatune survey failed: Cannot find the host 'nowhere.invalid'" in log
    assert "Traceback (most recent call last):" in log and "sambatune survey exit status 1" in log
    assert "conf lint" not in log
    assert secret not in log
    assert cli_log_path().stat().st_mode & 0o077 == 0


def test_the_log_file_rotates_at_the_start_of_a_run_and_keeps_three(tmp_path: Path) -> None:
    from sambatune.logfile import CLI_LOG_LIMIT

    folder = _log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sambatune-cli.log"
    for generation in ("3", "2", "1"):
        (folder / f"sambatune-cli.log.{generation}").write_text(f"generation {generation}\n")
    path.write_text("x" * (CLI_LOG_LIMIT + 1))
    # A verb that touches this computer (client show) writes the log; the full file rotates first.
    assert sambatune("client", "show", "--json").returncode == 0
    assert (folder / "sambatune-cli.log.1").stat().st_size == CLI_LOG_LIMIT + 1
    assert (folder / "sambatune-cli.log.2").read_text() == "generation 1\n"
    assert (folder / "sambatune-cli.log.3").read_text() == "generation 2\n"
    assert not (folder / "sambatune-cli.log.4").exists()
    fresh = path.read_text()
    assert "sambatune client show started" in fresh and "exit status 0" in fresh
    assert sambatune("client", "show", "--json").returncode == 0
    assert (folder / "sambatune-cli.log.1").stat().st_size == CLI_LOG_LIMIT + 1  # not again


def test_a_log_file_that_cannot_be_written_does_not_stop_the_verb() -> None:
    folder = _log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sambatune-cli.log").mkdir()  # a directory where the file should be
    done = sambatune("client", "show", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["os"]["name"] and "Traceback" not in done.stderr
