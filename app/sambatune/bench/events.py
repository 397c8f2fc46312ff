"""What a running benchmark reports, in the order it happens.

A runner's ``events()`` yields these; the GUI turns them into signals (live graph,
run table, progress bar), the CLI into a progress line. The last event of a run is
always :class:`RunFinished` with its complete record.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.bench.records import RunRecord
from sambatune.progress import Progress  # one type for every long action; re-exported here


@dataclass(frozen=True)
class RunStarted:
    series: str
    attempt: int
    warmup: bool
    label: str = ""
    #: This run's number among the warm-ups, or among the counted runs, of its series
    #: ("run ``number`` of ``of``"); 0 when the benchmark cannot say.
    number: int = 0
    of: int = 0


@dataclass(frozen=True)
class Sample:
    """A point for the live graph: ``bytes`` moved so far, the rate over the last interval."""

    series: str
    attempt: int
    t: float
    bytes: int
    bytes_per_s: float
    #: Who counted: "server" (the agent) or "client" (this computer).
    source: str = "server"


@dataclass(frozen=True)
class RunFinished:
    record: RunRecord


@dataclass(frozen=True)
class Step:
    """A benchmark made of parts says which one starts: "step ``index`` of ``count``".

    ``series``: the series this part measures (the plot shows them while it runs).
    """

    index: int
    count: int
    title: str
    series: tuple[str, ...] = ()


@dataclass(frozen=True)
class Notice:
    """Something the person watching should know now, e.g. how the page cache was bypassed."""

    message: str


BenchEvent = RunStarted | Sample | RunFinished | Progress | Notice | Step
