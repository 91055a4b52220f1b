"""Which recipe to use for an index: the fastest that is correct for it, clone on a tie.

:func:`ranking` orders the recipes for each kind of write by forward +
backward time over in-place (geometric mean over the sizes from 1e5 elements
up and every dtype measured, eager, CPU). Two recipes closer than the run's
noise band (:func:`~inplace_recipes.bench.consistency.noise_band`: the
largest disagreement between two timings of identical work), or whose
bootstrap interval (:func:`interval_between`) holds 1, are a tie, and
:func:`preferences` prefers ``clone``, the reference, whenever it ties for
fastest. :data:`PREFERENCES` is that choice for the committed benchmark
(``docs/measurements/bench/cpu-full.json``; a test fails when it no longer is),
and :func:`best_recipe` takes the first recipe in it that can express the
index and value.

>>> import torch
>>> best_recipe(torch.zeros(3, 4), 1, 0.0)
'clone'
>>> best_recipe(torch.zeros(3, 4), torch.tensor([[True] * 4, [False] * 4, [True] * 4]), 0.0)
'where'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from .indexing import IndexPlan
from .recipes import RECIPES

__all__ = [
    "PREFERENCES",
    "RANKED_SIZES",
    "best_recipe",
    "interval_between",
    "preferences",
    "quick_recipe",
    "ranking",
    "tied_with_fastest",
    "tied_with_slowest",
    "write_kind",
]

#: The sizes :func:`ranking` averages over: where copying, not Python, decides.
RANKED_SIZES = (10**5, 10**6, 10**7)

#: For each kind of write, the recipe to use, then ``clone`` (clone then
#: setitem), the reference, correct for every index: ``preferences(results)``
#: of the committed benchmark, the fastest recipe or ``clone`` where it ties.
PREFERENCES: dict[str, tuple[str, ...]] = {
    # x[i, j] = v: ints only, more than one
    "element": ("clone",),
    # x[i] = v: one int, a whole slab
    "row": ("clone",),
    # a basic index with a slice: x[:, 1::10] = v
    "slice": ("clone",),
    # x[mask] = v: one boolean mask
    "mask": ("where", "clone"),
    # a basic index and a tensor value that requires grad
    "value_grad": ("clone",),
    # index tensors and lists (benchmarked as x[t] = 0 and x[[a, b, c]] = 0)
    "advanced": ("clone",),
}

#: Kinds of write that may not contain the same position twice for the recipe
#: to match setitem; with duplicates the reference ``clone`` is used.
_NO_DUPLICATES = {"index_put", "scatter"}


def _first_for_every_basic_write() -> str | None:
    """The recipe that every kind of write with ints and slices ranks first, if
    one does and it takes every value (``masked_fill`` writes single values only)."""
    firsts = {PREFERENCES[kind][0] for kind in ("element", "row", "slice", "value_grad")}
    if len(firsts) == 1 and "masked_fill" not in firsts:
        return firsts.pop()
    return None


_BASIC_FIRST = _first_for_every_basic_write()
#: The recipe index tensors rank first, if it needs no duplicate check.
_ADVANCED_FIRST = (
    None
    if PREFERENCES["advanced"][0] in {*_NO_DUPLICATES, "masked_fill"}
    else PREFERENCES["advanced"][0]
)


def quick_recipe(index: Any, value: Any) -> str | None:
    """:func:`best_recipe`'s answer when the index's type alone gives it, else ``None``.

    It does not check the index (the recipe will): for ints and slices when
    every basic write ranks the same recipe first, for one boolean mask, and
    for one index tensor or list of ints when index tensors rank first a
    recipe that needs no duplicate check. :func:`~inplace_recipes.at` asks it
    first, so that a common write is not planned twice.

    >>> import torch
    >>> quick_recipe(1, 0.0), quick_recipe(torch.tensor([True, False]), 0.0)
    ('clone', 'where')
    >>> quick_recipe([0, 1], 0.0), quick_recipe([0, slice(None)], 0.0)
    ('clone', None)
    """
    tp = type(index)
    if tp is Tensor:
        if index.dtype != torch.bool:
            return _ADVANCED_FIRST
        if index.ndim == 0:
            return None
        for name in PREFERENCES["mask"]:
            if name == "masked_fill" and isinstance(value, Tensor) and value.numel() != 1:
                continue
            return name
        return None  # pragma: no cover - every list ends with clone
    if tp is list:
        for i in index:
            if type(i) is not int:
                return None
        return _ADVANCED_FIRST
    if _BASIC_FIRST is None:
        return None
    if tp is int or tp is slice:
        return _BASIC_FIRST
    if tp is tuple:
        for i in index:
            if type(i) is not int and type(i) is not slice:
                return None
        return _BASIC_FIRST
    return None


def write_kind(x: Tensor, index: Any) -> str:
    """The key of :data:`PREFERENCES` for ``x[index] = ...``.

    >>> import torch
    >>> [write_kind(torch.zeros(4, 4), i) for i in [(1, 2), 1, (slice(None), slice(0, 4, 2))]]
    ['element', 'row', 'slice']
    """
    return _write_kind(IndexPlan.of(x, index))


def _write_kind(plan: IndexPlan) -> str:
    if plan.kind == "mask":
        return "mask"
    if plan.kind == "advanced":
        return "advanced"
    ints = [s for _, s in plan.steps if not isinstance(s, slice)]
    if len(ints) == len(plan.steps) and len(ints) >= 2:
        return "element"
    if len(plan.steps) == 1 and ints:
        return "row"
    return "slice"


def best_recipe(x: Tensor, index: Any, value: Any) -> str:
    """The name in :data:`~inplace_recipes.RECIPES` to use for ``x[index] = value``.

    The fastest measured recipe for this kind of write, or ``clone`` where it
    is as fast within the benchmark's noise band: the first recipe of
    :data:`PREFERENCES` for this kind of write that takes
    the index and value: ``masked_fill`` only writes a single value,
    ``select_scatter`` only basic indices, and ``index_put``/``scatter`` are
    skipped when an index tensor names a position twice.

    >>> import torch
    >>> best_recipe(torch.zeros(4, 4), (1, 2), 0.0)
    'clone'
    >>> best_recipe(torch.zeros(4, 4), torch.tensor([0, 2]), 0.0)
    'clone'
    """
    plan = IndexPlan.of(x, index)  # once; duplicates are looked for only if it matters
    kind = _write_kind(plan)
    single = not isinstance(value, Tensor) or value.numel() == 1
    if kind in {"element", "row", "slice"} and not single and value.requires_grad:
        kind = "value_grad"
    for name in PREFERENCES[kind]:
        if name == "masked_fill" and not single:
            continue
        if name in _NO_DUPLICATES and kind == "advanced" and plan.has_duplicates():
            continue
        return name
    return "clone"  # pragma: no cover - every list ends with clone


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
    (:func:`~inplace_recipes.bench.intervals.geometric_ratio_interval`);
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
    from .bench.intervals import geometric_ratio_interval

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
    from .bench.consistency import in_band

    if not ranked:
        return []
    first, fastest = ranked[0]
    tied = []
    for name, ratio in ranked:
        if in_band(ratio / fastest, band) or (
            results is not None
            and write is not None
            and _holds_one(interval_between(results, write, name, first))
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
    from .bench.consistency import in_band

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
            and _holds_one(interval_between(results, write, last, name))
        )
    ]


def _holds_one(interval: tuple[float, float] | None) -> bool:
    from .bench.intervals import holds_one

    return holds_one(interval)


def preferences(results: dict[str, Any], band: float | None = None) -> dict[str, tuple[str, ...]]:
    """What :data:`PREFERENCES` would be for ``results``: per measured write, the pick then clone.

    The pick is ``clone`` when it ties with the fastest (:func:`tied_with_fastest`:
    within ``band``, the run's
    :func:`~inplace_recipes.bench.consistency.noise_band` at
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
        from .bench.consistency import noise_band

        band = noise_band(results, sizes=RANKED_SIZES)
    chosen: dict[str, tuple[str, ...]] = {}
    for write, ranked in ranking(results).items():
        tied = tied_with_fastest(ranked, band, results, write)
        pick = "clone" if "clone" in tied else ranked[0][0]
        chosen[write] = (pick,) if pick == "clone" else (pick, "clone")
    return chosen
