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
