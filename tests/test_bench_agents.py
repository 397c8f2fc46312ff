"""The benchmark agents end to end, on this computer and over real SSH, against real smbd.

Every test runs a runner (the same code the CLI and the GUI use) and checks what the
agent measured, that warm-ups were kept apart, and that nothing is left behind on the
"server": no process, no test file.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sambatune.bench.context import BenchContext, collect_context
from sambatune.bench.dirscale import DirscaleBenchmark, DirscaleOptions
from sambatune.bench.disk import DiskBenchmark, DiskOptions
from sambatune.bench.events import Notice, RunFinished, RunStarted, Sample
from sambatune.bench.net import THROUGH_SSH_NOTE, NetBenchmark, NetOptions
from sambatune.bench.runner import Method
from sambatune.bench.smb import SmbBenchmark, SmbOptions
from sambatune.bench.sockbuf import SockbufBenchmark, SockbufOptions
from sambatune.bench.tcp_stream import StreamSpec, connect_direct
from sambatune.cancellation import CancelToken
from sambatune.errors import AgentFailed, Cancelled, ConnectionFailed, PortUnreachable
from sambatune.remote.transport import Transport
from testbed.processes import CommandLineWatch, processes_holding, processes_on_port
from testbed.smbd import SmbServer
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser

TWO_RUNS = Method(runs=2, warmup=1)


@pytest.fixture
def transport(any_transport: Transport) -> Transport:
    return any_transport


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """An empty directory "on the server" for the test files."""
    path = tmp_path / "target"
    path.mkdir()
    return path


# Callable[..., object]: some conditions bind a loop variable as a default (lambda pid=pid: ...).
def wait_until(condition: Callable[..., object], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def smb_context(transport: Transport, server: SmbServer) -> BenchContext:
    return collect_context(transport, config_path=str(server.config))


# -- disk ------------------------------------------------------------------------------


def test_disk_writes_reads_and_counts_metadata(transport: Transport, target: Path) -> None:
    options = DiskOptions(
        directory=str(target), size=8 << 20, block_size=1 << 20, metadata_files=200, sample_interval=0.01
    )
    events: list[object] = []
    result = DiskBenchmark(transport, TWO_RUNS, options).run(events.append)
    assert set(result.series) == {"write", "read", "metadata-create", "metadata-stat", "metadata-unlink"}
    assert result.primary == "read"
    for name in ("write", "read"):
        series = result.series[name]
        assert [r.attempt for r in series.runs] == [1, 2, 3]
        assert [r.warmup for r in series.runs] == [True, False, False]
        for run in series.runs:
            assert run.bytes == 8 << 20 and run.seconds > 0
            assert run.bytes_per_s is not None
            assert run.bits_per_s == pytest.approx(run.bytes_per_s * 8)
    assert all(r.operations == 200 for r in result.series["metadata-stat"].runs)
    # pytest's target is on ext4 here: O_DIRECT works, and the result says it was used.
    assert result.extra["cache"]["method"] == "o_direct"
    assert any(isinstance(e, Notice) and "O_DIRECT" in e.message for e in events)
    started = [e for e in events if isinstance(e, RunStarted) and e.series == "read"]
    assert [e.warmup for e in started] == [True, False, False]
    assert list(target.iterdir()) == [], "the disk agent left files behind"
    summary = result.to_json()["summary"]
    assert summary["series"] == "read" and len(summary["runs"]) == 2
    assert len(summary["warmup_runs"]) == 1


def test_disk_on_a_memory_filesystem_says_so(transport: Transport) -> None:
    result = DiskBenchmark(
        transport,
        Method(runs=1, warmup=0),
        DiskOptions(directory="/dev/shm", size=4 << 20, operations=("write", "read")),
    ).run()
    assert result.extra["cache"]["method"] == "memory_filesystem"
    assert "memory" in result.extra["cache"]["explanation"]


def test_buffered_disk_reads_are_labelled(transport: Transport, target: Path) -> None:
    result = DiskBenchmark(
        transport,
        Method(runs=1, warmup=0),
        DiskOptions(directory=str(target), size=4 << 20, cache="buffered", operations=("read",)),
    ).run()
    assert set(result.series) == {"read"}
    assert result.extra["cache"]["method"] == "buffered"
    assert "page cache" in result.extra["cache"]["explanation"]
    assert list(target.iterdir()) == []


def _disk_mid_run(
    transport: Transport, directory: Path, cancel: CancelToken | None = None
) -> tuple[Iterator[object], list[int]]:
    """A disk benchmark stopped at its first write sample, with the agent's pids."""
    bench = DiskBenchmark(
        transport,
        Method(runs=1, warmup=0),
        DiskOptions(directory=str(directory), size=16 << 30, operations=("write",), sample_interval=0.05),
        cancel=cancel,
    )
    events = bench.events()
    for event in events:
        if isinstance(event, Sample):
            break
    assert any(p.name.startswith("sambatune-disk-") for p in directory.iterdir())
    holders = processes_holding(str(directory))
    assert holders, "no agent process holds the test file while it runs"
    return events, holders


@pytest.mark.parametrize("how", ["drop-connection", "sigterm", "cancel"])
def test_disk_agent_stopped_mid_run_leaves_nothing(transport: Transport, target: Path, how: str) -> None:
    if how == "drop-connection" and transport.is_local:
        pytest.skip("no connection to drop on this computer")
    cancel = CancelToken()
    events, holders = _disk_mid_run(transport, target, cancel)
    if how == "drop-connection":
        transport.close()  # the whole SSH connection goes away mid-run
    elif how == "sigterm":
        for pid in holders:
            os.kill(pid, signal.SIGTERM)
    else:
        cancel.cancel()
    with pytest.raises((AgentFailed, Cancelled, ConnectionFailed)):
        for _event in events:
            pass
    assert wait_until(lambda: not processes_holding(str(target))), "the agent outlived its channel"
    assert wait_until(lambda: list(target.iterdir()) == []), list(target.iterdir())
    for pid in holders:
        assert wait_until(
            lambda pid=pid: (
                not Path(f"/proc/{pid}").exists()
                or "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]
            )
        )


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,nr_inodes=400", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_disk_refuses_a_file_larger_than_the_free_space(transport: Transport, small_tmpfs: Path) -> None:
    bench = DiskBenchmark(transport, TWO_RUNS, DiskOptions(directory=str(small_tmpfs), size=64 << 20))
    with pytest.raises(AgentFailed, match="Not enough free space") as caught:
        bench.run()
    assert caught.value.code == "agent-not-enough-space"
    assert list(small_tmpfs.iterdir()) == []


# -- net -------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["download", "upload"])
def test_net_streams_over_its_own_connection(transport: Transport, direction: str) -> None:
    options = NetOptions(direction=direction, seconds=0.4, sample_interval=0.05)
    events: list[object] = []
    result = NetBenchmark(transport, TWO_RUNS, options).run(events.append)
    series = result.series[direction]
    assert result.primary == direction
    assert [r.warmup for r in series.runs] == [True, False, False]
    for run in series.runs:
        assert run.bytes is not None
        assert run.bytes > 10 << 20 and 0.2 < run.seconds < 5
        assert run.details["path"] == "direct"
        server, client = run.details["server"], run.details["client"]
        # The receiver's count is the figure; both ends saw the same bytes.
        assert server["bytes"] == client["bytes"] == run.bytes
        assert server["role"] == ("sender" if direction == "download" else "receiver")
        sender_info = server["tcp_info"] if direction == "download" else client["tcp_info"]
        assert sender_info["snd_mss"] > 0
    assert any(isinstance(e, Sample) for e in events)
    assert result.extra["path"] == "direct"
    ports = {r.details["server"]["port"] for r in series.runs}
    assert len(ports) == 3, "every run gets a port of its own"
    assert wait_until(lambda: not any(processes_on_port(p) for p in ports)), "still listening"


def test_net_with_a_fixed_size_and_buffers(transport: Transport) -> None:
    options = NetOptions(size=8 << 20, sndbuf=65536, rcvbuf=65536, buffers_on="both", nodelay=True)
    result = NetBenchmark(transport, Method(runs=1, warmup=0), options).run()
    run = result.series["download"].runs[0]
    assert run.bytes == 8 << 20
    # Linux doubles what is asked (the other half is its bookkeeping) and reports that.
    assert run.details["server"]["sndbuf"] == 2 * 65536
    assert run.details["client"]["rcvbuf"] == 2 * 65536
    assert run.details["requested"] == {
        "sndbuf": 65536,
        "rcvbuf": 65536,
        "nodelay": True,
        "buffers_on": "both",
    }


def test_an_unreachable_data_port_gets_a_clear_message(transport: Transport) -> None:
    # The agent listens on 127.0.0.1 only; nothing listens on 127.0.0.2 at that port.
    options = NetOptions(seconds=0.3, data_address="127.0.0.2")
    with pytest.raises(PortUnreachable) as caught:
        NetBenchmark(transport, TWO_RUNS, options).run()
    error = caught.value
    assert error.code == "port-unreachable"
    assert "could not open its own TCP connection to 127.0.0.2:" in error.message
    assert "refused" in error.message
    assert "measures SSH rather than the network" in error.details
    assert error.port > 0
    assert wait_until(lambda: not processes_on_port(error.port)), "the agent kept listening"


def test_a_port_that_drops_connections_times_out_clearly() -> None:
    # A listener whose accept queue is full drops new SYNs, as a DROP firewall rule does.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held = socket.create_connection(("127.0.0.1", port))
    try:
        with pytest.raises(PortUnreachable, match=r"no answer within 0.5 s \(a firewall drops it\)"):
            connect_direct("127.0.0.1", port, StreamSpec(), buffers=False, timeout=0.5)
    finally:
        held.close()
        listener.close()


def test_through_ssh_is_labelled_as_measuring_ssh(any_transport: Transport) -> None:
    if any_transport.is_local:
        with pytest.raises(ConnectionFailed, match="Only an SSH connection"):
            NetBenchmark(
                any_transport, Method(runs=1, warmup=0), NetOptions(seconds=0.3, through_ssh=True)
            ).run()
        return
    result = NetBenchmark(any_transport, TWO_RUNS, NetOptions(seconds=0.3, through_ssh=True)).run()
    assert result.extra["path"] == "ssh-forward"
    assert THROUGH_SSH_NOTE in result.notes
    assert all(r.details["path"] == "ssh-forward" for r in result.series["download"].runs)
    last = result.series["download"].runs[-1]
    assert last.bytes is not None and last.bytes > 0


def test_net_agent_dropped_mid_stream_leaves_nothing(any_transport: Transport, sshd: SshServer) -> None:
    if any_transport.is_local:
        pytest.skip("no connection to drop on this computer")
    bench = NetBenchmark(
        any_transport, Method(runs=1, warmup=0), NetOptions(seconds=60, sample_interval=0.05)
    )
    events = bench.events()
    for event in events:
        if isinstance(event, Sample):
            break
    agent_pids = agents_started_by(_pid(sshd))
    assert agent_pids, "the net agent should be running under the test sshd"
    any_transport.close()
    with pytest.raises((AgentFailed, Cancelled, ConnectionFailed)):
        for _event in events:
            pass
    for pid in agent_pids:
        assert wait_until(lambda pid=pid: not Path(f"/proc/{pid}").exists()), pid


def _pid(server: SshServer) -> int:
    assert server.process is not None
    return server.process.pid


def agents_started_by(root: int) -> list[int]:
    """Live agent processes (the bootstrap names its modules <sambatune>/...) below ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"<sambatune>" not in (entry / "cmdline").read_bytes():
                continue
        except OSError:
            continue
        pid = int(entry.name)
        while pid > 1:
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
            if pid == root:
                found.append(int(entry.name))
                break
    return found


# -- sockbuf ---------------------------------------------------------------------------


def test_sockbuf_sweeps_buffer_sizes(transport: Transport) -> None:
    options = SockbufOptions(sizes=(16384, 262144), net=NetOptions(seconds=0.3))
    result = SockbufBenchmark(transport, Method(runs=1, warmup=1), options).run()
    assert list(result.series) == ["16384", "262144", "autotuned"]
    assert result.primary == "autotuned"
    curve = result.extra["curve"]
    assert [p["requested_bytes"] for p in curve] == [16384, 262144, None]
    assert curve[0]["server_sndbuf"] == 2 * 16384
    assert all(p["mean_bytes_per_s"] > 0 for p in curve)
    # Only the server's socket is set (as smb.conf would): this computer's stays autotuned.
    client = result.series["16384"].runs[-1].details["client"]
    assert client["rcvbuf"] != 2 * 16384


# -- smb -------------------------------------------------------------------------------


def test_smb_put_and_get_against_the_ceilings(transport: Transport, smbd: SmbServer) -> None:
    context = smb_context(transport, smbd)
    assert context.smb_port() == smbd.port
    options = SmbOptions(share=smbd.share, size=8 << 20, tcp_seconds=0.3)
    result = SmbBenchmark(transport, TWO_RUNS, options, context=context).run()
    assert list(result.series) == ["get", "put", "tcp-loopback", "disk-write", "disk-read"]
    assert result.primary == "get"
    for name in ("get", "put"):
        runs = result.series[name].runs
        assert [r.warmup for r in runs] == [True, False, False]
        assert all(r.bytes == 8 << 20 and r.seconds > 0 for r in runs)
    ratios = result.extra["ratios"]
    assert set(ratios) == {
        "get_vs_tcp_loopback",
        "put_vs_tcp_loopback",
        "get_vs_disk_read",
        "put_vs_disk_write",
    }
    assert all(value and value > 0 for value in ratios.values())
    assert any("of raw TCP on the server's loopback" in n for n in result.notes)
    assert result.extra["smb"]["guest"] is True
    assert list(smbd.share_path.iterdir()) == [], "a test file stayed on the share"


def test_smb_with_an_account_keeps_the_password_off_command_lines(
    transport: Transport, fresh_smbd: SmbServer, plain_user: SudoUser
) -> None:
    server = fresh_smbd
    # pytest's temp dirs are private to root; the user's own home is not.
    share = Path(tempfile.mkdtemp(prefix="share-", dir=plain_user.home))
    os.chown(share, _uid(plain_user.name), -1)
    text = (
        server.config.read_text()
        .replace(
            "  guest ok = yes\n  force user = root\n", f"  guest ok = no\n  valid users = {plain_user.name}\n"
        )
        .replace(f"path = {server.share_path}", f"path = {share}")
    )
    assert str(share) in text
    server.config.write_text(text)
    subprocess.run(
        ["smbpasswd", "-c", str(server.config), "-a", "-s", plain_user.name],
        input=f"{plain_user.password}\n{plain_user.password}\n",
        text=True,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["smbcontrol", f"--configfile={server.config}", "smbd", "reload-config"],
        check=False,
        capture_output=True,
    )
    context = smb_context(transport, server)
    options = SmbOptions(
        share="bench", size=2 << 20, user=plain_user.name, password=plain_user.password, ceilings=False
    )
    with CommandLineWatch(plain_user.password) as watch:
        result = SmbBenchmark(transport, Method(runs=1, warmup=0), options, context=context).run()
    assert watch.seen == [], "the SMB password appeared on a command line"
    assert result.series["get"].runs[0].bytes == 2 << 20
    assert "password" not in result.parameters
    assert list(share.iterdir()) == []

    wrong = SmbOptions(share="bench", size=1 << 20, user=plain_user.name, password="not-it", ceilings=False)
    with pytest.raises(AgentFailed, match="refused the user name or password") as caught:
        SmbBenchmark(transport, Method(runs=1, warmup=0), wrong, context=context).run()
    assert caught.value.code == "agent-smb-login-failed"


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def test_smb_names_a_missing_share(transport: Transport, smbd: SmbServer) -> None:
    context = smb_context(transport, smbd)
    options = SmbOptions(share="nosuchshare", size=1 << 20, ceilings=False)
    with pytest.raises(AgentFailed, match="no share of that name") as caught:
        SmbBenchmark(transport, Method(runs=1, warmup=0), options, context=context).run()
    assert caught.value.code == "agent-smb-no-such-share"


def test_smb_agent_dropped_mid_transfer_removes_its_file(
    any_transport: Transport, fresh_smbd: SmbServer, sshd: SshServer
) -> None:
    if any_transport.is_local:
        pytest.skip("no connection to drop on this computer")
    context = smb_context(any_transport, fresh_smbd)
    bench = SmbBenchmark(
        any_transport,
        Method(runs=50, warmup=0),
        SmbOptions(share="bench", size=64 << 20, ceilings=False),
        context=context,
    )
    events = bench.events()
    for event in events:
        if isinstance(event, RunFinished) and event.record.series == "put":
            break
    assert list(fresh_smbd.share_path.iterdir()), "the test file should be on the share now"
    pids = agents_started_by(_pid(sshd))
    assert pids, "the smb agent should be running under the test sshd"
    any_transport.close()
    with pytest.raises((AgentFailed, Cancelled, ConnectionFailed)):
        for _event in events:
            pass
    assert wait_until(lambda: list(fresh_smbd.share_path.iterdir()) == [])
    for pid in pids:
        assert wait_until(lambda pid=pid: not Path(f"/proc/{pid}").exists()), pid


# -- dirscale --------------------------------------------------------------------------


def test_dirscale_lists_and_looks_up_then_removes_every_file(transport: Transport, smbd: SmbServer) -> None:
    context = smb_context(transport, smbd)
    options = DirscaleOptions(share=smbd.share, counts=(50, 300), lookups=10)
    result = DirscaleBenchmark(transport, TWO_RUNS, options, context=context).run()
    assert result.primary == "list/300"
    for count in (50, 300):
        for operation in ("list", "open", "open-other-case", "missing"):
            runs = result.series[f"{operation}/{count}"].runs
            assert [r.warmup for r in runs] == [True, False, False]
            assert all(r.operations and r.seconds > 0 and r.bytes is None for r in runs)
        create = result.series[f"create/{count}"].runs
        assert len(create) == 1 and not create[0].warmup  # one creation, always counted
    assert result.series["list/300"].runs[0].operations == 300
    assert result.series["create/300"].runs[0].operations == 250
    assert [row["files"] for row in result.extra["table"]] == [50, 300]
    assert result.extra["case_settings"]["case sensitive"] == "Auto"
    summary = result.to_json()["summary"]
    assert summary["mean_bytes_per_s"] is None and summary["mean_operations_per_s"] > 0
    assert list(smbd.share_path.iterdir()) == [], "dirscale left files on the share"


def test_dirscale_refuses_more_files_than_free_inodes(
    transport: Transport, smbd: SmbServer, small_tmpfs: Path
) -> None:
    context = smb_context(transport, smbd)
    options = DirscaleOptions(share=smbd.share, counts=(1000,), directory=str(small_tmpfs))
    with pytest.raises(AgentFailed, match="Not enough free inodes"):
        DirscaleBenchmark(transport, TWO_RUNS, options, context=context).run()
    assert list(small_tmpfs.iterdir()) == []


def test_a_directory_the_account_cannot_write_is_named(
    sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path
) -> None:
    from fixed_answers import FixedAnswers
    from sambatune.remote.connection import open_target

    locked = Path(tempfile.mkdtemp(prefix="sambatune-locked-"))
    locked.chmod(0o755)  # root's: the user may look in, not write
    options = sshd_password.password_options(sudo_user.name, sudo_user.password, tmp_path / "kh")
    target = open_target(options, FixedAnswers(accept_new_host_key=True))
    try:
        with pytest.raises(AgentFailed, match="may not create files in") as caught:
            DiskBenchmark(
                target, Method(runs=1, warmup=0), DiskOptions(directory=str(locked), size=1 << 20)
            ).run()
        assert caught.value.code == "agent-no-permission"
        assert list(locked.iterdir()) == []
    finally:
        target.close()
        locked.rmdir()
