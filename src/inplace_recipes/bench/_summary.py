"""What ``python -m inplace_recipes bench`` prints: provenance, overhead tables, goals.

>>> rec = lambda e, t: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 1000,
...     "write": "row", "entry": e, "forward_backward": {"median": t}}
>>> results = {"records": [rec("where", 3e-5), rec("raw_where", 2e-5)]}
>>> print("\\n".join(overhead_lines(results)))  # doctest: +NORMALIZE_WHITESPACE
recipe / its raw one-liner, forward + backward, wall time
                        row
recipe                  1e3
where                 1.50x
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch

from .._pick import best_recipe
from ..recipes import RECIPES
from . import _consistency as consistency
from ._entries import COLD, OVERHEAD_WRITES, WRITES, exactness_costs, shape_for
from ._results import (
    OVERHEAD_GOALS,
    OVERHEAD_SIZES,
    at_overhead,
    find_record,
    instruction_overhead,
    over_goals,
    raw_overhead,
)
from ._statistics import FORMS, has_held_peaks, measured_writes, peak

__all__ = [
    "FORM_WORDS",
    "at_lines",
    "audit_line",
    "consistency_line",
    "goal_line",
    "overhead_columns",
    "overhead_lines",
    "peak_lines",
    "recommended",
    "saved_bytes_lines",
    "size_label",
    "span_label",
    "summary_lines",
]

X = "x"


def size_label(n: int) -> str:
    return f"1e{round(math.log10(n))}"


def span_label(values: Iterable[float]) -> str:
    v = sorted(values)
    if not v:
        return "n/a"
    return f"{v[0]:.2f}{X}" if f"{v[0]:.2f}" == f"{v[-1]:.2f}" else f"{v[0]:.2f}-{v[-1]:.2f}{X}"


def recommended(write: str, size: int) -> str:
    """The recipe :func:`~inplace_recipes.best_recipe` names for the benchmark's ``write``.

    >>> recommended("row", 10**6) in RECIPES
    True
    """
    shape = shape_for(size)
    x = torch.zeros(shape)
    index, value = WRITES[write](shape, x)
    return best_recipe(x, index, value)


def overhead_columns(table: dict[str, dict[tuple[str, int], float]]) -> list[tuple[str, int]]:
    seen = {key for row in table.values() for key in row}
    writes = (*OVERHEAD_WRITES, *(COLD + w for w in OVERHEAD_WRITES))  # cold: instructions only
    return [(w, s) for w in writes for s in OVERHEAD_SIZES if (w, s) in seen]


def _grid(title: str, table: dict[str, dict[tuple[str, int], float]], label: str) -> list[str]:
    columns = overhead_columns(table)
    if not columns:
        return [title, "  (not measured)"]
    lines = [title]
    writes = list(dict.fromkeys(w for w, _ in columns))
    width = 7
    head = f"{'':16}" + "".join(
        f"{w:^{width * sum(1 for c in columns if c[0] == w)}}" for w in writes
    )
    lines.append(head.rstrip())
    lines.append(f"{label:16}" + "".join(f"{size_label(s):>{width}}" for _, s in columns))
    for name, row in table.items():
        cells = [f"{row[c]:.2f}{X}" if c in row else "-" for c in columns]
        lines.append(f"{name:16}" + "".join(f"{c:>{width}}" for c in cells))
    return lines


def _clock(results: dict[str, Any]) -> str:
    """What the times are: process CPU time, or wall time (results made before ``clock``)."""
    return "CPU time" if results.get("config", {}).get("clock") == "cpu" else "wall time"


def overhead_lines(results: dict[str, Any]) -> list[str]:
    """Each recipe's time over its raw one-liner's, by write and size (and instructions)."""
    lines = _grid(
        f"recipe / its raw one-liner, forward + backward, {_clock(results)}",
        raw_overhead(results),
        "recipe",
    )
    if results.get("config", {}).get("instructions_alongside"):
        lines.append(
            "(short timings beside callgrind on the other core: rough; the instruction "
            "counts below do not depend on load)"
        )
    counts = instruction_overhead(results)
    recipes = {k: v for k, v in counts.items() if k in RECIPES}
    if recipes:
        lines += ["", *_grid("the same, in instructions (callgrind)", recipes, "recipe")]
    return lines


def goal_line(results: dict[str, Any]) -> str:
    """The instruction counts against :data:`~inplace_recipes.bench.OVERHEAD_GOALS`.

    >>> row = lambda e, n: {"size": 1000, "write": "row", "entry": e, "instructions": n}
    >>> counts = [row("where", 104), row("raw_where", 100)]
    >>> goal_line({"instructions": {"available": True, "counts": counts}})
    'goals (instructions, 1e3): every recipe within 1.10x its raw one-liner (largest: where 1.04x, row 1e3); at() within 1.05x the recipe it picks (not counted)'
    """
    counted = instruction_overhead(results)
    if not counted:
        return "goals: no instruction counts in these results"
    sizes = ", ".join(
        size_label(s) for s in sorted({s for row in counted.values() for _, s in row})
    )
    parts = []
    for label, names, goal, base in (
        (
            "every recipe",
            [n for n in counted if n in RECIPES],
            OVERHEAD_GOALS["recipe"],
            "its raw one-liner",
        ),
        ("at()", ["at"] if "at" in counted else [], OVERHEAD_GOALS["at"], "the recipe it picks"),
    ):
        cells = [
            (r, n, w, s)
            for n in names
            for (w, s), r in counted[n].items()
            if (n, w.removeprefix(COLD)) not in exactness_costs()
        ]
        if not cells:
            parts.append(f"{label} within {goal:.2f}{X} {base} (not counted)")
            continue
        ratio, name, write, size = max(cells)
        shown = "" if name == "at" else f"{name} "
        parts.append(
            f"{label} within {goal:.2f}{X} {base} "
            f"(largest: {shown}{ratio:.2f}{X}, {write} {size_label(size)})"
        )
    exceptions: dict[tuple[str, float], list[tuple[float, str]]] = {}
    for (name, write), (goal, _) in exactness_costs().items():
        ratios = [
            r for (w, _s), r in counted.get(name, {}).items() if w.removeprefix(COLD) == write
        ]
        if ratios:
            exceptions.setdefault((name, goal), []).append((max(ratios), write))
    for (name, goal), cases in exceptions.items():
        ratio, _ = max(cases)
        writes = " and ".join(w for _, w in cases)
        parts.append(
            f"{name} for {writes} writes within its own {goal:.2f}{X} (largest: {ratio:.2f}{X}; "
            "it reads the index through torch's indexing, for setitem's negative positions "
            "and IndexError)"
        )
    over = over_goals(results)
    text = f"goals (instructions, {sizes}): " + "; ".join(parts)
    return text if not over else f"goals (instructions, {sizes}) missed: " + "; ".join(over)


def at_lines(results: dict[str, Any]) -> list[str]:
    """``at(x)[i].set(v)`` against the recipe it picks: wall time and instructions."""
    table = at_overhead(results)
    counts = instruction_overhead(results).get("at", {})
    if not table:
        return ["at() / the recipe it picks: not measured"]
    lines = ["at(x)[i].set(v) / the recipe it picks, forward + backward"]
    lines.append(
        f"  {'write':8} {'size':>5} {'picks':15} {_clock(results):>9} {'instructions':>12}"
    )
    for (write, size), (pick, ratio) in table.items():
        n = counts.get((write, size))
        inst = "-" if n is None else f"{n:.2f}{X}"
        lines.append(f"  {write:8} {size_label(size):>5} {pick:15} {ratio:8.2f}{X} {inst:>12}")
    return lines


def audit_line(results: dict[str, Any]) -> str:
    """``audit()`` and ``detect_anomaly`` on the MLP step, as multiples of the plain step.

    >>> audit_line({"audit": {"ratio": {"audit": 2.0, "anomaly": 3.0,
    ...     "audit_over_anomaly": 0.667}, "seconds": {"plain": 1e-4}}})
    'MLP step (100 us plain): audit() 2.00x, detect_anomaly 3.00x, audit / anomaly 0.67x'
    """
    info = results.get("audit")
    if not info:
        return "audit() and detect_anomaly: not measured"
    r = info["ratio"]
    return (
        f"MLP step ({info['seconds']['plain'] * 1e6:.0f} us plain): audit() {r['audit']:.2f}{X}, "
        f"detect_anomaly {r['anomaly']:.2f}{X}, audit / anomaly {r['audit_over_anomaly']:.2f}{X}"
    )


def consistency_line(results: dict[str, Any]) -> str:
    """Whether the run agrees with itself: the pairs, the tolerance, what was repeated."""
    info = results.get("consistency")
    if info is None:
        return "self-consistency: not checked (results made before the check existed)"
    now = consistency.inconsistencies(results["records"], info["tolerance"])
    pairs = ", ".join(f"{a} = {b}" for a, b, _ in info["pairs"])
    repeated = len(info["repeated"])
    verdict = "passes" if not now else f"FAILS for {len(now)} pair(s): treat the run as noisy"
    return (
        f"self-consistency ({pairs}; within {(info['tolerance'] - 1) * 100:.0f}%): {verdict}; "
        f"{repeated} configuration(s) measured again"
    )


def saved_bytes_lines(results: dict[str, Any], size: int = 10**6) -> list[str]:
    """Bytes autograd saves for backward, each write and entry, float32 at ``size``."""
    entries = ["inplace", "inplace_on_clone", *RECIPES]
    lines = [f"bytes saved for backward, {size_label(size)} float32 elements"]
    lines.append(f"  {'entry':17}" + "".join(f"{w:>12}" for w in measured_writes(results)))
    for e in entries:
        cells = []
        for w in measured_writes(results):
            r = find_record(results, e, w, size)
            v = None if r is None else r.get("saved_bytes")
            cells.append("n/a" if v is None else f"{v:,}")
        lines.append(f"  {e:17}" + "".join(f"{c:>12}" for c in cells))
    return lines


#: Each form of :data:`~inplace_recipes.bench._statistics.FORMS`, in words.
FORM_WORDS = {
    "temporary": "the tensor written from a temporary (y = f(a + b), or c = f(c))",
    "held": "the tensor written from kept alive through backward (y = f(c), c used again)",
}


def peak_lines(results: dict[str, Any], size: int = 10**6) -> list[str]:
    """Peak MiB of one forward + backward step, each write and entry, float32 at ``size``,
    in both forms (:data:`FORM_WORDS`); ``[]`` when the run counted no peaks.

    >>> rec = lambda e, n, h: {"device": "cpu", "dtype": "float32", "mode": "eager", "size": 10,
    ...     "write": "row", "entry": e, "peak_bytes": n, "peak_bytes_held": h}
    >>> run = {"config": {"writes": ["row"]}, "records": [rec("inplace", 2**21, 2**21)]}
    >>> print("\\n".join(peak_lines(run, 10)[:3]))
    peak memory of one step (MiB), 1e1 float32 elements, the tensor written from a temporary (y = f(a + b), or c = f(c))
      entry                     row
      inplace                  2.00
    """
    if not any(r.get("peak_bytes") is not None for r in results["records"]):
        return []
    forms = [f for f in FORMS if f == "temporary" or has_held_peaks(results)]
    entries = ["inplace", "inplace_on_clone", *RECIPES]
    writes = measured_writes(results)
    lines: list[str] = []
    for form in forms:
        if lines:
            lines.append("")
        lines.append(
            f"peak memory of one step (MiB), {size_label(size)} float32 elements, {FORM_WORDS[form]}"
        )
        lines.append(f"  {'entry':17}" + "".join(f"{w:>12}" for w in writes))
        for e in entries:
            cells = []
            for w in writes:
                n = peak(results, e, w, size, form)
                cells.append("n/a" if n is None else f"{n / 2**20:.2f}")
            lines.append(f"  {e:17}" + "".join(f"{c:>12}" for c in cells))
    return lines


def summary_lines(results: dict[str, Any]) -> list[str]:
    """What the command line prints: provenance, the overhead tables, audit, consistency."""
    prov = results["provenance"]
    lines = [
        (
            f"torch {prov['torch']}, {prov['cpu']}, {prov['threads']} thread(s), "
            f"{prov.get('seconds', 0):.0f} s, load average {prov.get('load_average_start')}"
        ),
        "",
        *overhead_lines(results),
        "",
        *at_lines(results),
        "",
        audit_line(results),
        consistency_line(results),
    ]
    peaks = peak_lines(results)
    if peaks:
        lines += ["", *peaks]
    info = results.get("instructions")
    if info and not info.get("available"):
        lines.append(f"instruction counts: {info.get('reason')}")
    return lines
