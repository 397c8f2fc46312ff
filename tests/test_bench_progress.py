"""Long measurements say where they are: step, run of how many, the live figure, the time left.

The estimates are checked with a clock the test moves; the SMB test against a real smbd
with the classic fixed small socket buffers (``troubled_smbd``: a get runs at about
2 MB/s), where it used to show nothing for minutes and took more than ten by default.
"""

from __future__ import annotations

import time

import pytest

from sambatune.bench.context import collect_context
from sambatune.bench.events import Notice, Progress, RunFinished, RunStarted, Sample, Step
from sambatune.bench.progress import PlannedRun, ProgressPlan, ProgressTracker, format_left
from sambatune.bench.records import RunRecord
from sambatune.bench.runner import Method
from sambatune.bench.sizing import adapted_size, nice_size_at_most
from sambatune.bench.smb import GET, LARGEST_SIZE, PROBE_SIZE, PUT, SmbBenchmark, SmbOptions
from sambatune.remote.local import LocalTransport
from testbed.smbd import SmbServer

MB = 1_000_000
MiB = 1 << 20


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def finished(series: str, attempt: int, seconds: float, moved: int | None) -> RunFinished:
    return RunFinished(RunRecord(series, attempt, False, seconds, bytes=moved))


def test_the_plan_estimates_from_what_it_measures() -> None:
    clock = Clock()
    plan = ProgressPlan(clock)
    plan.add(
        [
            PlannedRun("get", 1, bytes=100 * MB),
            PlannedRun("get", 2, bytes=100 * MB),
            PlannedRun("tcp", 1, seconds=3.0),
        ]
    )
    assert plan.estimate() == (0.0, None), "nothing measured, nothing promised"

    plan.observe(RunStarted("get", 1, False))
    clock.now += 0.5
    plan.observe(Sample("get", 1, 0.5, 5 * MB, 10 * MB))  # a burst: socket buffers filling
    clock.now += 1.5
    plan.observe(Sample("get", 1, 2.0, 20 * MB, 10 * MB))
    fraction, left = plan.estimate()
    # Since the first sample: 15 MB in 1.5 s. 80 MB left at 10 MB/s, 100 MB more, 3 s of TCP.
    assert left == pytest.approx(8 + 10 + 3)
    assert fraction == pytest.approx(2 / (2 + 21))

    clock.now += 10
    plan.observe(finished("get", 1, 11.5, 100 * MB))
    fraction, left = plan.estimate()
    # The next run of the series takes as long as this one did (12 s, its start included).
    assert left == pytest.approx(12 + 3)
    assert fraction == pytest.approx(12 / 27)

    plan.observe(RunStarted("get", 2, False))
    clock.now += 20  # slower than expected: never a negative time left
    fraction, left = plan.estimate()
    assert left == pytest.approx(3) and fraction == pytest.approx(32 / 35)

    # A series not measured yet has no estimate from another one's rate.
    unknown = ProgressPlan(clock)
    unknown.add([PlannedRun("put", 1, bytes=50 * MB), PlannedRun("get", 1, bytes=50 * MB)])
    unknown.observe(RunStarted("put", 1, False))
    clock.now += 1
    unknown.observe(finished("put", 1, 1.0, 50 * MB))
    assert unknown.estimate() == (0.5, None)

    # A probe's rate stands in until the series has measured its own.
    probed = ProgressPlan(clock)
    probed.add([PlannedRun("put", 1, bytes=50 * MB, rate=25 * MB)])
    # mypy sees no overlap between a float and pytest's Approx inside a tuple; they compare equal.
    assert probed.estimate() == (0.0, pytest.approx(2.0))  # type: ignore[comparison-overlap]


def test_the_tracker_line_says_step_run_figure_and_time_left() -> None:
    clock = Clock()
    tracker = ProgressTracker({"get": "Read"}, clock)
    tracker.observe(Progress(0.0, "starting the smb test"))
    assert tracker.line() == "Starting the smb test"
    tracker.observe(Step(2, 4, "SMB put and get", ("put", "get")))
    assert tracker.line() == "Step 2 of 4: SMB put and get"
    tracker.observe(RunStarted("get", 3, False, "SMB get", number=2, of=5))
    tracker.observe(Sample("get", 3, 1.5, 3 * MB, 2.3 * MB))
    tracker.observe(Progress(0.3, "", remaining=83.0))
    assert tracker.line() == "Step 2 of 4 · Read: run 2 of 5 · 2.3 MB/s · about 1 min 20 s left"
    clock.now += 30
    assert tracker.line().endswith("about 55 s left"), "it counts down between events"
    # An agent's own "run 3 of 6" between runs does not replace what the runs say.
    tracker.observe(finished("get", 3, 4.0, 8 * MB))
    tracker.observe(Progress(0.4, "run 3 of 6"))
    assert tracker.line().startswith("Step 2 of 4 · Read: run 2 of 5 done, 2.0 MB/s")
    warm = ProgressTracker(clock=clock)
    warm.observe(RunStarted("put", 1, True, "SMB put", number=1, of=1))
    assert warm.line() == "SMB put: warm-up 1 of 1"


def test_without_an_estimate_the_pace_so_far_is_carried_on() -> None:
    clock = Clock()
    tracker = ProgressTracker(clock=clock)
    tracker.observe(Progress(0.1, "creating files up to 1000"))
    assert tracker.remaining is None
    clock.now += 4
    tracker.observe(Progress(0.3, "list, 1000 files, run 1"))
    assert tracker.remaining == pytest.approx(14.0)
    # An estimate that no longer holds is not counted down as if it did.
    planned = ProgressTracker(clock=clock)
    planned.observe(Progress(0.1, "", remaining=3.0))
    planned.observe(Progress(0.5, ""))
    assert planned.remaining is None


def test_durations_read_as_people_say_them() -> None:
    assert format_left(None) == ""
    assert format_left(4) == "a few seconds left"
    assert format_left(42) == "about 40 s left"
    assert format_left(254) == "about 4 min 10 s left"
    assert format_left(1250) == "about 21 min left"
    assert format_left(3900) == "about 1 h 5 min left"


def test_the_adapted_size_fits_the_target_and_stays_within_bounds() -> None:
    assert nice_size_at_most(7 * MiB, 4 * MiB) == 6 * MiB
    assert nice_size_at_most(1 * MiB, 4 * MiB) == 4 * MiB
    slow = adapted_size(
        {PUT: 100 * MB, GET: 2 * MB},
        [PUT, GET],
        6,
        target_seconds=60,
        smallest=4 * MiB,
        largest=512 * MiB,
        probe_size=4 * MiB,
    )
    # 6 rounds at 2 MB/s (and 100 MB/s) fit 60 s at about 19.6 MB: 16 MiB.
    assert slow.size == 16 * MiB
    assert slow.expected_seconds is not None and slow.expected_seconds <= 60
    assert "16 MiB" in slow.reason and "512 MiB would take about 27 min" in slow.reason
    fast = adapted_size(
        {PUT: 900 * MB, GET: 1500 * MB},
        [PUT, GET],
        6,
        target_seconds=60,
        smallest=4 * MiB,
        largest=512 * MiB,
        probe_size=4 * MiB,
    )
    assert fast.size == 512 * MiB and "largest size" in fast.reason
    crawling = adapted_size(
        {GET: 0.1 * MB}, [GET], 6, target_seconds=60, smallest=4 * MiB, largest=512 * MiB, probe_size=4 * MiB
    )
    assert crawling.size == 4 * MiB and "even at the smallest size" in crawling.reason


# -- against a slow smbd -------------------------------------------------------------------


def timed_events(bench: SmbBenchmark) -> list[tuple[float, object]]:
    started = time.monotonic()
    seen: list[tuple[float, object]] = []
    bench.run(lambda event: seen.append((time.monotonic() - started, event)))
    return seen


def test_smb_on_a_slow_server_shows_its_copies_as_they_go(troubled_smbd: SmbServer) -> None:
    transport = LocalTransport()
    context = collect_context(transport, config_path=str(troubled_smbd.config))
    size = 8 * MiB  # a given size is used as it is: no probe
    bench = SmbBenchmark(
        transport,
        Method(runs=1, warmup=0),
        SmbOptions(share=troubled_smbd.share, size=size, ceilings=False),
        context=context,
    )
    seen = timed_events(bench)
    result = bench.result
    assert result is not None and result.parameters["size"] == size
    assert "sizing" not in result.extra
    assert not [e for _, e in seen if isinstance(e, Step) and e.count > 1]
    started = next(t for t, e in seen if isinstance(e, RunStarted) and e.series == GET)
    ended = next(t for t, e in seen if isinstance(e, RunFinished) and e.record.series == GET)
    assert ended - started > 2, "the test bed's get should be slow (fixed 8 KiB buffers)"
    run = next(e for _, e in seen if isinstance(e, RunStarted) and e.series == GET)
    assert (run.number, run.of, run.warmup) == (1, 1, False)
    # While the get crawls: samples from the server, growing, and a time left.
    samples = [(t, e) for t, e in seen if isinstance(e, Sample) and e.series == GET and started <= t <= ended]
    assert len(samples) >= 3, samples
    assert samples[0][0] - started < 1.5, "the first figure comes within a sample interval"
    moved = [e.bytes for _, e in samples]
    assert moved == sorted(moved) and 0 < moved[-1] <= size
    assert all(e.source == "server" and e.bytes_per_s < 50 * MB for _, e in samples)
    estimates = [
        (t, e)
        for t, e in seen
        if isinstance(e, Progress) and e.remaining is not None and started <= t < ended
    ]
    assert estimates and estimates[0][0] - started < 1.5
    fractions = [e.fraction for _, e in estimates if e.fraction is not None]
    assert len(fractions) == len(estimates)
    # The last may be 1.0: every byte moved, the run's end (closing the file) not yet seen.
    assert fractions == sorted(fractions) and 0 < fractions[0] < 1 and fractions[-1] <= 1
    assert list(troubled_smbd.share_path.iterdir()) == []


def test_the_default_smb_size_adapts_to_a_slow_server(troubled_smbd: SmbServer) -> None:
    transport = LocalTransport()
    context = collect_context(transport, config_path=str(troubled_smbd.config))
    target = 10.0
    bench = SmbBenchmark(
        transport,
        Method(runs=2, warmup=1),
        SmbOptions(share=troubled_smbd.share, ceilings=False, target_seconds=target),
        context=context,
    )
    started = time.monotonic()
    seen = timed_events(bench)
    took = time.monotonic() - started
    result = bench.result
    assert result is not None
    size = result.parameters["size"]
    assert PROBE_SIZE <= size < LARGEST_SIZE // 16
    sizing = result.extra["sizing"]
    assert sizing["size"] == size and sizing["probe_rates"][GET] < 20 * MB
    reason = next(e.message for _, e in seen if isinstance(e, Notice) and "probe" in e.message)
    assert f"{size >> 20} MiB" in reason and "512 MiB would take about" in reason
    assert reason in result.notes
    assert all(r.bytes == size for name in (PUT, GET) for r in result.series[name].runs)
    steps = [e for _, e in seen if isinstance(e, Step)]
    assert [(s.index, s.count) for s in steps] == [(1, 2), (2, 2)]
    assert "probe" in steps[0].title and steps[1].series == (PUT, GET)
    # The first estimate of the SMB runs is about the target; the whole test stays near it.
    first = next(e.remaining for _, e in seen if isinstance(e, Progress) and e.remaining)
    assert target / 3 < first < target * 3
    assert took < target * 2 + 20, took
    assert list(troubled_smbd.share_path.iterdir()) == []
