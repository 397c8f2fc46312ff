"""The socket-buffer sweep: throughput against SO_SNDBUF/SO_RCVBUF, the book's Figure B.1.

Each size is set on the server's socket before it listens, the way smb.conf's
"socket options = SO_SNDBUF=... SO_RCVBUF=..." sets it on smbd's; "autotuned" sets
nothing and leaves Linux to size the buffers itself. Setting a size turns that
autotuning off for the socket, which is why a fixed size rarely beats it today.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sambatune.bench.events import BenchEvent
from sambatune.bench.net import NetOptions, NetStreams, PlannedRun, expected
from sambatune.bench.runner import Benchmark, Recorder
from sambatune.errors import InvalidInput
from sambatune.units import format_bytes

#: 4 KiB to 4 MiB, doubling.
DEFAULT_SIZES = tuple(4096 << step for step in range(11))
AUTOTUNED = "autotuned"


@dataclass(frozen=True)
class SockbufOptions:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    include_autotuned: bool = True
    net: NetOptions = field(default_factory=lambda: NetOptions(seconds=2.0))

    def __post_init__(self) -> None:
        if not self.sizes and not self.include_autotuned:
            raise InvalidInput("The sweep needs at least one buffer size.")
        if any(size < 1024 for size in self.sizes):
            raise InvalidInput("Buffer sizes below 1 KiB are not tested.")

    def to_json(self) -> dict[str, Any]:
        return {"sizes": list(self.sizes), "include_autotuned": self.include_autotuned, **self.net.to_json()}


def series_name(size: int | None) -> str:
    return AUTOTUNED if size is None else str(size)


class SockbufBenchmark(Benchmark[SockbufOptions]):
    test = "sockbuf"

    def default_options(self) -> SockbufOptions:
        return SockbufOptions()

    def sizes(self) -> list[int | None]:
        sizes: list[int | None] = list(sorted(set(self.options.sizes)))
        if self.options.include_autotuned:
            sizes.append(None)
        return sizes

    def primary_series(self, recorder: Recorder) -> str:
        if AUTOTUNED in recorder.series:
            return AUTOTUNED
        means = {}
        for name, found in recorder.series.items():
            stats = found.stats()
            if stats is not None:
                means[name] = stats.mean
        return max(means, key=means.__getitem__) if means else ""

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        net = replace(self.options.net, sndbuf=None, rcvbuf=None)
        plan: list[PlannedRun] = []
        for size in self.sizes():
            name = series_name(size)
            label = (
                "Autotuned (no buffer size set)"
                if size is None
                else f"SO_SNDBUF = SO_RCVBUF = {format_bytes(size, 0)}"
            )
            recorder.declare(name, label)
            spec = net.spec(size, size)
            plan += [PlannedRun(name, attempt, spec) for attempt in range(1, self.method.attempts + 1)]
        self.plan.add(expected(run) for run in plan)
        for note in self._kernel_caps():
            yield recorder.note(note)
        yield from NetStreams(self, net).run(recorder, plan)
        recorder.extra["curve"] = curve(recorder, self.sizes())

    def _kernel_caps(self) -> list[str]:
        """Linux clamps a requested size to net.core.wmem_max / rmem_max: say where."""
        notes = []
        largest = max(self.options.sizes, default=0)
        for setting, option in (("net.core.wmem_max", "SO_SNDBUF"), ("net.core.rmem_max", "SO_RCVBUF")):
            value = self.context.tcp_setting(setting)
            if value and value.isdigit() and largest > int(value):
                notes.append(
                    f"The server caps {option} at {setting} = {format_bytes(int(value), 0)}: "
                    "larger sizes in this sweep get that cap, so the curve flattens there."
                )
        return notes


def curve(recorder: Recorder, sizes: list[int | None]) -> list[dict[str, Any]]:
    """One point per buffer size: requested, what the kernel granted, mean throughput."""
    points = []
    for size in sizes:
        found = recorder.series.get(series_name(size))
        if found is None or not found.counted:
            continue
        stats = found.stats()
        server = found.counted[-1].details.get("server") or {}
        points.append(
            {
                "series": found.name,
                "requested_bytes": size,
                "server_sndbuf": server.get("sndbuf"),
                "server_rcvbuf": server.get("rcvbuf"),
                "mean_bytes_per_s": stats.mean if stats else None,
                "stdev_bytes_per_s": stats.stdev if stats else None,
                "mean_bits_per_s": stats.mean * 8 if stats else None,
            }
        )
    return points
