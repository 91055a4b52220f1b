"""Every sentence generated from the benchmark says what the numbers say: tested on altered runs.

Each test alters the committed results (a recipe slower, the noise gone, the
fixed cost moved) and checks that the word the page would print follows:
"most" only for more than half, a tie inside the noise band, the crossover
where the times cross.
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inplace_recipes import bench
from inplace_recipes.bench import report

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return bench.load_results()


@pytest.fixture(scope="module")
def answer_table() -> Any:
    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module("answer_table")
    finally:
        sys.path.remove(str(DOCS))


def altered(results: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A deep copy of ``results`` with ``change`` applied to every record."""
    out = copy.deepcopy(results)
    for record in out["records"]:
        change(record)
    return out


def scale(entry: str, factor: float, writes: tuple[str, ...] | None = None) -> Callable[..., None]:
    """Make ``entry``'s ratios to in-place ``factor`` times larger in ``writes``.

    Its medians stay: ``clone`` and ``inplace_on_clone`` are a same-work pair,
    and moving one median would widen the noise band the words depend on.
    """

    def change(r: dict[str, Any]) -> None:
        if r["entry"] != entry or (writes is not None and r["write"] not in writes):
            return
        for key in list(r):
            if key.startswith("ratio_") and isinstance(r[key], float):
                r[key] *= factor

    return change


def rendered(answer_table: Any, text: str) -> str:
    """``text`` with its MyST substitutions filled in, as the page shows it."""
    for name, value in answer_table.FIGURES.items():
        text = text.replace(f"{{{{ {name} }}}}", value)
    return text


def test_the_lead_says_most_only_for_more_than_half(
    committed: dict[str, Any], answer_table: Any
) -> None:
    lead = rendered(answer_table, answer_table.render_lead(committed))
    assert "for most kinds of write it measured (4 of 5: " in lead  # 4 of 5 tie
    two = altered(committed, scale("clone", 3.0, ("slice", "value_grad")))
    lead = rendered(answer_table, answer_table.render_lead(two)).splitlines()[1]
    assert "most" not in lead
    assert "for 2 of the 5 kinds of write it measured (" in lead
    assert "not for `x[:, 1::10] = 0`, `x[mask] = 0`" in lead  # named as writes it does not win
    every = altered(committed, scale("clone", 0.3))
    lead = rendered(answer_table, answer_table.render_lead(every))
    assert "for every kind of write it measured" in lead
    assert "not for" not in lead


def test_the_lead_shows_words_not_keys(committed: dict[str, Any], answer_table: Any) -> None:
    lead = rendered(answer_table, answer_table.render_lead(committed))
    for key in ("value_grad", "element:", "row:", "select_scatter,"):
        assert key not in lead


def test_a_difference_inside_the_noise_is_a_tie(
    committed: dict[str, Any], answer_table: Any
) -> None:
    which = answer_table.render_which(committed)
    assert "`select_scatter`, `clone`" in which  # row: 5% apart, inside the band
    quiet = copy.deepcopy(committed)
    for r in quiet["records"]:  # every same-work pair agrees to 1%
        if r["entry"] in ("inplace_again", "clone") and r.get("forward_backward"):
            same = "inplace" if r["entry"] == "inplace_again" else "inplace_on_clone"
            other = bench.find_record(
                quiet, same, r["write"], r["size"], dtype=r["dtype"], mode=r["mode"]
            )
            if other and other.get("forward_backward"):
                r["forward_backward"]["median"] = other["forward_backward"]["median"] * 1.01
    assert answer_table.noise(quiet) == pytest.approx(1.01, abs=1e-3)
    which = answer_table.render_which(quiet)
    row = which.split("* - `x[i] = 0.0`")[1].split("* -")[0]
    assert "`select_scatter`\n" in row  # alone: 5% is outside a 1% band


def test_slowest_is_marked_only_outside_the_noise(
    committed: dict[str, Any], answer_table: Any
) -> None:
    marks = answer_table._extremes(committed)
    assert marks["mask"].startswith("tied for slowest")
    slower = altered(committed, scale("mask", 5.0))
    marks = answer_table._extremes(slower)
    assert marks["mask"].startswith("slowest")
    assert not any(m.startswith(("slowest", "tied")) for n, m in marks.items() if n != "mask")


def test_the_crossover_follows_the_times(committed: dict[str, Any]) -> None:
    assert report.crossover(committed) == 10**5
    assert "from 1e5 elements up" in report.answer(committed)

    def fixed_cost_gone(r: dict[str, Any]) -> None:  # the step's time grows from 1e3 on
        if r["entry"] == "inplace" and r["mode"] == "eager" and r.get("forward_backward"):
            r["forward_backward"]["median"] = 1e-6 * (1 + r["size"] / 300)

    moved = altered(committed, fixed_cost_gone)
    assert report.crossover(moved) == 10**3
    assert "from 1e3 elements up" in report.answer(moved)


def test_the_copy_is_called_a_floor_only_when_nothing_beats_it(committed: dict[str, Any]) -> None:
    text = report.answer(committed)
    assert "it is not a floor" in text
    assert "for a boolean mask, ``where``" in text
    cheap_copy = altered(committed, scale("inplace_on_clone", 0.2))
    text = report.answer(cheap_copy)
    assert "not a floor" not in text
    assert "no recipe costs less beyond the noise" in text


def test_the_answer_renders_as_prose(committed: dict[str, Any]) -> None:
    html = report.Prose(report.answer(committed))._repr_html_()
    assert "``" not in html
    assert "<code>best_recipe</code>" in html
    assert html.count("<p>") >= 3


def test_intervals_are_used_when_the_run_has_them(committed: dict[str, Any]) -> None:
    band = report.noise(committed)
    lo, hi = report.interval(committed, "clone", "row", 10**6)
    ratio = bench.find_record(committed, "clone", "row", 10**6)["ratio_forward_backward"]
    assert (lo, hi) == pytest.approx((ratio / band, ratio * band))
    with_interval = copy.deepcopy(committed)
    bench.find_record(with_interval, "clone", "row", 10**6)["ratio_forward_backward_interval"] = [
        1.0,
        1.1,
    ]
    assert report.interval(with_interval, "clone", "row", 10**6) == (1.0, 1.1)


def test_the_cost_verdict_follows_time_and_memory(
    committed: dict[str, Any], answer_table: Any
) -> None:
    def verdict(results: dict[str, Any]) -> str:
        return (
            answer_table.render_lead(results)
            .split("**What does in-place cost or save?**\n")[1]
            .splitlines()[0]
        )

    assert verdict(committed) == "In place saves time, not memory."  # 1.7x, same peak

    def headline_clone(seconds: float = 1.0, peak: float = 1.0) -> Callable[..., None]:
        def change(r: dict[str, Any]) -> None:
            headline = {k: r.get(k) for k in answer_table.HEADLINE} == answer_table.HEADLINE
            if r["entry"] == "clone" and headline and r.get("device", "cpu") == "cpu":
                r["forward_backward"]["median"] *= seconds
                r["peak_bytes"] *= peak

        return change

    band = answer_table.noise(committed)
    inplace = answer_table.measured(committed, "inplace")["seconds"]
    clone = answer_table.measured(committed, "clone")["seconds"]
    inside = inplace * band / clone * 0.99  # clone just inside the noise band
    assert verdict(altered(committed, headline_clone(seconds=inside))) == (
        "In place saves neither time nor memory."
    )
    assert verdict(altered(committed, headline_clone(seconds=inside, peak=2.0))) == (
        "In place saves memory, not time."
    )
    assert verdict(altered(committed, headline_clone(peak=2.0))) == (
        "In place saves both time and memory."
    )
