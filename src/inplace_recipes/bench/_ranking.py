"""The offline ranking: which recipe the committed benchmark finds fastest, per kind of write.

:func:`ranking` orders the recipes for each kind of write by forward +
backward time over in-place (geometric mean over the sizes from 1e5 elements
up and every dtype measured, eager, CPU). Two recipes closer than the run's
noise band (:func:`~inplace_recipes.bench._consistency.noise_band`: the
largest disagreement between two timings of identical work), or whose
bootstrap interval (:func:`interval_between`) holds 1, are a tie, and
:func:`preferences` prefers ``clone``, the reference, whenever it ties for
fastest. :data:`~inplace_recipes._pick.PREFERENCES` is that choice for the
committed benchmark (a test fails when it no longer is).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..recipes import RECIPES
from ._consistency import in_band, noise_band
from ._intervals import geometric_ratio_interval, holds_one

__all__ = [
    "RANKED_SIZES",
    "interval_between",
    "preferences",
    "ranking",
    "tied_with_fastest",
    "tied_with_slowest",
]

#: The sizes :func:`ranking` averages over: where copying, not Python, decides.
RANKED_SIZES = (10**5, 10**6, 10**7)


def ranking(
    results: dict[str, Any], sizes: Iterable[int] = RANKED_SIZES
) -> dict[str, list[tuple[str, float]]]:
    """``{write: [(recipe, ratio to in-place), ...]}``, fastest first.

    The ratio is the geometric mean, over those of ``sizes`` the results hold
    and every dtype, of the forward + backward time over the in-place time,
    eager, CPU, from a results dict of :func:`inplace_recipes.bench.run`; a
    recipe counts only if it was correct and measured at all of them, and
    only recipes count (not the baselines, raw one-liners or ``at()``).
    Averaging sizes and dtypes keeps one noisy measurement from deciding.

    >>> fake = {"records": [
    ...     {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10**6,
    ...      "write": "row", "entry": e, "correct": True, "ratio_forward_backward": t}
    ...     for e, t in [("inplace", 1.0), ("where", 3.0), ("clone", 1.2)]]}
    >>> ranking(fake, sizes=[10**6])
    {'row': [('clone', 1.2), ('where', 3.0)]}
    """
    wanted = set(sizes)
    logs: dict[tuple[str, str], list[float]] = {}
    for r in results["records"]:
        if (r["device"], r["mode"]) != ("cpu", "eager") or r["size"] not in wanted:
            continue
        if r["entry"] not in RECIPES or not r["correct"]:  # baselines, raw one-liners, at()
            continue
        ratio = r["ratio_forward_backward"]
        if ratio:
            logs.setdefault((r["write"], r["entry"]), []).append(math.log(ratio))
    most = {w: max(len(v) for (w2, _), v in logs.items() if w2 == w) for w, _ in logs}
    table: dict[str, list[tuple[str, float]]] = {}
    for (write, entry), values in logs.items():
        if len(values) == most[write]:
            mean = math.exp(sum(values) / len(values))
            table.setdefault(write, []).append((entry, round(mean, 3)))
    return {w: sorted(rows, key=lambda row: row[1]) for w, rows in table.items()}


def interval_between(
    results: dict[str, Any], write: str, a: str, b: str, sizes: Iterable[int] = RANKED_SIZES
) -> tuple[float, float] | None:
    """The 95% bootstrap interval of ``a``'s time over ``b``'s, as :func:`ranking` averages it.

    The geometric mean over the sizes and dtypes where both were timed, each
    configuration's interleaved rounds resampled in pairs
    (:func:`~inplace_recipes.bench._intervals.geometric_ratio_interval`);
    ``None`` where the results kept no rounds (runs made before they did).

    >>> rec = lambda e, rounds: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10**6, "write": "row", "entry": e, "correct": True,
    ...     "forward_backward": {"median": min(rounds), "round_minima": rounds}}
    >>> fake = {"records": [rec("where", [1.2, 1.3, 1.2]), rec("clone", [1.0, 1.0, 1.1])]}
    >>> [round(v, 2) for v in interval_between(fake, "row", "where", "clone")]
    [1.09, 1.3]
    >>> interval_between({"records": []}, "row", "where", "clone") is None
    True
    """
    wanted = set(sizes)
    rounds: dict[str, dict[tuple[int, str], list[float]]] = {a: {}, b: {}}
    for r in results["records"]:
        if (r["device"], r["mode"], r["write"]) != ("cpu", "eager", write):
            continue
        if r["entry"] in rounds and r["size"] in wanted and r.get("correct", True):
            minima = (r.get("forward_backward") or {}).get("round_minima")
            if minima:
                rounds[r["entry"]][r["size"], r["dtype"]] = minima
    pairs = [
        (rounds[a][key], rounds[b][key])
        for key in sorted(rounds[a].keys() & rounds[b].keys())
        if len(rounds[a][key]) == len(rounds[b][key])
    ]
    return geometric_ratio_interval(pairs) if pairs else None


def tied_with_fastest(
    ranked: list[tuple[str, float]],
    band: float,
    results: dict[str, Any] | None = None,
    write: str | None = None,
) -> list[str]:
    """The names of ``ranked`` (fastest first) tied with the first.

    Tied: within a factor ``band`` of the first, or, given the ``results`` and
    ``write`` the ranking came from, such that the :func:`interval_between` it
    and the first holds 1. Only a difference beyond both is a ranking.

    >>> tied_with_fastest([("a", 1.0), ("b", 1.15), ("c", 1.3)], band=1.2)
    ['a', 'b']
    """
    if not ranked:
        return []
    first, fastest = ranked[0]
    tied = []
    for name, ratio in ranked:
        if in_band(ratio / fastest, band) or (
            results is not None
            and write is not None
            and holds_one(interval_between(results, write, name, first))
        ):
            tied.append(name)
    return tied


def tied_with_slowest(
    ranked: list[tuple[str, float]],
    band: float,
    results: dict[str, Any] | None = None,
    write: str | None = None,
) -> list[str]:
    """The names of ``ranked`` (fastest first) tied with the last: the same rule as
    :func:`tied_with_fastest`, from the other end.

    >>> tied_with_slowest([("a", 1.0), ("b", 1.15), ("c", 1.3)], band=1.2)
    ['b', 'c']
    """
    if not ranked:
        return []
    last, slowest = ranked[-1]
    return [
        name
        for name, ratio in ranked
        if in_band(slowest / ratio, band)
        or (
            results is not None
            and write is not None
            and holds_one(interval_between(results, write, last, name))
        )
    ]


def preferences(results: dict[str, Any], band: float | None = None) -> dict[str, tuple[str, ...]]:
    """What :data:`PREFERENCES` would be for ``results``: per measured write, the pick then clone.

    The pick is ``clone`` when it ties with the fastest (:func:`tied_with_fastest`:
    within ``band``, the run's
    :func:`~inplace_recipes.bench._consistency.noise_band` at
    :data:`RANKED_SIZES` by default, or with a bootstrap interval that holds
    1), else the fastest recipe.

    >>> rec = lambda e, t: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10**6, "write": "row", "entry": e, "correct": True,
    ...     "ratio_forward_backward": t}
    >>> preferences({"records": [rec("clone", 1.3), rec("where", 1.2)]}, band=1.1)
    {'row': ('clone',)}
    >>> preferences({"records": [rec("clone", 1.5), rec("where", 1.2)]}, band=1.1)
    {'row': ('where', 'clone')}
    """
    if band is None:
        band = noise_band(results, sizes=RANKED_SIZES)
    chosen: dict[str, tuple[str, ...]] = {}
    for write, ranked in ranking(results).items():
        tied = tied_with_fastest(ranked, band, results, write)
        pick = "clone" if "clone" in tied else ranked[0][0]
        chosen[write] = (pick,) if pick == "clone" else (pick, "clone")
    return chosen
