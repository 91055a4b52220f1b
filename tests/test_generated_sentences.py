"""Every sentence generated from the benchmark says what the numbers say: tested on altered runs.

Each test alters the committed results (a recipe slower, the noise gone, the
fixed cost moved) into a state it sets up itself, and checks that the word the
page would print follows: "most" only for more than half, a tie inside the
noise band or the bootstrap interval, the crossover where the times cross. No
test relies on what one committed run happened to measure.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
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
zh_edition = import_docs_module("zh_edition")
zh_translations = import_docs_module("translations")
ROOT = Path(__file__).resolve().parents[1]


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
    lead = rendered(answer_table, answer_table.render_lead(most)).splitlines()
    assert f"for most kinds of write it measured ({n // 2 + 1} of {n})," in lead[1]
    two = winning(committed, "clone", writes[:2])
    lead = rendered(answer_table, answer_table.render_lead(two)).splitlines()
    assert "most" not in lead[1]
    assert f"for 2 of the {n} kinds of write it measured," in lead[1]
    words = [answer_table.WRITE_WORDS[w] for w in writes[2:]]
    assert "not for " + ", ".join(words) in lead[3]  # the detail names the writes it does not win
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


# -- the two answers, in at most 60 words each, before any code -------------------------

#: What a reader reads in ten seconds: each answer, its question included.
MOST_WORDS = 60
#: The same in Chinese, in characters (a run of code or a number: one). A translation runs
#: 1.5 to 2 characters an English word, and a reader reads Chinese at 300 to 500 characters
#: a minute against 200 to 250 English words: 120 characters take the time of 60 words.
MOST_CHARACTERS = 120


def words(answer_table: Any, paragraph: str) -> int:
    """The words of ``paragraph`` as the page shows it: figures filled in, markup out."""
    text = re.sub(r"\{\w+\}`([^<`]*?)\s*<[^>]*>`", r"\1", rendered(answer_table, paragraph))
    return len(text.replace("**", "").replace("`", "").split())


def characters(text: str) -> int:
    """Chinese characters, plus one for each run of anything else (code, numbers, units)."""
    other = re.sub(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef*`]", " ", text)
    return len(re.findall(r"[\u3400-\u9fff]", text)) + len(other.split())


def sentences(paragraph: str) -> list[str]:
    """The sentences of an answer, after its question."""
    body = paragraph.split("**\n", 1)[1]
    return [s for s in re.split(r"(?<=\.) (?=[A-Z])", body) if s]


def at_headline(answer_table: Any, entry: str, change: Callable[..., None]) -> Callable[..., None]:
    """``change`` applied to ``entry``'s record in the configuration the lead quotes."""

    def apply(r: dict[str, Any]) -> None:
        where = {k: r.get(k) for k in answer_table.HEADLINE} == answer_table.HEADLINE
        if r["entry"] == entry and where and r["device"] == "cpu":
            change(r)

    return apply


def variants(committed: dict[str, Any], answer_table: Any) -> dict[str, dict[str, Any]]:
    """Runs altered so that each sentence of the answers takes each of its forms."""
    start = tight(committed)
    inplace = bench.find_record(start, "inplace", "element", 10**6)
    base = intervals.seconds(inplace["forward_backward"])
    writes = list(bench.ranking(committed))

    def seconds(factor: float) -> Callable[..., None]:
        """clone, and its same-work twin (so that the noise band stays), ``factor`` x in-place."""

        def change(r: dict[str, Any]) -> None:
            set_seconds(r, base * factor)
            r["ratio_forward_backward"] = r["ratio_forward_backward_min"] = factor

        both = [at_headline(answer_table, e, change) for e in ("clone", "inplace_on_clone")]
        return lambda r: [apply(r) for apply in both]

    def peaks(temporary: float, held: float) -> Callable[..., None]:
        def change(r: dict[str, Any]) -> None:
            r["peak_bytes"] = int(inplace["peak_bytes"] * temporary)
            r["peak_bytes_held"] = int(inplace["peak_bytes_held"] * held)

        return at_headline(answer_table, "clone", change)

    without_held = altered(start, lambda r: r.update(peak_bytes_held=None))
    return {
        "committed": committed,
        "tied": altered(start, seconds(1.0)),
        "slower": altered(start, seconds(3.0)),
        "same peaks": altered(start, peaks(1.0, 1.0)),
        "both peaks above": altered(start, peaks(1.25, 1.75)),
        "no held peaks": without_held,
        "no peaks": altered(without_held, lambda r: r.update(peak_bytes=None)),
        "most": winning(committed, "clone", writes[: len(writes) // 2 + 1]),
        "two": winning(committed, "clone", writes[:2]),
        "every": altered(committed, scale("clone", 0.2)),
    }


def test_each_answer_takes_at_most_60_words(committed: dict[str, Any], answer_table: Any) -> None:
    for name, results in variants(committed, answer_table).items():
        for paragraph in answer_table.short_answers(results):
            n = words(answer_table, paragraph)
            assert n <= MOST_WORDS, (name, n, rendered(answer_table, paragraph))


def test_the_cost_answer_is_three_sentences_of_one_number_each(
    committed: dict[str, Any], answer_table: Any
) -> None:
    cost = answer_table.short_answers(committed)[1]
    found = sentences(cost)
    assert [s.split(":")[0] for s in found[:2]] == ["Time", "Memory"]
    assert len(found) == 3, found
    for sentence in found:
        assert len(re.findall(r"\{\{ \w+ \}\}", sentence)) == 1, sentence
    # and it says which form each memory figure is for
    assert "stays alive through backward" in found[1]
    assert "rebind its name" in found[1]


def test_the_answers_come_first_on_both_pages(committed: dict[str, Any], answer_table: Any) -> None:
    lead = answer_table.render_lead(committed)
    first, cost = answer_table.short_answers(committed)
    assert lead.startswith(first + "\n\n")
    assert lead.index(cost) < lead.index("{{ inplace_ms }}")  # before the detail
    index = (ROOT / "docs" / "index.md").read_text()
    above = index[: index.index("```{include} _generated/answer_lead.md")]
    assert "```" not in above  # no code before the answers
    assert ">>>" not in above
    page = (ROOT / "recipes" / "tools" / "plot_performance.py").read_text()
    docstring = page.split('"""')[1]
    assert ".. raw:: html\n   :file: ../../_generated/answer_short.html" in docstring
    short = prose.Prose(prose.short_answer(committed))._repr_html_()
    for paragraph in short.split("\n"):
        text = re.sub(r"<[^>]+>", "", paragraph)
        assert len(text.split()) <= MOST_WORDS, text


def test_the_performance_pages_first_screen_is_written_from_the_committed_run(
    tmp_path: Path, committed: dict[str, Any], answer_table: Any
) -> None:
    answer_table.write(tmp_path)
    written = (tmp_path / "answer_short.html").read_text()
    assert written == prose.Prose(prose.short_answer(committed))._repr_html_() + "\n"
    assert written.count("<p><strong>") == 2  # both questions


def test_the_time_sentence_follows_the_run(committed: dict[str, Any], answer_table: Any) -> None:
    runs = variants(committed, answer_table)
    cost = {name: answer_table.short_answers(runs[name])[1] for name in ("tied", "slower")}
    assert "at 1e6 elements, clone-and-write ties with in place, within the noise" in cost["tied"]
    assert "takes {{ clone_time }} as long as in place" in cost["slower"]
    answer_table.short_answers(runs["slower"])
    ratio = bench.find_record(runs["slower"], "clone", "element", 10**6)["ratio_forward_backward"]
    assert answer_table.FIGURES["clone_time"] == f"{ratio:.2f}\N{MULTIPLICATION SIGN}"
    assert answer_table.FIGURES["clone_time"] == "3.00\N{MULTIPLICATION SIGN}"


def test_the_memory_sentence_follows_the_peaks(
    committed: dict[str, Any], answer_table: Any
) -> None:
    runs = variants(committed, answer_table)

    def memory(name: str) -> str:
        return sentences(answer_table.short_answers(runs[name])[1])[1]

    assert memory("same peaks") == answer_table.MEMORY_SENTENCES["same"]
    both = memory("both peaks above")
    assert both == answer_table.MEMORY_SENTENCES["both"].format(
        held="{{ clone_held_ratio }}", temporary="{{ clone_temporary_ratio }}"
    )
    assert answer_table.FIGURES["clone_held_ratio"] == "1.75\N{MULTIPLICATION SIGN}"
    assert answer_table.FIGURES["clone_temporary_ratio"] == "1.25\N{MULTIPLICATION SIGN}"
    assert "did not count the tensor kept alive" in memory("no held peaks")
    assert memory("no peaks") == answer_table.MEMORY_SENTENCES["none"]
    # the committed run: kept alive, clone-and-write peaks above in place; rebound, the same
    inplace = bench.find_record(committed, "inplace", "element", 10**6)
    clone = bench.find_record(committed, "clone", "element", 10**6)
    assert memory("committed") == answer_table.MEMORY_SENTENCES["rebound"].format(
        held="{{ clone_held_ratio }}"
    )
    answer_table.short_answers(committed)
    held = clone["peak_bytes_held"] / inplace["peak_bytes_held"]
    assert answer_table.FIGURES["clone_held_ratio"] == f"{held:.2f}\N{MULTIPLICATION SIGN}"
    assert clone["peak_bytes"] == inplace["peak_bytes"]


def test_when_it_matters_follows_the_crossover(
    committed: dict[str, Any], answer_table: Any
) -> None:
    def fixed_cost(size_from: float) -> Callable[[dict[str, Any]], None]:
        def change(r: dict[str, Any]) -> None:
            if r["entry"] == "inplace" and r["mode"] == "eager" and r.get("forward_backward"):
                set_seconds(r, 1e-6 * (1 + r["size"] / size_from))

        return change

    for size_from, label in ((300, "1e3"), (8e5, "1e6")):
        answer_table.short_answers(altered(committed, fixed_cost(size_from)))
        assert answer_table.FIGURES["bench_crossover"] == label


def test_the_detail_gives_both_peaks_and_the_mask_blend_against_the_least(
    committed: dict[str, Any], answer_table: Any
) -> None:
    lead = answer_table.render_lead(committed)
    for name in ("inplace_peak", "clone_peak", "clone_peak_held", "mask_peak_held"):
        assert f"{{{{ {name} }}}}" in lead, name
    mask = bench.find_record(committed, "mask", "element", 10**6)
    least, _ = statistics.least_peak(committed, "element", 10**6, "held")
    over = mask["peak_bytes_held"] / least
    assert answer_table.FIGURES["mask_over_least"] == f"{over:.2f}\N{MULTIPLICATION SIGN}"
    # a hungrier blend: the figure follows
    hungry = altered(
        committed,
        at_headline(answer_table, "mask", lambda r: r.update(peak_bytes_held=3 * least)),
    )
    answer_table.render_lead(hungry)
    assert answer_table.FIGURES["mask_over_least"] == "3.00\N{MULTIPLICATION SIGN}"
    # a run without held peaks gives the one it has, and says nothing of the other
    lead = answer_table.render_lead(variants(committed, answer_table)["no held peaks"])
    assert "{{ clone_peak_held }}" not in lead
    assert "{{ clone_peak }} with clone-and-write" in lead


def test_the_chinese_edition_answers_as_briefly(
    committed: dict[str, Any], answer_table: Any
) -> None:
    from babel.messages.pofile import read_po

    with (ROOT / "docs" / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po").open("rb") as handle:
        catalogue = {m.id: m for m in read_po(handle) if m.id}
    for paragraph in answer_table.short_answers(committed):
        message = catalogue.get(paragraph.replace("\n", " "))
        assert message is not None, paragraph
        assert message.string, paragraph
        assert not message.fuzzy, paragraph
        chinese = rendered(answer_table, message.string)
        assert zh_translations._ENGLISH_RUN.search(re.sub(r"`[^`]*`", "", chinese)) is None
        assert characters(chinese) <= MOST_CHARACTERS, (characters(chinese), chinese)
    # the performance page's first screen, put into Chinese by the generated text's rules
    tables = zh_edition._generated_tables()
    rules = zh_edition.prose_rules(tables["paragraph"])
    html = zh_edition.translate_prose(
        prose.Prose(prose.short_answer(committed))._repr_html_(), rules
    )
    for paragraph in html.split("\n"):
        text = re.sub(r"<code>[^<]*</code>|<[^>]+>", " ", paragraph)
        assert zh_translations._CJK.search(text), paragraph
        assert zh_translations._ENGLISH_RUN.search(text) is None, paragraph
        assert characters(text) <= MOST_CHARACTERS, (characters(text), text)
