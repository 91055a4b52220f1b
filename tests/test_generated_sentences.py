"""Every sentence generated from the benchmark says what the numbers say: tested on altered runs.

Each test alters the committed results (a recipe slower, the noise gone, the
fixed cost moved) into a state it sets up itself, and checks that the word the
page would print follows: "most" only for more than half, a tie inside the
noise band or the bootstrap interval, the crossover where the times cross. No
test relies on what one committed run happened to measure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from docs_modules import import_docs_module
from inplace_recipes import bench
from inplace_recipes.bench import _intervals as intervals
from inplace_recipes.bench import _ranking as ranking_
from inplace_recipes.bench import _statistics as statistics
from inplace_recipes.bench import _summary as summary

prose = import_docs_module("performance_prose")
committed_runs = import_docs_module("committed")


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return committed_runs.bench_results()


def altered(results: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A deep copy of ``results`` with ``change`` applied to every record."""
    out = copy.deepcopy(results)
    for record in out["records"]:
        change(record)
    return out


def scale(entry: str, factor: float, writes: tuple[str, ...] | None = None) -> Callable[..., None]:
    """Make ``entry``'s ratios to in-place, their intervals and its rounds ``factor``
    times larger in ``writes``.

    Its ``min`` and ``median`` stay: ``clone`` and ``inplace_on_clone`` are a
    same-work pair, and moving one would widen the noise band the words depend on.
    """

    def change(r: dict[str, Any]) -> None:
        if r["entry"] != entry or (writes is not None and r["write"] not in writes):
            return
        for key in list(r):
            if key.startswith("ratio_") and isinstance(r[key], float):
                r[key] *= factor
            elif key.startswith("ratio_") and key.endswith("_interval") and r[key]:
                r[key] = [v * factor for v in r[key]]
        for phase in ("forward", "forward_backward"):
            if r.get(phase) and r[phase].get("round_minima"):
                r[phase]["round_minima"] = [v * factor for v in r[phase]["round_minima"]]

    return change


def set_seconds(r: dict[str, Any], seconds: float) -> None:
    """Make the forward + backward time of ``r`` ``seconds``, in every statistic."""
    t = r["forward_backward"]
    old = intervals.seconds(t)
    t["median"] = seconds
    if t.get("min") is not None:
        t["min"] = seconds
    if t.get("round_minima"):
        t["round_minima"] = [v * seconds / old for v in t["round_minima"]]


def tight(results: dict[str, Any]) -> dict[str, Any]:
    """Every round equal to the fastest: no interval is wider than its ratio."""
    out = copy.deepcopy(results)
    for r in out["records"]:
        for phase in ("forward", "forward_backward"):
            t = r.get(phase)
            if t and t.get("round_minima"):
                t["round_minima"] = [min(t["round_minima"])] * len(t["round_minima"])
        for key in list(r):
            if key.endswith("_interval") and r[key]:
                point = r.get(key.replace("_interval", ""))
                r[key] = [point, point]
    return out


def quiet(results: dict[str, Any], factor: float = 1.01) -> dict[str, Any]:
    """Every same-work pair agrees to ``factor``: the noise band becomes ``factor``."""
    out = copy.deepcopy(results)
    for r in out["records"]:
        if r["entry"] in ("inplace_again", "clone") and r.get("forward_backward"):
            same = "inplace" if r["entry"] == "inplace_again" else "inplace_on_clone"
            other = bench.find_record(
                out, same, r["write"], r["size"], dtype=r["dtype"], mode=r["mode"]
            )
            if other and other.get("forward_backward"):
                target = intervals.seconds(other["forward_backward"]) * factor
                ratio = target / intervals.seconds(r["forward_backward"])
                set_seconds(r, target)
                for key in list(r):
                    if key.startswith("ratio_forward_backward") and isinstance(r[key], float):
                        r[key] *= ratio
    return out


def winning(results: dict[str, Any], name: str, writes: list[str]) -> dict[str, Any]:
    """``name`` clearly fastest in ``writes`` and clearly slowest in every other write."""
    others = [w for w in statistics.measured_writes(results) if w not in writes]
    out = altered(results, scale(name, 0.2, tuple(writes)))
    return altered(out, scale(name, 5.0, tuple(others)))


def rendered(answer_table: Any, text: str) -> str:
    """``text`` with its MyST substitutions filled in, as the page shows it."""
    for name, value in answer_table.FIGURES.items():
        text = text.replace(f"{{{{ {name} }}}}", value)
    return text


def test_the_lead_says_most_only_for_more_than_half(
    committed: dict[str, Any], answer_table: Any
) -> None:

    writes = list(bench.ranking(committed))
    n = len(writes)
    assert n >= 4
    most = winning(committed, "clone", writes[: n // 2 + 1])
    lead = rendered(answer_table, answer_table.render_lead(most)).splitlines()[1]
    assert f"for most kinds of write it measured ({n // 2 + 1} of {n}: " in lead
    two = winning(committed, "clone", writes[:2])
    lead = rendered(answer_table, answer_table.render_lead(two)).splitlines()[1]
    assert "most" not in lead
    assert f"for 2 of the {n} kinds of write it measured (" in lead
    words = [answer_table.WRITE_WORDS[w] for w in writes[2:]]
    assert "not for " + ", ".join(words) in lead  # named as writes it does not win
    every = altered(committed, scale("clone", 0.2))
    lead = rendered(answer_table, answer_table.render_lead(every))
    assert "for every kind of write it measured" in lead
    assert "not for" not in lead


def test_the_lead_shows_words_not_keys(committed: dict[str, Any], answer_table: Any) -> None:
    lead = rendered(answer_table, answer_table.render_lead(committed))
    for key in ("value_grad", "element:", "row:", "select_scatter,"):
        assert key not in lead


def _row_of(which: str) -> str:
    return which.split("* - `x[i] = 0.0`")[1].split("* -")[0]


def test_a_difference_inside_the_noise_is_a_tie(
    committed: dict[str, Any], answer_table: Any
) -> None:

    def row_race(band: float) -> dict[str, Any]:
        """clone 5% behind select_scatter in the row write, at noise band ``band``."""
        base = quiet(committed, band)
        ranked = dict(bench.ranking(base)["row"])
        base = altered(base, scale("select_scatter", 0.2 / ranked["select_scatter"], ("row",)))
        return altered(base, scale("clone", 0.21 / ranked["clone"], ("row",)))

    base = row_race(1.08)
    assert answer_table.noise(base) == pytest.approx(1.08, abs=1e-3)
    row = _row_of(answer_table.render_which(tight(base)))
    assert "`select_scatter`, `clone`" in row  # 5% apart, inside an 8% band
    narrow = row_race(1.01)
    row = _row_of(answer_table.render_which(tight(narrow)))
    assert "`select_scatter`\n" in row  # alone: 5% is outside a 1% band and its interval
    assert statistics.has_intervals(committed)
    # the interval alone makes a tie: select_scatter's fastest round is one of
    # eight, the others 30% slower, so clone's 5% lies inside the interval
    wide = tight(narrow)
    for r in wide["records"]:
        if r["write"] == "row" and r["entry"] == "select_scatter" and r["forward_backward"]:
            rounds = r["forward_backward"]["round_minima"]
            r["forward_backward"]["round_minima"] = [rounds[0]] + [rounds[0] * 1.3] * 7
    lo, hi = ranking_.interval_between(wide, "row", "clone", "select_scatter") or (0, 0)
    assert lo <= 1 <= hi
    row = _row_of(answer_table.render_which(wide))
    assert "`select_scatter`, `clone`" in row


def test_slowest_is_marked_only_outside_the_noise(
    committed: dict[str, Any], answer_table: Any
) -> None:
    slower = tight(altered(committed, scale("mask", 5.0)))
    marks = answer_table._extremes(slower)
    assert marks["mask"].startswith("slowest")
    assert not any(m.startswith(("slowest", "tied")) for n, m in marks.items() if n != "mask")

    table = dict(bench.ranking(slower)["element"])
    factor = table["mask"] / table["masked_fill"]
    both = tight(altered(slower, scale("masked_fill", factor, ("element",))))
    marks = answer_table._extremes(both)
    assert marks["mask"].startswith("tied for slowest")
    assert marks["masked_fill"].startswith("tied for slowest")


def test_the_crossover_follows_the_times(committed: dict[str, Any]) -> None:
    measured = statistics.crossover(committed)
    assert f"from {summary.size_label(measured)} elements up" in prose.answer(committed)

    def fixed_cost(size_from: float) -> Callable[[dict[str, Any]], None]:
        def change(r: dict[str, Any]) -> None:  # the step's time grows from size_from on
            if r["entry"] == "inplace" and r["mode"] == "eager" and r.get("forward_backward"):
                set_seconds(r, 1e-6 * (1 + r["size"] / size_from))

        return change

    early = altered(committed, fixed_cost(300))
    assert statistics.crossover(early) == 10**3
    assert "from 1e3 elements up" in prose.answer(early)
    late = altered(committed, fixed_cost(8e5))
    assert statistics.crossover(late) == 10**6


def test_the_copy_is_called_a_floor_only_when_nothing_beats_it(committed: dict[str, Any]) -> None:
    cheap_copy = tight(altered(committed, scale("inplace_on_clone", 0.2)))
    text = prose.answer(cheap_copy)
    assert "not a floor" not in text
    assert "no recipe costs less beyond the noise" in text
    # where, and only where, clearly below the copy for the mask write
    beaten = altered(cheap_copy, scale("where", 0.1, ("boolean",)))
    text = prose.answer(tight(beaten))
    assert "it is not a floor" in text
    assert "for a boolean mask, ``where``" in text


def test_the_answer_renders_as_prose(committed: dict[str, Any]) -> None:
    html = prose.Prose(prose.answer(committed))._repr_html_()
    assert "``" not in html
    assert "<code>best_recipe</code>" in html
    assert html.count("<p>") >= 3


def test_intervals_are_used_when_the_run_has_them(committed: dict[str, Any]) -> None:
    without = copy.deepcopy(committed)
    for r in without["records"]:
        r.pop("ratio_forward_backward_interval", None)
    band = statistics.noise(without)
    lo, hi = statistics.interval(without, "clone", "row", 10**6)
    ratio = bench.find_record(without, "clone", "row", 10**6)["ratio_forward_backward"]
    assert (lo, hi) == pytest.approx((ratio / band, ratio * band))
    assert "carries that band" in prose.answer(without)
    with_interval = copy.deepcopy(without)
    bench.find_record(with_interval, "clone", "row", 10**6)["ratio_forward_backward_interval"] = [
        1.0,
        1.1,
    ]
    assert statistics.interval(with_interval, "clone", "row", 10**6) == (1.0, 1.1)
    assert "carries its interval" in prose.answer(with_interval)


def test_the_cost_verdict_follows_time_and_memory(
    committed: dict[str, Any], answer_table: Any
) -> None:
    def verdict(results: dict[str, Any]) -> str:
        return (
            answer_table.render_lead(results)
            .split("**What does in-place cost or save?**\n")[1]
            .splitlines()[0]
        )

    def headline_clone(seconds: float = 1.0, peak: float = 1.0) -> Callable[..., None]:
        def change(r: dict[str, Any]) -> None:
            headline = {k: r.get(k) for k in answer_table.HEADLINE} == answer_table.HEADLINE
            if r["entry"] == "clone" and headline and r.get("device", "cpu") == "cpu":
                set_seconds(r, intervals.seconds(r["forward_backward"]) * seconds)
                r["peak_bytes"] *= peak

        return change

    start = tight(committed)
    band = answer_table.noise(start)
    inplace = answer_table.measured(start, "inplace")["seconds"]
    clone = answer_table.measured(start, "clone")["seconds"]
    slow = inplace * band / clone * 1.5  # clone well beyond the noise band
    inside = inplace * band / clone * 0.99  # clone just inside the noise band
    assert verdict(altered(start, headline_clone(seconds=slow))) == (
        "In place saves time, not memory."
    )
    assert verdict(altered(start, headline_clone(seconds=inside))) == (
        "In place saves neither time nor memory."
    )
    assert verdict(altered(start, headline_clone(seconds=inside, peak=2.0))) == (
        "In place saves memory, not time."
    )
    assert verdict(altered(start, headline_clone(seconds=slow, peak=2.0))) == (
        "In place saves both time and memory."
    )
