"""How far a benchmark is, how long it still takes, and the line a person reads meanwhile.

A benchmark lists the runs it is going to make (:class:`PlannedRun`). A timed run lasts
its seconds; any other run as long as the earlier runs of its series took; before one
has finished, a run that moves a known number of bytes lasts as long as its series'
rate says (what its samples show, else a probe's or a guess the benchmark gives; else
there is no estimate yet), and anything else as long as any run before it took. The
run under way has its bytes left at the rate it has kept since its first sample.
:class:`ProgressPlan` turns the benchmark's events into a fraction done and the seconds
left, so the estimate follows what is measured: a slow server shows a long estimate
from its first samples.

:class:`ProgressTracker` turns the same events into one line: which step of how many,
which run of how many, the live figure and the time left ("Step 2 of 4 · SMB get: run
2 of 5 · 2.3 MB/s · about 1 min 20 s left"). The GUI pages and the
command line share it; nothing here knows about Qt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from sambatune.bench.events import BenchEvent, Progress, RunFinished, RunStarted, Sample, Step
from sambatune.bench.records import BYTES
from sambatune.units import format_operations_rate, format_rate

Clock = Callable[[], float]
#: Without an estimate from the benchmark, the pace is carried on after this many seconds.
EXTRAPOLATE_AFTER = 2.0
#: A run's rate is taken from its first sample on once this many seconds lie between.
STEADY_AFTER = 0.4


@dataclass(frozen=True)
class PlannedRun:
    series: str
    attempt: int
    #: The bytes the run moves: its samples then say how far it is.
    bytes: int | None = None
    #: How long a timed run lasts.
    seconds: float | None = None
    #: The rate (bytes/s) expected before any run of the series has measured one.
    rate: float | None = None


class ProgressPlan:
    """The runs still to come, each with the time it is expected to take."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.runs: dict[tuple[str, int], PlannedRun] = {}
        #: Wall seconds each finished run took.
        self.finished: dict[tuple[str, int], float] = {}
        #: The rate (bytes/s) each series' samples showed, until one of its runs finished.
        self.rates: dict[str, float] = {}
        self.current: tuple[str, int] | None = None
        self._started = 0.0
        self._moved = 0
        self._rate: float | None = None
        self._first: tuple[float, int] | None = None
        self._shown = 0.0

    def add(self, runs: Iterable[PlannedRun]) -> None:
        for run in runs:
            self.runs[(run.series, run.attempt)] = run

    def __bool__(self) -> bool:
        return bool(self.runs)

    def observe(self, event: BenchEvent) -> None:
        if isinstance(event, RunStarted):
            key = (event.series, event.attempt)
            if key in self.runs:
                self.current = key
                self._started = self.clock()
                self._moved, self._rate, self._first = 0, None, None
        elif isinstance(event, Sample):
            if (event.series, event.attempt) == self.current and event.t > 0 and event.bytes > 0:
                self._moved = event.bytes
                # The rate since the first sample: a transfer often starts with a burst
                # (socket buffers filling) that the rest of it does not keep up.
                first = self._first
                if first is None:
                    self._first = (event.t, event.bytes)
                    self._rate = event.bytes / event.t
                elif event.t - first[0] >= STEADY_AFTER and event.bytes > first[1]:
                    self._rate = (event.bytes - first[1]) / (event.t - first[0])
                if self._rate:
                    self.rates[event.series] = self._rate
        elif isinstance(event, RunFinished):
            record = event.record
            key = (record.series, record.attempt)
            wall = self.clock() - self._started if key == self.current else record.seconds
            if key in self.runs:
                self.finished[key] = max(wall, 0.0)
            if key == self.current:
                self.current = None

    def _expected(self, run: PlannedRun) -> float | None:
        if run.seconds:
            return run.seconds
        # The runs of a series move the same bytes: as long as its earlier ones took.
        same = [s for (series, _), s in self.finished.items() if series == run.series]
        if same:
            return sum(same) / len(same)
        if run.bytes:
            # Other series say nothing about this one's rate (a put at 60 MB/s, a get at 2).
            rate = self.rates.get(run.series) or run.rate
            return run.bytes / rate if rate else None
        durations = list(self.finished.values())
        return sum(durations) / len(durations) if durations else None

    def estimate(self) -> tuple[float | None, float | None]:
        """(fraction done, seconds left); seconds left is None while it cannot be said."""
        if not self.runs:
            return None, None
        now = self.clock()
        done = left = 0.0
        count_done = 0.0
        known = True
        for key, run in self.runs.items():
            if key in self.finished:
                done += self.finished[key]
                count_done += 1
                continue
            expected = self._expected(run)
            if key != self.current:
                if expected is None:
                    known = False
                else:
                    left += expected
                continue
            elapsed = max(now - self._started, 0.0)
            done += elapsed
            if run.bytes and self._moved and self._rate:
                share = min(self._moved / run.bytes, 1.0)
                to_go = max(run.bytes - self._moved, 0) / self._rate
            elif expected:
                share = min(elapsed / expected, 1.0)
                to_go = max(expected - elapsed, 0.0)
            else:
                share, to_go, known = 0.0, 0.0, False
            count_done += share
            left += to_go
        if known:
            total = done + left
            fraction = done / total if total > 0 else 0.0
        else:
            fraction = count_done / len(self.runs)
        # A slower run than expected lengthens the time left; the bar does not go back.
        self._shown = max(self._shown, fraction)
        return self._shown, (left if known else None)


def format_duration(seconds: float) -> str:
    """A rough duration for people: '40 s', '2 min 30 s', '12 min', '1 h 5 min'.

    Rounded (to 5 s, 10 s, then minutes) so that a countdown does not flicker.
    """
    if seconds < 60:
        return f"{max(int(round(seconds / 5) * 5), 5)} s"
    if seconds < 600:
        minutes, rest = divmod(int(round(seconds / 10) * 10), 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def format_left(seconds: float | None) -> str:
    """'about 2 min 30 s left'; '' when there is no estimate."""
    if seconds is None:
        return ""
    if seconds < 10:
        return "a few seconds left"
    return f"about {format_duration(seconds)} left"


class ProgressTracker:
    """The events of a running benchmark, kept as what to show: fraction, step, run, figure, time left."""

    def __init__(self, labels: Mapping[str, str] | None = None, clock: Clock = time.monotonic) -> None:
        self.labels = dict(labels or {})
        self.clock = clock
        self.reset()

    def reset(self, message: str = "") -> None:
        self.fraction: float | None = None
        self.step: Step | None = None
        self.run: RunStarted | None = None
        self.figure = ""
        self.finished = ""
        self.text = message
        self._remaining: float | None = None
        self._remaining_at = 0.0
        self._runs_seen = False
        self._first: tuple[float, float] | None = None

    def message(self, text: str) -> None:
        """A plain status text from outside the benchmark ("Reading smb.conf…"): a new stage."""
        self.text, self.run, self.finished, self._runs_seen = text, None, "", False

    def observe(self, event: object) -> None:
        if isinstance(event, Progress):
            now = self.clock()
            fraction = None if event.fraction is None else max(0.0, min(1.0, event.fraction))
            if fraction is not None:
                self.fraction = fraction
                if self._first is None and fraction > 0:
                    self._first = (now, fraction)
            if event.remaining is not None:
                self._remaining, self._remaining_at = event.remaining, now
            elif fraction is not None:
                # No estimate from the benchmark: the pace so far, carried on, if any.
                self._remaining = None
                since, start = self._first or (now, 0.0)
                if fraction > start and now - since >= EXTRAPOLATE_AFTER:
                    pace = (fraction - start) / (now - since)
                    self._remaining, self._remaining_at = (1 - fraction) / pace, now
            # Once runs go, they say more than an agent's "run 2 of 6" between them.
            if event.message and event.message != "done" and not self._runs_seen:
                self.text = event.message[:1].upper() + event.message[1:]
        elif isinstance(event, Step):
            self.step, self.run, self.figure, self.finished = event, None, "", ""
            self.text, self._runs_seen = "", False
        elif isinstance(event, RunStarted):
            self.run, self.figure, self.finished = event, "", ""
            self._runs_seen = True
        elif isinstance(event, Sample):
            if self.run is not None and (event.series, event.attempt) == (self.run.series, self.run.attempt):
                self.figure = format_rate(event.bytes_per_s)
        elif isinstance(event, RunFinished):
            record = event.record
            if self.run is not None and (record.series, record.attempt) == (
                self.run.series,
                self.run.attempt,
            ):
                value = (
                    format_rate(record.bytes_per_s)
                    if record.unit == BYTES
                    else format_operations_rate(record.operations_per_s)
                )
                self.finished = f"{self._run_words(self.run)} done, {value}"
                self.run, self.figure = None, ""

    @property
    def remaining(self) -> float | None:
        """The latest estimate, counted down since it came."""
        if self._remaining is None:
            return None
        return max(self._remaining - (self.clock() - self._remaining_at), 0.0)

    def _label(self, series: str, label: str) -> str:
        return self.labels.get(series) or label or series

    def _run_words(self, run: RunStarted) -> str:
        kind = "warm-up" if run.warmup else "run"
        number = run.number or run.attempt
        of = f" of {run.of}" if run.of else ""
        return f"{self._label(run.series, run.label)}: {kind} {number}{of}"

    def line(self) -> str:
        parts = []
        step = self.step
        if step is not None and step.count > 1:
            # Once a run of the step goes, its own label says what the step is about.
            busy = self.run is not None or self.finished
            parts.append(f"Step {step.index} of {step.count}" + ("" if busy else f": {step.title}"))
        if self.run is not None:
            parts.append(self._run_words(self.run))
            if self.figure:
                parts.append(self.figure)
        elif self.finished:
            parts.append(self.finished)
        elif self.text:
            parts.append(self.text)
        left = format_left(self.remaining)
        if left:
            parts.append(left)
        return " · ".join(parts)
