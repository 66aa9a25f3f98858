"""Paired bootstrap intervals: is a difference between two systems on the same questions real?

Question sets are small (one question of 30 is 0.033), so every quality claim carries a 95%
interval of the per-question difference, resampled with a fixed seed (the same run prints the
same interval). Pooled over several sets, questions are resampled within their own set
(stratified), so a large set does not crowd out a small one's variance.

Example:
    >>> interval = paired_bootstrap([1.0, 1.0, 0.5, 1.0], [0.5, 1.0, 0.5, 0.0])
    >>> interval.delta, interval.low <= interval.delta <= interval.high
    (0.375, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Interval", "paired_bootstrap", "pooled_bootstrap"]

RESAMPLES = 2000
SEED = 20261201


@dataclass(frozen=True)
class Interval:
    """Mean difference ``a - b`` over the questions and its percentile bootstrap interval."""

    delta: float
    low: float
    high: float
    n: int

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, float | int]:
        """Rounded for printing and JSON."""
        return {
            "delta": round(self.delta, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "n": self.n,
        }

    def __str__(self) -> str:
        return f"{self.delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def _check(a: Sequence[float], b: Sequence[float]) -> None:
    if len(a) != len(b):
        msg = f"paired samples differ in length: {len(a)} vs {len(b)}"
        raise ValueError(msg)


def pooled_bootstrap(
    groups: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = 0.95,
) -> Interval:
    """Interval of the mean of ``a - b`` over all questions of several sets, resampled per set.

    Args:
        groups: One ``(a, b)`` pair of per-question scores per question set (paired by index).
        resamples: Bootstrap resamples.
        seed: Random seed (fixed: the same scores give the same interval).
        level: Coverage of the interval.

    Raises:
        ValueError: a pair of unequal length, or no questions at all.

    Example:
        >>> pooled_bootstrap([([1.0, 0.0], [0.0, 0.0]), ([1.0], [1.0])]).delta
        0.3333333333333333
    """
    diffs: list[list[float]] = []
    for a, b in groups:
        _check(a, b)
        if len(a):
            diffs.append([x - y for x, y in zip(a, b, strict=True)])
    total = sum(len(d) for d in diffs)
    if not total:
        msg = "no questions to compare"
        raise ValueError(msg)
    delta = sum(sum(d) for d in diffs) / total
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        acc = 0.0
        for d in diffs:
            n = len(d)
            acc += sum(d[rng.randrange(n)] for _ in range(n))
        means.append(acc / total)
    means.sort()
    tail = (1.0 - level) / 2.0
    low = means[round(tail * (resamples - 1))]
    high = means[round((1.0 - tail) * (resamples - 1))]
    return Interval(delta=delta, low=low, high=high, n=total)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = 0.95,
) -> Interval:
    """Interval of the mean per-question difference ``a - b`` (percentile bootstrap).

    Example:
        >>> paired_bootstrap([0.5, 0.5], [0.5, 0.5]).as_dict()
        {'delta': 0.0, 'low': 0.0, 'high': 0.0, 'n': 2}
    """
    return pooled_bootstrap([(a, b)], resamples=resamples, seed=seed, level=level)
