"""Long measurements say where they are: step, run of how many, the live figure, the time left.

The estimates are checked with a clock the test moves.
"""

from __future__ import annotations

import pytest

from sambatune.bench.events import Progress, RunFinished, RunStarted, Sample, Step
from sambatune.bench.progress import PlannedRun, ProgressPlan, ProgressTracker, format_left
from sambatune.bench.records import RunRecord

MB = 1_000_000


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
    plan.add([PlannedRun("get", 1, bytes=100 * MB), PlannedRun("get", 2, bytes=100 * MB),
              PlannedRun("tcp", 1, seconds=3.0)])
    assert plan.estimate() == (0.0, None), "nothing measured, nothing promised"

    plan.observe(RunStarted("get", 1, False))
    clock.now += 2
    plan.observe(Sample("get", 1, 2.0, 20 * MB, 10 * MB))
    fraction, left = plan.estimate()
    # 80 MB at the 10 MB/s of this run, 100 MB more, then 3 s of TCP.
    assert left == pytest.approx(8 + 10 + 3)
    assert fraction == pytest.approx(2 / (2 + 21))

    clock.now += 8
    plan.observe(finished("get", 1, 8.0, 100 * MB))  # smbclient's own figure: 12.5 MB/s
    fraction, left = plan.estimate()
    assert left == pytest.approx(8 + 3)
    assert fraction == pytest.approx(10 / 21)

    plan.observe(RunStarted("get", 2, False))
    clock.now += 20  # slower than expected: never a negative time left
    fraction, left = plan.estimate()
    assert left == pytest.approx(3) and fraction == pytest.approx(30 / 33)

    # A probe's rate stands in until the series has measured its own.
    probed = ProgressPlan(clock)
    probed.add([PlannedRun("put", 1, bytes=50 * MB, rate=25 * MB)])
    assert probed.estimate() == (0.0, pytest.approx(2.0))


def test_the_tracker_line_says_step_run_figure_and_time_left() -> None:
    clock = Clock()
    tracker = ProgressTracker({"get": "Read"}, clock)
    tracker.observe(Progress(0.0, "starting the smb test"))
    assert tracker.line() == "Starting the smb test"
    tracker.observe(Step(2, 4, "SMB put and get", ("put", "get")))
    tracker.observe(RunStarted("get", 3, False, "SMB get", number=2, of=5))
    tracker.observe(Sample("get", 3, 1.5, 3 * MB, 2.3 * MB))
    tracker.observe(Progress(0.3, "", remaining=83.0))
    assert tracker.line() == ("Step 2 of 4: SMB put and get · Read: run 2 of 5 · 2.3 MB/s · "
                              "about 1 min 20 s left")
    clock.now += 30
    assert tracker.line().endswith("about 55 s left"), "it counts down between events"
    # An agent's own "run 3 of 6" between runs does not replace what the runs say.
    tracker.observe(finished("get", 3, 4.0, 8 * MB))
    tracker.observe(Progress(0.4, "run 3 of 6"))
    assert tracker.line().startswith("Step 2 of 4: SMB put and get · Read: run 2 of 5 done, 2.0 MB/s")
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


def test_durations_read_as_people_say_them() -> None:
    assert format_left(None) == ""
    assert format_left(4) == "a few seconds left"
    assert format_left(42) == "about 40 s left"
    assert format_left(254) == "about 4 min 10 s left"
    assert format_left(1250) == "about 21 min left"
    assert format_left(3900) == "about 1 h 5 min left"
