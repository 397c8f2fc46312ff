"""Summaries of benchmark runs, and before/after comparisons an admin can read.

This is the book's method (Using Samba, appendix B) with numbers attached: run
several times, average the runs, watch for odd ones, and after ONE change compare
the new runs with the old. ``describe`` says whether a series of runs can be
trusted; ``compare`` says whether a change made a real difference.

Thresholds, and why:

* Odd runs use the modified z-score of Iglewicz and Hoaglin (1993):
  0.6745 * (x - median) / MAD, odd above 3.5. Mean and standard deviation cannot
  find an odd run among a handful: the odd run inflates the deviation it is
  measured with, so with n runs no z-score can exceed (n - 1) / sqrt(n) (Shiffler
  1988), 1.8 for five runs, and "3 sigma" never fires. Median and MAD are not
  moved by the odd run. When more than half the runs are identical the MAD is 0
  and every run that differs stands out. Either way a run must also be at least 5%
  away from the median: two or three percent between runs is normal on a quiet
  modern machine and not worth a re-run.
* A series is quiet when its coefficient of variation is at most 5% and it has no
  odd run. The book's own worked table (B.9) varies by 1.7%; repeated sequential
  runs on an idle server today repeat within a few percent too. The figure that
  matters is the size of the effects we test: one parameter change typically moves
  throughput by 5-20%, so runs noisier than 5% would hide the very change the
  admin is looking for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Any, Literal

from sambatune.bench.distributions import t_quantile
from sambatune.bench.significance import (
    hedges_g,
    mann_whitney_test,
    sample_mean_and_stdev,
    welch_t_test,
)
from sambatune.errors import InvalidInput
from sambatune.units import (
    format_operations_rate,
    format_percent,
    format_rate,
    format_rate_pair,
    format_seconds,
)

#: What the values measure: throughput, operation rate, a duration, or a plain number.
Unit = Literal["bytes/s", "ops/s", "s", ""]

QUIET_CV = 0.05
OUTLIER_Z = 3.5
OUTLIER_MIN_RELATIVE = 0.05
_MAD_TO_SIGMA = 0.6745


def _checked(values: Sequence[float], what: str) -> tuple[float, ...]:
    numbers = tuple(values)
    if not numbers:
        raise InvalidInput(f"There are no runs {what}.", "At least one measured value is needed.")
    for index, value in enumerate(numbers, start=1):
        if isinstance(value, bool) or not isinstance(value, Real):
            raise InvalidInput(f"Run {index} {what} is not a number: {value!r}.")
        if not math.isfinite(value):
            raise InvalidInput(
                f"Run {index} {what} has no usable value ({value}).",
                "A run that failed or was cut short must be left out or repeated, not averaged.",
            )
    return tuple(float(v) for v in numbers)


def _json_number(value: float | None) -> float | None:
    """JSON has no infinity or NaN: those become null."""
    if value is None or not math.isfinite(value):
        return None
    return value


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return ordered[middle - 1] / 2.0 + ordered[middle] / 2.0


def _outliers(values: Sequence[float], median: float) -> tuple[int, ...]:
    if len(values) < 3:
        return ()  # With two runs nobody can say which one is odd.
    deviations = [abs(v - median) for v in values]
    spread = _median(deviations)
    odd = []
    for index, deviation in enumerate(deviations):
        if deviation == 0.0:
            continue
        large = median == 0.0 or deviation / abs(median) >= OUTLIER_MIN_RELATIVE
        # A zero MAD means most runs are identical: every run that differs stands out.
        stands_out = spread == 0.0 or _MAD_TO_SIGMA * deviation / spread > OUTLIER_Z
        if large and stands_out:
            odd.append(index)
    return tuple(odd)


def _direction_word(increase: bool, unit: Unit) -> str:
    if unit in ("bytes/s", "ops/s"):
        return "faster" if increase else "slower"
    if unit == "s":
        return "slower" if increase else "faster"
    return "higher" if increase else "lower"


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _outlier_note(values: Sequence[float], outliers: Sequence[int], unit: Unit) -> str:
    others = [v for i, v in enumerate(values) if i not in outliers]
    typical = _median(others)
    runs = _join([str(i + 1) for i in outliers])
    changes = [(values[i] - typical) / abs(typical) if typical else 0.0 for i in outliers]
    words = {_direction_word(change > 0, unit) for change in changes}
    word = words.pop() if len(words) == 1 else "different"
    sizes = _join([format_percent(abs(c), 0) for c in changes])
    subject = f"Run {runs} was" if len(outliers) == 1 else f"Runs {runs} were"
    comparison = f"{sizes} away from" if word == "different" else f"{sizes} {word} than"
    if word == "faster":
        cause = "it was probably served from a cache; leave it out or add a warm-up run"
    elif word == "slower":
        cause = "something else was probably using the disk, network or CPU at the time; run it again"
    else:
        cause = "check what else the machine was doing at the time, and run it again"
    return f"{subject} {comparison} the others: {cause}."


@dataclass(frozen=True)
class SeriesStats:
    n: int
    mean: float
    #: Sample standard deviation (n - 1); 0 with a single run.
    stdev: float
    minimum: float
    maximum: float
    median: float
    #: Coefficient of variation, stdev / |mean|; None when the mean is 0.
    cv: float | None
    #: Student-t 95% confidence interval of the mean; None with a single run.
    ci95_low: float | None
    ci95_high: float | None
    #: Indexes (from 0) of the odd runs.
    outliers: tuple[int, ...]
    #: Mean of the runs that are not odd: the book's "average of the valid runs".
    valid_mean: float
    #: True when the runs agree well enough to trust (see the module text); False
    #: with a single run, because one run cannot show it.
    quiet: bool
    note: str | None
    unit: Unit = "bytes/s"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outliers"] = list(self.outliers)
        for key, value in data.items():
            if isinstance(value, float):
                data[key] = _json_number(value)
        return data


def describe(values: Sequence[float], *, unit: Unit = "bytes/s") -> SeriesStats:
    """Summarise the counted runs of one test (warm-up runs already left out)."""
    numbers = _checked(values, "")
    n = len(numbers)
    mean, stdev = sample_mean_and_stdev(numbers)
    median = _median(numbers)
    cv = stdev / abs(mean) if mean != 0.0 else None
    ci_low = ci_high = None
    if n >= 2:
        half_width = t_quantile(0.975, n - 1) * stdev / math.sqrt(n)
        ci_low, ci_high = mean - half_width, mean + half_width
    outliers = _outliers(numbers, median)
    notes = []
    if n == 1:
        notes.append("Only one run: run the test at least three times to see whether the machine was quiet.")
    if outliers:
        notes.append(_outlier_note(numbers, outliers, unit))
    noisy = cv is not None and cv > QUIET_CV
    if noisy and not outliers:
        notes.append(
            f"The runs differ by {format_percent(cv)} from one to the next: the machine was not quiet, "
            "and a change smaller than that will not show; test at a quieter time or make each run longer."
        )
    return SeriesStats(
        n=n,
        mean=mean,
        stdev=stdev,
        minimum=min(numbers),
        maximum=max(numbers),
        median=median,
        cv=cv,
        ci95_low=ci_low,
        ci95_high=ci_high,
        outliers=outliers,
        valid_mean=sample_mean_and_stdev([v for i, v in enumerate(numbers) if i not in outliers])[0],
        quiet=n >= 2 and not outliers and not noisy,
        note=" ".join(notes) or None,
        unit=unit,
    )


Verdict = Literal["better", "worse", "no real difference", "too few runs"]


@dataclass(frozen=True)
class Comparison:
    before: SeriesStats
    after: SeriesStats
    mean_before: float
    mean_after: float
    #: mean_after - mean_before.
    difference: float
    #: difference / |mean_before|; None when mean_before is 0.
    relative_change: float | None
    #: Welch's t-test, two-sided, after minus before; None with fewer than two runs a side.
    t: float | None
    dof: float | None
    p_value: float | None
    #: Mann-Whitney U of the "after" runs and its two-sided p-value.
    u: float | None
    p_value_mw: float | None
    #: "exact" or "normal approximation".
    mw_method: str | None
    #: Hedges' g, after minus before in pooled standard deviations.
    hedges_g: float | None
    #: 95% confidence interval of the difference of means (Welch).
    diff_ci95_low: float | None
    diff_ci95_high: float | None
    #: Welch's p-value below alpha. Welch, not Mann-Whitney, decides: with the usual
    #: three to ten runs a side the rank test is too coarse to decide on its own (see
    #: ``sentence`` for how a disagreement is reported).
    significant: bool
    verdict: Verdict
    sentence: str
    alpha: float
    higher_is_better: bool
    unit: Unit = "bytes/s"

    def to_json(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if key not in ("before", "after")}
        for key, value in data.items():
            if isinstance(value, float):
                data[key] = _json_number(value)
        data["before"] = self.before.to_json()
        data["after"] = self.after.to_json()
        return data


def _format_p(p: float) -> str:
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"


def _format_pair(after: float, before: float, unit: Unit) -> tuple[str, str]:
    if unit == "bytes/s":
        return format_rate_pair(after, before)
    if unit == "ops/s":
        return format_operations_rate(after), format_operations_rate(before)
    if unit == "s":
        return format_seconds(after), format_seconds(before)
    return f"{after:.4g}", f"{before:.4g}"


def _format_difference(difference: float, unit: Unit) -> str:
    if unit == "bytes/s":
        return format_rate(abs(difference))
    if unit == "ops/s":
        return format_operations_rate(abs(difference))
    if unit == "s":
        return format_seconds(abs(difference))
    return f"{abs(difference):.4g}"


def compare(
    before: Sequence[float],
    after: Sequence[float],
    *,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    unit: Unit = "bytes/s",
) -> Comparison:
    """Did the change make a real difference? Runs before and after, warm-ups left out."""
    if not 0.0 < alpha < 1.0:
        raise InvalidInput(f"The significance level must be between 0 and 1, not {alpha}.")
    before_runs = _checked(before, "before the change")
    after_runs = _checked(after, "after the change")
    before_stats = describe(before_runs, unit=unit)
    after_stats = describe(after_runs, unit=unit)
    mean_before, mean_after = before_stats.mean, after_stats.mean
    difference = mean_after - mean_before
    relative = difference / abs(mean_before) if mean_before != 0.0 else None
    shown_after, shown_before = _format_pair(mean_after, mean_before, unit)
    if relative is not None and difference != 0.0:
        change = f"{format_percent(abs(relative))} {_direction_word(difference > 0, unit)}"
    elif difference != 0.0:
        change = f"{_format_difference(difference, unit)} {_direction_word(difference > 0, unit)}"
    else:
        change = "no change"
    common: dict[str, Any] = {
        "before": before_stats,
        "after": after_stats,
        "mean_before": mean_before,
        "mean_after": mean_after,
        "difference": difference,
        "relative_change": relative,
        "alpha": alpha,
        "higher_is_better": higher_is_better,
        "unit": unit,
    }
    if len(before_runs) < 2 or len(after_runs) < 2:
        sentence = (
            f"Too few runs to compare ({len(before_runs)} before, {len(after_runs)} after the change): "
            "a significance test needs at least 2 on each side, and 5 make it far more sensitive."
        )
        return Comparison(
            **common,
            t=None,
            dof=None,
            p_value=None,
            u=None,
            p_value_mw=None,
            mw_method=None,
            hedges_g=None,
            diff_ci95_low=None,
            diff_ci95_high=None,
            significant=False,
            verdict="too few runs",
            sentence=sentence,
        )
    welch = welch_t_test(before_runs, after_runs)
    ranks = mann_whitney_test(before_runs, after_runs)
    significant = welch.p_value < alpha
    verdict: Verdict = "no real difference"
    if significant:
        verdict = "better" if (difference > 0) == higher_is_better else "worse"
    opening = f"After the change: {shown_after} vs {shown_before}, {change}"
    welch_p = f"{_format_p(welch.p_value)}, Welch's t-test"
    if significant:
        sentence = f"{opening}; the difference is real ({welch_p})"
    else:
        sentence = f"{opening}, within the run-to-run noise ({welch_p}): no real difference"
    rank_could_decide = ranks.smallest_possible_p < alpha
    rank_significant = ranks.p_value < alpha
    if rank_could_decide and rank_significant != significant:
        rank_p = f"{_format_p(ranks.p_value)}, Mann-Whitney"
        if significant:
            sentence += f", though the rank test does not confirm it ({rank_p}): repeat the runs to be sure"
        else:
            sentence += f", though the rank test sees one ({rank_p}): an odd run may be hiding it"
    return Comparison(
        **common,
        t=welch.t,
        dof=welch.dof,
        p_value=welch.p_value,
        u=ranks.u,
        p_value_mw=ranks.p_value,
        mw_method=ranks.method,
        hedges_g=hedges_g(before_runs, after_runs),
        diff_ci95_low=welch.ci95_low,
        diff_ci95_high=welch.ci95_high,
        significant=significant,
        verdict=verdict,
        sentence=sentence + ".",
    )
