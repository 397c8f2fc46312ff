"""The distributions our significance tests need, in the standard library only.

The app ships without scipy (a 40 MB wheel for three functions), so Student's t and
the exact Mann-Whitney U distribution are computed here; the tests check them
against scipy. Student's t goes through the regularized incomplete beta function,
evaluated with the modified Lentz continued fraction (Numerical Recipes, 6.4;
Lentz 1976, Thompson & Barnett 1986).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_EPSILON = 1e-16
_TINY = 1e-300
_MAX_ITERATIONS = 100_000


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b); converges fast for x < (a + 1) / (a + b + 2)."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_ITERATIONS):
        # Even step, then odd step, of the fraction's terms.
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            if abs(c) < _TINY:
                c = _TINY
            delta = c * d
            fraction *= delta
        if abs(delta - 1.0) < _EPSILON:
            return fraction
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def regularized_incomplete_beta(a: float, b: float, x: float, one_minus_x: float | None = None) -> float:
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1.

    ``one_minus_x`` may be given when the caller knows 1 - x more precisely than the
    subtraction would give it (for x close to 1).
    """
    y = 1.0 - x if one_minus_x is None else one_minus_x
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, y) / b


def t_sf(t: float, dof: float) -> float:
    """P(T > t) for Student's t with ``dof`` degrees of freedom (dof > 0, not necessarily whole)."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    t_squared = t * t
    # x = dof / (dof + t^2); passing 1 - x separately keeps small |t| precise.
    tail = 0.5 * regularized_incomplete_beta(
        dof / 2.0, 0.5, dof / (dof + t_squared), t_squared / (dof + t_squared)
    )
    return tail if t > 0 else 1.0 - tail


def t_cdf(t: float, dof: float) -> float:
    return t_sf(-t, dof)


def t_two_sided_p(t: float, dof: float) -> float:
    """P(|T| >= |t|), the p-value of a two-sided t-test."""
    return min(1.0, 2.0 * t_sf(abs(t), dof))


def _t_pdf(t: float, dof: float) -> float:
    log_density = (
        math.lgamma((dof + 1.0) / 2.0)
        - math.lgamma(dof / 2.0)
        - 0.5 * math.log(dof * math.pi)
        - (dof + 1.0) / 2.0 * math.log1p(t * t / dof)
    )
    return math.exp(log_density)


def t_quantile(p: float, dof: float) -> float:
    """The t with P(T <= t) = p (the inverse of ``t_cdf``), for 0 < p < 1."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability strictly between 0 and 1 is needed, not {p}")
    if p == 0.5:
        return 0.0
    tail = min(p, 1.0 - p)
    sign = 1.0 if p > 0.5 else -1.0
    return sign * _upper_tail_quantile(tail, dof)


def _upper_tail_quantile(tail: float, dof: float) -> float:
    """The t > 0 with P(T > t) = tail, by Newton's method kept inside a bracket."""
    if dof == 1.0:
        return 1.0 / math.tan(math.pi * tail)
    # Start from the Cornish-Fisher expansion around the normal quantile.
    z = NormalDist().inv_cdf(1.0 - tail)
    guess = z + (z**3 + z) / (4.0 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96.0 * dof * dof)
    low, high = 0.0, max(guess, 1.0)
    while t_sf(high, dof) > tail:
        low, high = high, high * 2.0
    t = min(max(guess, low), high)
    for _ in range(200):
        excess = t_sf(t, dof) - tail
        if excess > 0:
            low = t
        else:
            high = t
        density = _t_pdf(t, dof)
        candidate = t + excess / density if density > 0 else (low + high) / 2.0
        if not low < candidate < high:
            candidate = (low + high) / 2.0
        if abs(candidate - t) <= 1e-15 * max(1.0, abs(t)) or high - low <= 1e-15 * high:
            return candidate
        t = candidate
    return t


def normal_sf(z: float) -> float:
    """P(Z > z) for the standard normal distribution."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


@lru_cache(maxsize=64)
def mann_whitney_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of two samples of sizes m and n give U = 0, 1, ..., m*n.

    These are the coefficients of the Gaussian binomial [m+n choose m]_q, built as
    the product over i = 1..m of (1 - q^(n+i)) / (1 - q^i); after each factor the
    partial product is itself a Gaussian binomial, so every division is exact.
    """
    if m > n:
        m, n = n, m
    counts = [0] * (m * n + 1)
    counts[0] = 1
    for i in range(1, m + 1):
        step = n + i
        for k in range(len(counts) - 1, step - 1, -1):
            counts[k] -= counts[k - step]
        for k in range(i, len(counts)):
            counts[k] += counts[k - i]
    return tuple(counts)


def mann_whitney_exact_sf(u: int, m: int, n: int) -> float:
    """P(U >= u) when the two samples (sizes m, n, no ties) come from one distribution."""
    counts = mann_whitney_counts(m, n)
    if u <= 0:
        return 1.0
    if u > m * n:
        return 0.0
    return sum(counts[u:]) / math.comb(m + n, m)
