"""Error bars for held-out rates: Wilson intervals for one run, mean and spread across seeds."""

from __future__ import annotations

import math


def wilson(solved: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a success rate (0..1); (0, 1) when total is 0."""
    if total == 0:
        return 0.0, 1.0
    p = solved / total
    d = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / d
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


# two-sided 95% quantiles of Student's t for 1..30 degrees of freedom (beyond 30, the normal's 1.96 is close)
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom (for a two-sided 95% interval)."""
    if df < 1:
        raise ValueError("a t interval needs at least two values")
    return _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df  # within 0.002 of the exact value past 30


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% t interval (mean, low, high); the interval is the mean itself for a single value."""
    m, sd = mean_sd(values)
    if len(values) < 2:
        return m, m, m
    half = t_quantile(len(values) - 1) * sd / math.sqrt(len(values))
    return m, m - half, m + half


def paired_difference(a: dict[int, float], b: dict[int, float]) -> tuple[int, float, float, float]:
    """For values keyed by seed: seeds in common, and the mean of b - a over them with its 95% t interval."""
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return 0, math.nan, math.nan, math.nan
    m, lo, hi = mean_interval([b[s] - a[s] for s in seeds])
    return len(seeds), m, lo, hi
