"""A mean's 95% confidence interval over per-item scores.

Scores that are all 0 or 1 (exact match) get the Wilson score interval, which stays inside
[0, 1] and is sensible at the small counts a val split has; other scores get the normal
approximation mean ± 1.96·s/√n (clipped to [0, 1]). Stated on every table so a reader
knows which one they are looking at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054


def mean_interval(values: Sequence[float]) -> tuple[float, float, float, str]:
    """(mean, low, high, method) of `values`; an empty list is (0, 0, 0, "none")."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0, 0.0, "none"
    mean = sum(values) / n
    if all(v in (0.0, 1.0) for v in values):
        denom = 1 + Z95**2 / n
        centre = (mean + Z95**2 / (2 * n)) / denom
        half = Z95 * math.sqrt(mean * (1 - mean) / n + Z95**2 / (4 * n * n)) / denom
        return mean, max(0.0, centre - half), min(1.0, centre + half), "wilson"
    if n == 1:
        return mean, mean, mean, "normal"
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return mean, max(0.0, mean - half), min(1.0, mean + half), "normal"


def spread(values: Sequence[float]) -> tuple[float, float]:
    """(mean, sample standard deviation) across runs, e.g. seeds of one config."""
    n = len(values)
    mean = sum(values) / n if n else 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd
