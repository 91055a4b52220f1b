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

import itertools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch

from ..recipes import RECIPES
from . import consistency
from .entries import COLD, EXACTNESS_COSTS, OVERHEAD_WRITES, WRITES, shape_for
from .intervals import holds_one, seconds
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
    "Prose",
    "answer",
    "at_lines",
    "audit_line",
    "between",
    "compiled_lines",
    "consistency_line",
    "crossover",
    "figure_against_size",
    "figure_compiled",
    "figure_headline",
    "figure_instructions",
    "figure_overhead",
    "floor_beaten",
    "goal_line",
    "has_intervals",
    "interval",
    "interval_coverage",
    "measured_writes",
    "noise",
    "noise_by_size",
    "overhead_lines",
    "recommended",
    "saved_bytes_lines",
    "small_noise_line",
    "summary_lines",
    "tie",
]

X = "x"


def measured_writes(results: dict[str, Any]) -> list[str]:
    """The kinds of write the run timed, in its order: a run made before a kind
    of write was added to :data:`WRITES` has no figure for it.

    >>> measured_writes({"config": {"writes": ["row", "mask"]}})
    ['row', 'mask']
    """
    return [w for w in results.get("config", {}).get("writes", list(WRITES)) if w in WRITES]


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
        cells = [
            (r, n, w, s)
            for n in names
            for (w, s), r in counted[n].items()
            if (n, w.removeprefix(COLD)) not in EXACTNESS_COSTS
        ]
        if not cells:
            parts.append(f"{label} within {goal:.2f}{X} {base} (not counted)")
            continue
        ratio, name, write, size = max(cells)
        shown = "" if name == "at" else f"{name} "
        parts.append(
            f"{label} within {goal:.2f}{X} {base} "
            f"(largest: {shown}{ratio:.2f}{X}, {write} {_size(size)})"
        )
    exceptions: dict[tuple[str, float], list[tuple[float, str]]] = {}
    for (name, write), (goal, _) in EXACTNESS_COSTS.items():
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
    lines.append(f"  {'entry':17}" + "".join(f"{w:>12}" for w in measured_writes(results)))
    for e in entries:
        cells = []
        for w in measured_writes(results):
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


def _sizes(results: dict[str, Any], write: str, dtype: str = "float32") -> list[int]:
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


def _bars(results: dict[str, Any]) -> str:
    return "95% bootstrap interval" if has_intervals(results) else "noise band"


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
    from .intervals import ratio_interval

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
    a = _ratio(results, entry, write, size, column=column, **kw)
    b = _ratio(results, other, write, size, column=column, **kw)
    if a is None or b is None:
        return False
    if consistency.in_band(max(a / b, b / a), band):
        return True
    return holds_one(between(results, entry, other, write, size, **kw))


def _point(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
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
                for s in _sizes(results, write, dtype)
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
            on_clone = _ratio(results, "inplace_on_clone", write, size)
            if on_clone is None:
                continue
            below = [
                e
                for e in RECIPES
                if e != "clone"  # the copy itself, with the recipe's call around it
                and (v := _ratio(results, e, write, size)) is not None
                and v < on_clone
                and not tie(results, e, "inplace_on_clone", write, size, band)
            ]
            if below:
                found.append((write, size, below))
    return found


def _instruction_ratio(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
    info = results.get("instructions") or {}
    if not info.get("available"):
        return None
    count = {(c["entry"], c["write"], c["size"]): c["instructions"] for c in info["counts"]}
    mine, base = count.get((entry, write, size)), count.get(("inplace", write, size))
    return mine / base if mine and base else None


def _writes_in_words(writes: Iterable[str]) -> str:
    words = {
        "element": "one element",
        "row": "a row",
        "slice": "a strided slice",
        "mask": "a boolean mask",
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
        for size in _sizes(results, write):
            pick = recommended(write, size)
            if size >= edge:
                ratio = _ratio(results, pick, write, size)
                on_clone = _ratio(results, "inplace_on_clone", write, size)
                if ratio is not None:
                    large.append(ratio)
                    large_sizes.add(size)
                if on_clone is not None:
                    floor.append(on_clone)
            elif size in inst_sizes:
                n = _instruction_ratio(results, pick, write, size)
                if n is not None:
                    small.append(n)
                    small_sizes.add(size)
    band = noise(results, large_sizes or None)
    first = (
        "In eager mode on a CPU (float32), going out of place with the recipe "
        f"``best_recipe`` picks costs {_span(large)} the in-place write's forward + backward "
        f"time from {_size(edge)} elements up, where the passes over memory decide"
    )
    if small:
        first += (
            f", and {_span(small)} its instructions below {_size(edge)}, where fixed per-call "
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
        f"{_span(floor)} from {_size(edge)} up"
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
    counted = instruction_overhead(results)
    inst = [v for name, row in counted.items() if name in RECIPES for v in row.values()]
    inst_at = list(counted.get("at", {}).values())
    if inst:
        parts.append(
            f"What the package adds, in instructions ({_counted_sizes(counted)}): each recipe "
            f"costs {_span(inst)} the raw torch call it wraps"
            + (f", and ``at()`` {_span(inst_at)} the recipe it picks." if inst_at else ".")
        )
    return "\n\n".join(parts)


def _counted_list(sizes: Iterable[int]) -> str:
    return " and ".join(_size(s) for s in sorted(sizes))


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
        ratio, span = _point(results, entry, write, s), interval(results, entry, write, s)
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
        sizes = [s for s in _sizes(results, write) if s >= edge]
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
            if (n := _instruction_ratio(results, recommended(write, s), write, s)) is not None
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
    sizes = _sizes(results, write)
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
    columns = _columns(table)
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
        [f"{w} {_size(s)}" for w, s in columns],
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


def _compiled(results: dict[str, Any], entry: str, write: str, size: int) -> float | None:
    return _ratio(
        results, entry, write, size, mode="compile", column="ratio_forward_backward_eager_inplace"
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
        base = _compiled(results, "inplace", write, size)
        ratios = {e: v for e in RECIPES if (v := _compiled(results, e, write, size)) is not None}
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


def figure_compiled(results: dict[str, Any], size: int = 10**6) -> Figure:
    """Per write: eager in-place (1), compiled in-place, the fastest eager and compiled recipe."""
    fig, ax = _figure(7.0, 4.6)
    rows = []
    for write in measured_writes(results):
        eager = [(v, e) for e in RECIPES if (v := _ratio(results, e, write, size)) is not None]
        compiled = [
            (v, e) for e in RECIPES if (v := _compiled(results, e, write, size)) is not None
        ]
        base = _compiled(results, "inplace", write, size)
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
    _readable(ax, f"Eager and compiled, {_size(size)} float32 (bars: noise band under compile)")
    ax.legend(fontsize=9)
    return fig
