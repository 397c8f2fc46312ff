"""Which direction the bottleneck shows first, and what a recorded smb.conf's [global]
sets: the figures behind the verdict, from the sessions on record."""

from __future__ import annotations

import pytest

from bench_sessions import disk, throughput
from sambatune.bench.bottleneck_inputs import direction_to_show, figures_from_results, global_value
from sambatune.bench.records import BenchResult


def numbered(*results: BenchResult) -> list[BenchResult]:
    for number, result in enumerate(results, 1):
        result.session_id = number
        result.started_at = f"2026-12-04T10:0{number}:00+00:00"
    return list(results)


def network() -> BenchResult:
    return throughput("net", "download", "Download", [900.0, 905.0], parameters={"direction": "download"})


def smb_client(read_mb: list[float], write_mb: list[float] | None) -> BenchResult:
    result = throughput("smb-client", "read", "Read", read_mb)
    if write_mb is not None:
        extra = throughput("smb-client", "write", "Write", write_mb)
        result.series["write"] = extra.series["write"]
    return result


def test_the_direction_smb_does_worst_in_is_shown_first() -> None:
    # Reads near the disk, writes crawling: the writes are what the admin must see.
    both = numbered(disk(300.0, 280.0, 2000.0), network(), smb_client([270.0, 275.0], [1.5, 28.0, 9.0]))
    assert direction_to_show(both) == "write"
    write = figures_from_results(both, "write")
    assert write.smb_runs == pytest.approx((1.5e6, 28e6, 9e6), rel=0.01)
    assert write.report().limit_row == "SMB write"
    # Only reads measured: reads; nothing measured: reads.
    assert direction_to_show(numbered(disk(300.0, 280.0, 2000.0), smb_client([50.0, 52.0], None))) == "read"
    assert direction_to_show([]) == "read"


def test_global_value_reads_the_main_files_global_as_samba_does() -> None:
    text = (
        b"socket options = SO_SNDBUF=1\n"  # above any section: [global]
        b"[homes]\n  socket options = SO_SNDBUF=2\n"
        b"[ Global ]\n  Socket  Options = SO_RCVBUF=8192 \\\n   SO_SNDBUF=8192\n"
        b"[data]\n  path = /srv\n"
    )
    assert global_value(text, "socket options") == "SO_RCVBUF=8192 SO_SNDBUF=8192"
    assert global_value(b"[global]\n", "socket options") is None
    assert global_value(b"\xff\xfe[global]\n socket options = x\n", "socket options") == "x"
