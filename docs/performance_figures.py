"""The performance page's figures, one idea each, sized for a page's width (about 700 px).

Every number comes from a results dict; nothing here measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from inplace_recipes.bench import _consistency as consistency
from inplace_recipes.bench._results import instruction_overhead
from inplace_recipes.bench._statistics import (
    compiled_ratio,
    crossover,
    has_intervals,
    instruction_ratio,
    interval,
    measured_writes,
    point_ratio,
    ratio_of,
    sizes_timed,
)
from inplace_recipes.bench._summary import X, overhead_columns, recommended, size_label
from inplace_recipes.recipes import RECIPES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "figure_against_size",
    "figure_compiled",
    "figure_headline",
    "figure_instructions",
    "figure_overhead",
]


def _bars(results: dict[str, Any]) -> str:
    return "95% bootstrap interval" if has_intervals(results) else "noise band"


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


def _errorbars(
    ax: Any,
    results: dict[str, Any],
    entry: str,
    write: str,
    sizes: Iterable[int],
    **style: Any,
) -> bool:
    """Plot ``entry``'s ratio to in-place against size with its :func:`interval`; False if none."""
    points = []
    for s in sizes:
        ratio, span = point_ratio(results, entry, write, s), interval(results, entry, write, s)
        if ratio is not None and span is not None:
            points.append((s, ratio, ratio - span[0], span[1] - ratio))
    if not points:
        return False
    xs, ys, lo, hi = zip(*points, strict=True)
    ax.errorbar(xs, ys, yerr=[lo, hi], capsize=3, markersize=5, linewidth=1.5, **style)
    return True


def _readable(ax: Any, title: str) -> None:
    ax.set_title(title, fontsize=12)
    ax.xaxis.label.set_size(11)
    ax.yaxis.label.set_size(11)
    ax.tick_params(labelsize=10)


def figure_headline(results: dict[str, Any]) -> Figure:
    """The recommended recipe over in-place, from :func:`crossover` up, with intervals."""
    fig, ax = _figure()
    edge = crossover(results)
    for write in measured_writes(results):
        sizes = [s for s in sizes_timed(results, write) if s >= edge]
        picks = {recommended(write, s) for s in sizes}
        for pick in sorted(picks):
            chosen = [s for s in sizes if recommended(write, s) == pick]
            _errorbars(ax, results, pick, write, chosen, fmt="-o", label=f"{write} ({pick})")
    ax.axhline(1.0, color="gray", linewidth=1)
    _times_axis(ax)
    ax.set(
        xscale="log",
        xlabel="elements (float32, CPU, one thread)",
        ylabel="time / in-place write",
    )
    _readable(ax, f"The recipe best_recipe picks, over in-place\n(bars: {_bars(results)})")
    ax.legend(title="write (recipe)", fontsize=10)
    return fig


def figure_instructions(results: dict[str, Any]) -> Figure:
    """The recommended recipe over in-place in instructions executed, at the counted sizes."""
    fig, ax = _figure()
    info = results.get("instructions") or {}
    sizes = sorted({c["size"] for c in info.get("counts", [])})
    drawn = False
    for write in measured_writes(results):
        points = [
            (s, n)
            for s in sizes
            if (n := instruction_ratio(results, recommended(write, s), write, s)) is not None
        ]
        if points:
            ax.plot(*zip(*points, strict=True), "-o", label=write, markersize=5)
            drawn = True
    if not drawn:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no instruction counts in these results", ha="center")
        return fig
    ax.axhline(1.0, color="gray", linewidth=1)
    _times_axis(ax)
    ax.set(xscale="log", xlabel="elements (float32)", ylabel="instructions / in-place write")
    _readable(ax, "The recipe best_recipe picks, over in-place, in instructions (callgrind)")
    ax.legend(title="write", fontsize=10)
    return fig


def figure_against_size(results: dict[str, Any], write: str) -> Figure:
    """Every recipe over in-place against size for one write, with intervals; the copy dotted."""
    fig, ax = _figure(7.0, 5.0)
    sizes = sizes_timed(results, write)
    edge = crossover(results)
    for entry in ("inplace_on_clone", *RECIPES):
        style = (
            {"fmt": "k:", "label": "in-place on one clone"}
            if entry == "inplace_on_clone"
            else {
                "fmt": "-o",
                "label": entry,
            }
        )
        _errorbars(ax, results, entry, write, sizes, **style)
    ax.axhline(1.0, color="gray", linewidth=1)
    if sizes and sizes[0] < edge:
        ax.axvspan(sizes[0] / 1.5, edge / 1.5, color="0.92", zorder=0)
        ax.text(
            sizes[0],
            0.02,
            "fixed costs decide: see the instruction counts",
            transform=ax.get_xaxis_transform(),
            va="bottom",
            fontsize=9,
            color="0.3",
        )
    _times_axis(ax)
    ax.set(
        xscale="log",
        xlabel="elements (float32)",
        ylabel="time / in-place write",
    )
    _readable(ax, f"{write} write: forward + backward over in-place\n(bars: {_bars(results)})")
    fig.legend(loc="outside lower center", ncol=4, fontsize=9)
    return fig


def figure_overhead(results: dict[str, Any]) -> Figure:
    """A heat map of recipe / raw one-liner in instructions, recipes against (write, size)."""
    table = {k: v for k, v in instruction_overhead(results).items() if k in RECIPES}
    columns = overhead_columns(table)
    names = list(table)
    fig, ax = _figure(7.0, 0.5 * len(names) + 2.0)
    if not columns:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no instruction counts in these results", ha="center")
        return fig
    values = [[table[n].get(c, math.nan) for c in columns] for n in names]
    ax.imshow(
        [[math.log2(v) for v in row] for row in values],
        cmap="RdYlGn_r",
        vmin=-0.3,
        vmax=0.3,
        aspect="auto",
    )
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=9)
    ax.set_xticks(
        range(len(columns)),
        [f"{w} {size_label(s)}" for w, s in columns],
        fontsize=9,
        rotation=45,
        ha="right",
        rotation_mode="anchor",
    )
    ax.set_yticks(range(len(names)), names, fontsize=10)
    ax.set_xlabel("write and size", fontsize=11)
    ax.set_ylabel("recipe", fontsize=11)
    _readable(ax, "recipe / its raw one-liner, instructions (1 = nothing added)")
    return fig


def figure_compiled(results: dict[str, Any], size: int = 10**6) -> Figure:
    """Per write: eager in-place (1), compiled in-place, the fastest eager and compiled recipe."""
    fig, ax = _figure(7.0, 4.6)
    rows = []
    for write in measured_writes(results):
        eager = [(v, e) for e in RECIPES if (v := ratio_of(results, e, write, size)) is not None]
        compiled = [
            (v, e) for e in RECIPES if (v := compiled_ratio(results, e, write, size)) is not None
        ]
        base = compiled_ratio(results, "inplace", write, size)
        if eager and compiled and base is not None:
            rows.append((write, min(eager), base, min(compiled)))
    if not rows:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no compiled records in these results", ha="center")
        return fig
    xs = list(range(len(rows)))
    width = 0.27
    band = consistency.noise_band(results, mode="compile", sizes=[size])
    bars = (
        (-width, [r[1][0] for r in rows], [r[1][1] for r in rows], "eager, lowest recipe", None),
        (0.0, [r[2] for r in rows], ["in-place"] * len(rows), "compiled in-place", "0.6"),
        (width, [r[3][0] for r in rows], [r[3][1] for r in rows], "compiled, lowest recipe", None),
    )
    for dx, heights, names, label, color in bars:
        errors = [[h - h / band for h in heights], [h * band - h for h in heights]]
        ax.bar(
            [x + dx for x in xs], heights, width, yerr=errors, capsize=3, label=label, color=color
        )
        for x, h, name in zip(xs, heights, names, strict=True):
            if name != "in-place":
                ax.text(
                    x + dx, h * band * 1.03, name, ha="center", va="bottom", rotation=90, fontsize=8
                )
    ax.set_ylim(0, max(r[2] for r in rows) * band * 1.6)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xticks(xs, [r[0] for r in rows], fontsize=10)
    ax.set(xlabel="write", ylabel="time / eager in-place write")
    _readable(
        ax, f"Eager and compiled, {size_label(size)} float32 (bars: noise band under compile)"
    )
    ax.legend(fontsize=9)
    return fig
