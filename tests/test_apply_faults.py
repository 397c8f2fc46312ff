"""Fault injection against a real sshd and smbd: after every fault, what SambaTune
reports, what its history records and what is live on the server agree.

The faults: the connection cut from the server's side before and after each step and
right after the rename; the server hanging after the swap and during the reload;
Ctrl-C and SIGKILL of the command line; garbage from an agent; an editor saving in the
gap between the hash check and the swap; a fake smbd planted by another user.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from faults import (
    HELLO,
    FaultyTransport,
    Rule,
    assert_truth,
    cut_first,
    cut_mid_stream,
    endless_line_agent,
    garbage_agent,
    garbage_testparm,
    is_agent,
    is_rollback,
    is_swap,
    on_directory_fsync,
    patched_swap,
    sha,
    silent_agent,
    then_cut,
    then_hang,
)
from sambatune.applied_versions import AppliedVersions
from sambatune.conf.apply import (
    APPLIED,
    FAILED_OUTCOME,
    REFUSED,
    ROLLED_BACK,
    ApplyOutcome,
    ApplyRequest,
    apply_config,
)
from sambatune.remote.config_backups import BackupStore
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.transport import Transport
from testbed.impostor import plant_fake_smbd
from testbed.ports import free_port
from testbed.processes import processes_mentioning
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user
from testbed.sudo_user import SudoUser

#: The apply lock beside smb.conf, which stays between runs (remote.apply_guard).
LOCK_SUFFIX = ".sambatune-lock"
NEW_SHARE = "\n[fresh]\n  path = {path}\n  read only = yes\n  guest ok = yes\n"


def _candidate(server: SmbServer) -> bytes:
    return server.config.read_bytes() + NEW_SHARE.format(path=server.share_path).encode()


def _leftovers(server: SmbServer) -> list[str]:
    return [
        p.name
        for p in server.config.parent.iterdir()
        if "sambatune-" in p.name and p.name != "sambatune-backups" and not p.name.endswith(LOCK_SUFFIX)
    ]


def _apply(
    transport: Transport,
    server: SmbServer,
    candidate: bytes,
    *,
    reconnect: bool,
    options: ConnectionOptions | None = None,
    **kw: object,
) -> tuple[object, bytes]:
    original = server.config.read_bytes()
    journal = AppliedVersions().journal(transport.label, str(server.config))
    note = transport.note_step if isinstance(transport, FaultyTransport) else None
    outcome = apply_config(
        transport,
        ApplyRequest(str(server.config), original, candidate, summary="fault test"),
        on_event=note,
        journal=journal,
        reconnect=(lambda: open_target(options, NoPrompts())) if reconnect and options else None,
        **kw,  # type: ignore[arg-type]
    )
    return outcome, original


@pytest.fixture
def faulty(ssh_options: ConnectionOptions) -> Iterator[FaultyTransport]:
    transport = FaultyTransport(open_target(ssh_options, NoPrompts()))
    yield transport
    transport.close()


# -- cuts -------------------------------------------------------------------------------

CUT_POINTS = [
    # (which command, cut before it runs or after it ran, after which step)
    ("upload", "before", None),
    ("upload", "mid-stream", None),
    ("upload", "after", None),
    ("testparm", "before", "upload"),
    ("testparm", "after", "upload"),
    ("backup", "mid-stream", "testparm"),
    ("backup", "after", "testparm"),
    ("swap", "before", "backup"),
    ("swap", "after", "backup"),
    ("reload", "before", "install"),
    ("reload", "after", "install"),
    ("health", "after", "reload"),
]


def _matcher(command: str) -> Callable[[tuple[str, ...]], bool]:
    return {
        "upload": lambda a: "sambatune-write" in a and ".new" in " ".join(a),
        "testparm": lambda a: "testparm" in a,
        "backup": lambda a: "sambatune-write" in a and "sambatune-backups" in " ".join(a),
        "swap": is_swap,
        "reload": lambda a: "smbcontrol" in a,
        "health": lambda a: "smbclient" in a,
    }[command]


@pytest.mark.parametrize("reconnect", [True, False], ids=["reconnects", "stays-down"])
@pytest.mark.parametrize(("command", "when", "after"), CUT_POINTS, ids=[f"{c}-{w}" for c, w, _ in CUT_POINTS])
def test_cut_connection_outcome_matches_server_and_history(
    fresh_smbd: SmbServer,
    faulty: FaultyTransport,
    ssh_options: ConnectionOptions,
    command: str,
    when: str,
    after: str | None,
    reconnect: bool,
) -> None:
    cut = {"before": cut_first, "mid-stream": cut_mid_stream, "after": then_cut}[when]
    faulty.rules.append(Rule(_matcher(command), cut, after_step=after))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=reconnect, options=ssh_options)
    assert faulty.rules[0].fired == 1, "the fault never happened"
    assert not faulty.is_connected()
    live = fresh_smbd.config.read_bytes()
    if not reconnect and outcome.live == "unknown":  # type: ignore[attr-defined]
        # Honest: it could not look. The file is still exactly one of the two.
        assert live in (original, candidate)
        assert "reconnect and check" in outcome.message  # type: ignore[attr-defined]
        rows = AppliedVersions().for_server(faulty.label, str(fresh_smbd.config))
        assert rows and rows[0].live == "unknown" and rows[0].outcome == FAILED_OUTCOME
        return
    state = assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        faulty.label,
    )
    if reconnect and state == "new":
        assert outcome.status == APPLIED, outcome.message  # type: ignore[attr-defined]
        assert "fresh" in fresh_smbd.list_shares()
    if reconnect:
        assert not _leftovers(fresh_smbd)


def test_a_cut_leaves_a_candidate_that_the_next_run_removes(
    fresh_smbd: SmbServer,
    faulty: FaultyTransport,
    ssh_options: ConnectionOptions,
) -> None:
    faulty.rules.append(Rule(_matcher("testparm"), cut_first, after_step="upload"))
    outcome, _original = _apply(faulty, fresh_smbd, _candidate(fresh_smbd), reconnect=False)
    assert outcome.live == "old"  # type: ignore[attr-defined]
    assert _leftovers(fresh_smbd), "the cut should have left the uploaded candidate"
    transport = open_target(ssh_options, NoPrompts())
    try:
        again, _ = _apply(transport, fresh_smbd, _candidate(fresh_smbd), reconnect=False)
    finally:
        transport.close()
    assert again.status == APPLIED, again.message  # type: ignore[attr-defined]
    assert not _leftovers(fresh_smbd)
    assert any("interrupted" in w for w in again.warnings)  # type: ignore[attr-defined]


# -- hangs ------------------------------------------------------------------------------


def test_hang_right_after_the_swap_is_not_reported_as_nothing_changed(
    fresh_smbd: SmbServer, faulty: FaultyTransport
) -> None:
    faulty.rules.append(Rule(is_swap, then_hang, timeout=3))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    assert "Nothing was changed" not in outcome.message  # type: ignore[attr-defined]
    assert "gone live" in outcome.message  # type: ignore[attr-defined]
    assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        faulty.label,
    )
    assert "bench" in fresh_smbd.list_shares()


SWAP_FAILURES_AFTER_THE_RENAME = {
    "eio-from-the-directory-fsync": patched_swap(
        on_directory_fsync("raise OSError(_errno.EIO, 'Input/output error')")
    ),
    "directory-fsync-outlasts-the-alarm": patched_swap(on_directory_fsync("_time.sleep(5)"), alarm=2),
    "slow-rename": patched_swap(
        alarm=2,
        replace=[
            ("if exchange(tmp, target):", "if exchange(tmp, target) and not __import__('time').sleep(5):")
        ],
    ),
}


@pytest.mark.parametrize("fault", list(SWAP_FAILURES_AFTER_THE_RENAME))
def test_a_swap_that_fails_after_its_rename_is_decided_by_the_live_file(
    fresh_smbd: SmbServer, faulty: FaultyTransport, fault: str
) -> None:
    """The script exits non-zero, but the new file is live: never 'unchanged'."""
    faulty.rules.append(Rule(is_swap, SWAP_FAILURES_AFTER_THE_RENAME[fault]))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert faulty.rules[0].fired == 1
    message = outcome.message  # type: ignore[attr-defined]
    assert outcome.status == ROLLED_BACK, message  # type: ignore[attr-defined]
    assert "unchanged" not in message and "gone live" in message, message
    assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label)  # type: ignore[arg-type]
    assert not _leftovers(fresh_smbd)
    assert "bench" in fresh_smbd.list_shares() and "fresh" not in fresh_smbd.list_shares()


def test_a_swap_that_fails_before_its_rename_says_the_file_is_unchanged(
    fresh_smbd: SmbServer, faulty: FaultyTransport
) -> None:
    """The other side of the same decision: the live file is read, and it is the old one."""
    faulty.rules.append(
        Rule(is_swap, patched_swap(replace=[("    # between the check and the swap\n", "    sys.exit(1)\n")]))
    )
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert outcome.status == FAILED_OUTCOME, outcome.message  # type: ignore[attr-defined]
    assert "Checked: the live file is the old version" in outcome.message  # type: ignore[attr-defined]
    assert assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label) == "old"  # type: ignore[arg-type]
    assert not _leftovers(fresh_smbd)


def test_a_rollback_copy_that_fails_after_its_rename_still_counts_as_rolled_back(
    fresh_smbd: SmbServer, faulty: FaultyTransport
) -> None:
    faulty.rules += [
        Rule(lambda a: "smbcontrol" in a, then_hang, timeout=3),
        Rule(is_rollback, patched_swap(on_directory_fsync("raise OSError(_errno.EIO, 'I/O error')"))),
    ]
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert faulty.rules[1].fired == 1
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    assert assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label) == "old"  # type: ignore[arg-type]


def test_hang_in_the_reload_rolls_back(fresh_smbd: SmbServer, faulty: FaultyTransport) -> None:
    faulty.rules.append(Rule(lambda a: "smbcontrol" in a, then_hang, timeout=3))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    assert "did not finish in time" in outcome.message  # type: ignore[attr-defined]
    assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        faulty.label,
    )


# -- garbage ----------------------------------------------------------------------------


def test_garbage_from_the_agent_at_the_health_check_rolls_back(
    fresh_smbd: SmbServer, faulty: FaultyTransport
) -> None:
    faulty.rules.append(Rule(is_agent, garbage_agent(str(fresh_smbd.config)), after_step="reload"))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert faulty.rules[0].fired == 1
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    assert "cannot read" in outcome.message  # type: ignore[attr-defined]
    assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        faulty.label,
    )


@pytest.mark.parametrize("answer", ["never", "a-50-MB-line"])
def test_an_agent_that_does_not_answer_the_health_check_is_stopped_and_rolled_back(
    fresh_smbd: SmbServer, faulty: FaultyTransport, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to be waited for without end (281 s seen), with the new file live."""
    from sambatune.remote import samba_ops

    monkeypatch.setattr(samba_ops, "SMBD_PROCESSES_TIMEOUT", 3.0)
    rewrite = silent_agent if answer == "never" else endless_line_agent(50_000_000)
    faulty.rules.append(Rule(is_agent, rewrite, after_step="reload"))
    candidate = _candidate(fresh_smbd)
    started = time.monotonic()
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    took = time.monotonic() - started
    assert faulty.rules[0].fired == 1
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    expected = "did not finish in time" if answer == "never" else "longer than 16 MiB"
    assert expected in outcome.message, outcome.message  # type: ignore[attr-defined]
    assert took < 60, took
    assert assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label) == "old"  # type: ignore[arg-type]
    # The agent left with its channel: nothing of it runs on the server.
    time.sleep(1)
    assert not [p for p in processes_mentioning(HELLO) if "python3" in p[1]]


@pytest.mark.parametrize("code", [0, 1], ids=["says-ok", "says-no"])
def test_garbage_from_testparm_never_breaks_the_truth(
    fresh_smbd: SmbServer, faulty: FaultyTransport, code: int
) -> None:
    faulty.rules.append(Rule(lambda a: "testparm" in a, garbage_testparm(code), times=2))
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert faulty.rules[0].fired >= 1
    state = assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        faulty.label,
    )
    # A testparm that says no is obeyed; one that says yes but prints garbage defines none
    # of the shares smbd serves, so the change is refused before anything changes.
    assert state == "old", outcome.message  # type: ignore[attr-defined]
    if code == 0:
        assert "[bench]" in outcome.message and "would stop at the reload" in outcome.message  # type: ignore[attr-defined]
    assert not _leftovers(fresh_smbd)


# -- an editor saves in the gap -----------------------------------------------------------


@pytest.mark.parametrize("how", ["rename", "in-place"])
def test_an_edit_between_the_hash_check_and_the_swap_is_never_overwritten(
    fresh_smbd: SmbServer, faulty: FaultyTransport, how: str
) -> None:
    config = fresh_smbd.config
    theirs = config.read_bytes() + b"# saved by a colleague in the gap\n"
    save = (
        f"open({str(config) + '.tmp'!r}, 'wb').write({theirs!r}); "
        f"os.rename({str(config) + '.tmp'!r}, {str(config)!r})"
        if how == "rename"
        else f"open({str(config)!r}, 'r+b').write({theirs!r})"
    )

    def editor_in_the_gap(argv: tuple[str, ...]) -> tuple[str, ...]:
        script = argv[argv.index("-c") + 1]
        marker = "    # between the check and the swap\n"
        assert marker in script
        return tuple(a if a != script else script.replace(marker, f"    {save}\n") for a in argv)

    faulty.rules.append(Rule(is_swap, editor_in_the_gap))
    candidate = _candidate(fresh_smbd)
    outcome, _original = _apply(faulty, fresh_smbd, candidate, reconnect=False)
    assert faulty.rules[0].fired == 1
    assert outcome.status == REFUSED, outcome.message  # type: ignore[attr-defined]
    assert config.read_bytes() == theirs, "the colleague's save was lost"
    assert "+# saved by a colleague" in outcome.live_diff  # type: ignore[attr-defined]
    latest = AppliedVersions().for_server(faulty.label, str(config))[0]
    assert latest.outcome == REFUSED and latest.sha256 == sha(theirs)
    assert not _leftovers(fresh_smbd)


# -- Ctrl-C and SIGKILL of the command line -------------------------------------------------


def _cli(
    tmp_path: Path, sshd: SshServer, user_key: Path, known_hosts: Path, config: Path, candidate: bytes
) -> subprocess.Popen[bytes]:
    new = tmp_path / "new.conf"
    new.write_bytes(candidate)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sambatune",
            "conf",
            "apply",
            "--host",
            "127.0.0.1",
            "--port",
            str(sshd.port),
            "--user",
            current_user(),
            "--identity",
            str(user_key),
            "--known-hosts",
            str(known_hosts),
            "--remote-path",
            str(config),
            "--file",
            str(new),
            "--yes",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.fixture
def slow_reload_sshd(tmp_path: Path, user_key: Path) -> Iterator[SshServer]:
    """An sshd whose sessions find, first on their PATH, an smbcontrol that announces
    itself (``tmp_path / "reloading"``) and takes four seconds the first time it runs.
    The host's own smbcontrol is not touched: another process on this machine that runs
    it meanwhile gets the real one."""
    tools = tmp_path / "slow-tools"
    tools.mkdir()
    marker = tmp_path / "reloading"
    real = shutil.which("smbcontrol") or "/usr/bin/smbcontrol"
    shim = tools / "smbcontrol"
    shim.write_text(
        f"#!/bin/sh\nif [ ! -e {shlex.quote(str(marker))} ]; then "
        f"touch {shlex.quote(str(marker))}; sleep 4; fi\n"
        f'exec {shlex.quote(real)} "$@"\n'
    )
    shim.chmod(0o755)
    server = SshServer(tmp_path, "slow-reload-sshd", path_first=(tools,))
    server.authorize(user_key.with_suffix(".pub"))
    server.start()
    yield server
    server.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="interrupts an apply by root to root's smbd")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_cli_interrupted_during_reload(
    fresh_smbd: SmbServer,
    slow_reload_sshd: SshServer,
    user_key: Path,
    tmp_path: Path,
    sig: signal.Signals,
) -> None:
    sshd = slow_reload_sshd
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line)
    ssh_options = sshd.key_options(user_key, known_hosts)
    config = fresh_smbd.config
    original = config.read_bytes()
    candidate = _candidate(fresh_smbd)
    process = _cli(tmp_path, sshd, user_key, known_hosts, config, candidate)
    _wait_for(tmp_path / "reloading")
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    live = config.read_bytes()
    assert live in (original, candidate)
    server = f"{current_user()}@127.0.0.1:{sshd.port}"
    rows = AppliedVersions().for_server(server, str(config))
    assert rows, err.decode()
    if sig == signal.SIGINT:
        result = json.loads(out)
        # Ctrl-C after the swap: the pipeline finishes its checks and says so.
        assert result["status"] == APPLIED, result["message"]
        assert result["live"] == "new" and live == candidate
        assert rows[0].outcome == APPLIED and rows[0].sha256 == sha(live)
        assert "Stopping safely" in err.decode()
        return
    # SIGKILL: nothing could be recorded at that moment but the row begun before the
    # swap; the next run settles it from what the server really has.
    assert rows[0].outcome == "in-progress"
    time.sleep(5)  # let the orphaned smbcontrol finish
    transport = open_target(ssh_options, NoPrompts())
    try:
        store = BackupStore(transport, str(config))
        assert store.entries(), "the backup made before the swap is there"
        follow_up, _ = _apply(transport, fresh_smbd, config.read_bytes() + b"# next\n", reconnect=False)
    finally:
        transport.close()
    settled = next(r for r in AppliedVersions().for_server(server, str(config)) if r.id == rows[0].id)
    assert settled.outcome == "interrupted"
    assert settled.live == ("new" if live == candidate else "old")
    assert follow_up.status == APPLIED, follow_up.message  # type: ignore[attr-defined]
    assert not _leftovers(fresh_smbd)


# -- a fake smbd planted by another user ------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another user")
def test_a_fake_smbd_of_another_user_is_never_run_as_root(
    tmp_path: Path,
    plain_user: object,
    ssh_options: ConnectionOptions,
) -> None:
    server = SmbServer(tmp_path, "real-smbd")
    server.port = free_port()
    server.config.write_text(server.default_config())
    # Started first, so it has the lower pid, and it names the real smbd's config.
    impostor = plant_fake_smbd(plain_user.name, server.config, "fake")  # type: ignore[attr-defined]
    server.start()
    transport = open_target(ssh_options, NoPrompts())
    try:
        from sambatune.remote.samba_ops import find_instance, smbd_processes

        seen = smbd_processes(transport)
        assert [p["pid"] for p in seen.untrusted] == [impostor.pid]
        assert "not run by root" in seen.untrusted[0]["reason"]
        instance = find_instance(transport, str(server.config), seen=seen)
        assert instance is not None and instance.pid != impostor.pid
        before = instance.pid
        # The addresses bound need a restart: the step that used to re-run a process's
        # command line as root.
        original = server.config.read_bytes()
        candidate = original.replace(b"interfaces = lo", b"interfaces = 127.0.0.1/8")
        assert candidate != original
        outcome = apply_config(
            transport,
            ApplyRequest(str(server.config), original, candidate, allow_restart=True),
            journal=AppliedVersions().journal(transport.label, str(server.config)),
        )
        after = find_instance(transport, str(server.config))
    finally:
        transport.close()
        impostor.stop()
        server.stop()
    assert not impostor.ran, "the planted program ran"
    assert outcome.status == APPLIED, outcome.message
    assert "restarted" in outcome.message
    assert after is not None and after.pid != before, "the real smbd did not restart"
    assert after.exe == "/usr/sbin/smbd"
    assert_truth(outcome, server.config, original, candidate, transport.label)
    impostor.remove()
    assert not processes_mentioning(str(impostor.directory))


def test_a_root_owned_smbd_in_a_world_writable_place_is_not_trusted(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh_agents"))
    import sysinfo

    assert sysinfo.smbd_trust(0, "/usr/sbin/smbd") is None
    assert "not run by root" in sysinfo.smbd_trust(1000, "/usr/sbin/smbd")
    assert sysinfo.smbd_trust(0, None) is None  # cannot look without root: unverified
    assert "not smbd" in sysinfo.smbd_trust(0, "/usr/bin/python3.11")
    planted = Path("/tmp") / f"sambatune-{os.getpid()}" / "smbd"
    planted.parent.mkdir(exist_ok=True)
    try:
        planted.write_text("")
        if os.geteuid() == 0:
            assert "written by users other than root" in sysinfo.smbd_trust(0, str(planted))
        else:
            assert "not owned by root" in sysinfo.smbd_trust(0, str(planted))
    finally:
        planted.unlink()
        planted.parent.rmdir()


# -- backups and links -----------------------------------------------------------------------


def test_a_shared_backup_dir_keeps_each_configs_backups_apart(
    tmp_path: Path, ssh_options: ConnectionOptions
) -> None:
    shared = tmp_path / "backups"
    transport = open_target(ssh_options, NoPrompts())
    try:
        configs = []
        for name in ("one", "two"):
            server = SmbServer(tmp_path, name)
            server.port = free_port()
            server.config.write_text(server.default_config())
            configs.append(server.config)
        for round_ in range(3):
            for config in configs:
                data = config.read_bytes()
                outcome = apply_config(
                    transport,
                    ApplyRequest(
                        str(config),
                        data,
                        data + f"# {round_}\n".encode(),
                        backup_dir=str(shared),
                        retention=2 if config == configs[0] else 5,
                    ),
                )
                assert outcome.ok, outcome.message
        one = BackupStore(transport, str(configs[0]), backup_dir=str(shared))
        two = BackupStore(transport, str(configs[1]), backup_dir=str(shared))
        assert len(one.entries()) == 2
        assert len(two.entries()) == 3, "pruning one config deleted the other's backups"
        assert all(b.config_path == str(configs[1]) for b in two.entries())
    finally:
        transport.close()


def test_a_symlinked_smb_conf_is_changed_through_the_link(
    fresh_smbd: SmbServer, ssh_options: ConnectionOptions, tmp_path: Path
) -> None:
    real = fresh_smbd.config
    link = tmp_path / "smb.conf"
    link.symlink_to(real)
    original = real.read_bytes()
    candidate = original + b"# through the link\n"
    transport = open_target(ssh_options, NoPrompts())
    try:
        outcome = apply_config(transport, ApplyRequest(str(link), original, candidate))
    finally:
        transport.close()
    assert outcome.ok, outcome.message
    assert link.is_symlink() and link.resolve() == real
    assert real.read_bytes() == candidate
    assert any("symbolic link" in w for w in outcome.warnings)
    # smbd runs with the file the link points to: it is found, reloaded and checked.
    assert "Applied and verified" in outcome.message
    assert [e.step for e in outcome.steps if e.state == "done"][-2:] == ["reload", "health"]


def test_an_interrupt_as_the_swap_returns_is_settled_from_the_server(
    fresh_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    """A KeyboardInterrupt (a library user's Ctrl-C) right when the swap has happened:
    the pipeline must not claim the file is unchanged."""

    def interrupt(step: str, _t: Transport) -> None:
        if step == "install":
            raise KeyboardInterrupt

    transport = open_target(ssh_options, NoPrompts())
    try:
        candidate = _candidate(fresh_smbd)
        outcome, original = _apply(transport, fresh_smbd, candidate, reconnect=False, fault=interrupt)
    finally:
        transport.close()
    assert_truth(
        outcome,  # type: ignore[arg-type]
        fresh_smbd.config,
        original,
        candidate,
        transport.label,
    )
    assert outcome.status == ROLLED_BACK, outcome.message  # type: ignore[attr-defined]
    assert "Interrupted" in outcome.message  # type: ignore[attr-defined]


def _lock_file(server: SmbServer) -> Path:
    return server.config.parent / f".{server.config.name}{LOCK_SUFFIX}"


def _take_once_released(held: int) -> None:
    """Lock the apply lock as soon as the last run's guard lets go of it.

    A run's guard is a cat on the server that holds the lock while the run's
    channel is open; it exits a moment after the run returns, not before.
    """
    import fcntl

    deadline = time.monotonic() + 5
    while True:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            assert time.monotonic() < deadline, "the last run's guard still holds the lock"
            time.sleep(0.05)


def test_a_second_run_on_the_same_file_is_refused_while_one_holds_it(
    fresh_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    import fcntl

    original = fresh_smbd.config.read_bytes()
    transport = open_target(ssh_options, NoPrompts())
    try:
        assert apply_config(
            transport, ApplyRequest(str(fresh_smbd.config), original, _candidate(fresh_smbd))
        ).ok
        lock = _lock_file(fresh_smbd)
        assert lock.stat().st_mode & 0o777 == 0o600 and lock.stat().st_size == 0
        fresh_smbd.config.write_bytes(original)
        held = os.open(lock, os.O_RDONLY)
        try:
            _take_once_released(held)  # now another run holds it
            outcome = apply_config(
                transport, ApplyRequest(str(fresh_smbd.config), original, _candidate(fresh_smbd))
            )
            assert outcome.status == REFUSED, outcome.message
            assert "Another SambaTune run" in outcome.message
            assert fresh_smbd.config.read_bytes() == original
            fcntl.flock(held, fcntl.LOCK_UN)
            assert apply_config(
                transport, ApplyRequest(str(fresh_smbd.config), original, _candidate(fresh_smbd))
            ).ok
            _take_once_released(held)
        finally:
            os.close(held)
    finally:
        transport.close()


@pytest.mark.needs_root
def test_another_user_cannot_hold_the_apply_lock(
    ssh_options: ConnectionOptions, plain_user: SudoUser, tmp_path: Path
) -> None:
    """Anyone who could read smb.conf's folder could flock it and refuse every apply."""
    shared = Path(tempfile.mkdtemp(prefix="sambatune-lock-", dir="/tmp"))
    shared.chmod(0o755)  # another user may read the folder, as /etc/samba
    server = SmbServer(shared, "smbd")
    try:
        server.start()
        server.dir.chmod(0o755)
        server.config.chmod(0o644)
        uid = pwd.getpwnam(plain_user.name).pw_uid
        holder = subprocess.Popen(
            ["flock", "-n", str(server.config.parent), "sleep", "60"], user=uid, start_new_session=True
        )
        try:
            time.sleep(0.5)
            assert holder.poll() is None, "the other user could not even lock the folder"
            transport = open_target(ssh_options, NoPrompts())
            try:
                original = server.config.read_bytes()
                outcome = apply_config(
                    transport, ApplyRequest(str(server.config), original, _candidate(server))
                )
            finally:
                transport.close()
            assert outcome.status == APPLIED, outcome.message
            # And the lock file itself is out of reach.
            tried = subprocess.run(
                ["flock", "-n", str(_lock_file(server)), "true"], user=uid, capture_output=True, text=True
            )
            assert tried.returncode != 0 and "Permission denied" in tried.stderr, tried.stderr
        finally:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
    finally:
        server.stop()
        shutil.rmtree(shared, ignore_errors=True)


def test_a_lock_file_of_another_account_is_refused(
    fresh_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    lock = _lock_file(fresh_smbd)
    lock.symlink_to(fresh_smbd.config.parent / "elsewhere")
    transport = open_target(ssh_options, NoPrompts())
    try:
        original = fresh_smbd.config.read_bytes()
        outcome = apply_config(
            transport, ApplyRequest(str(fresh_smbd.config), original, _candidate(fresh_smbd))
        )
    finally:
        transport.close()
    assert outcome.status in (REFUSED, FAILED_OUTCOME) and "not SambaTune's lock file" in outcome.message
    assert (
        fresh_smbd.config.read_bytes() == original and not (fresh_smbd.config.parent / "elsewhere").exists()
    )


# -- the restart consent and the dry run (issue 15) -----------------------------------------


def _restart_candidate(server: SmbServer) -> bytes:
    return server.config.read_bytes().replace(b"interfaces = lo", b"interfaces = 127.0.0.1/8")


@pytest.mark.parametrize("fault", ["cut-smbstatus", "garbage-smbstatus", "cut-testparm"])
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "refused-restart"])
def test_a_fault_while_weighing_a_restart_changes_nothing(
    fresh_smbd: SmbServer,
    faulty: FaultyTransport,
    ssh_options: ConnectionOptions,
    fault: str,
    dry_run: bool,
) -> None:
    """Before the swap, whatever happens, the three agree on "nothing changed": no history
    row, the old file live, and nothing left beside it once a connection comes back."""
    if fault == "cut-smbstatus":
        faulty.rules.append(Rule(lambda a: "smbstatus" in a, cut_first))
    elif fault == "garbage-smbstatus":
        faulty.rules.append(
            Rule(lambda a: "smbstatus" in a, lambda a: ("sh", "-c", "echo '{not json'; echo 'PID x'"))
        )
    else:
        faulty.rules.append(Rule(_matcher("testparm"), then_cut, after_step="upload"))
    candidate = _restart_candidate(fresh_smbd)
    outcome, original = _apply_consent(faulty, fresh_smbd, candidate, ssh_options, dry_run)
    assert faulty.rules[0].fired == 1, "the fault never happened"
    assert outcome.live == "old", outcome.message
    assert outcome.status in ("planned", REFUSED, FAILED_OUTCOME), outcome.message
    assert fresh_smbd.config.read_bytes() == original
    assert AppliedVersions().for_server(faulty.label, str(fresh_smbd.config)) == []
    assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label)
    assert not _leftovers(fresh_smbd)
    if fault == "garbage-smbstatus":
        assert any("Could not tell who is connected" in w for w in outcome.warnings)


def _apply_consent(
    transport: Transport, server: SmbServer, candidate: bytes, options: ConnectionOptions, dry_run: bool
) -> tuple[ApplyOutcome, bytes]:
    original = server.config.read_bytes()
    journal = AppliedVersions().journal(transport.label, str(server.config))
    outcome = apply_config(
        transport,
        ApplyRequest(str(server.config), original, candidate, dry_run=dry_run),
        on_event=transport.note_step if isinstance(transport, FaultyTransport) else None,
        journal=journal,
        reconnect=lambda: open_target(options, NoPrompts()),
    )
    return outcome, original


def test_a_cut_during_an_allowed_restart_ends_with_smbd_serving_and_the_truth_told(
    fresh_smbd: SmbServer,
    faulty: FaultyTransport,
    ssh_options: ConnectionOptions,
) -> None:
    """The connection drops right after the running smbd was told to stop: the run
    reconnects, and what it reports, what history holds and what is live agree; an smbd
    serves the file again."""
    faulty.rules.append(Rule(lambda a: a[:1] == ("kill",), then_cut))
    original = fresh_smbd.config.read_bytes()
    candidate = _restart_candidate(fresh_smbd)
    outcome = apply_config(
        faulty,
        ApplyRequest(str(fresh_smbd.config), original, candidate, allow_restart=True),
        journal=AppliedVersions().journal(faulty.label, str(fresh_smbd.config)),
        reconnect=lambda: open_target(ssh_options, NoPrompts()),
    )
    assert faulty.rules[0].fired == 1, "the fault never happened"
    assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label)
    transport = open_target(ssh_options, NoPrompts())
    try:
        from sambatune.remote.samba_ops import find_instance

        assert find_instance(transport, str(fresh_smbd.config)) is not None, (
            f"no smbd serves the file after: {outcome.message}"
        )
    finally:
        transport.close()


# -- proving the effect before the swap (issue 28) ---------------------------------------------


def _is_ask(argv: tuple[str, ...]) -> bool:
    """The one command that asks testparm for each intended setting."""
    return argv[:2] == ("sh", "-c") and argv[3:4] == ("ask",)


PROOF_COMMANDS = {
    "ask": _is_ask,
    "listing": lambda a: "smbclient" in a,
    "in-use": lambda a: "smbstatus" in a and "--shares" in a,
}
NOISE = ("python3", "-c", "import sys; sys.stdout.write('\\x1b[2J{[|Disk|\\xff\\n'); sys.exit(0)")


@pytest.mark.parametrize("fault", ["cut", "hang", "garbage"])
@pytest.mark.parametrize("command", sorted(PROOF_COMMANDS))
def test_a_fault_while_proving_the_effect_never_breaks_the_truth(
    fresh_smbd: SmbServer, faulty: FaultyTransport, ssh_options: ConnectionOptions, command: str, fault: str
) -> None:
    """A cut or a hang while proving the change refuses it with nothing changed; garbage
    from testparm refuses it too, garbage from the share listing or smbstatus cannot hide
    a share (the candidate keeps them all here), so the change applies."""
    rewrite = {"cut": cut_first, "hang": then_hang, "garbage": lambda _a: NOISE}[fault]
    faulty.rules.append(
        Rule(PROOF_COMMANDS[command], rewrite, timeout=3 if fault == "hang" else None, after_step="testparm")
    )
    candidate = _candidate(fresh_smbd)
    outcome, original = _apply(faulty, fresh_smbd, candidate, reconnect=True, options=ssh_options)
    assert faulty.rules[0].fired == 1, "the fault never happened"
    state = assert_truth(outcome, fresh_smbd.config, original, candidate, faulty.label)  # type: ignore[arg-type]
    applies = fault == "garbage" and command != "ask"
    assert state == ("new" if applies else "old"), outcome.message  # type: ignore[attr-defined]
    if not applies:
        assert outcome.status in (REFUSED, FAILED_OUTCOME), outcome.message  # type: ignore[attr-defined]
        assert AppliedVersions().for_server(faulty.label, str(fresh_smbd.config)) == []
    if fault == "garbage" and command == "ask":
        assert "would not do what it says" in outcome.message  # type: ignore[attr-defined]
    assert "\x1b" not in outcome.message  # type: ignore[attr-defined]
    assert not _leftovers(fresh_smbd)
