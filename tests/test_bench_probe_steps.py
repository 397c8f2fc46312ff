"""The sizing probe of "SMB from this computer" starts small: a server that moves 512 KiB
slowly is not kept busy for a minute by a 4 MiB probe (53 s on a slow one), and while a
probe runs it says how far it is and at what rate. The transfers here are stand-ins
that move bytes at a set pace: the probe's decisions are what is tested; the real
probe against a real smbd is tests/test_bench_smb_client.py's."""

from __future__ import annotations

import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from sambatune.bench.runner import Method
from sambatune.bench.smb_client import (
    FIRST_PROBE_SIZE,
    PROBE_ENOUGH_SECONDS,
    PROBE_SIZE,
    SmbClientBenchmark,
    SmbClientOptions,
)
from sambatune.bench.smb_wire import OnProgress, Transfer
from sambatune.progress import Progress


def paced(rate: float, asked: list[int]) -> Any:
    """A transfer at ``rate`` bytes/s that reports its progress every 50 ms."""

    def work(on_progress: OnProgress, size: int) -> Transfer:
        asked.append(size)
        started = time.monotonic()
        moved = 0
        while moved < size:
            time.sleep(0.05)
            moved = min(size, int((time.monotonic() - started) * rate))
            on_progress(moved, time.monotonic() - started)
        return Transfer(size, time.monotonic() - started, 0.0)

    return work


def drive(generator: Generator[Any, None, dict[str, float]]) -> tuple[list[Any], dict[str, float]]:
    events = []
    while True:
        try:
            events.append(next(generator))
        except StopIteration as stop:
            return events, stop.value


@pytest.mark.parametrize(
    ("write_rate", "read_rate", "writes", "reads"),
    [
        # Slow both ways: 512 KiB took over a second each; no 4 MiB probe.
        (400e3, 400e3, [FIRST_PROBE_SIZE], [FIRST_PROBE_SIZE]),
        # Fast both ways: the small one was too quick to trust, the full probe follows.
        (200e6, 200e6, [FIRST_PROBE_SIZE, PROBE_SIZE], [FIRST_PROBE_SIZE, PROBE_SIZE]),
        # Slow writes, fast reads: a read never asks for more than was written.
        (400e3, 200e6, [FIRST_PROBE_SIZE], [FIRST_PROBE_SIZE]),
    ],
)
def test_the_probe_grows_only_when_the_small_one_was_quick(
    tmp_path: Path, write_rate: float, read_rate: float, writes: list[int], reads: list[int]
) -> None:
    bench = SmbClientBenchmark(
        None, Method(runs=1, warmup=0), SmbClientOptions(path=str(tmp_path), sample_interval=0.2)
    )
    asked_writes: list[int] = []
    asked_reads: list[int] = []
    started = time.monotonic()
    events, rates = drive(bench._probe(paced(write_rate, asked_writes), paced(read_rate, asked_reads)))
    assert (asked_writes, asked_reads) == (writes, reads)
    assert set(rates) == {"write", "read"}
    if write_rate < 1e6:
        assert rates["write"] == pytest.approx(write_rate, rel=0.5)
        assert time.monotonic() - started < 4 * PROBE_ENOUGH_SECONDS + 2
        # While a slow probe runs: how far, of how much, at what rate.
        lines = [e.message for e in events if isinstance(e, Progress)]
        assert any(line.startswith("probe: write: ") and " of 512.0 KiB, " in line for line in lines), lines
