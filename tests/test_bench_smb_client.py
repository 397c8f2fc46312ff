"""SMB from this computer: SambaTune's own client and an OS path, against a real smbd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sambatune.bench.events import RunFinished, Sample
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method
from sambatune.bench.smb_client import READ, WRITE, SmbClientBenchmark, SmbClientOptions
from sambatune.bench.smb_wire import PROBE_PREFIX, SmbLogin
from sambatune.cancellation import CancelToken
from sambatune.errors import AuthenticationFailed, Cancelled, InvalidInput
from testbed.smbd import SmbServer

SIZE = 24 << 20


def probe_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.startswith(PROBE_PREFIX)]


def options(server: SmbServer, **changes: object) -> SmbClientOptions:
    values: dict[str, object] = {"server": "127.0.0.1", "share": server.share, "port": server.port,
                                 "size": SIZE, "block_size": 1 << 20, "outstanding": 4}
    values.update(changes)
    return SmbClientOptions(**values)  # type: ignore[arg-type]


def test_guest_write_and_read_by_the_method(smbd: SmbServer) -> None:
    events: list[object] = []
    bench = SmbClientBenchmark(None, Method(runs=2, warmup=1), options(smbd))
    result = bench.run(events.append)
    assert result.test == "smb-client" and result.target == "127.0.0.1"
    assert result.primary == READ
    for name in (WRITE, READ):
        runs = result.series[name].runs
        assert [r.warmup for r in runs] == [True, False, False]
        assert all(r.bytes == SIZE and r.seconds > 0 for r in runs)
        assert all(r.details["client_cpu_share"] >= 0 for r in runs)
    assert result.extra["client"]["guest"] is True
    assert result.extra["client"]["dialect"].startswith("3")
    samples = [e for e in events if isinstance(e, Sample)]
    assert samples and all(s.source == "client" and s.bytes <= SIZE for s in samples)
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert len(finished) == 6
    assert probe_files(smbd.share_path) == []
    summary = result.to_json()["summary"]
    assert summary["mean_bytes_per_s"] > 0 and len(summary["runs"]) == 2
    assert "password" not in json.dumps(result.to_json())


def test_stored_like_every_other_session(smbd: SmbServer) -> None:
    result = SmbClientBenchmark(None, Method(runs=1, warmup=0), options(smbd, size=4 << 20)).run()
    session = ResultsDatabase().load(ResultsDatabase().save(result))
    assert session.result.series[READ].counted[0].bytes == 4 << 20
    assert session.result.parameters["client"] == "smbprotocol"


def test_reads_alone_still_need_and_remove_a_file(smbd: SmbServer) -> None:
    result = SmbClientBenchmark(None, Method(runs=2, warmup=0),
                                options(smbd, operations=(READ,), outstanding=1)).run()
    assert list(result.series) == [READ]
    assert probe_files(smbd.share_path) == []


@pytest.fixture
def smb_user(fresh_smbd: SmbServer) -> tuple[SmbServer, str, str]:
    """root as a Samba user of this test's own smbd (its own passdb)."""
    password = "Probe-pass-1"
    subprocess.run(["pdbedit", "-s", str(fresh_smbd.config), "-a", "-u", "root", "-t"],
                   input=f"{password}\n{password}\n", text=True, check=True, capture_output=True)
    return fresh_smbd, "root", password


@pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")
def test_a_user_with_password(smb_user: tuple[SmbServer, str, str]) -> None:
    server, user, password = smb_user
    result = SmbClientBenchmark(
        None, Method(runs=1, warmup=0),
        options(server, login=SmbLogin(user=user, password=password)),
    ).run()
    assert result.extra["client"]["guest"] is False
    assert result.parameters["user"] == user and "password" not in result.parameters
    with pytest.raises(AuthenticationFailed) as failed:
        SmbClientBenchmark(None, Method(runs=1, warmup=0),
                           options(server, login=SmbLogin(user=user, password="wrong"))).run()
    assert "root" in failed.value.message and "wrong" not in failed.value.message + failed.value.details


def test_unknown_share_and_nobody_listening(smbd: SmbServer) -> None:
    with pytest.raises(InvalidInput, match="refused the share 'nosuch'"):
        SmbClientBenchmark(None, Method(runs=1, warmup=0), options(smbd, share="nosuch")).run()
    from sambatune.errors import ConnectionFailed
    from testbed.ports import free_port

    with pytest.raises(ConnectionFailed, match="No SMB server answered"):
        SmbClientBenchmark(None, Method(runs=1, warmup=0), options(smbd, port=free_port())).run()


def test_cancel_stops_and_cleans_up(smbd: SmbServer) -> None:
    cancel = CancelToken()
    bench = SmbClientBenchmark(None, Method(runs=50, warmup=0), options(smbd, size=64 << 20),
                               cancel=cancel)

    def on_event(event: object) -> None:
        if isinstance(event, Sample):
            cancel.cancel()

    with pytest.raises(Cancelled):
        bench.run(on_event)
    assert probe_files(smbd.share_path) == []


def test_os_path_variant_writes_reads_and_drops_the_file(smbd: SmbServer) -> None:
    # The share's directory stands in for a mount point: the same file I/O calls.
    result = SmbClientBenchmark(
        None, Method(runs=2, warmup=0),
        SmbClientOptions(path=str(smbd.share_path), size=SIZE, block_size=1 << 20),
    ).run()
    assert result.parameters["client"] == "os-path"
    assert all(r.bytes == SIZE for r in result.series[READ].runs + result.series[WRITE].runs)
    assert probe_files(smbd.share_path) == []
    with pytest.raises(InvalidInput, match="not a directory"):
        SmbClientBenchmark(None, Method(runs=1, warmup=0),
                           SmbClientOptions(path="/nonexistent/share")).run()


def test_options_refuse_nonsense() -> None:
    with pytest.raises(InvalidInput):
        SmbClientOptions()
    with pytest.raises(InvalidInput):
        SmbClientOptions(server="h", share="s", path="/mnt")
    with pytest.raises(InvalidInput):
        SmbClientOptions(server="h", share="s", outstanding=0)
    assert "secret" not in repr(SmbLogin(user="u", password="secret"))


def test_cli_smb_client_prints_the_shared_summary_shape(smbd: SmbServer, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sambatune", "bench", "smb-client", "--server", "127.0.0.1",
         "--share", smbd.share, "--port", str(smbd.port), "--size", "8MiB", "--runs", "2",
         "--warmup", "0", "--json"],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] and data["test"] == "smb-client"
    summary = data["summary"]
    assert summary["mean_bytes_per_s"] > 0 and summary["stdev_bytes_per_s"] is not None
    assert [set(r) >= {"bytes", "seconds", "bytes_per_s"} for r in summary["runs"]] == [True, True]
    assert ResultsDatabase().sessions(test="smb-client")[0].id == data["session_id"]


def test_cli_password_comes_from_stdin_only(smb_user: tuple[SmbServer, str, str]) -> None:
    server, user, password = smb_user
    argv = [sys.executable, "-m", "sambatune", "bench", "smb-client", "--server", "127.0.0.1",
            "--share", server.share, "--port", str(server.port), "--size", "4MiB", "--runs", "1",
            "--warmup", "0", "--user", user, "--password-stdin", "--json"]
    done = subprocess.run(argv, input=password + "\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["parameters"]["guest"] is False
    wrong = subprocess.run(argv, input="nope\n", capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 1
    assert json.loads(wrong.stdout)["error"]["code"] == "authentication-failed"
