"""The test file's size when the user gives none: sized from a short probe's rates.

A fixed default cannot suit every server: 512 MiB is a few seconds per copy on a healthy
server and six minutes per copy at 1.5 MB/s, where the whole SMB test then took more
than half an hour. So the probe moves a small file once per operation, and the file is
sized so that all the runs the method asks for fit a target duration; never above the
size the test used before (healthy servers keep it), never below the probe's own size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sambatune.bench.progress import format_duration
from sambatune.units import format_bytes, format_rate

MiB = 1 << 20
#: The sizes a chosen file may have: 1 and 1.5 times a power of two, in MiB.
STEPS = tuple(sorted({base << shift for shift in range(0, 12) for base in (2, 3)}))


@dataclass(frozen=True)
class Sizing:
    size: int
    #: Rates the probe measured, bytes/s per operation.
    rates: dict[str, float]
    probe_size: int
    transfers: int
    #: Seconds all transfers of the chosen size are expected to take.
    expected_seconds: float | None
    #: Seconds they would take at the largest size.
    largest_seconds: float | None
    target_seconds: float
    largest: int
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "size": self.size,
            "chosen_from": "probe",
            "probe_size": self.probe_size,
            "probe_rates": self.rates,
            "transfers": self.transfers,
            "expected_seconds": self.expected_seconds,
            "target_seconds": self.target_seconds,
            "largest": self.largest,
            "reason": self.reason,
        }


def nice_size_at_most(size: float, smallest: int) -> int:
    """The largest of 4, 6, 8, 12, 16, 24, ... MiB not above ``size`` (``smallest`` at least)."""
    fitting = [step * MiB // 2 for step in STEPS if step * MiB // 2 <= size]
    return max([smallest, *fitting])


def adapted_size(
    rates: Mapping[str, float],
    operations: Sequence[str],
    attempts: int,
    *,
    target_seconds: float,
    smallest: int,
    largest: int,
    probe_size: int,
    what: str = "transfers",
) -> Sizing:
    """The size at which ``attempts`` rounds of ``operations`` take about ``target_seconds``."""
    measured = {op: float(rates[op]) for op in operations if rates.get(op, 0) > 0}
    transfers = attempts * len(operations)
    probe = format_bytes(probe_size, 0)
    if len(measured) < len(operations):
        size = largest
        return Sizing(
            size,
            measured,
            probe_size,
            transfers,
            None,
            None,
            target_seconds,
            largest,
            f"The test file is {format_bytes(size, 0)}: the {probe} probe measured no "
            f"rate, so the file has the usual size.",
        )
    seconds_per_byte = sum(1 / measured[op] for op in operations) * attempts
    ideal = target_seconds / seconds_per_byte
    size = min(nice_size_at_most(ideal, smallest), largest)
    expected = size * seconds_per_byte
    full = largest * seconds_per_byte
    figures = " and ".join(f"{op} {format_rate(measured[op])}" for op in operations)
    head = (
        f"The test file is {format_bytes(size, 0)}: a {probe} probe measured {figures}, "
        f"so the {transfers} {what} take about {format_duration(expected)}"
    )
    if size >= largest:
        reason = f"{head} (the largest size the test uses)."
    elif expected > target_seconds * 1.5:
        reason = (
            f"{head}, even at the smallest size; the usual {format_bytes(largest, 0)} "
            f"would take about {format_duration(full)}. Give a file size to choose it "
            "yourself."
        )
    else:
        reason = (
            f"{head}; the usual {format_bytes(largest, 0)} would take about "
            f"{format_duration(full)}. Give a file size to choose it yourself."
        )
    return Sizing(size, measured, probe_size, transfers, expected, full, target_seconds, largest, reason)
