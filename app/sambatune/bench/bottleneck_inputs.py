"""The bottleneck table's figures, taken from the sessions a server has on record.

Each layer's figure comes from the newest session that measured it: disk read and
write and the file-operation rate from a disk test (or the disk ceiling of an smb
test), the network from a net test in the transfer's direction, and SMB from the
client probe (it crossed the same network) or else the server-side smb test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.bottleneck import BottleneckReport, Direction, find_bottleneck
from sambatune.bench.records import BenchResult

METADATA_SERIES = ("metadata-create", "metadata-stat", "metadata-unlink")


@dataclass
class BottleneckFigures:
    direction: Direction = "read"
    disk_read: float | None = None
    disk_write: float | None = None
    file_ops: float | None = None
    network: float | None = None
    smb: float | None = None
    link_bits: float | None = None
    #: Which session each figure came from: {"disk read": 12, ...}.
    sources: dict[str, int | None] = field(default_factory=dict)

    def report(self) -> BottleneckReport:
        return find_bottleneck(
            disk_read_bytes_per_s=self.disk_read, disk_write_bytes_per_s=self.disk_write,
            file_ops_per_s=self.file_ops, network_bytes_per_s=self.network,
            smb_bytes_per_s=self.smb, link_bits_per_s=self.link_bits, direction=self.direction,
        )

    def to_json(self) -> dict[str, Any]:
        return {"direction": self.direction, "disk_read": self.disk_read, "disk_write": self.disk_write,
                "file_ops_per_s": self.file_ops, "network": self.network, "smb": self.smb,
                "link_bits": self.link_bits, "sources": self.sources}


def _mean(result: BenchResult, series: str) -> float | None:
    found = result.series.get(series)
    stats = found.stats() if found else None
    return stats.mean if stats is not None and stats.mean > 0 else None


def figures_from_results(results: list[BenchResult], direction: Direction = "read") -> BottleneckFigures:
    """The newest figure for each layer (``results`` in any order)."""
    figures = BottleneckFigures(direction=direction)
    net_series = "download" if direction == "read" else "upload"
    client_series = "read" if direction == "read" else "write"
    smb_series = "get" if direction == "read" else "put"

    def take(key: str, value: float | None, result: BenchResult, attribute: str) -> None:
        if value is not None and getattr(figures, attribute) is None:
            setattr(figures, attribute, value)
            figures.sources[key] = result.session_id

    smb_from_server: tuple[float, BenchResult] | None = None
    for result in sorted(results, key=lambda r: (r.started_at, r.session_id or 0), reverse=True):
        if result.link_speed_bits and figures.link_bits is None:
            figures.link_bits = float(result.link_speed_bits)
        if result.test == "disk":
            take("disk read", _mean(result, "read"), result, "disk_read")
            take("disk write", _mean(result, "write"), result, "disk_write")
            rates = [r for r in (_mean(result, name) for name in METADATA_SERIES) if r is not None]
            take("file operations", min(rates) if rates else None, result, "file_ops")
        elif result.test == "smb":
            take("disk read", _mean(result, "disk-read"), result, "disk_read")
            take("disk write", _mean(result, "disk-write"), result, "disk_write")
            rate = _mean(result, smb_series)
            if rate is not None and smb_from_server is None:
                smb_from_server = (rate, result)
        elif result.test == "net":
            take("network", _mean(result, net_series), result, "network")
        elif result.test == "smb-client":
            take("SMB", _mean(result, client_series), result, "smb")
    if figures.smb is None and smb_from_server is not None:
        figures.smb = smb_from_server[0]
        figures.sources["SMB"] = smb_from_server[1].session_id
    return figures
