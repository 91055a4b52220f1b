"""The benchmark checks itself: entries that run the same operation must time the same.

Two pairs run identical work: ``"inplace_again"`` is ``"inplace"`` timed a
second time, and the ``clone`` recipe is ``y = x.clone(); y[index] = value``,
which ``"inplace_on_clone"`` runs with no recipe code around it (compared from
:data:`CLONE_FROM` elements up, where that code's microsecond is under 2% of
the step). If their forward + backward times (:func:`~.intervals.seconds`:
the fastest round's call) differ by more than
:data:`TOLERANCE`, the measurement of that configuration is noise, not signal:
the run repeats it, and marks it ``noisy`` if no attempt agrees.

The same pairs measure the run's noise: :func:`noise_band` is the largest
factor by which they disagree, and every ranking of the report and of
:func:`~inplace_recipes._pick.preferences` calls two timings closer than
that a tie.

>>> rec = lambda entry, t: {"device": "cpu", "dtype": "float32", "size": 100, "write": "row",
...     "mode": "eager", "entry": entry, "forward_backward": {"median": t}}
>>> inconsistencies([rec("inplace", 1.0), rec("inplace_again", 1.05)])
[]
>>> [p["ratio"] for p in inconsistencies([rec("inplace", 1.0), rec("inplace_again", 1.3)])]
[1.3]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ._intervals import seconds

__all__ = [
    "CLONE_FROM",
    "SAME_OPERATION",
    "TOLERANCE",
    "disagreements",
    "group_key",
    "in_band",
    "inconsistencies",
    "noise_band",
    "worst",
]

#: Two timings of the same operation may differ by at most this factor.
TOLERANCE = 1.10
#: Sizes from which the ``clone`` recipe and ``inplace_on_clone`` must agree.
CLONE_FROM = 10**4
#: ``(entry, same as, from size)``: pairs that run identical work.
SAME_OPERATION: tuple[tuple[str, str, int], ...] = (
    ("inplace_again", "inplace", 0),
    ("clone", "inplace_on_clone", CLONE_FROM),
)


def group_key(record: dict[str, Any]) -> tuple[Any, ...]:
    """The configuration a record belongs to: entries in it were timed together."""
    return (record["device"], record["dtype"], record["size"], record["write"], record["mode"])


def inconsistencies(
    records: Iterable[dict[str, Any]], tolerance: float = TOLERANCE
) -> list[dict[str, Any]]:
    """Each pair of :data:`SAME_OPERATION` whose times differ by more than ``tolerance``.

    The ratio is ``entry / same as``, forward + backward (:func:`~.intervals.seconds`); pairs where
    either was not measured are skipped.
    """
    return [
        dict(zip(("device", "dtype", "size", "write", "mode"), key, strict=True))
        | {"entry": entry, "same_as": same, "ratio": round(ratio, 3)}
        for key, entry, same, ratio in _pairs(records)
        if max(ratio, 1 / ratio) > tolerance
    ]


def _pairs(records: Iterable[dict[str, Any]]) -> list[tuple[tuple[Any, ...], str, str, float]]:
    """``(configuration, entry, same as, exact ratio)`` for each measured pair."""
    by_group: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for r in records:
        by_group.setdefault(group_key(r), {})[r["entry"]] = r
    found = []
    for key, entries in by_group.items():
        for entry, same, from_size in SAME_OPERATION:
            if key[2] < from_size or entry not in entries or same not in entries:
                continue
            a, b = entries[entry].get("forward_backward"), entries[same].get("forward_backward")
            if a and b:
                found.append((key, entry, same, seconds(a) / seconds(b)))
    return found


def worst(records: Iterable[dict[str, Any]]) -> float:
    """The largest disagreement factor (>= 1) among the pairs in ``records``; 1.0 if none.

    >>> worst([])
    1.0
    """
    return max((math.exp(abs(math.log(ratio))) for *_, ratio in _pairs(records)), default=1.0)


def disagreements(
    records: Iterable[dict[str, Any]],
    *,
    mode: str = "eager",
    sizes: Iterable[int] | None = None,
) -> list[float]:
    """The factor (>= 1) by which each :data:`SAME_OPERATION` pair disagrees, in ``mode``.

    Only configurations of ``sizes`` count (every size when ``None``). The factors
    are exact, not rounded: the noise band is one of them, and a pair must tie
    with itself under :func:`~inplace_recipes.bench._statistics.tie`.

    >>> rec = lambda entry, t, size=100: {"device": "cpu", "dtype": "float32", "size": size,
    ...     "write": "row", "mode": "eager", "entry": entry, "forward_backward": {"median": t}}
    >>> disagreements([rec("inplace", 1.0), rec("inplace_again", 0.8)])
    [1.25]
    >>> disagreements([rec("inplace", 1.0), rec("inplace_again", 0.8)], sizes=[10**6])
    []
    """
    wanted = None if sizes is None else set(sizes)
    chosen = [r for r in records if r["mode"] == mode and (wanted is None or r["size"] in wanted)]
    return sorted(max(ratio, 1 / ratio) for *_, ratio in _pairs(chosen))


#: Relative slack of :func:`in_band`: the same factor computed by two routes
#: (``(o / i) / (c / i)`` against ``o / c``) differs in its last bits.
ROUNDING = 1e-9


def in_band(factor: float, band: float) -> bool:
    """Whether ``factor`` (>= 1) lies inside ``band``, up to rounding: the pair that
    set the band lies inside it whichever way its factor was computed.

    >>> i, o, c = 2.931912904548431e-05, 7.832693891256283e-05, 6.439329103547352e-05
    >>> (o / i) / (c / i) <= o / c, in_band((o / i) / (c / i), o / c)
    (False, True)
    """
    return factor <= band * (1 + ROUNDING)


def noise_band(
    results: dict[str, Any], *, mode: str = "eager", sizes: Iterable[int] | None = None
) -> float:
    """The run's noise: the largest disagreement between two timings of the same work.

    Two ratios closer than this factor are a tie. A run without the pairs
    (made before they existed) gets :data:`TOLERANCE`.

    >>> rec = lambda entry, t: {"device": "cpu", "dtype": "float32", "size": 100,
    ...     "write": "row", "mode": "eager", "entry": entry, "forward_backward": {"median": t}}
    >>> noise_band({"records": [rec("inplace", 1.0), rec("inplace_again", 1.2)]})
    1.2
    >>> noise_band({"records": []})
    1.1
    """
    found = disagreements(results["records"], mode=mode, sizes=sizes)
    return max(found) if found else TOLERANCE
