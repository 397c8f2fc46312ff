"""Two-sample tests for before/after runs: Welch's t-test, Mann-Whitney U, Hedges' g.

Every function takes the runs before and after a change, in that order, and
measures "after minus before": a positive t, a U above m*n/2 and a positive g all
mean the values went up. Inputs are already checked (finite, at least two each).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sambatune.bench.distributions import (
    mann_whitney_exact_sf,
    normal_sf,
    t_quantile,
    t_two_sided_p,
)

#: Above this many pairs (m * n) the normal approximation is used even without ties:
#: at 50 runs a side it is within a few 1e-4 of the exact p-value, and the exact
#: table grows with m * m * n.
EXACT_PAIR_LIMIT = 2500


def sample_mean_and_stdev(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1), 0 for a single value.

    The values are scaled by their largest magnitude first, so squares neither
    overflow (1e200) nor underflow (1e-200); ``math.fsum`` keeps the sums exact.
    """
    scale = max(abs(v) for v in values) or 1.0
    scaled = [v / scale for v in values]
    mean = math.fsum(scaled) / len(scaled)
    if len(scaled) < 2:
        return mean * scale, 0.0
    variance = math.fsum((v - mean) ** 2 for v in scaled) / (len(scaled) - 1)
    return mean * scale, math.sqrt(variance) * scale


@dataclass(frozen=True)
class WelchTest:
    t: float
    dof: float
    p_value: float
    difference: float
    ci95_low: float
    ci95_high: float


def welch_t_test(before: Sequence[float], after: Sequence[float]) -> WelchTest:
    """Welch's unequal-variance t-test, two-sided, with the 95% interval of the difference.

    When both sides have no spread at all the test is degenerate: equal means give
    t = 0 and p = 1; different means give an infinite t and p = 0 (every run says the
    same thing), with dof set to n1 + n2 - 2 by convention.
    """
    scale = max(abs(v) for v in (*before, *after)) or 1.0
    mean_1, sd_1 = sample_mean_and_stdev([v / scale for v in before])
    mean_2, sd_2 = sample_mean_and_stdev([v / scale for v in after])
    n_1, n_2 = len(before), len(after)
    var_1, var_2 = sd_1 * sd_1 / n_1, sd_2 * sd_2 / n_2
    squared_error = var_1 + var_2
    difference = mean_2 - mean_1
    if squared_error == 0.0:
        t = 0.0 if difference == 0.0 else math.copysign(math.inf, difference)
        return WelchTest(
            t=t,
            dof=float(n_1 + n_2 - 2),
            p_value=1.0 if difference == 0.0 else 0.0,
            difference=difference * scale,
            ci95_low=difference * scale,
            ci95_high=difference * scale,
        )
    standard_error = math.sqrt(squared_error)
    # Welch-Satterthwaite, written with the shares of the squared error so that
    # tiny variances do not underflow when squared.
    share_1, share_2 = var_1 / squared_error, var_2 / squared_error
    dof = 1.0 / (share_1 * share_1 / (n_1 - 1) + share_2 * share_2 / (n_2 - 1))
    t = difference / standard_error
    half_width = t_quantile(0.975, dof) * standard_error
    return WelchTest(
        t=t,
        dof=dof,
        p_value=t_two_sided_p(t, dof),
        difference=difference * scale,
        ci95_low=(difference - half_width) * scale,
        ci95_high=(difference + half_width) * scale,
    )


@dataclass(frozen=True)
class MannWhitneyTest:
    #: U of the "after" runs: the number of (before, after) pairs where after is larger,
    #: ties counting one half.
    u: float
    p_value: float
    #: "exact" or "normal approximation".
    method: str
    #: The smallest p-value this test can give for these sample sizes: with 3 runs a
    #: side the exact test never goes below 0.1, so it cannot confirm anything at 0.05.
    smallest_possible_p: float


def _average_ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Ranks 1..N with ties sharing their average rank, and the size of every tie group."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    groups: list[int] = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2.0 + 1.0
        groups.append(end - start + 1)
        start = end + 1
    return ranks, groups


def mann_whitney_test(before: Sequence[float], after: Sequence[float]) -> MannWhitneyTest:
    """Two-sided Mann-Whitney U: exact without ties, else normal with tie and continuity corrections."""
    n_1, n_2 = len(before), len(after)
    ranks, groups = _average_ranks([*before, *after])
    u_after = math.fsum(ranks[n_1:]) - n_2 * (n_2 + 1) / 2.0
    larger_u = max(u_after, n_1 * n_2 - u_after)
    if all(size == 1 for size in groups) and n_1 * n_2 <= EXACT_PAIR_LIMIT:
        return MannWhitneyTest(
            u=u_after,
            p_value=min(1.0, 2.0 * mann_whitney_exact_sf(round(larger_u), n_1, n_2)),
            method="exact",
            smallest_possible_p=min(1.0, 2.0 / math.comb(n_1 + n_2, n_1)),
        )
    total = n_1 + n_2
    tie_term = sum(size**3 - size for size in groups)
    variance = n_1 * n_2 / 12.0 * ((total + 1) - tie_term / (total * (total - 1)))
    if variance <= 0.0:
        # Every run before and after is the same number: nothing to rank.
        return MannWhitneyTest(u=u_after, p_value=1.0, method="normal approximation", smallest_possible_p=1.0)
    spread = math.sqrt(variance)
    z = (larger_u - n_1 * n_2 / 2.0 - 0.5) / spread
    best_z = (n_1 * n_2 / 2.0 - 0.5) / spread
    return MannWhitneyTest(
        u=u_after,
        p_value=min(1.0, 2.0 * normal_sf(z)),
        method="normal approximation",
        smallest_possible_p=min(1.0, 2.0 * normal_sf(best_z)),
    )


def hedges_g(before: Sequence[float], after: Sequence[float]) -> float | None:
    """Standardised difference (after - before) / pooled SD, with Hedges' small-sample correction.

    None when it is undefined: no spread at all on either side but different means.
    """
    scale = max(abs(v) for v in (*before, *after)) or 1.0
    mean_1, sd_1 = sample_mean_and_stdev([v / scale for v in before])
    mean_2, sd_2 = sample_mean_and_stdev([v / scale for v in after])
    dof = len(before) + len(after) - 2
    pooled = math.sqrt(((len(before) - 1) * sd_1 * sd_1 + (len(after) - 1) * sd_2 * sd_2) / dof)
    if pooled == 0.0:
        return 0.0 if mean_1 == mean_2 else None
    # The exact correction J(dof) = Γ(dof/2) / (sqrt(dof/2) Γ((dof-1)/2)) (Hedges 1981);
    # 1 - 3/(4 dof - 1) is its usual approximation.
    correction = math.exp(math.lgamma(dof / 2.0) - math.lgamma((dof - 1) / 2.0)) / math.sqrt(dof / 2.0)
    return (mean_2 - mean_1) / pooled * correction
