"""A statistic robust to other processes' load: the minimum of interleaved rounds.

Load from elsewhere only ever adds time, so the fastest of several rounds is
the timing least moved by it (what ``timeit`` advises). The rounds of two
entries of one configuration are interleaved (round ``k`` of each ran close
together), so their ratio's uncertainty is estimated by resampling rounds in
pairs: :func:`ratio_interval` is a percentile bootstrap of the ratio of the
two minima.

>>> [round(v, 3) for v in ratio_interval([2.0, 2.1, 2.4], [1.0, 1.0, 1.1])]
[2.0, 2.182]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

__all__ = ["RESAMPLES", "ratio_interval", "ratio_of_minima", "seconds"]

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
    if len(entry) != len(baseline) or not entry:
        raise ValueError("ratio_interval needs the same, non-zero number of rounds for both")
    rng = random.Random(seed)
    n = len(entry)
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(min(entry[k] for k in picks) / min(baseline[k] for k in picks))
    ratios.sort()
    tail = (1 - level) / 2
    lo = ratios[int(tail * (resamples - 1))]
    hi = ratios[int((1 - tail) * (resamples - 1))]
    return lo, hi
