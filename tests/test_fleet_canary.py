"""The canary's judgement (sambatune.fleet.canary): strict enough to roll on by itself.
The runs are those of the misfires seen on the busy bed, and plain cases around them."""

from __future__ import annotations

from sambatune.bench.statistics import compare
from sambatune.fleet.canary import CANNOT_JUDGE, NOISE_LIMIT, judge_canary, judge_figure

MB = 1e6


def test_a_steady_drop_in_writes_is_worse_and_named() -> None:
    before = [820 * MB, 805 * MB, 812 * MB, 798 * MB, 815 * MB]
    after = [12 * MB, 11.5 * MB, 12.4 * MB, 11.9 * MB, 12.1 * MB]
    steady = [400 * MB, 402 * MB, 398 * MB, 401 * MB, 399 * MB]
    judgement = judge_canary([("writes", compare(before, after)), ("reads", compare(steady, steady))])
    assert judgement.outcome == "worse" and judgement.halts
    assert [f.outcome for f in judgement.figures] == ["worse", "no real difference"]
    assert judgement.sentence().startswith("Writes: ") and "Reads: " in judgement.sentence()


def test_a_drop_hidden_by_wild_runs_before_cannot_be_judged_not_no_difference() -> None:
    """98.5% slower writes, with one enormous run before (a cache): Welch's test finds
    nothing significant with three runs, and the old verdict said "no real difference"."""
    before = [2400 * MB, 30 * MB, 25 * MB]
    after = [0.4 * MB, 0.35 * MB, 0.45 * MB]
    comparison = compare(before, after)
    assert comparison.verdict == "no real difference"  # what the rollout used to act on
    figure = judge_figure("writes", comparison)
    assert figure.outcome == CANNOT_JUDGE and "cannot tell" in figure.sentence
    assert judge_canary([("writes", comparison)]).halts


def test_noise_within_the_limit_is_no_real_difference() -> None:
    before = [500 * MB, 505 * MB, 498 * MB, 502 * MB, 501 * MB]
    after = [503 * MB, 499 * MB, 500 * MB, 504 * MB, 497 * MB]
    judgement = judge_canary([("writes", compare(before, after))])
    assert judgement.outcome == "no real difference" and not judgement.halts
    assert NOISE_LIMIT == 0.10


def test_where_the_t_test_and_the_rank_test_disagree_the_runs_cannot_tell() -> None:
    """Every run after is faster, but one wild run makes Welch's test see nothing: with
    five runs a side the rank test can decide, and it disagrees."""
    comparison = compare([10.0, 11, 12, 13, 14], [15.0, 16, 17, 18, 1000])
    assert not comparison.significant and (comparison.p_value_mw or 1.0) < comparison.alpha
    figure = judge_figure("reads", comparison)
    assert figure.outcome == CANNOT_JUDGE and "disagree" in figure.sentence
    # Three runs a side: the rank test cannot reach p < 0.05, so it is not asked.
    steady = judge_figure("reads", compare([100.0, 100.2, 100.1], [100.05, 100.15, 100.1]))
    assert steady.outcome == "no real difference"


def test_too_few_runs_and_no_figures_cannot_be_judged() -> None:
    assert judge_figure("writes", compare([1.0], [2.0])).outcome == CANNOT_JUDGE
    assert judge_canary([]).outcome == CANNOT_JUDGE


def test_better_reads_and_worse_writes_are_mixed_and_halt() -> None:
    up = compare([100.0, 101, 99, 100, 100.5], [150.0, 151, 149, 150, 150.5])
    down = compare([100.0, 101, 99, 100, 100.5], [50.0, 51, 49, 50, 50.5])
    judgement = judge_canary([("reads", up), ("writes", down)])
    assert judgement.outcome == "mixed" and judgement.halts
