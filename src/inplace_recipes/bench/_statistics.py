"""Statistics of benchmark results: noise bands, intervals, ties, the crossover size, peaks.

Every number comes from a results dict (:func:`~inplace_recipes.bench.load_results`
or :func:`~inplace_recipes.bench.run`); nothing here measures or writes prose.
The performance page's prose and figures (``docs/performance_prose.py``,
``docs/performance_figures.py``) and the command line's summary
(:mod:`._summary`) read these.

>>> rec = lambda e, t: {"device": "cpu", "dtype": "float32", "mode": "eager",
...     "size": 10, "write": "row", "entry": e, "ratio_forward_backward": t}
>>> tie({"records": [rec("a", 1.1), rec("b", 1.0)]}, "a", "b", "row", 10, band=1.2)
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..recipes import RECIPES
from . import _consistency as consistency
from ._entries import WRITES
from ._intervals import holds_one, ratio_interval, seconds
from ._results import find_record

__all__ = [
    "FORMS",
    "HeadlineCosts",
    "between",
    "compiled_ratio",
    "crossover",
    "floor_beaten",
    "has_held_peaks",
    "has_intervals",
    "headline_costs",
    "instruction_ratio",
    "interval",
    "interval_coverage",
    "least_peak",
    "measured_writes",
    "noise",
    "noise_by_size",
    "peak",
    "point_ratio",
    "ratio_of",
    "sizes_timed",
    "tie",
]


def measured_writes(results: dict[str, Any]) -> list[str]:
    """The kinds of write the run timed, in its order: a run made before a kind
    of write was added to :data:`WRITES` has no figure for it.

    >>> measured_writes({"config": {"writes": ["row", "boolean"]}})
    ['row', 'boolean']
    """
    return [w for w in results.get("config", {}).get("writes", list(WRITES)) if w in WRITES]


def ratio_of(
    results: dict[str, Any],
    entry: str,
    write: str,
    size: int,
    column: str = "ratio_forward_backward",
    **kw: Any,
) -> float | None:
    r = find_record(results, entry, write, size, **kw)
    return None if r is None else r.get(column)


def sizes_timed(results: dict[str, Any], write: str, dtype: str = "float32") -> list[int]:
    return sorted(
        {
            r["size"]
            for r in results["records"]
            if (r["write"], r["dtype"], r["mode"], r["device"]) == (write, dtype, "eager", "cpu")
        }
    )


def noise(results: dict[str, Any], sizes: Iterable[int] | None = None) -> float:
    """The run's noise band (eager): two ratios closer than this factor are a tie."""
    return consistency.noise_band(results, sizes=sizes)


def noise_by_size(results: dict[str, Any]) -> dict[int, float]:
    """The run's noise band at each size alone (eager): where its reach ends.

    >>> rec = lambda entry, t, size: {"device": "cpu", "dtype": "float32", "size": size,
    ...     "write": "row", "mode": "eager", "entry": entry, "forward_backward": {"median": t}}
    >>> noise_by_size({"records": [rec("inplace", 1.0, 10), rec("inplace_again", 1.5, 10),
    ...     rec("inplace", 1.0, 100), rec("inplace_again", 1.1, 100)]})
    {10: 1.5, 100: 1.1}
    """
    sizes = sorted({r["size"] for r in results["records"] if r["mode"] == "eager"})
    found = {s: consistency.disagreements(results["records"], sizes=[s]) for s in sizes}
    return {s: max(v) for s, v in found.items() if v}


def interval_coverage(results: dict[str, Any]) -> tuple[int, int]:
    """How many intervals of identical work (``inplace_again`` over ``inplace``, eager) hold
    1, of how many: what the nominal 95% covers in this run.

    >>> rec = lambda e, iv: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10,
    ...     "write": "row", "entry": e, "ratio_forward_backward_interval": iv}
    >>> interval_coverage({"records": [rec("inplace_again", [0.9, 1.1]),
    ...     rec("inplace_again", [1.02, 1.1]), rec("where", [0.5, 2.0])]})
    (1, 2)
    """
    found = [
        holds_one(
            (
                float(r["ratio_forward_backward_interval"][0]),
                float(r["ratio_forward_backward_interval"][1]),
            )
        )
        for r in results["records"]
        if r["entry"] == "inplace_again"
        and r["mode"] == "eager"
        and r.get("ratio_forward_backward_interval")
    ]
    return sum(found), len(found)


def has_intervals(results: dict[str, Any]) -> bool:
    """Whether the run kept its rounds, so that every ratio has a bootstrap interval.

    >>> has_intervals({"records": [{"ratio_forward_backward_interval": [0.9, 1.1]}]})
    True
    """
    return any(r.get("ratio_forward_backward_interval") for r in results["records"])


def interval(
    results: dict[str, Any], entry: str, write: str, size: int, **kw: Any
) -> tuple[float, float] | None:
    """The interval of ``entry``'s forward + backward ratio to in-place.

    The bootstrap interval the run recorded (``ratio_forward_backward_interval``,
    from the minimum of interleaved rounds) where it has one; otherwise the
    ratio divided and multiplied by the run's :func:`noise` band.

    >>> rec = {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10, "write": "row",
    ...     "entry": "where", "ratio_forward_backward": 2.0}
    >>> interval({"records": [rec]}, "where", "row", 10)
    (1.8181818181818181, 2.2)
    >>> rec["ratio_forward_backward_interval"] = [1.9, 2.05]
    >>> interval({"records": [rec]}, "where", "row", 10)
    (1.9, 2.05)
    """
    r = find_record(results, entry, write, size, **kw)
    if r is None or r.get("ratio_forward_backward") is None:
        return None
    if r.get("ratio_forward_backward_interval"):
        lo, hi = r["ratio_forward_backward_interval"]
        return float(lo), float(hi)
    band = noise(results)
    ratio = float(r["ratio_forward_backward"])
    return ratio / band, ratio * band


def between(
    results: dict[str, Any], entry: str, other: str, write: str, size: int, **kw: Any
) -> tuple[float, float] | None:
    """The bootstrap interval of ``entry``'s forward + backward time over ``other``'s,
    timed in the same configuration (their rounds interleaved); ``None`` without rounds.

    >>> rec = lambda e, rounds: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10, "write": "row", "entry": e, "forward_backward": {"round_minima": rounds}}
    >>> between({"records": [rec("a", [2.0, 2.0]), rec("b", [1.0, 1.0])]}, "a", "b", "row", 10)
    (2.0, 2.0)
    """
    mine, theirs = (
        find_record(results, entry, write, size, **kw),
        find_record(results, other, write, size, **kw),
    )
    if mine is None or theirs is None:
        return None
    a = (mine.get("forward_backward") or {}).get("round_minima")
    b = (theirs.get("forward_backward") or {}).get("round_minima")
    if not a or not b or len(a) != len(b):
        return None
    return ratio_interval(a, b)


def tie(
    results: dict[str, Any], entry: str, other: str, write: str, size: int, band: float, **kw: Any
) -> bool:
    """Whether two entries of one configuration tie: closer than ``band``, or with a
    :func:`between` interval that holds 1. Only a difference beyond both ranks them.

    >>> rec = lambda e, t: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10, "write": "row", "entry": e, "ratio_forward_backward": t}
    >>> tie({"records": [rec("a", 1.1), rec("b", 1.0)]}, "a", "b", "row", 10, band=1.2)
    True
    >>> tie({"records": [rec("a", 1.3), rec("b", 1.0)]}, "a", "b", "row", 10, band=1.2)
    False
    """
    column = kw.pop("column", "ratio_forward_backward")
    a = ratio_of(results, entry, write, size, column=column, **kw)
    b = ratio_of(results, other, write, size, column=column, **kw)
    if a is None or b is None:
        return False
    if consistency.in_band(max(a / b, b / a), band):
        return True
    return holds_one(between(results, entry, other, write, size, **kw))


def point_ratio(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
    """The ratio :func:`interval` brackets: of the fastest rounds where the run has them."""
    r = find_record(results, entry, write, size)
    if r is None:
        return None
    value = r.get("ratio_forward_backward_min") or r.get("ratio_forward_backward")
    return None if value is None else float(value)


def crossover(results: dict[str, Any], factor: float = 2.0) -> int:
    """The size (a power of ten) from which passes over memory, not fixed costs, decide.

    For each write and dtype, the size at which the in-place step's forward +
    backward time reaches ``factor`` times its time at the two smallest sizes
    (its fixed cost: Python, dispatch, allocation), interpolated in log size;
    the answer is their geometric mean, rounded to a power of ten.

    >>> rec = lambda s, t: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": s,
    ...     "write": "row", "entry": "inplace", "forward_backward": {"median": t}}
    >>> crossover({"records": [rec(10, 1.0), rec(100, 1.0), rec(1000, 1.5), rec(10**4, 4.0)]})
    1000
    """
    logs = []
    for write in measured_writes(results):
        for dtype in ("float32", "float64"):
            points = [
                (s, seconds(r["forward_backward"]))
                for s in sizes_timed(results, write, dtype)
                if (r := find_record(results, "inplace", write, s, dtype=dtype))
                and r.get("forward_backward")
            ]
            if len(points) < 3:
                continue
            fixed = min(t for _, t in points[:2])
            for (s0, t0), (s1, t1) in itertools.pairwise(points):
                if t1 >= factor * fixed > t0:
                    w = math.log(factor * fixed / t0) / math.log(t1 / t0)
                    logs.append(math.log10(s0) + w * (math.log10(s1) - math.log10(s0)))
                    break
    if not logs:
        return 10**4
    return int(10 ** round(sum(logs) / len(logs)))


def floor_beaten(results: dict[str, Any], sizes: Iterable[int]) -> list[tuple[str, int, list[str]]]:
    """Where a recipe costs less than the in-place write on one clone, beyond the noise:
    beyond the run's noise band and with a :func:`between` interval below 1.

    ``[(write, size, recipes), ...]``, float32, eager. The ``clone`` recipe is not
    a candidate: it runs that copy and write, with its own call around them.
    """
    sizes = list(sizes)
    band = noise(results, sizes)
    found = []
    for write in measured_writes(results):
        for size in sizes:
            on_clone = ratio_of(results, "inplace_on_clone", write, size)
            if on_clone is None:
                continue
            below = [
                e
                for e in RECIPES
                if e != "clone"  # the copy itself, with the recipe's call around it
                and (v := ratio_of(results, e, write, size)) is not None
                and v < on_clone
                and not tie(results, e, "inplace_on_clone", write, size, band)
            ]
            if below:
                found.append((write, size, below))
    return found


def instruction_ratio(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
    info = results.get("instructions") or {}
    if not info.get("available"):
        return None
    count = {(c["entry"], c["write"], c["size"]): c["instructions"] for c in info["counts"]}
    mine, base = count.get((entry, write, size)), count.get(("inplace", write, size))
    return mine / base if mine and base else None


def compiled_ratio(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
    return ratio_of(
        results, entry, write, size, mode="compile", column="ratio_forward_backward_eager_inplace"
    )


# -- peak memory -------------------------------------------------------------------

#: How the caller holds the tensor it writes from, and the column of each form's
#: peak (``bench._measure.held_step``): a temporary (or a name rebound to the
#: result) or kept alive through backward.
FORMS: dict[str, str] = {"temporary": "peak_bytes", "held": "peak_bytes_held"}


def peak(
    results: dict[str, Any], entry: str, write: str, size: int, form: str = "temporary", **kw: Any
) -> int | None:
    """The peak bytes of ``entry``'s step in ``form`` (``None`` where not counted).

    >>> rec = {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10, "write": "row",
    ...     "entry": "clone", "peak_bytes": 80, "peak_bytes_held": 120}
    >>> peak({"records": [rec]}, "clone", "row", 10), peak({"records": [rec]}, "clone", "row", 10, "held")
    (80, 120)
    """
    r = find_record(results, entry, write, size, **kw)
    value = None if r is None else r.get(FORMS[form])
    return None if value is None else int(value)


def has_held_peaks(results: dict[str, Any]) -> bool:
    """Whether the run counted the held form's peaks (runs before 0.4 did not).

    >>> has_held_peaks({"records": [{"peak_bytes": 8}]})
    False
    """
    return any(r.get("peak_bytes_held") is not None for r in results["records"])


def least_peak(
    results: dict[str, Any], write: str, size: int, form: str = "temporary", **kw: Any
) -> tuple[int, list[str]] | None:
    """The least peak of an out-of-place write in ``form``, and the entries that reach it:
    every recipe, and the in-place write on one clone (``inplace_on_clone``).

    >>> rec = lambda e, n: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10,
    ...     "write": "row", "entry": e, "peak_bytes": n}
    >>> least_peak({"records": [rec("clone", 80), rec("where", 90), rec("inplace", 40)]}, "row", 10)
    (80, ['clone'])
    """
    found = {
        e: n
        for e in ("inplace_on_clone", *RECIPES)
        if (n := peak(results, e, write, size, form, **kw)) is not None
    }
    if not found:
        return None
    least = min(found.values())
    return least, [e for e, n in found.items() if n == least]


@dataclass(frozen=True)
class HeadlineCosts:
    """What writing out of place with ``entry`` costs against in place, in one configuration."""

    entry: str
    #: ``entry``'s forward + backward time over in-place's (the fastest rounds).
    time: float
    #: Whether the two tie: within the noise band, or with a bootstrap interval
    #: of their ratio that holds 1 (:func:`tie`).
    tied: bool
    #: ``entry``'s peak over in-place's, by form (``None`` where not counted).
    peak: dict[str, float | None]
    #: The size from which the passes over memory, not fixed costs, decide (:func:`crossover`).
    crossover: int

    @property
    def saves_time(self) -> bool:
        """Whether in place is faster, beyond the noise band and the bootstrap interval."""
        return not self.tied and self.time > 1


def headline_costs(
    results: dict[str, Any],
    band: float,
    *,
    entry: str = "clone",
    write: str = "element",
    size: int = 10**6,
    dtype: str = "float32",
) -> HeadlineCosts | None:
    """What in place saves over ``entry`` in one configuration (eager, CPU); ``None`` untimed.

    Time counts as saved only beyond ``band`` and, where both have rounds,
    beyond the bootstrap interval of their ratio (:func:`tie`).

    >>> rec = lambda e, t, n, h: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10, "write": "row", "entry": e, "ratio_forward_backward": t,
    ...     "forward_backward": {"median": t}, "peak_bytes": n, "peak_bytes_held": h}
    >>> run = {"records": [rec("inplace", 1.0, 80, 80), rec("clone", 1.5, 80, 120)]}
    >>> costs = headline_costs(run, 1.1, write="row", size=10)
    >>> costs.time, costs.saves_time, costs.peak
    (1.5, True, {'temporary': 1.0, 'held': 1.5})
    """
    kw = {"dtype": dtype}
    mine = ratio_of(results, entry, write, size, **kw)
    if mine is None or ratio_of(results, "inplace", write, size, **kw) is None:
        return None
    tied = tie(results, entry, "inplace", write, size, band, **kw)
    ratios: dict[str, float | None] = {}
    for form in FORMS:
        own, base = (
            peak(results, entry, write, size, form, **kw),
            peak(results, "inplace", write, size, form, **kw),
        )
        ratios[form] = own / base if own is not None and base else None
    return HeadlineCosts(entry, float(mine), tied, ratios, crossover(results))
