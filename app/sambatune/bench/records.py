"""What a benchmark measured: one record per run, runs grouped in series, a result per session.

The book's measurement form, as data: each run with its size in bytes, time, bytes/s,
bits/s and percentage of the link; warm-up runs kept but not counted; the counted
runs summarised by :func:`sambatune.bench.statistics.describe`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.statistics import SeriesStats, describe

# A series measures bytes moved (throughput) or operations done (files, lookups).
from sambatune.units import BYTES, OPERATIONS

__all__ = ["BYTES", "OPERATIONS"]  # where the bench code has always imported them from


#: ``extra["client"]["client"]`` of a session measured through a mounted share.
MOUNTED_SHARE_CLIENT = "os-path"


@dataclass(frozen=True)
class RunRecord:
    """One run of one series, warm-up or counted."""

    series: str
    #: 1-based position among the series' runs, warm-ups first.
    attempt: int
    warmup: bool
    seconds: float
    bytes: int | None = None
    operations: int | None = None
    #: The link the figure is set against (bits/s), when the survey knows it.
    link_speed_bits: int | None = None
    #: Test-specific facts: effective socket buffers, RTT, retransmits, cache method...
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def unit(self) -> str:
        return BYTES if self.bytes is not None else OPERATIONS

    @property
    def bytes_per_s(self) -> float | None:
        if self.bytes is None or self.seconds <= 0:
            return None
        return self.bytes / self.seconds

    @property
    def bits_per_s(self) -> float | None:
        rate = self.bytes_per_s
        return None if rate is None else rate * 8

    @property
    def operations_per_s(self) -> float | None:
        if self.operations is None or self.seconds <= 0:
            return None
        return self.operations / self.seconds

    @property
    def percent_of_link(self) -> float | None:
        bits = self.bits_per_s
        if bits is None or not self.link_speed_bits:
            return None
        return 100.0 * bits / self.link_speed_bits

    @property
    def rate(self) -> float:
        """The figure this run contributes to its series' summary."""
        value = self.bytes_per_s if self.unit == BYTES else self.operations_per_s
        return float("nan") if value is None else value

    def to_json(self) -> dict[str, Any]:
        return {
            "series": self.series,
            "attempt": self.attempt,
            "warmup": self.warmup,
            "bytes": self.bytes,
            "seconds": self.seconds,
            "bytes_per_s": self.bytes_per_s,
            "bits_per_s": self.bits_per_s,
            "percent_of_link": self.percent_of_link,
            "operations": self.operations,
            "operations_per_s": self.operations_per_s,
            "details": self.details,
        }


@dataclass
class SeriesResult:
    """All runs of one measured quantity, e.g. "download" or "list/100000"."""

    name: str
    label: str
    unit: str
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def counted(self) -> list[RunRecord]:
        return [r for r in self.runs if not r.warmup]

    @property
    def warmups(self) -> list[RunRecord]:
        return [r for r in self.runs if r.warmup]

    def values(self) -> list[float]:
        return [r.rate for r in self.counted]

    def stats(self) -> SeriesStats | None:
        values = self.values()
        if not values:
            return None
        return describe(values, unit="bytes/s" if self.unit == BYTES else "ops/s")

    def outlier_attempts(self) -> list[int]:
        stats = self.stats()
        counted = self.counted
        return [counted[i].attempt for i in stats.outliers] if stats else []

    def to_json(self) -> dict[str, Any]:
        """The summary scripts read: mean/stdev of the counted runs, and the runs."""
        stats = self.stats()
        counted = self.counted
        data: dict[str, Any] = {
            "series": self.name,
            "label": self.label,
            "unit": self.unit,
            "runs": [_run_row(r, number) for number, r in enumerate(counted, 1)],
            "warmup_runs": [_run_row(r, None) for r in self.warmups],
        }
        mean = stdev = None
        if stats is not None:
            mean, stdev = stats.mean, stats.stdev
        valid = stats.valid_mean if stats is not None else None
        if self.unit == BYTES:
            data["mean_bytes_per_s"] = mean
            data["stdev_bytes_per_s"] = stdev
            # The book's "average of the valid runs": odd runs left out.
            data["valid_mean_bytes_per_s"] = valid
            data["mean_bits_per_s"] = None if mean is None else mean * 8
            links = {r.link_speed_bits for r in counted}
            link = links.pop() if len(links) == 1 else None
            data["link_speed_bits"] = link
            data["mean_percent_of_link"] = 100.0 * mean * 8 / link if mean and link else None
        else:
            data["mean_bytes_per_s"] = None
            data["stdev_bytes_per_s"] = None
            data["valid_mean_bytes_per_s"] = None
            data["mean_operations_per_s"] = mean
            data["stdev_operations_per_s"] = stdev
            data["valid_mean_operations_per_s"] = valid
        data["mean_seconds_per_run"] = sum(r.seconds for r in counted) / len(counted) if counted else None
        data["statistics"] = stats.to_json() if stats else None
        data["outlier_runs"] = [
            number for number, r in enumerate(counted, 1) if stats and (number - 1) in stats.outliers
        ]
        return data


def _run_row(record: RunRecord, number: int | None) -> dict[str, Any]:
    row = record.to_json()
    row["run"] = number
    return row


@dataclass
class BenchResult:
    """One session: what was measured where, with which settings, and every run."""

    test: str
    target: str
    parameters: dict[str, Any]
    series: dict[str, SeriesResult]
    primary: str
    started_at: str
    finished_at: str
    link_speed_bits: int | None = None
    notes: list[str] = field(default_factory=list)
    #: Test-specific findings: cache method, data path, ratios, the buffer curve.
    extra: dict[str, Any] = field(default_factory=dict)
    #: The hello line of every agent that ran (versions, pid).
    agents: list[dict[str, Any]] = field(default_factory=list)
    samples: list[Any] = field(default_factory=list)
    session_id: int | None = None

    @property
    def summary(self) -> SeriesResult:
        return self.series[self.primary]

    @property
    def through_mounted_share(self) -> bool:
        """Measured through this computer's own SMB client on a mounted share (``--path``):
        no server's smb.conf takes part in it."""
        return (self.extra.get("client") or {}).get("client") == MOUNTED_SHARE_CLIENT

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "test": self.test,
            "target": self.target,
            "session_id": self.session_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "parameters": self.parameters,
            "link_speed_bits": self.link_speed_bits,
            "summary": self.summary.to_json(),
            "series": {name: s.to_json() for name, s in self.series.items()},
            "notes": self.notes,
            **self.extra,
            "agents": self.agents,
        }
