"""The ``sambatune`` command as a user runs it: a real process, real sshd, real smbd."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sambatune
from cli_process import sambatune_cli
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user
from testbed.sudo_user import SudoUser


def test_version() -> None:
    result = sambatune_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"sambatune {sambatune.__version__}"


def test_self_check_json() -> None:
    result = sambatune_cli("--self-check", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["agents"]["ok"] and "sysinfo" in checks["agents"]["detail"]
    assert checks["resources"]["ok"]
    assert checks["lint process"]["ok"], checks["lint process"]


def test_survey_over_ssh_json(sshd: SshServer, user_key: Path, smbd: SmbServer, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
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
        str(known),
        "--config-path",
        str(smbd.config),
        "--json",
    ]
    refused = sambatune_cli(*base)
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "host-key-unknown"
    assert sshd.host_key_fingerprint in error["message"]
    assert sshd.host_key_fingerprint in refused.stderr

    accepted = sambatune_cli(*base, "--accept-new-host-key")
    assert accepted.returncode == 0, accepted.stderr
    survey = json.loads(accepted.stdout)
    assert survey["samba"]["version_text"].startswith("Version ")
    assert smbd.share in [s["name"] for s in survey["samba"]["shares"]]
    assert isinstance(survey["notes"], list)
    assert known.read_text() == sshd.known_hosts_line


def test_survey_this_computer_text(smbd: SmbServer) -> None:
    result = sambatune_cli("survey", "--config-path", str(smbd.config))
    assert result.returncode == 0, result.stderr
    assert "Samba    Version" in result.stdout
    assert f"[{smbd.share}] {smbd.share_path}" in result.stdout


def test_survey_password_from_stdin(sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path) -> None:
    result = sambatune_cli(
        "survey",
        "--host",
        f"{sudo_user.name}@127.0.0.1:{sshd_password.port}",
        "--known-hosts",
        str(tmp_path / "kh"),
        "--accept-new-host-key",
        "--password-stdin",
        "--json",
        stdin=sudo_user.password + "\n",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["user"]["name"] == sudo_user.name
    assert sudo_user.password not in result.stdout + result.stderr


def test_connection_error_is_one_clear_line(tmp_path: Path) -> None:
    result = sambatune_cli(
        "survey", "--host", "127.0.0.1", "--port", "1", "--known-hosts", str(tmp_path / "kh")
    )
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first == "sambatune: Connection refused by 127.0.0.1:1: nothing listens for SSH on that port."
    assert "Traceback" not in result.stderr


def test_non_gui_verbs_do_not_import_qt() -> None:
    code = (
        "import sys\n"
        "from sambatune.cli.main import main\n"
        "try:\n"
        "    main(['survey', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import sambatune.remote.survey, sambatune.remote.ssh, sambatune.cli.selfcheck\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
