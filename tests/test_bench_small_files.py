"""Many small files from this computer (``bench files``), against a real smbd."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sambatune.bench.events import BenchEvent, Progress, Step
from sambatune.bench.records import OPERATIONS
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method
from sambatune.bench.small_files import (
    DIRECTORY_PREFIX,
    LISTINGS,
    OPERATION_NAMES,
    SmallFilesBenchmark,
    SmallFilesOptions,
    percentile,
)
from sambatune.bench.smb_wire import PROBE_PREFIX, connection_lost
from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, InvalidInput, SambaTuneError
from testbed.memory_keyring import memory_keyring
from testbed.relay import TcpRelay
from testbed.smbd import SmbServer

COUNT = 120
SIZE = 3000


def probe_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.startswith(PROBE_PREFIX)]


def options(server: SmbServer, **changes: object) -> SmallFilesOptions:
    values: dict[str, object] = {
        "server": "127.0.0.1",
        "share": server.share,
        "port": server.port,
        "count": COUNT,
        "size": SIZE,
        "outstanding": 3,
    }
    values.update(changes)
    return SmallFilesOptions(**values)  # type: ignore[arg-type]


def share_contents(share: Path) -> dict[str, int]:
    """The one test directory on the share: its files' names and sizes."""
    (directory,) = probe_files(share)
    assert directory.name.startswith(DIRECTORY_PREFIX) and directory.is_dir()
    return {p.name: p.stat().st_size for p in directory.iterdir()}


@pytest.mark.parametrize("client", ["smbprotocol", "os-path"])
def test_every_operation_on_every_file_and_nothing_left(smbd: SmbServer, client: str) -> None:
    contents: dict[str, dict[str, int]] = {}

    def on_event(event: BenchEvent) -> None:
        if isinstance(event, Step):
            contents.setdefault(event.series[0], share_contents(smbd.share_path))

    chosen = (
        options(smbd)
        if client == "smbprotocol"
        else SmallFilesOptions(path=str(smbd.share_path), count=COUNT, size=SIZE, outstanding=3)
    )
    result = SmallFilesBenchmark(None, Method(runs=1, warmup=1), chosen).run(on_event)
    # What the share held as each step began: the operations before it really happened.
    assert contents["create"] == {}
    created = contents["stat"]
    assert len(created) == COUNT and set(created.values()) == {SIZE}
    assert contents["rename"] == created
    renamed = contents["list"]
    assert len(renamed) == COUNT and all(n.startswith("renamed-") for n in renamed)
    assert contents["delete"] == renamed
    assert probe_files(smbd.share_path) == []

    assert result.test == "small-files" and result.primary == "create"
    assert result.parameters["client"] == client and result.parameters["count"] == COUNT
    for name in OPERATION_NAMES:
        series = result.series[name]
        assert series.unit == OPERATIONS
        assert [r.warmup for r in series.runs] == [True, False]
        expected = LISTINGS if name == "list" else COUNT
        assert all(r.operations == expected and r.seconds > 0 for r in series.runs)
        details = series.counted[0].details
        assert 0 < details["p50_seconds"] <= details["p99_seconds"] <= details["max_seconds"]
    rows = {row["operation"]: row for row in result.extra["operations"]}
    assert list(rows) == list(OPERATION_NAMES)
    for name, row in rows.items():
        # Counted runs only: the warm-up's operations are not in the figures.
        assert row["count"] == (LISTINGS if name == "list" else COUNT)
        assert row["operations_per_s"] > 0 and row["p50_seconds"] <= row["p99_seconds"]
        assert result.extra["latency"][name]["samples"] == row["count"]


def test_stored_like_every_other_session(smbd: SmbServer) -> None:
    result = SmallFilesBenchmark(None, Method(runs=1, warmup=0), options(smbd, count=20)).run()
    session = ResultsDatabase().load(ResultsDatabase().save(result))
    assert session.result.test == "small-files"
    assert session.result.series["create"].counted[0].operations == 20
    assert session.result.series["delete"].unit == OPERATIONS


def test_cancel_mid_create_stops_within_a_second_and_cleans_up(smbd: SmbServer) -> None:
    cancel = CancelToken()
    cancelled_at: list[float] = []

    def on_event(event: BenchEvent) -> None:
        if isinstance(event, Progress) and event.message.startswith("create: ") and not cancelled_at:
            done = int(event.message.split()[1].replace(",", ""))
            if done:  # the live figure: the rate so far, as the test goes
                assert re.fullmatch(r"create: [\d,]+ of 20,000, [\d,.]+ ops/s", event.message)
            if done >= 50:
                cancelled_at.append(time.monotonic())
                cancel.cancel()

    bench = SmallFilesBenchmark(
        None, Method(runs=1, warmup=0), options(smbd, count=20_000, outstanding=4), cancel=cancel
    )
    with pytest.raises(Cancelled):
        bench.run(on_event)
    took = time.monotonic() - cancelled_at[0]
    # Stopping takes a call's time; removing the hundred files made so far comes on top.
    assert took < 1.5, f"the cancel took {took:.2f} s"
    assert probe_files(smbd.share_path) == []
    assert not [t for t in threading.enumerate() if t.name == "sambatune-small-files"]


@pytest.mark.parametrize(("connections", "cut"), [(1, 0), (2, 1)])
def test_a_cut_connection_fails_clearly_and_leaves_nothing(
    smbd: SmbServer, connections: int, cut: int
) -> None:
    """The TCP connection (one of several: not the one that made the directory) dies
    under the reads: the test fails saying where, and cleaning up needs a new one."""
    bench = SmallFilesBenchmark(
        None, Method(runs=1, warmup=0), options(smbd, count=400, outstanding=4, connections=connections)
    )

    def on_event(event: BenchEvent) -> None:
        if isinstance(event, Step) and event.series == ("read",) and bench._probes:
            bench._probes[cut].connection.transport._sock.shutdown(socket.SHUT_RDWR)

    with pytest.raises(SambaTuneError) as failed:
        bench.run(on_event)
    assert not isinstance(failed.value, Cancelled)
    assert failed.value.message.startswith("open a file, read it whole, close it: failed")
    assert probe_files(smbd.share_path) == []


def test_a_send_that_hits_the_cut_counts_as_a_lost_connection() -> None:
    """The cleanup goes to a new connection on these even while the old one still looks
    usable: its receiving thread notices the cut a moment later (1 cleanup in 7 failed
    under load on the old check, which read only the connection's state)."""
    from smbprotocol.exceptions import SMBConnectionClosed, SMBResponseException

    assert connection_lost(BrokenPipeError(32, "Broken pipe"))
    assert connection_lost(ConnectionResetError(104, "reset"))
    assert connection_lost(SMBConnectionClosed("closed"))
    assert not connection_lost(SMBResponseException.__new__(SMBResponseException))
    assert not connection_lost(SambaTuneError("The listing had 3 names, not 4."))


def test_options_refuse_nonsense(smbd: SmbServer) -> None:
    for bad in ({"count": 0}, {"count": 100_001}, {"size": 65537}, {"size": -1}, {"outstanding": 0}):
        with pytest.raises(InvalidInput):
            options(smbd, **bad)
    with pytest.raises(InvalidInput, match="not both"):
        SmallFilesOptions(server="h", share="s", path="/mnt")
    with pytest.raises(InvalidInput, match="Which share"):
        SmallFilesOptions()
    with pytest.raises(InvalidInput, match="not a directory"):
        SmallFilesBenchmark(
            None, Method(runs=1, warmup=0), SmallFilesOptions(path="/nonexistent/share")
        ).run()
    with pytest.raises(InvalidInput, match="refused the share 'nosuch'"):
        SmallFilesBenchmark(None, Method(runs=1, warmup=0), options(smbd, share="nosuch")).run()


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0
    assert percentile([7.0], 99) == 7.0 and percentile([], 50) is None


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sambatune", "bench", "files", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )


def test_cli_json_per_operation(smbd: SmbServer) -> None:
    done = cli(
        "--server", "127.0.0.1", "--share", smbd.share, "--port", str(smbd.port),
        "--count", "60", "--size", "1KiB", "--outstanding", "2", "--connections", "2", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] and data["test"] == "small-files"
    assert data["parameters"]["count"] == 60 and data["parameters"]["size"] == 1024
    assert data["parameters"]["outstanding"] == 2 and data["parameters"]["connections"] == 2
    assert data["client"]["connections"] == 2
    # Samba 4.17 offers no directory leases: every listing asks the server (the 4.22 and
    # 4.25 servers of tests/test_samba_releases.py offer them).
    assert data["client"]["directory_leases"] is False and "listings" not in data
    rows = data["operations"]
    assert [r["operation"] for r in rows] == list(OPERATION_NAMES)
    for row in rows:
        assert set(row) >= {"count", "operations_per_s", "p50_seconds", "p99_seconds"}
        assert row["count"] == (LISTINGS if row["operation"] == "list" else 60)
    assert data["summary"]["mean_operations_per_s"] > 0
    assert ResultsDatabase().sessions(test="small-files")[0].id == data["session_id"]
    assert probe_files(smbd.share_path) == []


def test_cli_text_table_and_bad_input(smbd: SmbServer) -> None:
    done = cli("--path", str(smbd.share_path), "--count", "30")
    assert done.returncode == 0, done.stderr
    assert "Operation" in done.stdout and "p99 (ms)" in done.stdout and "rename" in done.stdout
    for bad, message in (
        (["--count", "lots"], "is not a number of files"),
        (["--count", "200k"], "between 1 and 100,000"),
        (["--size", "1MiB"], "small-file test"),
        (["--outstanding", "0"], "in flight"),
        (["--connections", "2"], "Between 1 and 1 connections"),
        ([], "Which share"),
    ):
        wrong = cli("--path", str(smbd.share_path), *bad) if bad else cli()
        assert wrong.returncode == 1 and message in wrong.stderr, (bad, wrong.stderr)
        assert "Traceback" not in wrong.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")
def test_cli_keeps_the_password_it_was_asked_to_and_logs_in_with_it(
    fresh_smbd: SmbServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sambatune.cli.main import main

    password = "Files-pass-1"
    server = fresh_smbd.add_user("root", password)
    argv = [
        "bench", "files", "--server", "127.0.0.1", "--share", server.share,
        "--port", str(server.port), "--user", "root", "--count", "20", "--json",
    ]  # fmt: skip
    with memory_keyring() as keyring:
        monkeypatch.setattr(sys, "stdin", io.StringIO(password + "\n"))
        assert main([*argv, "--password-stdin", "--remember-password"]) == 0
        assert keyring.store == {("SambaTune", f"smb:root@127.0.0.1:{server.port}/{server.share}"): password}
        first = json.loads(capsys.readouterr().out)
        # The next run reads the kept password, and a password is never printed.
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["session_id"] > first["session_id"]
        assert password not in out + err
    with memory_keyring():
        assert main(argv) == 1
        assert "password of root is needed" in capsys.readouterr().err


def test_ctrl_c_removes_everything(smbd: SmbServer) -> None:
    argv = [
        sys.executable, "-m", "sambatune", "bench", "files", "--server", "127.0.0.1",
        "--share", smbd.share, "--port", str(smbd.port), "--count", "50k", "--outstanding", "4",
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # files are being made
            found = probe_files(smbd.share_path)
            if found and len(list(found[0].iterdir())) >= 100:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert probe_files(smbd.share_path) == []


def test_cancel_while_the_server_hangs_stops_within_a_second(smbd: SmbServer) -> None:
    proxy = TcpRelay(smbd.port)
    cancel = CancelToken()
    frozen_at: list[float] = []
    cancelled_at: list[float] = []

    def on_event(event: BenchEvent) -> None:
        if isinstance(event, Step) and event.series == ("stat",):
            proxy.freeze()
            frozen_at.append(time.monotonic())
        elif frozen_at and not cancelled_at and time.monotonic() - frozen_at[0] > 0.3:
            cancelled_at.append(time.monotonic())
            cancel.cancel()

    bench = SmallFilesBenchmark(
        None,
        Method(runs=1, warmup=0),
        options(smbd, port=proxy.port, count=100, outstanding=4),
        cancel=cancel,
    )
    try:
        with pytest.raises(Cancelled):
            bench.run(on_event)
        took = time.monotonic() - cancelled_at[0]
    finally:
        proxy.close()
    # Half a second for the calls in flight, then the connection is closed under them;
    # the hundred files go over a new connection.
    assert took < 1.5, f"the cancel took {took:.2f} s"
    assert probe_files(smbd.share_path) == []
    assert not [t for t in threading.enumerate() if t.name == "sambatune-small-files"]


def test_a_read_only_share_is_said_plainly(fresh_smbd: SmbServer) -> None:
    fresh_smbd.stop()
    fresh_smbd.start(fresh_smbd.config.read_text().replace("read only = no", "read only = yes"))
    with pytest.raises(SambaTuneError, match="Could not make the test directory") as failed:
        SmallFilesBenchmark(None, Method(runs=1, warmup=0), options(fresh_smbd)).run()
    assert "AccessDenied" in failed.value.details, failed.value.details
    assert probe_files(fresh_smbd.share_path) == []


def test_a_test_directory_is_removed_with_compounded_deletes(smbd: SmbServer) -> None:
    """The cleanup's lean path: every file gone, a name gone already is fine, a refusal
    names the file, and the session still works after hundreds of compounded requests."""
    from sambatune.bench.smb_file_ops import CompoundFileOps, file_operations
    from sambatune.bench.smb_wire import SmbProbeConnection

    directory = smbd.share_path / f"{PROBE_PREFIX}files-lean"
    directory.mkdir()
    for number in range(600):
        (directory / f"f{number:04d}").write_bytes(b"x" * 100)
    with SmbProbeConnection("127.0.0.1", smbd.share, smbd.port) as probe:
        assert not probe.session.signing_required and not probe.encrypted  # the lean path
        ops = file_operations(probe)
        names = ops.list_directory(directory.name)
        (directory / "f0007").unlink()  # gone before its delete is sent
        (directory / "sub").mkdir()  # not a file: refused, by name
        assert isinstance(ops, CompoundFileOps)
        deleter = ops.compounds
        probe.ensure_credits(65)
        with pytest.raises(SambaTuneError, match=r"refused to delete .*\\sub \(status 0x"):
            deleter.delete_all([f"{directory.name}\\{n}" for n in [*names, "sub"]])
        assert sorted(p.name for p in directory.iterdir()) == ["sub"]
        (directory / "sub").rmdir()
        for number in range(50):
            (directory / f"g{number:02d}").write_bytes(b"")
        ops.remove_tree(directory.name)
        ops.make_directory(directory.name)
        ops.remove_tree(directory.name)
    assert probe_files(smbd.share_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")
@pytest.mark.parametrize("security", ["signed", "encrypted"])
def test_a_signed_or_sealed_session_removes_it_through_smbprotocol(
    fresh_smbd: SmbServer, security: str
) -> None:
    from sambatune.bench.smb_file_ops import file_operations
    from sambatune.bench.smb_wire import SmbLogin, SmbProbeConnection

    fresh_smbd.add_user("root", "Probe-pass-1")
    directory = fresh_smbd.share_path / f"{PROBE_PREFIX}files-{security}"
    directory.mkdir()
    for number in range(40):
        (directory / f"f{number:02d}").write_bytes(b"x")
    login = SmbLogin(user="root", password="Probe-pass-1")
    with SmbProbeConnection(
        "127.0.0.1", fresh_smbd.share, fresh_smbd.port, login, security=security
    ) as probe:
        assert probe.session.signing_required or probe.encrypted
        file_operations(probe).remove_tree(directory.name)
    assert probe_files(fresh_smbd.share_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")
@pytest.mark.parametrize("security", ["plain", "signed", "encrypted"])
def test_each_small_file_operation_is_one_compound_where_it_can_be(
    fresh_smbd: SmbServer, security: str
) -> None:
    """On a plain or signed session each operation is one related compound (one frame
    out, one round trip; signed, each answer's signature checked); a sealed session keeps
    smbprotocol's requests. Either way the files on the share are what the operations
    say, and a refusal names its status."""
    from sambatune.bench.smb_compounds import RefusedRequest
    from sambatune.bench.smb_file_ops import CompoundFileOps, file_operations
    from sambatune.bench.smb_wire import SmbLogin, SmbProbeConnection

    fresh_smbd.add_user("root", "Probe-pass-1")
    directory = f"{PROBE_PREFIX}files-compound-{security}"
    login = SmbLogin(user="root", password="Probe-pass-1")
    compounds = security != "encrypted"
    with SmbProbeConnection(
        "127.0.0.1", fresh_smbd.share, fresh_smbd.port, login, security=security
    ) as probe:
        assert probe.session.signing_required is (security == "signed")
        ops = file_operations(probe)
        assert isinstance(ops, CompoundFileOps) is compounds
        probe.ensure_credits(8)
        frames: list[int] = []
        transport = probe.connection.transport
        send_raw = transport.send_raw

        def counted(frame: bytes, *rest: Any, **named: Any) -> None:
            frames.append(len(frame))
            send_raw(frame, *rest, **named)

        transport.send_raw = counted
        ops.make_directory(directory)
        data = os.urandom(5000)
        name, moved = f"{directory}\\a.bin", f"{directory}\\b.bin"
        frames.clear()
        ops.create_and_write(name, data)
        assert (fresh_smbd.share_path / directory / "a.bin").read_bytes() == data
        assert ops.stat(name) == len(data)
        assert ops.read_whole(name, len(data)) == len(data)
        ops.rename(name, moved)
        assert sorted(ops.list_directory(directory)) == ["b.bin"]
        if compounds:
            assert len(frames) == 5, frames  # create+write+close, stat, read, rename, list
        with pytest.raises(Exception) as exists:
            ops.create_and_write(moved, data)  # never over an existing file
        if compounds:
            assert isinstance(exists.value, RefusedRequest)
            assert exists.value.status == 0xC0000035 and "create and write" in exists.value.message
        with pytest.raises(RefusedRequest if compounds else Exception):
            ops.stat(name)  # renamed away
        ops.delete(moved)
        if compounds:
            ops.delete(moved)  # gone already is fine
        assert list((fresh_smbd.share_path / directory).iterdir()) == []
        ops.remove_tree(directory)
    assert probe_files(fresh_smbd.share_path) == []


def test_a_compound_answer_with_a_bad_signature_is_caught() -> None:
    """Each answer in a signed session's compound frame is checked on its own: a body
    changed on the way, or an answer left unsigned, marks the chain forged."""
    from sambatune.bench.smb_bulk import HEADER, HMAC_SHA256, PROTOCOL_ID, Signer
    from sambatune.bench.smb_compounds import FLAG_SIGNED, Chain

    signer = Signer(HMAC_SHA256, b"k" * 16)

    def answer(message_id: int, body: bytes, next_command: int, *, signed: bool = True) -> bytes:
        flags = 0x1 | (FLAG_SIGNED if signed else 0)
        header = HEADER.pack(PROTOCOL_ID, 64, 1, 0, 5, 1, flags, next_command, message_id, 0, 1, 2, bytes(16))
        signature = signer.sign(header, body, message_id=message_id, response=True)
        return header[:48] + signature + body

    def frame(tamper: bool = False, unsigned: bool = False) -> Chain:
        first = answer(7, b"A" * 88, 64 + 88)
        second = answer(8, b"B" * 16, 0, signed=not unsigned)
        rest = bytearray(first[64:] + second)
        if tamper:
            rest[-1] ^= 1
        chain = Chain("stat x", [7, 8], signer)
        chain.answered(7, first[:64], memoryview(rest))
        assert chain.slot.done.is_set() and chain.body(0) == b"A" * 88
        return chain

    assert frame().forged is None
    assert frame(tamper=True).forged == 8
    assert frame(unsigned=True).forged == 8


def test_operations_spread_over_connections_each_doing_its_share(
    smbd: SmbServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--connections N: N sessions (each its own smbd process), the threads spread over
    them; the files are all there for each step and gone at the end."""
    from sambatune.bench.smb_compounds import Compounds

    used: dict[int, int] = {}
    send = Compounds.send

    def counted(self: Compounds, what: str, requests: Any) -> Any:
        used[id(self)] = used.get(id(self), 0) + 1
        return send(self, what, requests)

    monkeypatch.setattr(Compounds, "send", counted)
    bench = SmallFilesBenchmark(
        None, Method(runs=1, warmup=0), options(smbd, count=300, outstanding=6, connections=3)
    )
    result = bench.run()
    assert result.extra["client"]["connections"] == 3
    assert len(bench._probes) == 3
    assert len(used) == 3 and min(used.values()) > 100, used  # each carried a part
    rows = {row["operation"]: row["count"] for row in result.extra["operations"]}
    assert rows["create"] == rows["read"] == rows["delete"] == 300
    assert probe_files(smbd.share_path) == []


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"outstanding": 2, "connections": 3}, "Between 1 and 2 connections"),
        (
            {"outstanding": 4, "connections": 2, "path": "/mnt/x", "server": None, "share": None},
            "mounted path",
        ),
    ],
)
def test_connections_are_checked_before_anything_starts(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        SmallFilesOptions(**{"server": "nas", "share": "data", **changes})


def _messages(frame: bytes) -> list[bytearray]:
    """The SMB2 messages of one frame from the server (a compound's, each with its padding)."""
    messages, at = [], 4
    while True:
        following = int.from_bytes(frame[at + 20 : at + 24], "little")
        end = at + following if following else len(frame)
        messages.append(bytearray(frame[at:end]))
        if not following:
            return messages
        at = end


def _framed(messages: list[bytearray]) -> bytes:
    """A frame of ``messages``, each one's NextCommand set for where the next now starts."""
    parts = []
    for index, message in enumerate(messages):
        if index < len(messages) - 1:
            message = message + bytes(-len(message) % 8)
            message[20:24] = len(message).to_bytes(4, "little")
        parts.append(bytes(message))
    data = b"".join(parts)
    return len(data).to_bytes(4, "big") + data


def _command(message: bytearray) -> tuple[int, int]:
    """(command, status) of one message."""
    return int.from_bytes(message[12:14], "little"), int.from_bytes(message[8:12], "little")


def listing_running_past_its_end(frame: bytes) -> bytes:
    """The first name of a listing's answer says the next one starts past the end."""
    messages = _messages(frame)
    for message in messages:
        if _command(message) == (0x0E, 0):
            offset, length = (
                int.from_bytes(message[66:68], "little"),
                int.from_bytes(message[68:72], "little"),
            )
            message[offset : offset + 4] = length.to_bytes(4, "little")
            return _framed(messages)
    return frame


def open_answer_cut_short(frame: bytes) -> bytes:
    """A compound's CREATE answer keeps 8 bytes of its body."""
    messages = _messages(frame)
    if len(messages) > 1 and _command(messages[0]) == (0x05, 0):
        messages[0] = messages[0][:72]
        return _framed(messages)
    return frame


@pytest.mark.parametrize(
    ("rewrite", "operation", "problem"),
    [
        (listing_running_past_its_end, "list", "an entry runs past its end"),
        (open_answer_cut_short, "stat", "the open's answer has 8 bytes"),
    ],
)
def test_an_answer_that_cannot_be_read_is_said_plainly(
    smbd: SmbServer, rewrite: Any, operation: str, problem: str
) -> None:
    """A server (or something between) that says yes with a broken answer: the operation
    fails naming what it asked and what is wrong, and the connection goes on working."""
    from sambatune.bench.smb_file_ops import CompoundFileOps, file_operations
    from sambatune.bench.smb_wire import SmbProbeConnection

    directory = smbd.share_path / f"{PROBE_PREFIX}files-broken-{operation}"
    directory.mkdir()
    for name in ("a", "b", "c"):
        (directory / name).write_bytes(b"x")
    target = directory.name if operation == "list" else f"{directory.name}\\a"
    relay = TcpRelay(smbd.port, answers=rewrite)
    try:
        with SmbProbeConnection("127.0.0.1", smbd.share, relay.port) as probe:
            ops = file_operations(probe)
            assert isinstance(ops, CompoundFileOps)
            with pytest.raises(SambaTuneError) as failed:
                ops.list_directory(target) if operation == "list" else ops.stat(target)
            expected = f"The SMB server's answer to {operation} {target} cannot be read: {problem}."
            assert failed.value.message == expected
            assert ops.read_whole(f"{directory.name}\\b", 1) == 1  # the session still works
    finally:
        relay.close()
        for path in directory.iterdir():
            path.unlink()
        directory.rmdir()


def test_a_listing_too_large_for_one_answer_is_asked_the_long_way(smbd: SmbServer) -> None:
    """A listing is one compound with a 1 MiB answer; a directory whose names may not all
    have fitted (5,000 names of 100 characters: about 1.1 MB) is listed again request by
    request, and every name comes back."""
    from sambatune.bench.smb_file_ops import CompoundFileOps, file_operations
    from sambatune.bench.smb_wire import SmbProbeConnection

    directory = smbd.share_path / f"{PROBE_PREFIX}files-many-names"
    directory.mkdir()
    made = {f"{number:05d}-" + "n" * 94 for number in range(5000)}
    for name in made:
        (directory / name).touch()
    small = smbd.share_path / f"{PROBE_PREFIX}files-few-names"
    small.mkdir()
    (small / "one").touch()
    try:
        with SmbProbeConnection("127.0.0.1", smbd.share, smbd.port) as probe:
            ops = file_operations(probe)
            assert isinstance(ops, CompoundFileOps)
            probe.ensure_credits(20)
            assert ops.compounds.list_directory(small.name) == ["one"]
            assert ops.compounds.list_directory(directory.name) is None  # may be cut short
            assert set(ops.list_directory(directory.name)) == made
    finally:
        for path in (directory, small):
            for entry in path.iterdir():
                entry.unlink()
            path.rmdir()
