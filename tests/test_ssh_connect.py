"""Connecting over SSH the way OpenSSH users expect, against a real sshd on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import paramiko
import pytest

from faults import CUT_AFTER
from fixed_answers import FixedAnswers
from sambatune.cancellation import CancelToken
from sambatune.errors import (
    AuthenticationFailed,
    Cancelled,
    ConnectionFailed,
    HostKeyChanged,
    HostKeyUnknown,
    SecretRequired,
)
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.hostkeys import HostKeyQuestion
from sambatune.remote.prompts import NoPrompts, SecretRequest
from testbed.sshd import SshServer, current_user, keygen
from testbed.sudo_user import SudoUser


def test_key_auth_runs_commands(ssh_options: ConnectionOptions) -> None:
    transport = open_target(ssh_options, NoPrompts())
    try:
        result = transport.run(["echo", "hello", "two words", "$HOME", "a'b"])
        assert result.ok
        # Every argument arrives as one word, unexpanded: the transport quotes them all.
        assert result.text == "hello two words $HOME a'b\n"
        assert transport.run(["sh", "-c", "exit 7"]).exit_code == 7
        assert transport.run(["cat"], stdin=b"x" * 300_000).stdout == b"x" * 300_000
    finally:
        transport.close()


def test_a_cut_connection_is_seen_as_gone_when_the_command_fails(
    ssh_options: ConnectionOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """paramiko wakes a dead connection's channels before it marks the connection
    inactive. Whoever handles the drop asks is_connected() at once (apply's recovery
    decides by it whether to read the live file), so the answer must be settled by then.
    The reader thread is held up between the two, as a busy machine may do."""
    unlink = paramiko.Channel._unlink  # type: ignore[attr-defined]  # private: the thread holds up here

    def slow_unlink(channel: paramiko.Channel) -> None:
        unlink(channel)
        time.sleep(0.3)

    monkeypatch.setattr(paramiko.Channel, "_unlink", slow_unlink)
    transport = open_target(ssh_options, NoPrompts())
    try:
        with pytest.raises(ConnectionFailed, match="dropped"):
            transport.run(["sh", "-c", CUT_AFTER])
        assert not transport.is_connected()
    finally:
        transport.close()


def test_a_command_killed_by_a_signal_is_its_own_failure_not_a_drop(
    ssh_options: ConnectionOptions,
) -> None:
    """sshd sends no exit status for a command a signal killed, as for a cut: the
    connection, still up, tells them apart."""
    transport = open_target(ssh_options, NoPrompts())
    try:
        result = transport.run(["sh", "-c", 'kill -KILL "$$"'])
        assert result.exit_code == -1 and not result.ok
        assert transport.is_connected()
        assert transport.run(["echo", "still here"]).text == "still here\n"
    finally:
        transport.close()


def test_ending_a_command_s_input_as_it_ends_keeps_the_connection(
    ssh_options: ConnectionOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenSSH drops the whole connection when a channel's EOF reaches it after the
    channel's close ("ieof packet referred to nonexistent channel"; a survey lost its
    connection between two agents in CI). The EOF is held up between being made and
    being sent, as a busy machine may, while the command ends and the server closes the
    channel: every task on the connection must survive it."""
    send = paramiko.Transport._send_user_message  # type: ignore[attr-defined]  # private: held up here

    def slow_eof(self: paramiko.Transport, message: paramiko.Message) -> None:
        # Only ours: paramiko's reader thread answers the server's close at once.
        is_eof = message.asbytes()[:1] == bytes([paramiko.common.MSG_CHANNEL_EOF])
        if is_eof and threading.current_thread() is not self:
            time.sleep(0.6)
        send(self, message)

    monkeypatch.setattr(paramiko.Transport, "_send_user_message", slow_eof)
    transport = open_target(ssh_options, NoPrompts())
    try:
        assert transport.run(["sleep", "0.2"]).ok
        assert transport.is_connected()
        process = transport.start(["sleep", "0.2"])
        process.close_stdin()
        assert process.wait(10) == 0
        assert transport.run(["echo", "still here"]).text == "still here\n"
    finally:
        transport.close()


def test_unknown_host_key_is_refused_without_consent(sshd: SshServer, user_key: Path, tmp_path: Path) -> None:
    options = sshd.key_options(user_key, tmp_path / "known_hosts")
    with pytest.raises(HostKeyUnknown) as caught:
        open_target(options, NoPrompts())
    # The message carries the same fingerprint ssh-keygen -lf prints for the server key.
    assert sshd.host_key_fingerprint in caught.value.message
    assert not (tmp_path / "known_hosts").exists()


def test_unknown_key_accepted_is_remembered(sshd: SshServer, user_key: Path, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        known_hosts=known,
    )
    answers = FixedAnswers(accept_new_host_key=True)
    open_target(options, answers).close()
    [question] = answers.questions
    assert question.fingerprint == sshd.host_key_fingerprint
    assert question.host == f"[127.0.0.1]:{sshd.port}"
    assert question.key_type == "ED25519"
    assert known.read_text() == sshd.known_hosts_line
    # The second time nobody is asked.
    again = FixedAnswers(accept_new_host_key=False)
    open_target(options, again).close()
    assert again.questions == []


def test_hashed_known_hosts_entries_are_honoured(sshd: SshServer, user_key: Path, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(sshd.known_hosts_line)
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    assert "|1|" in known.read_text()
    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        known_hosts=known,
    )
    open_target(options, NoPrompts()).close()


def test_changed_host_key_is_refused_and_never_replaced(tmp_path: Path, user_key: Path) -> None:
    server = SshServer(tmp_path, "changing")
    server.authorize(user_key.with_suffix(".pub"))
    server.start()
    try:
        known = tmp_path / "known_hosts"
        known.write_text(server.known_hosts_line)
        before = known.read_bytes()
        server.restart_with_new_host_key()
        options = ConnectionOptions(
            host="127.0.0.1",
            port=server.port,
            user=current_user(),
            identity_file=str(user_key),
            known_hosts=known,
        )
        with pytest.raises(HostKeyChanged) as caught:
            open_target(options, FixedAnswers(accept_new_host_key=True))
        assert "CHANGED" in caught.value.message
        assert server.host_key_fingerprint in caught.value.message
        assert "ssh-keygen -R" in caught.value.details
        assert known.read_bytes() == before
    finally:
        server.stop()


def test_password_auth(sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path) -> None:
    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd_password.port,
        user=sudo_user.name,
        known_hosts=tmp_path / "kh",
        password=sudo_user.password,
    )
    transport = open_target(options, FixedAnswers(accept_new_host_key=True))
    try:
        assert transport.run(["id", "-un"]).text.strip() == sudo_user.name
    finally:
        transport.close()


def test_password_asked_when_not_given(sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path) -> None:
    asked: list[SecretRequest] = []

    class Prompts(FixedAnswers):
        def ask_secret(self, request: SecretRequest) -> str | None:
            asked.append(request)
            return sudo_user.password

    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd_password.port,
        user=sudo_user.name,
        known_hosts=tmp_path / "kh",
    )
    open_target(options, Prompts(accept_new_host_key=True)).close()
    assert [r.kind for r in asked] == ["password"]


def test_wrong_password_message(sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path) -> None:
    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd_password.port,
        user=sudo_user.name,
        known_hosts=tmp_path / "kh",
        password="not-" + sudo_user.password,
    )
    with pytest.raises(AuthenticationFailed) as caught:
        open_target(options, FixedAnswers(accept_new_host_key=True))
    assert caught.value.message == (
        f"The server rejected the password for {sudo_user.name}@127.0.0.1:{sshd_password.port}."
    )
    assert sudo_user.password not in caught.value.message + caught.value.details


def test_missing_password_says_so(sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path) -> None:
    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd_password.port,
        user=sudo_user.name,
        known_hosts=tmp_path / "kh",
    )
    with pytest.raises(SecretRequired, match="wants a password"):
        open_target(options, FixedAnswers(accept_new_host_key=True))


def test_passphrase_protected_key(sshd: SshServer, tmp_path: Path) -> None:
    key = keygen(tmp_path / "id_locked", passphrase="open sesame")
    sshd.authorize(key.with_suffix(".pub"))
    known = tmp_path / "kh"
    known.write_text(sshd.known_hosts_line)
    asked: list[SecretRequest] = []

    class Prompts(FixedAnswers):
        def ask_secret(self, request: SecretRequest) -> str | None:
            asked.append(request)
            return "wrong" if request.attempt == 1 else "open sesame"

    options = ConnectionOptions(
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(key),
        known_hosts=known,
    )
    open_target(options, Prompts()).close()
    assert [(r.kind, r.attempt) for r in asked] == [("passphrase", 1), ("passphrase", 2)]
    assert asked[0].target == str(key)


def test_ssh_agent_keys(sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = keygen(tmp_path / "id_agent")
    sshd.authorize(key.with_suffix(".pub"))
    known = tmp_path / "kh"
    known.write_text(sshd.known_hosts_line)
    socket_path = tmp_path / "agent.sock"
    agent = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(socket_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            if socket_path.exists():
                break
            threading.Event().wait(0.05)
        env = {**os.environ, "SSH_AUTH_SOCK": str(socket_path)}
        subprocess.run(["ssh-add", str(key)], env=env, check=True, capture_output=True)
        key.unlink()  # only the agent has it now
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket_path))
        options = ConnectionOptions(
            host="127.0.0.1",
            port=sshd.port,
            user=current_user(),
            known_hosts=known,
        )
        transport = open_target(options, NoPrompts())
        assert transport.run(["true"]).ok
        transport.close()
    finally:
        agent.terminate()
        agent.wait()


def test_ssh_config_alias_with_proxy_jump(sshd: SshServer, user_key: Path, isolated_home: Path) -> None:
    (isolated_home / ".ssh" / "config").write_text(
        f"""
Host jumpbox
    HostName 127.0.0.1
    Port {sshd.port}
    User {current_user()}
    IdentityFile {user_key}

Host fileserver
    HostName 127.0.0.1
    Port {sshd.port}
    User {current_user()}
    IdentityFile {user_key}
    ProxyJump jumpbox
"""
    )
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    transport = open_target(ConnectionOptions(host="fileserver"), NoPrompts())
    try:
        assert transport.label == f"{current_user()}@fileserver:{sshd.port}"
        # The final hop's TCP connection comes from sshd itself (direct-tcpip), so the
        # session's SSH_CONNECTION shows a loopback client port that is not ours.
        assert transport.run(["true"]).ok
        log = sshd.log.read_text()
        assert "direct-tcpip" in log or "Connection from 127.0.0.1" in log
    finally:
        transport.close()


def test_connection_refused_message(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = ConnectionOptions(host="127.0.0.1", port=port, user="x", known_hosts=tmp_path / "k")
    with pytest.raises(ConnectionFailed) as caught:
        open_target(options, NoPrompts())
    assert caught.value.message == (
        f"Connection refused by 127.0.0.1:{port}: nothing listens for SSH on that port."
    )


def test_connect_timeout_message(tmp_path: Path) -> None:
    # A listener whose accept queue is full: the kernel drops further SYNs, exactly
    # what a host behind a dropping firewall looks like.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        options = ConnectionOptions(
            host="127.0.0.1",
            port=port,
            user="x",
            known_hosts=tmp_path / "k",
            connect_timeout=1.0,
        )
        with pytest.raises(ConnectionFailed) as caught:
            open_target(options, NoPrompts())
        assert "within" in caught.value.message or "handshake" in caught.value.message
    finally:
        for filler in fillers:
            filler.close()
        server.close()


def test_silent_server_times_out_in_handshake(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    port = server.getsockname()[1]
    try:
        options = ConnectionOptions(
            host="127.0.0.1",
            port=port,
            user="x",
            known_hosts=tmp_path / "k",
            connect_timeout=1.0,
        )
        with pytest.raises(ConnectionFailed, match="SSH handshake failed"):
            open_target(options, NoPrompts())
    finally:
        server.close()


def test_dns_failure_message(tmp_path: Path) -> None:
    options = ConnectionOptions(host="no-such-host.invalid", user="x", known_hosts=tmp_path / "k")
    with pytest.raises(ConnectionFailed, match="does not resolve"):
        open_target(options, NoPrompts())


def test_cancel_while_connecting(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    port = server.getsockname()[1]
    cancel = CancelToken()
    timer = threading.Timer(0.3, cancel.cancel)
    timer.start()
    try:
        options = ConnectionOptions(
            host="127.0.0.1",
            port=port,
            user="x",
            known_hosts=tmp_path / "k",
            connect_timeout=20,
        )
        started = time.monotonic()
        with pytest.raises((Cancelled, ConnectionFailed)):
            open_target(options, NoPrompts(), cancel=cancel)
        assert cancel.cancelled
        # The cancel ended it, not the 20 s timeout (a correctness bound, far from both).
        assert time.monotonic() - started < 10
    finally:
        timer.cancel()
        server.close()


def test_host_key_question_text() -> None:
    question = HostKeyQuestion("[h]:2222", "ED25519", 256, "SHA256:abc")
    assert "ED25519 key fingerprint is SHA256:abc." in question.describe()
    assert question.keygen_line() == "256 SHA256:abc [h]:2222 (ED25519)"
