"""The shape every benchmark shares: the method, the event stream, the result.

A benchmark is built with a transport, a :class:`Method` and its own options; its
:meth:`Benchmark.events` yields typed events while it runs and leaves a
:class:`BenchResult` in :attr:`Benchmark.result`. :meth:`Benchmark.run` does both
for callers that only want the result (optionally watching the events). Cancelling
the :class:`CancelToken` stops the agents on the server, which clean up and exit.
"""

from __future__ import annotations

import abc
import datetime as _dt
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from sambatune.bench.context import BenchContext
from sambatune.bench.events import BenchEvent, Notice, Progress, RunFinished, RunStarted, Sample
from sambatune.bench.progress import PlannedRun, ProgressPlan
from sambatune.bench.records import BYTES, BenchResult, RunRecord, SeriesResult
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput
from sambatune.remote.agents import AgentResult, AgentRun
from sambatune.remote.transport import Transport


@dataclass(frozen=True)
class Method:
    """Warm-up runs first (they fill caches and are not counted), then the counted runs."""

    runs: int = 5
    warmup: int = 1

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise InvalidInput(f"At least one counted run is needed, not {self.runs}.")
        if self.warmup < 0:
            raise InvalidInput(f"The number of warm-up runs cannot be negative ({self.warmup}).")

    @property
    def attempts(self) -> int:
        return self.warmup + self.runs

    def is_warmup(self, attempt: int) -> bool:
        return attempt <= self.warmup


#: Samples bring a new estimate of the time left at most this often (seconds).
ESTIMATE_EVERY = 0.25


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class Recorder:
    """Collects runs, samples and notes while a benchmark runs, and builds its result."""

    def __init__(
        self, test: str, target: str, parameters: dict[str, Any], method: Method, link_speed_bits: int | None
    ) -> None:
        self.test = test
        self.target = target
        self.parameters = parameters
        self.method = method
        self.link_speed_bits = link_speed_bits
        self.series: dict[str, SeriesResult] = {}
        self.notes: list[str] = []
        self.extra: dict[str, Any] = {}
        self.agents: list[dict[str, Any]] = []
        self.samples: list[Sample] = []
        self.started_at = now_iso()

    def declare(self, name: str, label: str, unit: str = BYTES) -> SeriesResult:
        if name not in self.series:
            self.series[name] = SeriesResult(name, label, unit)
        return self.series[name]

    def started(self, series: str, attempt: int, *, counted_always: bool = False) -> RunStarted:
        warmup = False if counted_always else self.method.is_warmup(attempt)
        label = self.series[series].label if series in self.series else series
        method = self.method
        if counted_always:
            number, of = 1, 1
        elif warmup:
            number, of = attempt, method.warmup
        else:
            number, of = attempt - method.warmup, method.runs
        return RunStarted(series, attempt, warmup, label, number, of)

    def record(
        self,
        series: str,
        attempt: int,
        *,
        seconds: float,
        bytes: int | None = None,
        operations: int | None = None,
        details: dict[str, Any] | None = None,
        counted_always: bool = False,
    ) -> RunFinished:
        unit = BYTES if bytes is not None else "operations"
        self.declare(series, series, unit)
        record = RunRecord(
            series=series,
            attempt=attempt,
            warmup=False if counted_always else self.method.is_warmup(attempt),
            seconds=float(seconds),
            bytes=bytes,
            operations=operations,
            link_speed_bits=self.link_speed_bits if bytes is not None else None,
            details=details or {},
        )
        self.series[series].runs.append(record)
        return RunFinished(record)

    def sample(
        self, series: str, attempt: int, t: float, moved: int, rate: float, source: str = "server"
    ) -> Sample:
        sample = Sample(series, attempt, float(t), int(moved), float(rate), source)
        self.samples.append(sample)
        return sample

    def note(self, message: str) -> Notice:
        if message not in self.notes:
            self.notes.append(message)
        return Notice(message)

    def finish(self, primary: str) -> BenchResult:
        series = {name: s for name, s in self.series.items() if s.runs}
        if primary not in series:
            primary = next(iter(series)) if series else primary
        return BenchResult(
            test=self.test,
            target=self.target,
            parameters=self.parameters,
            series=series,
            primary=primary,
            started_at=self.started_at,
            finished_at=now_iso(),
            link_speed_bits=self.link_speed_bits,
            notes=self.notes,
            extra=self.extra,
            agents=self.agents,
            samples=self.samples,
        )


@dataclass(frozen=True)
class Phase:
    """One part of a benchmark made of several agents, for the overall progress bar."""

    index: int = 0
    count: int = 1

    def scale(self, fraction: float | None) -> float | None:
        if fraction is None:
            return None
        return (self.index + max(0.0, min(1.0, fraction))) / self.count


#: A benchmark made of one agent.
WHOLE = Phase()


def translate_agent(
    run: AgentRun,
    recorder: Recorder,
    phase: Phase = WHOLE,
    series_name: Callable[[str], str] = lambda name: name,
) -> Generator[BenchEvent, None, AgentResult]:
    """Turn a measuring agent's lines into benchmark events; return its result.

    The agents speak the same vocabulary: ``run_started`` {run, series}, ``sample``
    {run, series, t, bytes, bytes_per_s}, ``run`` {run, series, bytes | operations,
    seconds, ...details}; a ``run`` line with ``once`` is a single measurement that
    always counts (there is nothing to warm up).
    """
    for event in run.events():
        data = dict(event.data)
        if event.type == "run_started":
            series = series_name(str(data.get("series", "")))
            yield recorder.started(series, int(data["run"]), counted_always=bool(data.get("once")))
        elif event.type == "sample":
            yield recorder.sample(
                series_name(str(data.get("series", ""))),
                int(data.get("run", 0)),
                data.get("t", 0.0),
                data.get("bytes", 0),
                data.get("bytes_per_s", 0.0),
            )
        elif event.type == "run":
            series = series_name(str(data.pop("series", "")))
            attempt = int(data.pop("run"))
            seconds = float(data.pop("seconds"))
            moved = data.pop("bytes", None)
            operations = data.pop("operations", None)
            once = bool(data.pop("once", False))
            yield recorder.record(
                series,
                attempt,
                seconds=seconds,
                bytes=None if moved is None else int(moved),
                operations=None if operations is None else int(operations),
                details=data,
                counted_always=once,
            )
        elif event.type == "progress":
            yield Progress(phase.scale(data.get("fraction")), str(data.get("message", "")))
    recorder.agents.append(run.hello)
    assert run.result is not None
    return run.result


class TestOptions(Protocol):
    def to_json(self) -> dict[str, Any]: ...


OptionsT = TypeVar("OptionsT", bound=TestOptions)


class Benchmark(abc.ABC, Generic[OptionsT]):
    """One test with its options, run by the method. Subclasses implement :meth:`_measure`."""

    test: ClassVar[str]

    def __init__(
        self,
        transport: Transport,
        method: Method | None = None,
        options: OptionsT | None = None,
        *,
        context: BenchContext | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        self.options: OptionsT = options if options is not None else self.default_options()
        self.transport = transport
        self.method = method or Method()
        self.context = context or BenchContext.bare(transport)
        self.cancel = cancel or CancelToken()
        self.result: BenchResult | None = None
        #: The runs to come, which ``_measure`` lists so progress and time left follow them.
        self.plan = ProgressPlan()

    def default_options(self) -> OptionsT:
        """The options when the caller gives none; tests that need a target refuse."""
        raise InvalidInput(f"The {self.test} test needs options.")

    def parameters(self) -> dict[str, Any]:
        """The options of this test, as recorded with the session."""
        return self.options.to_json()

    @abc.abstractmethod
    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        """Run the agents, yield events, fill ``recorder``."""

    @abc.abstractmethod
    def primary_series(self, recorder: Recorder) -> str:
        """The series the summary is about."""

    @property
    def target_label(self) -> str:
        """Whom the session is filed under: the server as the transport reached it."""
        return self.transport.label

    def plan_runs(self, series: Iterable[str], **expected: Any) -> None:
        """Plan every attempt of ``series`` (in the order they alternate), as :class:`PlannedRun`."""
        names = list(series)
        self.plan.add(
            PlannedRun(name, attempt, **expected)
            for attempt in range(1, self.method.attempts + 1)
            for name in names
        )

    def events(self) -> Iterator[BenchEvent]:
        params = {"runs": self.method.runs, "warmup": self.method.warmup, **self.parameters()}
        recorder = Recorder(self.test, self.target_label, params, self.method, self.context.link_speed_bits)
        for message in self.context.notes:
            yield recorder.note(message)
        yield Progress(0.0, f"starting the {self.test} test on {self.transport.label}")
        yield from self._with_estimates(self._measure(recorder))
        self.cancel.raise_if_cancelled()
        self.result = recorder.finish(self.primary_series(recorder))
        yield Progress(1.0, "done")

    def _with_estimates(self, events: Iterator[BenchEvent]) -> Iterator[BenchEvent]:
        """The events, with the fraction and time left from the plan once it lists runs.

        A run starting or ending, and samples (at most four times a second), each bring
        a fresh :class:`Progress`; the agents' own progress keeps its message.
        """
        plan = self.plan
        last = float("-inf")
        for event in events:
            plan.observe(event)
            if isinstance(event, Progress) and plan:
                fraction, remaining = plan.estimate()
                event = Progress(fraction, event.message, remaining)
            yield event
            if plan and isinstance(event, (RunStarted, RunFinished, Sample)):
                now = plan.clock()
                if not isinstance(event, Sample) or now - last >= ESTIMATE_EVERY:
                    last = now
                    fraction, remaining = plan.estimate()
                    yield Progress(fraction, "", remaining)

    def run(self, on_event: Callable[[BenchEvent], None] | None = None) -> BenchResult:
        for event in self.events():
            if on_event is not None:
                on_event(event)
        assert self.result is not None
        return self.result
