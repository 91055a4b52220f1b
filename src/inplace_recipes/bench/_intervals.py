"""A statistic robust to other processes' load: the minimum of interleaved rounds.

Load from elsewhere only ever adds time, so the fastest of several rounds is
the timing least moved by it (what ``timeit`` advises). The rounds of two
entries of one configuration are interleaved (round ``k`` of each ran close
together), so their ratio's uncertainty is estimated by resampling rounds in
pairs: :func:`ratio_interval` is a percentile bootstrap of the ratio of the
two minima, and :func:`geometric_ratio_interval` of a geometric mean of such
ratios over several configurations (what a ranking averages). Two timings
whose interval :func:`holds_one` are a tie.

>>> [round(v, 3) for v in ratio_interval([2.0, 2.1, 2.4], [1.0, 1.0, 1.1])]
[2.0, 2.182]
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

__all__ = [
    "RESAMPLES",
    "geometric_ratio_interval",
    "holds_one",
    "ratio_interval",
    "ratio_of_minima",
    "seconds",
]

#: Bootstrap resamples per interval (seeded: the same rounds give the same interval).
RESAMPLES = 2000


def seconds(timing: dict[str, Any]) -> float:
    """The one time every ratio, ranking and check uses: the fastest round's call
    (``"min"``) where the run kept rounds, else the median (runs made before).

    >>> seconds({"median": 2.0, "min": 1.5}), seconds({"median": 2.0})
    (1.5, 2.0)
    """
    return float(timing["min"] if timing.get("min") is not None else timing["median"])


def ratio_of_minima(entry: Sequence[float], baseline: Sequence[float]) -> float:
    """``min(entry) / min(baseline)``: the ratio of the two fastest rounds.

    >>> ratio_of_minima([3.0, 2.0], [1.0, 4.0])
    2.0
    """
    return min(entry) / min(baseline)


def ratio_interval(
    entry: Sequence[float],
    baseline: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`ratio_of_minima`, rounds resampled in pairs.

    ``entry[k]`` and ``baseline[k]`` are the fastest call of round ``k`` of
    each (the rounds were interleaved); both need the same number of rounds.
    """
    return geometric_ratio_interval(
        [(entry, baseline)], level=level, resamples=resamples, seed=seed
    )


def geometric_ratio_interval(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the geometric mean, over configurations,
    of :func:`ratio_of_minima`; each configuration's rounds resampled in pairs.

    ``pairs`` holds one ``(entry, baseline)`` of round minima per configuration
    (a size and dtype of one ranking).

    >>> lo, hi = geometric_ratio_interval([([2.0, 2.1], [1.0, 1.0]), ([1.0, 1.1], [1.0, 1.0])])
    >>> 1.4 <= lo <= hi <= 1.53
    True
    >>> geometric_ratio_interval([([1.0], [1.0, 2.0])])
    Traceback (most recent call last):
    ...
    ValueError: ratio_interval needs the same, non-zero number of rounds for both
    """
    if not pairs or any(len(e) != len(b) or not e for e, b in pairs):
        raise ValueError("ratio_interval needs the same, non-zero number of rounds for both")
    rng = random.Random(seed)
    logs = []
    for _ in range(resamples):
        total = 0.0
        for entry, baseline in pairs:
            n = len(entry)
            picks = [rng.randrange(n) for _ in range(n)]
            total += math.log(min(entry[k] for k in picks) / min(baseline[k] for k in picks))
        logs.append(total / len(pairs))
    logs.sort()
    tail = (1 - level) / 2
    lo = logs[int(tail * (resamples - 1))]
    hi = logs[int((1 - tail) * (resamples - 1))]
    return math.exp(lo), math.exp(hi)


def holds_one(interval: tuple[float, float] | None) -> bool:
    """Whether an interval of a ratio holds 1 (a tie); ``None`` (no rounds) does not.

    >>> holds_one((0.9, 1.2)), holds_one((1.05, 1.2)), holds_one(None)
    (True, False, False)
    """
    return interval is not None and interval[0] <= 1.0 <= interval[1]
