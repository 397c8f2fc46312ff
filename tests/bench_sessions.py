"""Recorded sessions with known figures, for the views that read the results database.

Built with the same Recorder the benchmarks use and stored in the real database, so
the report and the GUI read exactly what a run would have left there.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.bench.context import BenchContext
from sambatune.bench.records import OPERATIONS, BenchResult
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method, Recorder
from sambatune.remote.survey import Survey

SERVER = "admin@files1:22"
BEFORE_CONF = b"[global]\n  workgroup = OFFICE\n  socket options = SO_RCVBUF=8192 SO_SNDBUF=8192\n"
AFTER_CONF = b"[global]\n  workgroup = OFFICE\n"
SURVEY = Survey(
    SERVER,
    {
        "hostname": "files1",
        "os": {"distribution": "Debian GNU/Linux 12", "kernel": "6.1.0"},
        "cpu": {"available": 4, "model": "Xeon E-2224"},
        "memory": {"total_bytes": 16 << 30},
        "samba": {"version_text": "Version 4.17.12-Debian"},
        "nics": [
            {"name": "eth0", "state": "up", "speed_mbit": 1000, "mtu": 1500, "addresses": ["192.0.2.10/24"]}
        ],
    },
    collected_at="2026-11-20T10:00:00+00:00",
)


def context(conf: bytes) -> BenchContext:
    return BenchContext(
        "192.0.2.10", survey=SURVEY, smb_conf_path="/etc/samba/smb.conf", smb_conf=conf, link_speed_bits=10**9
    )


def throughput(
    test: str,
    series: str,
    label: str,
    rates_mb: list[float],
    *,
    warmup_mb: float = 50.0,
    parameters: dict | None = None,
    samples: int = 8,
) -> BenchResult:
    recorder = Recorder(test, SERVER, parameters or {}, Method(runs=len(rates_mb), warmup=1), 10**9)
    recorder.declare(series, label)
    for attempt, rate in enumerate([warmup_mb, *rates_mb], 1):
        for step in range(1, samples + 1):
            recorder.sample(
                series,
                attempt,
                step * 0.25,
                int(rate * 1e6 * step * 0.25),
                rate * 1e6 * (0.97 + 0.06 * (step % 2)),
            )
        recorder.record(series, attempt, seconds=2.0, bytes=int(rate * 2e6))
    return recorder.finish(series)


def disk(read_mb: float, write_mb: float, ops: float) -> BenchResult:
    recorder = Recorder("disk", SERVER, {"size": 1 << 30}, Method(runs=3, warmup=1), 10**9)
    for name, rate in (("write", write_mb), ("read", read_mb)):
        recorder.declare(name, f"Disk {name}")
        for attempt in range(1, 5):
            recorder.record(name, attempt, seconds=4.0, bytes=int(rate * 4e6 * (1 + attempt / 500)))
    for name in ("metadata-create", "metadata-stat", "metadata-unlink"):
        recorder.declare(name, name, OPERATIONS)
        for attempt in range(1, 5):
            recorder.record(name, attempt, seconds=1.0, operations=int(ops * (1 + attempt / 300)))
    return recorder.finish("read")


def sockbuf() -> BenchResult:
    recorder = Recorder("sockbuf", SERVER, {"direction": "download"}, Method(runs=2, warmup=0), 10**9)
    sizes = [4096 << step for step in range(0, 11, 2)]
    rates = {4096: 9.0, 16384: 31.0, 65536: 80.0, 262144: 112.0, 1048576: 113.0, 4194304: 112.5}
    curve = []
    for size in [*sizes, None]:
        name = "autotuned" if size is None else str(size)
        rate = 113.5 if size is None else rates[size]
        recorder.declare(name, name)
        for attempt in (1, 2):
            recorder.record(name, attempt, seconds=2.0, bytes=int(rate * 2e6 * (1 + attempt / 400)))
        stats = recorder.series[name].stats()
        assert stats is not None
        curve.append(
            {
                "series": name,
                "requested_bytes": size,
                "mean_bytes_per_s": stats.mean,
                "server_sndbuf": None if size is None else size * 2,
                "server_rcvbuf": None if size is None else size * 2,
            }
        )
    recorder.extra["curve"] = curve
    return recorder.finish("autotuned")


@dataclass
class Recorded:
    before: int
    after: int
    disk: int
    smb_client: int
    sockbuf: int


def record_sessions(
    database: ResultsDatabase, server: str = SERVER, after_conf: bytes = AFTER_CONF
) -> Recorded:
    """Five sessions of ``server``: net before/after one change, disk, SMB client, buffer sweep
    (all but the first run with ``after_conf``)."""

    def save(result: BenchResult, conf: bytes, note: str = "") -> int:
        result.target = server
        return database.save(result, context(conf), note=note)

    net = {"direction": "download", "seconds": 2.0}
    label = "Download (server to this computer)"
    return Recorded(
        before=save(
            throughput("net", "download", label, [71.0, 72.5, 70.8, 71.9, 72.2], parameters=net),
            BEFORE_CONF,
            "before: fixed socket buffers",
        ),
        after=save(
            throughput("net", "download", label, [111.2, 112.0, 111.6, 112.4, 111.9], parameters=net),
            after_conf,
            "after: socket options removed",
        ),
        disk=save(disk(read_mb=180.0, write_mb=150.0, ops=2500.0), after_conf),
        smb_client=save(
            throughput(
                "smb-client",
                "read",
                "SMB read from this computer (SambaTune's client)",
                [104.0, 105.1, 104.6],
                parameters={"client": "smbprotocol"},
            ),
            after_conf,
        ),
        sockbuf=save(sockbuf(), after_conf),
    )
