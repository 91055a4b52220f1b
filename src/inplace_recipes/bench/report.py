"""Turn benchmark results into the answer, tables and figures the performance page shows.

Every number comes from a results dict (:func:`~inplace_recipes.bench.load_results`
or :func:`~inplace_recipes.bench.run`); nothing here measures. Figures are
one idea each, sized to be read at a page's width (about 700 px).

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
from typing import TYPE_CHECKING, Any

import torch

from ..recipes import RECIPES
from . import consistency
from .entries import COLD, OVERHEAD_WRITES, WRITES, shape_for
from .results import (
    OVERHEAD_GOALS,
    OVERHEAD_SIZES,
    at_overhead,
    find_record,
    instruction_overhead,
    over_goals,
    raw_overhead,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "answer",
    "at_lines",
    "audit_line",
    "consistency_line",
    "figure_against_size",
    "figure_compiled",
    "figure_headline",
    "figure_overhead",
    "goal_line",
    "overhead_lines",
    "recommended",
    "saved_bytes_lines",
    "summary_lines",
]

X = "x"


def _size(n: int) -> str:
    return f"1e{round(math.log10(n))}"


def _span(values: Iterable[float]) -> str:
    v = sorted(values)
    if not v:
        return "n/a"
    return f"{v[0]:.2f}{X}" if f"{v[0]:.2f}" == f"{v[-1]:.2f}" else f"{v[0]:.2f}-{v[-1]:.2f}{X}"


def recommended(write: str, size: int) -> str:
    """The recipe :func:`~inplace_recipes.best_recipe` names for the benchmark's ``write``.

    >>> recommended("row", 10**6) in RECIPES
    True
    """
    from ..recommend import best_recipe

    shape = shape_for(size)
    x = torch.zeros(shape)
    index, value = WRITES[write](shape, x)
    return best_recipe(x, index, value)


def _columns(table: dict[str, dict[tuple[str, int], float]]) -> list[tuple[str, int]]:
    seen = {key for row in table.values() for key in row}
    writes = (*OVERHEAD_WRITES, *(COLD + w for w in OVERHEAD_WRITES))  # cold: instructions only
    return [(w, s) for w in writes for s in OVERHEAD_SIZES if (w, s) in seen]


def _grid(title: str, table: dict[str, dict[tuple[str, int], float]], label: str) -> list[str]:
    columns = _columns(table)
    if not columns:
        return [title, "  (not measured)"]
    lines = [title]
    writes = list(dict.fromkeys(w for w, _ in columns))
    width = 7
    head = f"{'':16}" + "".join(
        f"{w:^{width * sum(1 for c in columns if c[0] == w)}}" for w in writes
    )
    lines.append(head.rstrip())
    lines.append(f"{label:16}" + "".join(f"{_size(s):>{width}}" for _, s in columns))
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
    sizes = ", ".join(_size(s) for s in sorted({s for row in counted.values() for _, s in row}))
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
        cells = [(r, n, w, s) for n in names for (w, s), r in counted[n].items()]
        if not cells:
            parts.append(f"{label} within {goal:.2f}{X} {base} (not counted)")
            continue
        ratio, name, write, size = max(cells)
        shown = "" if name == "at" else f"{name} "
        parts.append(
            f"{label} within {goal:.2f}{X} {base} "
            f"(largest: {shown}{ratio:.2f}{X}, {write} {_size(size)})"
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
        lines.append(f"  {write:8} {_size(size):>5} {pick:15} {ratio:8.2f}{X} {inst:>12}")
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
    lines = [f"bytes saved for backward, {_size(size)} float32 elements"]
    lines.append(f"  {'entry':17}" + "".join(f"{w:>12}" for w in WRITES))
    for e in entries:
        cells = []
        for w in WRITES:
            r = find_record(results, e, w, size)
            v = None if r is None else r.get("saved_bytes")
            cells.append("n/a" if v is None else f"{v:,}")
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
    info = results.get("instructions")
    if info and not info.get("available"):
        lines.append(f"instruction counts: {info.get('reason')}")
    return lines


def _ratio(
    results: dict[str, Any],
    entry: str,
    write: str,
    size: int,
    column: str = "ratio_forward_backward",
    **kw: Any,
) -> float | None:
    r = find_record(results, entry, write, size, **kw)
    return None if r is None else r.get(column)


def _sizes(results: dict[str, Any], write: str) -> list[int]:
    return sorted(
        {
            r["size"]
            for r in results["records"]
            if (r["write"], r["dtype"], r["mode"], r["device"])
            == (write, "float32", "eager", "cpu")
        }
    )


def answer(results: dict[str, Any]) -> str:
    """One paragraph: what in-place costs or saves, with the committed numbers."""
    large: list[float] = []
    small: list[float] = []
    floor: list[float] = []
    for write in WRITES:
        for size in _sizes(results, write):
            ratio = _ratio(results, recommended(write, size), write, size)
            if ratio is None:
                continue
            (large if size >= 10**5 else small).append(ratio)
            if size >= 10**5:
                on_clone = _ratio(results, "inplace_on_clone", write, size)
                if on_clone is not None:
                    floor.append(on_clone)
    saved = {e: find_record(results, e, "element", 10**6) for e in ("inplace", *RECIPES)}
    nbytes = [r["saved_bytes"] for r in saved.values() if r and r.get("saved_bytes") is not None]
    raw = [v for row in raw_overhead(results).values() for v in row.values()]
    at = [v for _, v in at_overhead(results).values()]
    parts = [
        (
            "In eager mode on a CPU, going out of place with the recipe "
            f"``best_recipe`` picks costs {_span(large)} the in-place write's forward + "
            "backward time from 1e5 elements up, where copying the tensor dominates (the "
            f"in-place write on one clone, the floor for any out-of-place write, costs "
            f"{_span(floor)}), and {_span(small)} below, where Python overhead does."
        )
    ]
    if nbytes:
        parts.append(
            f"In memory, in-place saves the new tensor the recipe allocates; for backward, "
            f"the recipes save 0 to {max(nbytes):,} bytes for a one-element write to 1e6 "
            "float32 elements, in-place nothing."
        )
    counted = instruction_overhead(results)
    inst = [v for name, row in counted.items() if name in RECIPES for v in row.values()]
    inst_at = list(counted.get("at", {}).values())
    if raw:
        parts.append(
            f"Each recipe costs {_span(raw)} the raw torch call it wraps at 1e3 to 1e6 elements"
            + (f", and ``at()`` {_span(at)} the recipe it picks" if at else "")
            + (
                f" ({_span(inst)} and {_span(inst_at)} in instructions at "
                f"{_counted_sizes(counted)}, which the machine's load does not move)."
                if inst and inst_at
                else "."
            )
        )
    return " ".join(parts)


def _counted_sizes(counted: dict[str, dict[tuple[str, int], float]]) -> str:
    sizes = sorted({s for row in counted.values() for _, s in row})
    return _size(sizes[0]) if len(sizes) == 1 else f"{_size(sizes[0])} to {_size(sizes[-1])}"


def _figure(width: float = 7.0, height: float = 4.0) -> tuple[Figure, Any]:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def _times_axis(ax: Any) -> None:
    """Log y axis of ratios, labelled ``0.5x``, ``1x``, ``2x`` rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=2))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}{X}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def figure_headline(results: dict[str, Any]) -> Figure:
    """The recommended out-of-place recipe over in-place, against size, one line per write."""
    fig, ax = _figure()
    for write in WRITES:
        sizes = _sizes(results, write)
        points = [(s, _ratio(results, recommended(write, s), write, s)) for s in sizes]
        points = [(s, v) for s, v in points if v is not None]
        if points:
            ax.plot(*zip(*points, strict=True), "-o", label=write, markersize=4)
    ax.axhline(1.0, color="gray", linewidth=1)
    _times_axis(ax)
    ax.set(
        xscale="log",
        xlabel="elements (float32, CPU, one thread)",
        ylabel="time / in-place write",
        title="The recommended recipe against in-place, forward + backward",
    )
    ax.legend(title="write")
    return fig


def figure_against_size(results: dict[str, Any], write: str) -> Figure:
    """Every recipe over in-place against size for one write, the clone floor dotted."""
    fig, ax = _figure()
    for entry in ("inplace_on_clone", *RECIPES):
        points = [(s, _ratio(results, entry, write, s)) for s in _sizes(results, write)]
        points = [(s, v) for s, v in points if v is not None]
        if not points:
            continue
        style = "k:" if entry == "inplace_on_clone" else "-o"
        ax.plot(*zip(*points, strict=True), style, label=entry, markersize=3)
    ax.axhline(1.0, color="gray", linewidth=1)
    _times_axis(ax)
    ax.set(
        xscale="log",
        xlabel="elements (float32)",
        ylabel="time / in-place write",
        title=f"{write} write: forward + backward over in-place",
    )
    ax.legend(fontsize=8, ncol=2)
    return fig


def figure_overhead(results: dict[str, Any]) -> Figure:
    """A heat map of recipe / raw one-liner, recipes against (write, size), numbers written in."""
    table = raw_overhead(results)
    columns = _columns(table)
    names = list(table)
    fig, ax = _figure(7.0, 0.45 * len(names) + 1.6)
    if not columns:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no raw one-liners in these results", ha="center")
        return fig
    values = [[table[n].get(c, math.nan) for c in columns] for n in names]
    image = ax.imshow(
        [[math.log2(v) for v in row] for row in values], cmap="RdYlGn_r", vmin=-1.5, vmax=1.5
    )
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(columns)), [f"{w}\n{_size(s)}" for w, s in columns], fontsize=8)
    ax.set_yticks(range(len(names)), names)
    ax.set_title("recipe / its raw one-liner, forward + backward (1 = no overhead)")
    del image
    return fig


def figure_compiled(results: dict[str, Any], size: int = 10**6) -> Figure:
    """Per write: the fastest eager and fastest compiled recipe, over eager in-place."""
    fig, ax = _figure()
    rows = []
    for write in WRITES:
        eager = [(v, e) for e in RECIPES if (v := _ratio(results, e, write, size)) is not None]
        compiled = [
            (v, e)
            for e in RECIPES
            if (
                v := _ratio(
                    results,
                    e,
                    write,
                    size,
                    mode="compile",
                    column="ratio_forward_backward_eager_inplace",
                )
            )
            is not None
        ]
        if eager and compiled:
            rows.append((write, min(eager), min(compiled)))
    if not rows:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no compiled records in these results", ha="center")
        return fig
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1][0] for r in rows], 0.4, label="eager")
    ax.bar([x + 0.2 for x in xs], [r[2][0] for r in rows], 0.4, label="torch.compile")
    for x, (_, e, c) in zip(xs, rows, strict=True):
        for dx, (_, name) in ((-0.2, e), (0.2, c)):
            ax.text(x + dx, 0.05, name, ha="center", va="bottom", rotation=90, color="white")
    ax.axhline(1.0, color="gray", linewidth=1)
    ax.set_xticks(list(xs), [r[0] for r in rows])
    ax.set(
        ylabel="time / eager in-place write",
        title=f"Fastest recipe, eager and compiled, {_size(size)} float32",
    )
    ax.legend()
    return fig
