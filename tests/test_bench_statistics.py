"""Benchmark statistics: published examples, scipy as the oracle, and the edge cases runs produce."""

from __future__ import annotations

import importlib
import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sambatune.bench.distributions import (
    mann_whitney_counts,
    regularized_incomplete_beta,
    t_cdf,
    t_quantile,
    t_two_sided_p,
)
from sambatune.bench.significance import hedges_g, mann_whitney_test, welch_t_test
from sambatune.bench.statistics import compare, describe
from sambatune.errors import InvalidInput


class _ImportedWhenUsed:
    """A module imported on first use: scipy.stats takes 0.6 s to import, which every
    test worker would pay while collecting, whether or not it runs these tests."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


stats = _ImportedWhenUsed("scipy.stats")
special = _ImportedWhenUsed("scipy.special")

# Cushny & Peebles' sleep data, Student's own example (R's `sleep` data set).
SLEEP_DRUG_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_DRUG_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

TOLERANCE = 1e-6


def close(ours: float, theirs: float, tolerance: float = TOLERANCE) -> bool:
    return math.isclose(ours, float(theirs), rel_tol=tolerance, abs_tol=1e-12)


# -- published values --------------------------------------------------------------------------


def test_welch_on_the_sleep_data_matches_rs_published_output() -> None:
    # R: t.test(extra ~ group, data = sleep) -> t = -1.8608, df = 17.776, p-value = 0.07939,
    # 95 percent confidence interval -3.3654832 0.2054832 (group 1 minus group 2).
    result = compare(SLEEP_DRUG_2, SLEEP_DRUG_1, unit="")
    assert result.t == pytest.approx(-1.8608, abs=1e-4)
    assert result.dof == pytest.approx(17.776, abs=1e-3)
    assert result.p_value == pytest.approx(0.07939, abs=1e-5)
    assert result.diff_ci95_low == pytest.approx(-3.3654832, abs=1e-7)
    assert result.diff_ci95_high == pytest.approx(0.2054832, abs=1e-7)
    assert result.verdict == "no real difference"


def test_mann_whitney_on_the_sleep_data_matches_rs_published_output() -> None:
    # R: wilcox.test(extra ~ group, data = sleep) -> W = 25.5, p-value = 0.06933 (ties: normal
    # approximation with continuity correction).
    result = mann_whitney_test(SLEEP_DRUG_2, SLEEP_DRUG_1)
    assert result.u == 25.5
    assert result.p_value == pytest.approx(0.06933, abs=1e-5)
    assert result.method == "normal approximation"


def test_mann_whitney_exact_on_conovers_example() -> None:
    # Conover's males/females example in scipy's documentation: U1 = 17, exact p = 0.1111.
    result = mann_whitney_test([20, 11, 17, 12], [19, 22, 16, 29, 24])
    assert result.u == 17
    assert result.p_value == pytest.approx(1 / 9)
    assert result.method == "exact"


@pytest.mark.parametrize(
    ("dof", "quantile"),
    # The two-sided 5% column of every printed t table.
    [(1, 12.706), (2, 4.303), (4, 2.776), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980)],
)
def test_t_quantiles_match_the_printed_table(dof: int, quantile: float) -> None:
    assert t_quantile(0.975, dof) == pytest.approx(quantile, abs=5e-4)
    assert t_quantile(0.025, dof) == pytest.approx(-quantile, abs=5e-4)


def test_hedges_correction_matches_the_exact_gamma_formula() -> None:
    before, after = [10.0, 12.0, 11.0, 13.0], [14.0, 15.0, 13.0, 16.0, 15.5]
    dof = len(before) + len(after) - 2
    pooled = math.sqrt(
        ((len(before) - 1) * stats.tstd(before) ** 2 + (len(after) - 1) * stats.tstd(after) ** 2) / dof
    )
    d = (sum(after) / len(after) - sum(before) / len(before)) / pooled
    correction = special.gamma(dof / 2) / (math.sqrt(dof / 2) * special.gamma((dof - 1) / 2))
    g = hedges_g(before, after)
    assert g is not None
    assert g == pytest.approx(d * correction, rel=1e-12)
    assert correction == pytest.approx(1 - 3 / (4 * dof - 1), abs=2e-3)


# -- agreement with scipy ----------------------------------------------------------------------

sample_values = st.floats(min_value=0.5, max_value=5000.0, allow_nan=False, allow_infinity=False)
samples = st.lists(sample_values, min_size=2, max_size=15)


def well_conditioned(values: list[float]) -> bool:
    """Runs that are equal, or differ by more than rounding: numpy's plain sums lose runs that
    differ in the last bit (it warns "Precision loss"), where our math.fsum does not, so such
    samples cannot serve to compare the two."""
    return len(set(values)) == 1 or max(values) - min(values) > 1e-9 * max(values)


# scipy also warns ("Precision loss") when one side's runs are all equal: expected here.
@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@settings(max_examples=300)
@given(before=samples, after=samples)
def test_welch_agrees_with_scipy(before: list[float], after: list[float]) -> None:
    assume(len(set(before)) > 1 or len(set(after)) > 1)
    assume(well_conditioned(before) and well_conditioned(after))
    ours = welch_t_test(before, after)
    theirs = stats.ttest_ind(after, before, equal_var=False)
    interval = theirs.confidence_interval(0.95)
    assert close(ours.t, theirs.statistic)
    assert close(ours.dof, theirs.df)
    assert close(ours.p_value, theirs.pvalue)
    assert close(ours.ci95_low, interval.low)
    assert close(ours.ci95_high, interval.high)


@settings(max_examples=300)
@given(
    values=st.lists(sample_values, min_size=2, max_size=24, unique=True),
    split=st.integers(min_value=1, max_value=23),
)
def test_exact_mann_whitney_agrees_with_scipy(values: list[float], split: int) -> None:
    assume(split < len(values))
    before, after = values[:split], values[split:]
    ours = mann_whitney_test(before, after)
    theirs = stats.mannwhitneyu(after, before, method="exact")
    assert ours.method == "exact"
    assert ours.u == theirs.statistic
    assert close(ours.p_value, theirs.pvalue)


@settings(max_examples=300)
@given(
    before=st.lists(st.integers(min_value=0, max_value=5), min_size=4, max_size=20),
    after=st.lists(st.integers(min_value=0, max_value=5), min_size=4, max_size=20),
)
def test_mann_whitney_with_ties_agrees_with_scipys_asymptotic_test(
    before: list[int], after: list[int]
) -> None:
    assume(len(set(before + after)) > 1)  # seven or more values from six: there are ties
    ours = mann_whitney_test(before, after)
    theirs = stats.mannwhitneyu(after, before, method="asymptotic")
    assert ours.method == "normal approximation"
    assert ours.u == theirs.statistic
    assert close(ours.p_value, theirs.pvalue)


def test_large_samples_without_ties_use_the_normal_approximation() -> None:
    before = [100.0 + i * 0.37 for i in range(60)]
    after = [101.0 + i * 0.41 for i in range(60)]
    ours = mann_whitney_test(before, after)
    theirs = stats.mannwhitneyu(after, before, method="asymptotic")
    assert ours.method == "normal approximation"
    assert close(ours.p_value, theirs.pvalue)
    assert ours.p_value == pytest.approx(stats.mannwhitneyu(after, before, method="exact").pvalue, abs=1e-3)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (1, 5), (2, 3), (3, 3), (4, 6), (5, 5), (6, 7)])
def test_exact_u_distribution_counts_every_ordering(m: int, n: int) -> None:
    # Brute force: place the m "before" runs among m + n ranks every possible way.
    expected = [0] * (m * n + 1)
    for before_ranks in itertools.combinations(range(m + n), m):
        after_ranks = [r for r in range(m + n) if r not in before_ranks]
        u_after = sum(1 for a in after_ranks for b in before_ranks if a > b)
        expected[u_after] += 1
    assert list(mann_whitney_counts(m, n)) == expected
    assert mann_whitney_counts(m, n) == mann_whitney_counts(n, m)


dofs = st.one_of(
    st.floats(min_value=0.5, max_value=5.0),
    st.floats(min_value=5.0, max_value=200.0),
    st.floats(min_value=200.0, max_value=1e5),
)


@settings(max_examples=400)
@given(t=st.floats(min_value=-60.0, max_value=60.0), dof=dofs)
def test_t_cdf_agrees_with_scipy(t: float, dof: float) -> None:
    assert close(t_cdf(t, dof), stats.t.cdf(t, dof))
    assert close(t_two_sided_p(t, dof), 2 * stats.t.sf(abs(t), dof))


@settings(max_examples=400)
@given(
    p=st.one_of(
        st.floats(min_value=1e-10, max_value=1 - 1e-10),
        st.floats(min_value=1e-10, max_value=1e-3),
    ),
    dof=dofs,
)
def test_t_quantile_agrees_with_scipy(p: float, dof: float) -> None:
    assert close(t_quantile(p, dof), stats.t.ppf(p, dof))


@settings(max_examples=300)
@given(
    a=st.floats(min_value=0.05, max_value=500.0),
    b=st.floats(min_value=0.05, max_value=500.0),
    x=st.floats(min_value=0.0, max_value=1.0),
)
def test_incomplete_beta_agrees_with_scipy(a: float, b: float, x: float) -> None:
    assert close(regularized_incomplete_beta(a, b, x), special.betainc(a, b, x))


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@settings(max_examples=200)
@given(values=samples)
def test_describe_agrees_with_scipy(values: list[float]) -> None:
    assume(well_conditioned(values))
    result = describe(values)
    assert close(result.mean, stats.tmean(values))
    assert close(result.stdev, stats.tstd(values))
    assert close(result.median, float(np.median(values)))
    if result.stdev > 0:
        low, high = stats.t.interval(0.95, len(values) - 1, loc=result.mean, scale=stats.sem(values))
        assert result.ci95_low is not None and result.ci95_high is not None
        assert close(result.ci95_low, low)
        assert close(result.ci95_high, high)


# -- describe: odd runs, quiet machines, edges -------------------------------------------------


def test_a_slow_run_among_steady_ones_is_named_in_plain_words() -> None:
    result = describe([100e6, 101e6, 60e6, 99e6, 100.5e6])
    assert result.outliers == (2,)
    assert result.valid_mean == pytest.approx(100.125e6)
    assert result.mean == pytest.approx(92.1e6)
    assert not result.quiet
    assert result.note is not None
    assert result.note.startswith("Run 3 was 40% slower than the others")
    assert "disk, network or CPU" in result.note


def test_a_fast_odd_run_is_blamed_on_a_cache() -> None:
    result = describe([100e6, 101e6, 99e6, 100.5e6, 180e6])
    assert result.outliers == (4,)
    assert result.note is not None
    assert "Run 5 was 80% faster" in result.note
    assert "cache" in result.note


def test_for_durations_a_long_run_is_a_slow_one() -> None:
    result = describe([2.30, 2.31, 2.29, 3.5, 2.30], unit="s")
    assert result.outliers == (3,)
    assert result.note is not None
    assert "Run 4 was 52% slower" in result.note


def test_mean_and_sd_would_miss_the_odd_run_that_the_median_rule_finds() -> None:
    values = [100.0, 101.0, 60.0, 99.0, 100.5]
    mean, sd = stats.tmean(values), stats.tstd(values)
    assert max(abs(v - mean) / sd for v in values) < 2  # "3 sigma" could never fire here
    assert describe(values).outliers == (2,)


def test_tiny_differences_are_not_odd_runs() -> None:
    # Statistically the 100.8 stands out (modified z > 3.5), but 0.8% is no reason to re-run.
    result = describe([100.0, 100.01, 99.99, 100.0, 100.8])
    assert result.outliers == ()
    assert result.quiet


def test_when_most_runs_are_identical_any_clearly_different_run_is_odd() -> None:
    # The MAD is 0 here: no division by zero, and the 5% floor still applies.
    assert describe([100.0, 100.0, 100.0, 90.0]).outliers == (3,)
    assert describe([100.0, 100.0, 100.0, 100.0, 100.0, 40.0]).outliers == (5,)
    assert describe([100.0, 100.0, 100.0, 98.0]).outliers == ()
    assert describe([0.0, 0.0, 0.0, 3.0], unit="").outliers == (3,)


def test_the_books_table_is_quiet() -> None:
    # Using Samba, table B.9: five FTP runs of 1,812,898 bytes; bytes/s as printed.
    result = describe([761580, 767820, 747420, 760020, 772700])
    assert result.quiet
    assert result.note is None
    assert result.cv == pytest.approx(0.0125, abs=5e-4)


def test_noisy_runs_are_not_quiet() -> None:
    result = describe([100e6, 120e6, 80e6, 110e6, 95e6])
    assert result.outliers == ()
    assert not result.quiet
    assert result.note is not None
    assert "not quiet" in result.note


def test_a_single_run_has_no_spread_and_says_so() -> None:
    result = describe([98.1e6])
    assert (result.n, result.mean, result.stdev, result.median) == (1, 98.1e6, 0.0, 98.1e6)
    assert result.ci95_low is None and result.ci95_high is None
    assert result.outliers == ()
    assert not result.quiet
    assert result.note is not None and "one run" in result.note


def test_two_runs_never_have_an_odd_one() -> None:
    result = describe([100.0, 300.0])
    assert result.outliers == ()
    assert result.stdev == pytest.approx(math.sqrt(2) * 100)
    assert result.ci95_low == pytest.approx(200 - 12.7062047 * 100, rel=1e-6)


def test_identical_runs() -> None:
    result = describe([5.0, 5.0, 5.0])
    assert (result.stdev, result.cv, result.ci95_low, result.ci95_high) == (0.0, 0.0, 5.0, 5.0)
    assert result.quiet


def test_huge_and_tiny_values_keep_their_precision() -> None:
    base = [1.0, 2.0, 3.0, 4.0]
    reference = describe(base)
    for scale in (1e250, 1e-250):
        scaled = describe([v * scale for v in base])
        assert scaled.stdev == pytest.approx(reference.stdev * scale, rel=1e-12)
        assert scaled.mean == pytest.approx(reference.mean * scale, rel=1e-12)
        assert scaled.cv == pytest.approx(reference.cv, rel=1e-12)
    before, after = [1.0, 1.2, 0.9, 1.1], [1.4, 1.5, 1.3, 1.6]
    plain = compare(before, after)
    assert plain.diff_ci95_low is not None
    for scale in (1e250, 1e-250):
        scaled_comparison = compare([v * scale for v in before], [v * scale for v in after])
        assert scaled_comparison.t == pytest.approx(plain.t, rel=1e-12)
        assert scaled_comparison.p_value == pytest.approx(plain.p_value, rel=1e-9)
        assert scaled_comparison.diff_ci95_low == pytest.approx(plain.diff_ci95_low * scale, rel=1e-9)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused(bad: float) -> None:
    with pytest.raises(InvalidInput, match="Run 2"):
        describe([1.0, bad, 3.0])
    with pytest.raises(InvalidInput, match="after the change"):
        compare([1.0, 2.0], [1.0, bad])


def test_no_runs_and_non_numbers_are_refused() -> None:
    with pytest.raises(InvalidInput, match="no runs"):
        describe([])
    with pytest.raises(InvalidInput, match="before the change"):
        compare([], [1.0, 2.0])
    with pytest.raises(InvalidInput, match="not a number"):
        describe([1.0, "2"])  # type: ignore[list-item]  # the point: a string among the runs
    with pytest.raises(InvalidInput, match="significance level"):
        compare([1.0, 2.0], [1.0, 2.0], alpha=1.5)


# -- compare: verdicts and sentences -----------------------------------------------------------

BEFORE = [98.1e6, 97.5e6, 98.8e6, 98.0e6, 98.3e6]
AFTER = [112.4e6, 111.9e6, 113.0e6, 112.1e6, 112.6e6]


def test_a_real_improvement_reads_like_the_brief() -> None:
    result = compare(BEFORE, AFTER)
    assert result.verdict == "better"
    assert result.significant
    assert result.sentence == (
        "After the change: 112.4 MB/s vs 98.1 MB/s, 14.5% faster; "
        "the difference is real (p < 0.001, Welch's t-test)."
    )
    assert result.mw_method == "exact"
    assert result.p_value_mw == pytest.approx(2 / 252)
    assert result.u == 25


def test_a_real_slowdown_is_worse() -> None:
    result = compare(AFTER, BEFORE)
    assert result.verdict == "worse"
    assert "12.7% slower" in result.sentence


def test_durations_going_down_are_better_when_lower_is_better() -> None:
    result = compare([2.31, 2.30, 2.33, 2.29], [2.01, 2.03, 1.99, 2.00], higher_is_better=False, unit="s")
    assert result.verdict == "better"
    assert "faster" in result.sentence
    assert result.t is not None and result.t < 0


def test_noise_is_no_real_difference() -> None:
    result = compare([98.1e6, 97.5e6, 98.8e6], [99.0e6, 96.0e6, 100.0e6])
    assert result.verdict == "no real difference"
    assert not result.significant
    assert "within the run-to-run noise" in result.sentence
    assert "no real difference" in result.sentence


def test_one_run_on_a_side_is_too_few() -> None:
    result = compare([98.1e6], [99.0e6, 96.0e6, 100.0e6])
    assert result.verdict == "too few runs"
    assert result.t is None and result.p_value is None and result.u is None
    assert result.sentence.startswith("Too few runs to compare (1 before, 3 after")
    json.dumps(result.to_json(), allow_nan=False)


def test_all_equal_before_and_after_is_no_difference() -> None:
    result = compare([5.0, 5.0, 5.0], [5.0, 5.0, 5.0], unit="")
    assert (result.t, result.p_value, result.p_value_mw, result.hedges_g) == (0.0, 1.0, 1.0, 0.0)
    assert result.verdict == "no real difference"
    assert "no change" in result.sentence


def test_constant_but_different_runs_are_a_certain_difference() -> None:
    result = compare([5.0, 5.0, 5.0], [6.0, 6.0, 6.0], unit="ops/s")
    assert result.t == math.inf
    assert result.p_value == 0.0
    assert result.hedges_g is None
    assert result.verdict == "better"
    data = result.to_json()
    assert data["t"] is None  # JSON has no infinity
    json.dumps(data, allow_nan=False)


def test_the_rank_test_is_mentioned_when_it_disagrees_and_could_have_decided() -> None:
    # One wild run after the change: the t-test sees noise, the ranks see every run improve.
    before = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]
    after = [110.0, 111.0, 109.0, 110.5, 109.5, 1000.0]
    result = compare(before, after, unit="")
    assert not result.significant
    assert result.p_value_mw is not None and result.p_value_mw < 0.05
    assert "the rank test sees one" in result.sentence


def test_the_rank_test_is_not_mentioned_when_it_could_never_decide() -> None:
    # Three runs a side: the exact test's smallest p is 0.1, so its silence means nothing.
    result = compare([100.0, 101.0, 99.0], [110.0, 111.0, 109.0])
    assert result.significant
    assert "rank test" not in result.sentence


def test_comparison_json_is_plain_json() -> None:
    data = compare(BEFORE, AFTER).to_json()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["verdict"] == "better"
    assert data["before"]["n"] == 5 and data["after"]["outliers"] == []
    assert json.loads(json.dumps(describe(BEFORE).to_json(), allow_nan=False))["quiet"] is True
