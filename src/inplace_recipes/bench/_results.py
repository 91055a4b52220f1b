"""Read benchmark results: records, ratio tables, and the overhead comparisons.

The results are the JSON dict :func:`~inplace_recipes.bench.run` returns:
``provenance``, ``config``, ``records`` (one per entry, size, dtype, write,
mode, device), ``checks``, and, where measured, ``consistency``,
``instructions`` and ``audit``. :func:`load_results` reads a file of them;
files made before the raw one-liners existed still load, and the functions
here return empty tables for what they lack.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "run.json"
>>> _ = path.write_text('{"provenance": {}, "config": {}, "records": [], "checks": []}')
>>> sorted(load_results(path))
['checks', 'config', 'provenance', 'records']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._entries import COLD, OVERHEAD_WRITES, exactness_costs, raw_of
from ._intervals import seconds

__all__ = [
    "OVERHEAD_GOALS",
    "at_overhead",
    "find_record",
    "instruction_overhead",
    "load_results",
    "over_goals",
    "ratio_table",
    "raw_overhead",
]

#: The sizes and writes of the overhead comparisons.
OVERHEAD_SIZES = (10**3, 10**4, 10**6)


def load_results(path: str | Path) -> dict[str, Any]:
    """The results in the file ``path`` (a run of ``python -m inplace_recipes bench --output``).

    The project's committed run is in its source tree
    (``docs/measurements/bench/cpu-full.json``), not in the installed package.
    """
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data


def find_record(
    results: dict[str, Any],
    entry: str,
    write: str,
    size: int,
    *,
    dtype: str = "float32",
    mode: str = "eager",
    device: str = "cpu",
) -> dict[str, Any] | None:
    """The record of one entry in one configuration, or ``None``.

    >>> tiny = {"records": [{"device": "cpu", "dtype": "float32", "write": "row",
    ...     "mode": "eager", "entry": "where", "size": 100}]}
    >>> find_record(tiny, "where", "row", 100)["entry"], find_record(tiny, "where", "row", 10)
    ('where', None)
    """
    for r in results["records"]:
        if (r["entry"], r["write"], r["size"], r["dtype"], r["mode"], r["device"]) == (
            entry,
            write,
            size,
            dtype,
            mode,
            device,
        ):
            return r  # type: ignore[no-any-return]
    return None


def ratio_table(
    results: dict[str, Any],
    *,
    phase: str = "forward_backward",
    device: str = "cpu",
    dtype: str = "float32",
    write: str = "element",
    mode: str = "eager",
    against: str = "",
) -> dict[str, dict[int, float | None]]:
    """``{entry: {size: ratio}}`` from ``results``; ``against`` is ``""``, ``"floor"`` or ``"eager_inplace"``.

    >>> tiny = {"records": [{"device": "cpu", "dtype": "float32", "write": "element",
    ...     "mode": "eager", "entry": "where", "size": 100, "ratio_forward_backward": 2.0}]}
    >>> ratio_table(tiny)
    {'where': {100: 2.0}}
    """
    column = f"ratio_{phase}" + (f"_{against}" if against else "")
    table: dict[str, dict[int, float | None]] = {}
    for r in results["records"]:
        if (r["device"], r["dtype"], r["write"], r["mode"]) == (device, dtype, write, mode):
            table.setdefault(r["entry"], {})[r["size"]] = r.get(column)
    return table


def _median(record: dict[str, Any] | None, phase: str) -> float | None:
    if record is None or not record.get(phase):
        return None
    return seconds(record[phase])


def raw_overhead(
    results: dict[str, Any],
    *,
    phase: str = "forward_backward",
    sizes: tuple[int, ...] = OVERHEAD_SIZES,
    writes: tuple[str, ...] = OVERHEAD_WRITES,
) -> dict[str, dict[tuple[str, int], float]]:
    """``{recipe: {(write, size): recipe time / its raw one-liner's time}}``, where both ran.

    >>> rec = lambda e, t: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 1000,
    ...     "write": "row", "entry": e, "forward_backward": {"median": t}}
    >>> raw_overhead({"records": [rec("where", 3.0), rec("raw_where", 2.0)]})
    {'where': {('row', 1000): 1.5}}
    """
    table: dict[str, dict[tuple[str, int], float]] = {}
    for recipe, raw in raw_of().items():
        for write in writes:
            for size in sizes:
                mine = _median(find_record(results, recipe, write, size), phase)
                base = _median(find_record(results, raw, write, size), phase)
                if mine and base:
                    table.setdefault(recipe, {})[write, size] = mine / base
    return table


def at_overhead(
    results: dict[str, Any],
    *,
    phase: str = "forward_backward",
    sizes: tuple[int, ...] = OVERHEAD_SIZES,
    writes: tuple[str, ...] = OVERHEAD_WRITES,
) -> dict[tuple[str, int], tuple[str, float]]:
    """``{(write, size): (recipe at() picks, at() time / that recipe's time)}``.

    >>> rec = lambda e, t, **kw: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 1000, "write": "row", "entry": e, "forward_backward": {"median": t}} | kw
    >>> at_overhead({"records": [rec("clone", 2.0), rec("at", 2.2, picks="clone")]})
    {('row', 1000): ('clone', 1.1)}
    """
    table: dict[tuple[str, int], tuple[str, float]] = {}
    for write in writes:
        for size in sizes:
            at = find_record(results, "at", write, size)
            if at is None or not at.get("picks"):
                continue
            mine = _median(at, phase)
            base = _median(find_record(results, at["picks"], write, size), phase)
            if mine and base:
                table[write, size] = (at["picks"], round(mine / base, 6))
    return table


def instruction_overhead(results: dict[str, Any]) -> dict[str, dict[tuple[str, int], float]]:
    """Like :func:`raw_overhead`, from instruction counts; ``"at"`` is against the recipe it picks.

    Empty when the results hold no counts (no valgrind on the machine that made them).

    >>> row = lambda e, n: {"size": 1000, "write": "row", "entry": e, "instructions": n}
    >>> counts = [row("where", 300), row("raw_where", 200)]
    >>> instruction_overhead({"instructions": {"available": True, "counts": counts}})
    {'where': {('row', 1000): 1.5}}
    """
    info = results.get("instructions") or {}
    if not info.get("available"):
        return {}
    count = {(c["entry"], c["write"], c["size"]): c["instructions"] for c in info["counts"]}
    picked = {(c["write"], c["size"]): c["picks"] for c in info["counts"] if c.get("picks")}
    table: dict[str, dict[tuple[str, int], float]] = {}
    raws = raw_of()
    for (entry, write, size), n in count.items():
        if not n:
            continue
        if entry in raws:
            base = count.get((raws[entry], write, size))
        elif entry == "at":
            at = find_record(results, "at", write, size) if "records" in results else None
            picks = picked.get((write, size)) or (at.get("picks") if at else None)
            base = count.get((picks, write, size)) if picks else None
        else:
            continue
        if base:
            table.setdefault(entry, {})[write, size] = n / base
    return table


#: What the package may add on top of torch, in instructions: a recipe over
#: its raw one-liner, ``at()`` over the recipe it picks (issue 11's goals).
OVERHEAD_GOALS: dict[str, float] = {"recipe": 1.10, "at": 1.05}


def over_goals(results: dict[str, Any]) -> list[str]:
    """Each instruction-count ratio above :data:`OVERHEAD_GOALS`, as a line; ``[]`` if none.

    A write of :func:`~inplace_recipes.bench._entries.exactness_costs` is held
    to the goal given there, with its reason.

    >>> row = lambda e, n: {"size": 1000, "write": "row", "entry": e, "instructions": n}
    >>> counts = [row("where", 230), row("raw_where", 200)]
    >>> over_goals({"instructions": {"available": True, "counts": counts}})
    ['where at 1e3, row: 1.150x its raw one-liner (goal 1.10x)']
    """
    lines = []
    costs = exactness_costs()
    for entry, cells in instruction_overhead(results).items():
        base = "the recipe it picks" if entry == "at" else "its raw one-liner"
        for (write, size), ratio in sorted(cells.items()):
            goal = OVERHEAD_GOALS["at" if entry == "at" else "recipe"]
            goal = costs.get((entry, write.removeprefix(COLD)), (goal, ""))[0]
            if ratio > goal:
                at_size = f"{size:.0e}".replace("e+0", "e")
                lines.append(
                    f"{entry} at {at_size}, {write}: {ratio:.3f}x {base} (goal {goal:.2f}x)"
                )
    return lines
