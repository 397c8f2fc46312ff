"""The sudo password never comes back, even where sudo lets a command through without it.

A sudoers rule that exempts python3 from the password (NOPASSWD) while everything else
needs it puts the transport in its password mode, and sudo then never reads the
password line sent ahead of python3's stdin: python3 gets it instead. Real sudo, real
sshd, a real system user.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixed_answers import FixedAnswers
from sambatune.errors import SambaTuneError
from sambatune.logfile import start_file_log
from sambatune.remote.agents import run_agent
from sambatune.remote.connection import open_target
from sambatune.remote.transport import REDACTED, Transport
from testbed.processes import CommandLineWatch
from testbed.smbd import SmbServer
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser

# sudo finds "python3" along secure_path; the rule must name the file it finds.
SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

ECHO_STDIN = (
    "import sys; data = sys.stdin.read(); sys.stdout.write(data); "
    "sys.stderr.write('got %r' % data); sys.exit(3)"
)


@pytest.fixture(scope="module")
def exempt_user() -> Iterator[SudoUser]:
    """A user whose sudo needs the password for everything but python3."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a test user")
    python3 = shutil.which("python3", path=SECURE_PATH)
    assert python3 is not None
    user = SudoUser.create()
    user.sudoers_file.write_text(
        f"{user.name} ALL=(ALL:ALL) ALL\n{user.name} ALL=(root) NOPASSWD: {python3}\n"
    )
    check = subprocess.run(["visudo", "-c", "-f", str(user.sudoers_file)], capture_output=True)
    assert check.returncode == 0, check.stdout + check.stderr
    yield user
    user.delete()


@pytest.fixture
def transport(sshd_password: SshServer, exempt_user: SudoUser, tmp_path: Path) -> Iterator[Transport]:
    options = sshd_password.password_options(
        exempt_user.name, exempt_user.password, tmp_path / "kh", sudo=True
    )
    target = open_target(options, FixedAnswers(accept_new_host_key=True))
    yield target
    target.close()


@pytest.fixture
def log_file() -> Iterator[Path]:
    """The app's own log file, collecting for the test (as it does in the GUI)."""
    before = list(logging.getLogger().handlers)
    level = logging.getLogger().level
    path = start_file_log(logging.DEBUG)
    yield path
    root = logging.getLogger()
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def everything_said(error: SambaTuneError) -> str:
    return f"{error}\n{error.message}\n{error.details}\n{error.to_json()}"


def test_the_rule_puts_the_transport_in_password_mode(transport: Transport) -> None:
    assert transport.sudo_mode() == "password"


def test_an_agent_under_a_python3_exemption_runs_and_never_sees_the_password(
    transport: Transport,
    exempt_user: SudoUser,
    sshd_password: SshServer,
    log_file: Path,
) -> None:
    with CommandLineWatch(exempt_user.password) as ps:
        result = run_agent(transport, "sysinfo", {"only": "smbd"}, sudo=True)
    assert result.hello["protocol"] == 1
    assert exempt_user.password not in repr(result.data) + repr(result.hello)
    assert ps.seen == []
    logged = log_file.read_text(encoding="utf-8")
    # Every command is in the log, sudo's with the password line on stdin too: not the password.
    assert "agent sysinfo" in logged and "started sudo -k -S -p " in logged
    assert exempt_user.password not in logged
    assert exempt_user.password not in sshd_password.log.read_text()


def test_what_a_command_reads_of_the_password_is_redacted(
    transport: Transport,
    exempt_user: SudoUser,
    log_file: Path,
) -> None:
    # python3 runs without the password here, so the password line is its stdin's first.
    result = transport.run(["python3", "-c", ECHO_STDIN], stdin=b"the real input\n", sudo=True)
    assert result.exit_code == 3
    assert exempt_user.password.encode() not in result.stdout + result.stderr
    assert result.stdout == REDACTED.encode() + b"\nthe real input\n"
    assert REDACTED in result.error_text and "the real input" in result.error_text
    with pytest.raises(SambaTuneError) as caught:
        result.check("Echoing")
    assert exempt_user.password not in everything_said(caught.value)
    logging.getLogger("sambatune.test").warning("%s\n%s", caught.value.message, caught.value.details)
    assert REDACTED in log_file.read_text(encoding="utf-8")
    assert exempt_user.password not in log_file.read_text(encoding="utf-8")


def test_output_of_a_command_sudo_asked_the_password_for_stays_exact(
    transport: Transport,
    exempt_user: SudoUser,
) -> None:
    # A file only root reads that happens to hold the password: its bytes are data.
    folder = Path(tempfile.mkdtemp(prefix="sambatune-secrecy-"))
    try:
        secret_file = folder / "holds-the-password"
        content = f"line one\npassword = {exempt_user.password}\n".encode()
        secret_file.write_bytes(content)
        secret_file.chmod(0o600)
        folder.chmod(0o755)
        assert transport.read_file(str(secret_file), sudo=True) == content
        listed = transport.run(["cat", "--", str(folder / "absent")], sudo=True)
    finally:
        shutil.rmtree(folder)
    assert listed.exit_code == 1
    assert "[sambatune-sudo-" not in listed.error_text
    assert listed.error_text.startswith("cat: ")


def test_the_cli_applies_through_the_exempt_agent_and_never_prints_the_password(
    fresh_smbd: SmbServer,
    sshd_password: SshServer,
    exempt_user: SudoUser,
    tmp_path: Path,
) -> None:
    candidate = tmp_path / "new.conf"
    candidate.write_bytes(
        fresh_smbd.config.read_bytes() + f"\n[fresh]\n  path = {fresh_smbd.share_path}\n".encode()
    )
    secret = exempt_user.password + "\n"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sambatune",
            "conf",
            "apply",
            "--file",
            str(candidate),
            "--remote-path",
            str(fresh_smbd.config),
            "--sudo",
            "--yes",
            "--verbose",
            "--host",
            f"{exempt_user.name}@127.0.0.1:{sshd_password.port}",
            "--known-hosts",
            str(tmp_path / "kh"),
            "--accept-new-host-key",
            "--password-stdin",
            "--sudo-password-stdin",
        ],
        input=secret + secret,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert exempt_user.password not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fresh" in fresh_smbd.list_shares()
