"""Safe apply against a real smbd over real SSH: the live smb.conf is never broken or lost."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import signal
import subprocess
from pathlib import Path

import pytest

from fixed_answers import FixedAnswers
from sambatune.applied_versions import AppliedVersions
from sambatune.conf.apply import (
    APPLIED,
    FAILED_OUTCOME,
    REFUSED,
    ROLLED_BACK,
    STEP_TITLES,
    ApplyRequest,
    StepEvent,
    apply_config,
    read_live,
)
from sambatune.remote.config_backups import BackupStore
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.local import LocalTransport
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.transport import Transport
from testbed.ports import free_port
from testbed.processes import CommandLineWatch
from testbed.smbd import SmbServer
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser

#: The apply lock beside smb.conf, which stays between runs (remote.apply_guard).
LOCK_SUFFIX = ".sambatune-lock"
NEW_SHARE = "\n[fresh]\n  path = {path}\n  read only = yes\n  guest ok = yes\n"


@pytest.fixture
def server(fresh_smbd: SmbServer) -> SmbServer:
    return fresh_smbd


def _request(server: SmbServer, candidate: bytes, **kw: object) -> ApplyRequest:
    return ApplyRequest(
        path=str(server.config),
        original=server.config.read_bytes(),
        candidate=candidate,
        summary="test change",
        **kw,  # type: ignore[arg-type]
    )


def _with_new_share(server: SmbServer) -> bytes:
    return server.config.read_bytes() + NEW_SHARE.format(path=server.share_path).encode()


def _leftovers(server: SmbServer) -> list[str]:
    return [
        p.name
        for p in server.config.parent.iterdir()
        if "sambatune-" in p.name and p.name != "sambatune-backups" and not p.name.endswith(LOCK_SUFFIX)
    ]


def test_valid_change_applies_reloads_and_is_served(server: SmbServer, ssh: Transport) -> None:
    original = server.config.read_bytes()
    candidate = _with_new_share(server)
    events: list[StepEvent] = []
    outcome = apply_config(ssh, _request(server, candidate), on_event=events.append)
    assert outcome.status == APPLIED, outcome.message
    assert outcome.live == "new"
    assert server.config.read_bytes() == candidate
    assert "fresh" in server.list_shares()
    assert outcome.backup is not None
    assert Path(outcome.backup.path).read_bytes() == original
    assert [e.step for e in events if e.state == "done"] == [
        "upload",
        "testparm",
        "backup",
        "install",
        "reload",
        "health",
    ]
    assert not _leftovers(server)


def test_rejected_config_is_never_installed(server: SmbServer, ssh: Transport) -> None:
    original = server.config.read_bytes()
    broken = original + b"\n[bad]\n  read only = perhaps\n"
    outcome = apply_config(ssh, _request(server, broken))
    assert outcome.status == REFUSED
    assert outcome.live == "old"
    assert "not boolean" in outcome.message
    assert server.config.read_bytes() == original
    assert not _leftovers(server)
    assert not (server.config.parent / "sambatune-backups").exists()


def test_someone_else_changed_the_file(server: SmbServer, ssh: Transport) -> None:
    request = _request(server, _with_new_share(server))
    theirs = request.original + b"# edited by a colleague\n"

    def colleague(step: str, _t: Transport) -> None:
        if step == "backup":
            server.config.write_bytes(theirs)

    outcome = apply_config(ssh, request, fault=colleague)
    assert outcome.status == REFUSED
    assert server.config.read_bytes() == theirs
    assert "+# edited by a colleague" in outcome.live_diff
    assert "+[fresh]" in outcome.candidate_vs_live
    assert not _leftovers(server)


def test_a_change_made_from_an_older_version_is_refused_before_anything_happens(
    server: SmbServer, ssh: Transport
) -> None:
    """The live file moved on since the version the change was made from (an apply
    that did not overlap this one): refused at once, unless forced."""
    request = _request(server, _with_new_share(server))
    theirs = request.original + b"# applied by a colleague before\n"
    server.config.write_bytes(theirs)
    backups_before = BackupStore(ssh, str(server.config)).entries()
    journal = AppliedVersions().journal(ssh.label, str(server.config))
    outcome = apply_config(ssh, request, journal=journal)
    assert outcome.status == REFUSED, outcome.message
    assert "changed outside SambaTune" in outcome.message
    assert "+# applied by a colleague before" in outcome.live_diff
    assert not outcome.steps or all(e.step != "upload" for e in outcome.steps)
    assert server.config.read_bytes() == theirs and not _leftovers(server)
    [attempt] = AppliedVersions().for_server(ssh.label, str(server.config))
    assert (attempt.outcome, attempt.live, attempt.content) == ("refused", "old", theirs)
    assert BackupStore(ssh, str(server.config)).entries() == backups_before

    forced = apply_config(ssh, dataclasses.replace(request, force=True), journal=journal)
    assert forced.status == APPLIED, forced.message
    assert any("replaced" in w for w in forced.warnings)
    assert forced.backup is not None and forced.backup.sha256 == hashlib.sha256(theirs).hexdigest()
    assert server.config.read_bytes() == request.candidate


@pytest.mark.parametrize("step", ["upload", "testparm", "backup", "install", "reload"])
@pytest.mark.parametrize("reconnects", [True, False])
def test_connection_drop_leaves_old_or_new_exactly(
    server: SmbServer, ssh_options: ConnectionOptions, step: str, reconnects: bool
) -> None:
    original = server.config.read_bytes()
    candidate = _with_new_share(server)
    transport = open_target(ssh_options, NoPrompts())

    dropped: list[str] = []

    def drop(done: str, t: Transport) -> None:
        if done == step and not dropped:
            dropped.append(done)
            t.close()

    reconnect = (lambda: open_target(ssh_options, NoPrompts())) if reconnects else None
    outcome = apply_config(transport, _request(server, candidate), fault=drop, reconnect=reconnect)
    live = server.config.read_bytes()
    assert live in (original, candidate), "the live file is neither the old nor the new version"
    assert outcome.live == ("new" if live == candidate else "old"), outcome.message
    if reconnects and step in ("install", "reload"):
        assert outcome.status == APPLIED, outcome.message
        assert "fresh" in server.list_shares()
    if reconnects and step in ("upload", "testparm", "backup"):
        assert not _leftovers(server)
    assert "connection" in outcome.message.lower()


def test_reload_failure_rolls_back(server: SmbServer, ssh: Transport) -> None:
    original = server.config.read_bytes()

    def kill_smbd(step: str, _t: Transport) -> None:
        if step == "install":
            assert server.process is not None
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait()

    outcome = apply_config(ssh, _request(server, _with_new_share(server)), fault=kill_smbd)
    assert outcome.status == ROLLED_BACK
    assert outcome.live == "old"
    assert server.config.read_bytes() == original
    assert "Reload smbd failed" in outcome.message


def test_health_failure_rolls_back(server: SmbServer, ssh: Transport) -> None:
    original = server.config.read_bytes()
    # A share whose path does not exist still passes testparm; hide it from listing
    # checks by making the expected share vanish: the new config lists a share that
    # smbd refuses to show because "available = no".
    candidate = original + b"\n[ghost]\n  path = /nonexistent\n  available = no\n"
    # available = no hides it from the listing, so the health check cannot find it.
    outcome = apply_config(ssh, _request(server, candidate))
    assert outcome.status == ROLLED_BACK, outcome.message
    assert server.config.read_bytes() == original
    assert "ghost" in outcome.message


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
@pytest.mark.parametrize("room", ["none", "candidate-only"])
def test_full_disk_changes_nothing(tmp_path: Path, ssh: Transport, room: str) -> None:
    etc = tmp_path / "etc-tmpfs"
    etc.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(etc)], check=True)
    server = SmbServer(tmp_path, "full-smbd")
    try:
        server.port = free_port()
        (etc / "smb.conf").write_text(server.default_config())
        server.config = etc / "smb.conf"
        server.start()
        original = server.config.read_bytes()
        candidate = original + b"\n# " + b"x" * 2000 + b"\n"
        filler = etc / "filler"
        free = os.statvfs(etc).f_bavail * os.statvfs(etc).f_frsize
        keep = 4096 if room == "none" else len(candidate) + 4096
        with open(filler, "wb") as handle:
            try:
                handle.write(b"\0" * max(0, free - keep))
            except OSError:
                pass
        outcome = apply_config(ssh, _request(server, candidate))
        assert outcome.status in (REFUSED, FAILED_OUTCOME)
        assert outcome.live == "old"
        assert server.config.read_bytes() == original
        assert not [
            p
            for p in etc.iterdir()
            if "sambatune-" in p.name and p.is_file() and not p.name.endswith(LOCK_SUFFIX)
        ]
    finally:
        server.stop()
        subprocess.run(["umount", str(etc)], check=False)


def test_restart_when_ports_change(server: SmbServer, ssh: Transport) -> None:
    new_port = free_port()
    original = server.config.read_bytes()
    candidate = original.replace(f"smb ports = {server.port}".encode(), f"smb ports = {new_port}".encode())
    pid = server.process.pid if server.process else 0
    refused = apply_config(ssh, _request(server, candidate))
    assert refused.status == REFUSED, refused.message
    assert "needs smbd to restart" in refused.message and "smb ports" in refused.message
    assert refused.clients is not None and "No client is connected" in refused.message
    assert server.config.read_bytes() == original and not _leftovers(server)
    assert server.process and server.process.pid == pid and server.process.poll() is None
    outcome = apply_config(ssh, _request(server, candidate, allow_restart=True))
    assert outcome.status == APPLIED, outcome.message
    assert outcome.activation == "restart"
    assert any("smb ports" in r for r in outcome.restart_reasons)
    assert "restart" in outcome.message
    server.port = new_port
    assert "bench" in server.list_shares()


def test_history_lists_backups_and_restores_one(server: SmbServer, ssh: Transport) -> None:
    first = server.config.read_bytes()
    second = _with_new_share(server)
    assert apply_config(ssh, _request(server, second)).ok
    third = second + b"# third\n"
    assert apply_config(ssh, _request(server, third)).ok
    store = BackupStore(ssh, str(server.config))
    backups = store.entries()
    assert [b.sha256 for b in backups][:2] == [
        __import__("hashlib").sha256(second).hexdigest(),
        __import__("hashlib").sha256(first).hexdigest(),
    ]
    oldest = backups[-1]
    assert store.read(oldest.id) == first
    assert "as " in oldest.applied_by and oldest.summary == "test change"
    live = read_live(ssh, str(server.config))
    restored = apply_config(
        ssh,
        ApplyRequest(str(server.config), live.data, store.read(oldest.id), summary=f"restore {oldest.id}"),
    )
    assert restored.ok, restored.message
    assert server.config.read_bytes() == first
    assert "fresh" not in server.list_shares()


def test_retention_prunes_old_backups(server: SmbServer, ssh: Transport) -> None:
    data = server.config.read_bytes()
    for number in range(4):
        candidate = data + f"# change {number}\n".encode()
        request = ApplyRequest(str(server.config), data, candidate, retention=2)
        assert apply_config(ssh, request).ok
        data = candidate
    assert len(BackupStore(ssh, str(server.config)).entries()) == 2


def test_this_computer_uses_the_same_pipeline(server: SmbServer) -> None:
    outcome = apply_config(LocalTransport(), _request(server, _with_new_share(server)))
    assert outcome.ok, outcome.message
    assert "fresh" in server.list_shares()


def test_sudo_apply_never_shows_the_password(
    server: SmbServer,
    sshd_password: SshServer,
    sudo_user: SudoUser,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    options = sshd_password.password_options(sudo_user.name, sudo_user.password, tmp_path / "kh", sudo=True)
    caplog.set_level(logging.DEBUG)  # every record of every logger, the log file's and more
    transport = open_target(options, FixedAnswers(accept_new_host_key=True))
    try:
        with CommandLineWatch(sudo_user.password) as ps:
            original = server.config.read_bytes()
            candidate = _with_new_share(server)
            request = ApplyRequest(str(server.config), original, candidate, sudo=True)
            outcome = apply_config(transport, request)
    finally:
        transport.close()
    assert outcome.ok, outcome.message
    assert server.config.stat().st_uid == 0
    assert "fresh" in server.list_shares()
    assert ps.seen == []
    assert sudo_user.password not in sshd_password.log.read_text()
    assert sudo_user.password not in str(outcome.to_json())

    # The log tells each step, as it starts and as it ends, at INFO...
    steps = [
        r.getMessage()
        for r in caplog.records
        if r.name == "sambatune.conf.apply" and r.levelno == logging.INFO
    ]
    where = f"{transport.label}: apply {server.config}: "
    done = [e.step for e in outcome.steps if e.state == "done"]
    assert done == ["upload", "testparm", "backup", "install", "reload", "health"]
    for step in done:
        for state in ("running", "done"):
            line = f"{where}{STEP_TITLES[step]}: {state}"
            assert any(m == line or m.startswith(f"{line}: ") for m in steps), (line, steps)
    assert any(m.startswith(f"{where[:-2]} ended applied, live new") for m in steps), steps
    # ...and nothing it logged, at any level, holds the password or smb.conf's content.
    logged = "\n".join(f"{r.getMessage()}\n{r.exc_text or ''}" for r in caplog.records)
    assert sudo_user.password not in logged
    content = {line.strip() for line in (original + candidate).decode().splitlines() if line.strip()}
    assert [line for line in content if line in logged] == []


def test_socket_options_taken_away_need_a_restart() -> None:
    """smbd sets them on its listening sockets too and accepted sockets inherit them: an
    option taken away stays until a restart (tests/test_activation.py shows it)."""
    from sambatune.conf.activation import Activation, classify_changes, needs_restart

    old = "[global]\n\tsocket options = SO_RCVBUF=8192 SO_SNDBUF=8192\n"
    assert [c.describe() for c in needs_restart(classify_changes(old, "[global]\n"))] == [
        "socket options: SO_RCVBUF=8192 SO_SNDBUF=8192 -> (default)"
    ]
    added = classify_changes("[global]\n", "[global]\n\tsocket options = TCP_NODELAY SO_KEEPALIVE\n")
    assert [c.activation for c in added] == [Activation.NEW_CONNECTIONS]
