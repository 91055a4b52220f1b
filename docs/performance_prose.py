"""The performance page's prose: what in-place costs or saves, from the committed run.

Every number comes from a results dict (the committed run, or a live one);
nothing here measures. The statistics are the benchmark's own
(:mod:`inplace_recipes.bench._statistics`); the wording is the page's, so it
lives beside the site, not in the package. The page opens with
:func:`short_answer`, the landing page's two answers in the same words, then
gives :func:`answer`, the detail.

>>> Prose("Use ``clone``.")._repr_html_()
'<p>Use <code>clone</code>.</p>'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import answer_table

from inplace_recipes.bench import _consistency as consistency
from inplace_recipes.bench._results import OVERHEAD_SIZES, find_record, instruction_overhead
from inplace_recipes.bench._statistics import (
    compiled_ratio,
    crossover,
    floor_beaten,
    has_held_peaks,
    has_intervals,
    instruction_ratio,
    measured_writes,
    noise,
    noise_by_size,
    peak,
    ratio_of,
    sizes_timed,
    tie,
)
from inplace_recipes.bench._summary import X, recommended, size_label, span_label
from inplace_recipes.recipes import RECIPES

__all__ = ["Prose", "answer", "as_prose", "compiled_lines", "short_answer", "small_noise_line"]


def as_prose(markdown: str, figures: dict[str, str]) -> str:
    r"""A paragraph of the landing page's MyST as :class:`Prose` writes it: its figures filled
    in, `code` as ``code``, one line.

    >>> as_prose("**Q?**\nUse `clone`: {{ t }}.", {"t": "1.4x"})
    '**Q?** Use ``clone``: 1.4x.'
    """
    text = re.sub(r"\{\{ (\w+) \}\}", lambda m: figures[m.group(1)], markdown)
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text).replace("\n", " ")


def short_answer(results: dict[str, Any]) -> str:
    """The page's first screen: the landing page's two questions, each answered in at
    most 60 words (``answer_table.short_answers``), as paragraphs."""
    paragraphs = answer_table.short_answers(results)
    return "\n\n".join(as_prose(p, answer_table.FIGURES) for p in paragraphs)


def small_noise_line(results: dict[str, Any]) -> str:
    """How noisy CPU time is at the sizes the overhead tables time, against the band
    the rankings use: why the instruction counts decide there.

    >>> rec = lambda entry, t, size: {"device": "cpu", "dtype": "float32", "size": size,
    ...     "write": "row", "mode": "eager", "entry": entry, "forward_backward": {"median": t}}
    >>> small_noise_line({"records": [rec("inplace", 1.0, 10**3), rec("inplace_again", 1.4, 10**3),
    ...     rec("inplace", 1.0, 10**5), rec("inplace_again", 1.1, 10**5)]})
    'At 1e3 elements, identical work timed twice disagreed by up to 40% (from 1e5 up, by up to 10%): there a CPU-time ratio that close to 1 is a tie, and the instruction counts decide.'
    """
    by_size = noise_by_size(results)
    small = [s for s in OVERHEAD_SIZES if s in by_size and s < 10**5]
    if not small:
        return "The run timed no pair of identical work at the overhead sizes."
    large = [s for s in by_size if s >= 10**5]
    bands = " and ".join(f"{(by_size[s] - 1) * 100:.0f}%" for s in small)
    text = (
        f"At {_counted_list(small)} elements, identical work timed twice disagreed by up to {bands}"
    )
    if large:
        text += f" (from 1e5 up, by up to {(noise(results, large) - 1) * 100:.0f}%)"
    return text + (
        ": there a CPU-time ratio that close to 1 is a tie, and the instruction counts decide."
    )


def _writes_in_words(writes: Iterable[str]) -> str:
    words = {
        "element": "one element",
        "row": "a row",
        "slice": "a strided slice",
        "boolean": "a boolean mask",
        "value_grad": "a value that requires grad",
        "index": "an index tensor",
        "list": "a list of positions",
    }
    return ", ".join(words.get(w, w) for w in dict.fromkeys(writes))


def answer(results: dict[str, Any]) -> str:
    """What in-place costs or saves, in paragraphs, with the committed numbers.

    Sizes from :func:`crossover` up are answered in CPU time, with the run's
    noise band and bootstrap intervals; sizes below, where fixed costs decide,
    in instruction counts.
    Code is marked ````like this````; :class:`Prose` renders it.
    """
    edge = crossover(results)
    large: list[float] = []
    floor: list[float] = []
    large_sizes: set[int] = set()
    small: list[float] = []
    small_sizes: set[int] = set()
    inst_sizes = {c["size"] for c in (results.get("instructions") or {}).get("counts", [])}
    for write in measured_writes(results):
        for size in sizes_timed(results, write):
            pick = recommended(write, size)
            if size >= edge:
                ratio = ratio_of(results, pick, write, size)
                on_clone = ratio_of(results, "inplace_on_clone", write, size)
                if ratio is not None:
                    large.append(ratio)
                    large_sizes.add(size)
                if on_clone is not None:
                    floor.append(on_clone)
            elif size in inst_sizes:
                n = instruction_ratio(results, pick, write, size)
                if n is not None:
                    small.append(n)
                    small_sizes.add(size)
    band = noise(results, large_sizes or None)
    first = (
        "In eager mode on a CPU (float32), going out of place with the recipe "
        f"``best_recipe`` picks costs {span_label(large)} the in-place write's forward + backward "
        f"time from {size_label(edge)} elements up, where the passes over memory decide"
    )
    if small:
        first += (
            f", and {span_label(small)} its instructions below {size_label(edge)}, where fixed per-call "
            f"costs decide (counted at {_counted_list(small_sizes)})"
        )
    first += (
        f". Identical work timed twice at those sizes disagreed by up to {(band - 1) * 100:.0f}%, "
    )
    if has_intervals(results):
        first += (
            "its noise band. Two ratios closer than that, or whose 95% bootstrap interval "
            "holds 1, are a tie, and each eager time ratio drawn below carries its interval."
        )
    else:
        first += (
            "its noise band: closer ratios are ties, and every ratio drawn below carries that band."
        )
    beaten = floor_beaten(results, sorted(large_sizes))
    second = (
        "Copying the tensor once, the in-place write on one clone, costs "
        f"{span_label(floor)} from {size_label(edge)} up"
    )
    if beaten:
        by_write: dict[str, dict[str, set[int]]] = {}
        for write, size, entries in beaten:
            for e in entries:
                by_write.setdefault(write, {}).setdefault(e, set()).add(size)
        cases = []
        for write, found in by_write.items():
            names = [
                f"``{e}`` at {_counted_list(sizes)}"
                for e, sizes in sorted(found.items(), key=lambda item: list(RECIPES).index(item[0]))
            ]
            cases.append(f"for {_writes_in_words([write])}, " + " and ".join(names))
        second += (
            ", but it is not a floor: beyond the noise band, "
            + "; ".join(cases)
            + " cost less than it."
        )
    else:
        second += ", and no recipe costs less beyond the noise."
    parts = [first, second]
    saved = {e: find_record(results, e, "element", 10**6) for e in RECIPES}
    nbytes = [r["saved_bytes"] for r in saved.values() if r and r.get("saved_bytes") is not None]
    own = find_record(results, "inplace", "element", 10**6)
    own_bytes = None if own is None else own.get("saved_bytes")
    if nbytes and own_bytes is not None:
        parts.append(
            f"For backward, the recipes save {min(nbytes):,} to {max(nbytes):,} bytes for a "
            f"one-element write to 1e6 float32 elements, in-place {own_bytes:,}."
        )
    memory = peak_paragraph(results)
    if memory:
        parts.append(memory)
    counted = instruction_overhead(results)
    inst = [v for name, row in counted.items() if name in RECIPES for v in row.values()]
    inst_at = list(counted.get("at", {}).values())
    if inst:
        parts.append(
            f"What the package adds, in instructions ({_counted_sizes(counted)}): each recipe "
            f"costs {span_label(inst)} the raw torch call it wraps"
            + (f", and ``at()`` {span_label(inst_at)} the recipe it picks." if inst_at else ".")
        )
    return "\n\n".join(parts)


def peak_paragraph(results: dict[str, Any], size: int = 10**6) -> str | None:
    """The recipes' peak memory against in-place's, one-element write, in both forms.

    >>> rec = lambda e, n, h: {"device": "cpu", "dtype": "float32", "mode": "eager",
    ...     "size": 10**6, "write": "element", "entry": e, "peak_bytes": n, "peak_bytes_held": h}
    >>> print(peak_paragraph({"records": [rec("inplace", 8 * 2**20, 8 * 2**20),
    ...     rec("clone", 8 * 2**20, 12 * 2**20), rec("mask", 20 * 2**20, 20 * 2**20)]}))
    Peak memory of one step, a one-element write to 1e6 float32 elements: in-place 8.0 MiB. When the caller keeps the tensor it wrote from alive through backward, the recipes peak at 1.50-2.50x that; when it is a temporary, or its name is rebound to the result, at 1.00-2.50x.
    """
    base = peak(results, "inplace", "element", size)
    if not base:
        return None
    spans = {}
    for form in ("held", "temporary"):
        ratios = [
            n / base for e in RECIPES if (n := peak(results, e, "element", size, form)) is not None
        ]
        spans[form] = span_label(ratios) if ratios else None
    text = (
        f"Peak memory of one step, a one-element write to {size_label(size)} float32 elements: "
        f"in-place {base / 2**20:.1f} MiB."
    )
    if has_held_peaks(results) and spans["held"]:
        return text + (
            " When the caller keeps the tensor it wrote from alive through backward, the "
            f"recipes peak at {spans['held']} that; when it is a temporary, or its name is "
            f"rebound to the result, at {spans['temporary']}."
        )
    return text + f" The recipes peak at {spans['temporary']} that."


def _counted_list(sizes: Iterable[int]) -> str:
    return " and ".join(size_label(s) for s in sorted(sizes))


class Prose:
    r"""Paragraphs of text shown as rendered HTML on a gallery page (its ``_repr_html_``).

    >>> Prose("Use ``clone``.\n\nThen **stop**.")._repr_html_()
    '<p>Use <code>clone</code>.</p>\n<p>Then <strong>stop</strong>.</p>'
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html
        import re

        paragraphs = []
        for block in self.text.split("\n\n"):
            h = html.escape(block.strip())
            h = re.sub(r"``(.+?)``", r"<code>\1</code>", h)
            h = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", h)
            paragraphs.append(f"<p>{h}</p>")
        return "\n".join(paragraphs)


def _counted_sizes(counted: dict[str, dict[tuple[str, int], float]]) -> str:
    sizes = sorted({s for row in counted.values() for _, s in row})
    return (
        size_label(sizes[0])
        if len(sizes) == 1
        else f"{size_label(sizes[0])} to {size_label(sizes[-1])}"
    )


def compiled_lines(results: dict[str, Any], size: int = 10**6) -> list[str]:
    """Per write, what compiling does to in-place itself and to the fastest compiled recipe.

    A compiled recipe's ratio to *eager* in-place is the product of two
    things: compiled in-place over eager in-place (what compiling the whole
    step does on this machine) and the recipe over compiled in-place.
    """
    lines = []
    band = consistency.noise_band(results, mode="compile", sizes=[size])
    for write in measured_writes(results):
        base = compiled_ratio(results, "inplace", write, size)
        ratios = {
            e: v for e in RECIPES if (v := compiled_ratio(results, e, write, size)) is not None
        }
        if base is None or not ratios:
            continue
        best = min(ratios, key=ratios.__getitem__)
        tied = sorted(
            (
                n
                for n in ratios
                if n == best or tie(results, n, best, write, size, band, mode="compile")
            ),
            key=ratios.__getitem__,
        )
        who = (
            f"the fastest compiled recipe, {best},"
            if len(tied) == 1
            else f"the fastest compiled recipes, tied within the noise ({', '.join(tied)}),"
        )
        lines.append(
            f"{write}: compiled in-place costs {base:.2f}{X} eager in-place; {who} "
            f"{ratios[best]:.2f}{X} eager in-place, {ratios[best] / base:.2f}{X} compiled in-place"
        )
    return lines
