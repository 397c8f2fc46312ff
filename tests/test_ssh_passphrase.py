"""A key passphrase never reaches the server as a password, proved by the server's own log.

Each test runs its own sshd with password logins, so its log holds only that test's
attempts: sshd logs every password it checks ("Accepted password for ..." or "Failed
password for ..."). The account's password is also the key's passphrase, so a
passphrase sent as a password would log in.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cli_process import sambatune_cli, ssh_args
from fixed_answers import FixedAnswers
from sambatune.cli.connect import TerminalPrompts
from sambatune.errors import AuthenticationFailed, SecretRequired
from sambatune.remote.connection import ConnectionOptions, open_target
from testbed.paramiko_sshd import RecordingSshd
from testbed.sshd import SshServer, keygen, keygen_fingerprint
from testbed.sudo_user import SudoUser

PASSWORD_CHECKS = re.compile(r"(Accepted|Failed) (password|keyboard-interactive)")


@pytest.fixture
def password_sshd(tmp_path: Path, plain_user: SudoUser) -> Iterator[SshServer]:
    server = SshServer(tmp_path, "sshd-own-log", password_auth=True)
    server.start()
    yield server
    server.stop()


def password_checks(server: SshServer) -> list[str]:
    return [line for line in server.log.read_text().splitlines() if PASSWORD_CHECKS.search(line)]


def options_for(
    server: SshServer, user: SudoUser, key: Path, tmp_path: Path, password: str | None
) -> ConnectionOptions:
    known = tmp_path / "known_hosts"
    known.write_text(server.known_hosts_line)
    return ConnectionOptions(
        host="127.0.0.1",
        port=server.port,
        user=user.name,
        identity_file=str(key),
        known_hosts=known,
        password=password,
    )


def assert_password_logs_in(options: ConnectionOptions, server: SshServer, user: SudoUser) -> None:
    """The control: the very same secret, sent as a password, does log in (and is logged)."""
    target = open_target(replace(options, auth="password"), TerminalPrompts(False, user.password))
    try:
        assert target.run(["id", "-un"]).text.strip() == user.name
    finally:
        target.close()
    assert any(f"Accepted password for {user.name}" in line for line in password_checks(server))


def test_passphrase_of_a_refused_key_is_not_sent_as_password(
    password_sshd: SshServer, plain_user: SudoUser, tmp_path: Path
) -> None:
    # --password-stdin: the one stdin line answers the passphrase and the password question.
    key = keygen(tmp_path / "id_locked", passphrase=plain_user.password)
    options = options_for(password_sshd, plain_user, key, tmp_path, plain_user.password)
    with pytest.raises(SecretRequired) as caught:
        open_target(options, TerminalPrompts(False, plain_user.password))
    assert "used as a key passphrase" in caught.value.message
    assert "does not send a key passphrase to the server" in caught.value.message
    assert "--auth password" in caught.value.details
    assert plain_user.password not in caught.value.message + caught.value.details
    log = password_sshd.log.read_text()
    # The passphrase opened the key and the server refused the key...
    assert keygen_fingerprint(key.with_suffix(".pub")) in log
    # ...and then no password was checked at all.
    assert password_checks(password_sshd) == []
    assert_password_logs_in(options, password_sshd, plain_user)


def test_wrong_passphrase_is_not_sent_as_password(
    password_sshd: SshServer, plain_user: SudoUser, tmp_path: Path
) -> None:
    key = keygen(tmp_path / "id_locked", passphrase="the key's own passphrase")
    options = options_for(password_sshd, plain_user, key, tmp_path, plain_user.password)
    with pytest.raises(SecretRequired, match="used as a key passphrase"):
        open_target(options, TerminalPrompts(False, plain_user.password))
    assert password_checks(password_sshd) == []
    assert_password_logs_in(options, password_sshd, plain_user)


def test_passphrase_typed_again_at_the_password_question_is_not_sent(
    password_sshd: SshServer, plain_user: SudoUser, tmp_path: Path
) -> None:
    # What the app sees when a person (or the keyring) answers both questions alike.
    key = keygen(tmp_path / "id_locked", passphrase=plain_user.password)
    options = options_for(password_sshd, plain_user, key, tmp_path, None)
    answers = FixedAnswers(passphrase=plain_user.password, password=plain_user.password)
    with pytest.raises(SecretRequired, match="used as a key passphrase"):
        open_target(options, answers)
    assert password_checks(password_sshd) == []


def test_a_different_password_is_still_sent_after_a_refused_key(
    password_sshd: SshServer, plain_user: SudoUser, tmp_path: Path
) -> None:
    key = keygen(tmp_path / "id_locked", passphrase="the key's own passphrase")
    options = options_for(password_sshd, plain_user, key, tmp_path, None)
    answers = FixedAnswers(passphrase="the key's own passphrase", password=plain_user.password)
    open_target(options, answers).close()
    assert keygen_fingerprint(key.with_suffix(".pub")) in password_sshd.log.read_text()
    assert [m.group(1) for m in map(PASSWORD_CHECKS.search, password_checks(password_sshd)) if m] == [
        "Accepted"
    ]


def test_command_line(password_sshd: SshServer, plain_user: SudoUser, tmp_path: Path) -> None:
    key = keygen(tmp_path / "id_locked", passphrase=plain_user.password)
    known = tmp_path / "known_hosts"
    known.write_text(password_sshd.known_hosts_line)

    def survey(identity: Path, *flags: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return sambatune_cli(
            "survey",
            "--host",
            f"{plain_user.name}@127.0.0.1:{password_sshd.port}",
            "--identity",
            str(identity),
            "--known-hosts",
            str(known),
            "--json",
            *flags,
            stdin=stdin,
        )

    refused = survey(key, "--password-stdin", stdin=plain_user.password + "\n")
    assert refused.returncode == 1, refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "secret-required"
    assert "does not send a key passphrase" in error["message"]
    assert password_checks(password_sshd) == []

    # The way out the message gives: a password on its own.
    alone = survey(key, "--auth", "password", "--password-stdin", stdin=plain_user.password + "\n")
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["user"]["name"] == plain_user.name

    # Or each secret on its own line: the passphrase opens the key, the password logs in.
    other_key = keygen(tmp_path / "id_other", passphrase="only for the key")
    both = survey(
        other_key,
        "--password-stdin",
        "--passphrase-stdin",
        stdin=f"{plain_user.password}\nonly for the key\n",
    )
    assert both.returncode == 0, both.stderr
    assert keygen_fingerprint(other_key.with_suffix(".pub")) in password_sshd.log.read_text()
    assert len([line for line in password_checks(password_sshd) if "Accepted" in line]) == 2


# -- a server that offers no publickey ----------------------------------------------------
# OpenSSH's sshd always offers publickey here, so SambaTune asks for the passphrase first
# and knows the line for one. A server may offer only password or keyboard-interactive:
# no passphrase question comes, and the line was sent as a password. A paramiko server
# records every secret offered to it.

SECRET = "the key's passphrase, and nothing else"
SERVER_OFFERS = ["password", "keyboard-interactive", "password,keyboard-interactive", "publickey,password"]


@pytest.fixture(params=SERVER_OFFERS)
def recording_sshd(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RecordingSshd]:
    server = RecordingSshd(keygen(tmp_path / "recording_hostkey"), request.param)
    yield server
    server.stop()


def recording_options(server: RecordingSshd, key: Path, tmp_path: Path) -> ConnectionOptions:
    known = tmp_path / "recording_known_hosts"
    known.write_text(server.known_hosts_line)
    return ConnectionOptions(
        host="127.0.0.1", port=server.port, user="admin", identity_file=str(key), known_hosts=known
    )


def test_the_passphrase_line_never_reaches_a_server_whatever_it_offers(
    recording_sshd: RecordingSshd, tmp_path: Path
) -> None:
    key = keygen(tmp_path / "id_locked", passphrase=SECRET)
    options = replace(recording_options(recording_sshd, key, tmp_path), password=SECRET)
    # The CLI's own reading of --password-stdin without --passphrase-stdin.
    options.password_opens_keys = True
    for _trial in range(3):  # it used to leak on some runs and not others: never, now
        with pytest.raises(SecretRequired, match="used as a key passphrase"):
            open_target(options, TerminalPrompts(False, SECRET))
    assert recording_sshd.sessions, "nobody connected: the test proves nothing"
    assert not [item for item in recording_sshd.received if SECRET in item[1]], recording_sshd.received

    # The control: given as a password alone, the same line arrives (so it is recorded).
    with pytest.raises((SecretRequired, AuthenticationFailed)):
        open_target(
            replace(options, auth="password", password_opens_keys=False), TerminalPrompts(False, SECRET)
        )
    assert any(secret == SECRET for _method, secret in recording_sshd.received)


def test_the_command_line_keeps_the_passphrase_line_from_a_password_only_server(
    tmp_path: Path,
) -> None:
    server = RecordingSshd(keygen(tmp_path / "recording_hostkey"), "password,keyboard-interactive")
    try:
        key = keygen(tmp_path / "id_locked", passphrase=SECRET)
        options = recording_options(server, key, tmp_path)
        common = ["survey", *ssh_args(options), "--json"]
        refused = sambatune_cli(*common, "--password-stdin", stdin=SECRET + "\n")
        assert refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "secret-required"
        assert server.sessions and not [s for _m, s in server.received if SECRET in s]
        # Each on its own line: the password is sent, the passphrase never.
        both = sambatune_cli(
            *common, "--password-stdin", "--passphrase-stdin", stdin=f"the password\n{SECRET}\n"
        )
        assert both.returncode == 1
        assert ("password", "the password") in server.received
        assert not [s for _m, s in server.received if SECRET in s]
    finally:
        server.stop()
