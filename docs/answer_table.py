"""Write ``_generated/answer_table.md``, the landing page's answer table, and its lead.

Nothing in the table's result columns is typed: at build time each recipe's
one line of code is run and checked against ``clone()`` then setitem with
:func:`inplace_recipes.compare_gradients` (forward, gradient to ``x``,
gradient to the value), and the package's recipe of the same name is checked
too. Bytes saved for backward are measured live and speed relative to the
in-place op is read from the committed results, both through
``inplace_recipes.bench``. ``_generated/which_recipe.md`` pairs each kind of
write with the recipe :func:`inplace_recipes.best_recipe` picks for it now and
that recipe's measured speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import committed
import torch

import inplace_recipes as ir
from inplace_recipes import bench
from inplace_recipes.bench._entries import WRITES, shape_for
from inplace_recipes.bench._intervals import ratio_interval, seconds
from inplace_recipes.bench._memory import saved_bytes
from inplace_recipes.bench._ranking import (
    RANKED_SIZES,
    preferences,
    ranking,
    tied_with_fastest,
    tied_with_slowest,
)
from inplace_recipes.bench._results import ratio_table
from inplace_recipes.bench._statistics import HeadlineCosts, headline_costs, least_peak
from inplace_recipes.bench._summary import size_label
from inplace_recipes.claims import verify
from inplace_recipes.recipes import RECORDS, NotApplicable, inplace_setitem


def lines() -> dict[str, str]:
    """Each recipe's one line for ``x[i] = v`` (``m``: a boolean mask, True at ``i``), from
    its record; a line that no longer gives setitem's answer fails the build."""
    return {name: record.line for name, record in RECORDS.items()}


#: The build's figures in the generated prose (times, sizes, versions, dates), as
#: MyST substitutions: each sentence keeps one wording, so its translation
#: holds whatever the numbers are. ``conf.py`` hands them to MyST.
FIGURES: dict[str, str] = {}


def figure(name: str, value: object) -> str:
    """Record ``value`` as the figure ``name``; return its placeholder for the page.

    >>> figure("example_ms", "1.02 ms"), FIGURES["example_ms"]
    ('{{ example_ms }}', '1.02 ms')
    """
    FIGURES[name] = str(value)
    return f"{{{{ {name} }}}}"


def _provenance(results: dict[str, Any]) -> str:
    """Where the committed numbers come from, as figures."""
    prov = results["provenance"]
    return (
        f"{figure('bench_cpu', prov['cpu'])}, {figure('bench_threads', prov['threads'])} "
        f"thread(s), torch {figure('bench_torch', prov['torch'])}, "
        f"{figure('bench_date', prov['date'][:10])}"
    )


# -- the committed benchmark, read in one place -----------------------------------
# The results file's layout belongs to inplace_recipes.bench; these two
# functions are all the landing page reads from it.

#: The write, size and dtype the landing page quotes.
HEADLINE = {"write": "element", "size": 10**6, "dtype": "float32", "mode": "eager"}


def measured(results: dict[str, Any], entry: str, **where: Any) -> dict[str, Any] | None:
    """Forward + backward seconds (:func:`inplace_recipes.bench._intervals.seconds`), peak
    bytes in both forms and, where the run kept them, each round's fastest call (``rounds``)
    of ``entry`` (``None`` if not timed).

    ``peak_bytes`` (the tensor written from a temporary) is ``None`` when the run left peak
    memory out (``--no-peak``), ``peak_bytes_held`` (kept alive through backward) also for
    a run made before it was counted.

    >>> tiny = {"records": [{"entry": "clone", "write": "element", "size": 10**6,
    ...     "dtype": "float32", "mode": "eager", "device": "cpu",
    ...     "forward_backward": {"median": 0.001}, "peak_bytes": 8}]}
    >>> measured(tiny, "clone")
    {'seconds': 0.001, 'peak_bytes': 8.0, 'peak_bytes_held': None}
    """
    want = {**HEADLINE, "device": "cpu", **where, "entry": entry}
    for record in results["records"]:
        if all(record.get(key) == value for key, value in want.items()):
            timing = record.get("forward_backward") or {}
            if timing.get("median") is None:
                return None
            peak, held = record.get("peak_bytes"), record.get("peak_bytes_held")
            found: dict[str, Any] = {
                "seconds": seconds(timing),
                "peak_bytes": None if peak is None else float(peak),
                "peak_bytes_held": None if held is None else float(held),
            }
            if timing.get("round_minima"):
                found["rounds"] = list(timing["round_minima"])
            return found
    return None


#: Each kind of write of the benchmark, as code, for the generated sentences
#: (code reads the same in every language of the site).
WRITE_WORDS = {
    "element": "`x[i, j] = 0`",
    "row": "`x[i] = 0`",
    "slice": "`x[:, 1::10] = 0`",
    "boolean": "`x[mask] = 0`",
    "value_grad": "`x[i] = v` (`v.requires_grad`)",
    "index": "`x[t] = 0`",
    "list": "`x[[a, b, c]] = 0`",
}


def noise(results: dict[str, Any]) -> float:
    """The run's noise band at the ranked sizes: closer ratios are a tie."""
    return bench.noise_band(results, sizes=RANKED_SIZES)


def _percent(band: float) -> str:
    return f"{(band - 1) * 100:.0f}%"


def ties_for_fastest(results: dict[str, Any], name: str) -> dict[str, list[str]]:
    """The writes where ``name`` ties for fastest (``"ties"``) and the others (``"not"``)."""
    band = noise(results)
    found: dict[str, list[str]] = {"ties": [], "not": []}
    for write, ranked in ranking(results).items():
        tied = tied_with_fastest(ranked, band, results, write)
        found["ties" if name in tied else "not"].append(write)
    return found


def how_many(chosen: list[str], total: int, others: list[str] | None = None) -> str:
    """The share of writes in words: every, most (more than half) or k of the n.

    Counts and lists are figures, so the wording stays one sentence per case
    (for translation).

    >>> how_many(["row"] * 5, 5)
    'for every kind of write it measured'
    >>> how_many(["row", "slice", "element"], 5)
    'for most kinds of write it measured ({{ bench_ties_count }} of {{ bench_writes }})'
    >>> how_many(["row", "slice"], 5, others=["boolean"])
    'for {{ bench_ties_count }} of the {{ bench_writes }} kinds of write it measured ({{ bench_ties }}; not for {{ bench_not }})'
    >>> FIGURES["bench_ties"], FIGURES["bench_not"]
    ('`x[i] = 0`, `x[:, 1::10] = 0`', '`x[mask] = 0`')
    """
    k = len(chosen)
    if k == total:
        return "for every kind of write it measured"
    count, writes = figure("bench_ties_count", k), figure("bench_writes", total)
    detail = ""
    if others:
        ties = figure("bench_ties", ", ".join(WRITE_WORDS.get(w, w) for w in chosen))
        detail = f": {ties}; not for " if 2 * k > total else f"{ties}; not for "
        detail += figure("bench_not", ", ".join(WRITE_WORDS.get(w, w) for w in others))
    if 2 * k > total:
        return f"for most kinds of write it measured ({count} of {writes}{detail})"
    if not detail:
        return f"for {count} of the {writes} kinds of write it measured"
    return f"for {count} of the {writes} kinds of write it measured ({detail})"


def recommendation_order(results: dict[str, Any]) -> list[str]:
    """Recipes in the benchmark's order for the headline write, fastest first."""
    ranked = [name for name, _ in ranking(results).get(HEADLINE["write"], [])]
    return ranked + [name for name in ir.RECIPES if name not in ranked]


def _line_recipe(line: str) -> ir.recipes.Recipe:
    """``line`` as a recipe ``fn(x, i, v)``, with ``m`` the mask of ``i``."""

    def recipe(x: torch.Tensor, i: Any, v: Any) -> torch.Tensor:
        m = torch.zeros(x.shape, dtype=torch.bool)
        m[i] = True
        scope = {"torch": torch, "x": x, "i": i, "v": v, "m": m}
        exec(line, scope)  # noqa: S102 - our own typed line, run to check it
        return scope["y"]

    return recipe


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024**2:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024**2:.1f} MiB"


def _diff(d: float | None) -> str:
    if d is None:
        return "n/a"
    return "✓ exact" if d == 0 else f"✓ {d:.0e}"


def render() -> str:
    torch.manual_seed(0)
    x = torch.rand(6) * 10
    i = 2
    v = torch.tensor(42.0)
    shown = lines()
    typed = ir.compare_gradients(
        x, i, v, {name: _line_recipe(line) for name, line in shown.items()}
    )
    typed.assert_ok()  # the line shown is correct
    package = ir.compare_gradients(x, i, v, list(shown))
    package.assert_ok()  # and so is the package's recipe

    for record in RECORDS.values():
        for name in record.pitfall_claims:
            verify(name)
    results = committed.bench_results()
    order = recommendation_order(results)
    speeds = dict(ranking(results).get(HEADLINE["write"], []))
    columns = answer_columns()
    extremes = _extremes(results)
    speed_header = "{doc}`speed vs in-place </auto_recipes/tools/plot_performance>`"
    header = ["recipe", "one line for `x[i] = v`", "grad to `x`", "grad to `v`"]
    header += ["saved for backward", speed_header, "pitfall"]

    rows = [header]
    for name in order:  # a recipe without a line here fails the build
        line, result = shown[name], typed[name]
        label = f"{{doc}}`{name} </auto_recipes/by_recipe/plot_{name}>`"
        row = [label, f"`{line}`", _diff(result.grad_x), _diff(result.grad_value)]
        saved, ratio = columns[name]["saved_bytes"], speeds.get(name)
        row.append("n/a" if saved is None else _bytes(int(saved)))
        row.append("not measured" if ratio is None else f"{ratio:.2f}\N{MULTIPLICATION SIGN}")
        pitfall = RECORDS[name].pitfall
        if name in extremes:
            pitfall = f"**{extremes[name]}**; {pitfall}"
        row.append(pitfall)
        rows.append(row)

    out = [
        "```{list-table}",
        ":header-rows: 1",
        ":class: answer-table",
        "",
    ]
    for row in rows:
        out.append(f"* - {row[0]}")
        out.extend(f"  - {cell}" for cell in row[1:])
    out.append("```")
    out.append("")
    out.append(
        f"Checked when this page was built, with torch {figure('torch', torch.__version__)}: "
        f"each line was run on `x = torch.rand(6) * 10`, `i = {i}`, `v = torch.tensor(42.0)` and compared with "
        "`y = x.clone(); y[i] = v` by "
        "{py:func}`~inplace_recipes.compare.compare_gradients`; ✓ exact means the gradient is "
        "bit-for-bit the reference's."
    )
    out.append("")
    out.append(
        "Rows in the order of the benchmark's ranking for a one-element write (forward + "
        "backward time, geometric mean over sizes 1e5 to 1e7 and both dtypes); recipes "
        f"closer than the run's noise band ({figure('bench_noise', _percent(noise(results)))}), "
        "or whose bootstrap interval of their ratio holds 1, "
        "are a tie, and {py:func}`~inplace_recipes._pick.best_recipe` prefers `clone` "
        "among those tied for fastest. "
        "Saved for backward: a one-element write on a float32 non-leaf of 1e6 elements; "
        "speed: that ranking's figure, forward + backward time over the in-place write's, "
        f"from the committed benchmark ({_provenance(results)}); saved bytes measured live. "
        "Functional updates with every recipe behind "
        "them: {doc}`at[] </auto_recipes/tools/plot_at>`; what works under `vmap`, "
        "`torch.compile` and friends: {doc}`the compatibility matrix "
        "</auto_recipes/tools/plot_compatibility_matrix>`."
    )
    out.append("")
    return "\n".join(out)


def answer_columns(path: str | Path | None = committed.BENCH) -> dict[str, dict[str, Any]]:
    """Per recipe and ``"inplace"``: saved bytes (live) and speed ratio (committed results).

    ``saved_bytes`` is measured now: a one-element write on a float32 non-leaf
    of 1e6 elements. ``speed_ratio`` is the forward + backward time over
    in-place at 1e6 elements, one element, eager, CPU, float32, from the
    committed results (``None`` where they lack it).

    >>> cols = answer_columns()
    >>> cols["inplace"]["saved_bytes"], cols["scatter"]["saved_bytes"]
    (0, 8)
    """
    shape = shape_for(10**6)
    x = torch.rand(shape, requires_grad=True)
    index, value = WRITES["element"](shape, x)
    try:
        results: dict[str, Any] | None = None if path is None else bench.load_results(path)
    except (OSError, ValueError):
        results = None
    ratios: dict[str, float | None] = {}
    source = "saved bytes measured live; no committed benchmark results found"
    if results is not None:
        table = ratio_table(results)
        ratios = {name: table.get(name, {}).get(10**6) for name in table}
        prov = results["provenance"]
        source = (
            f"saved bytes measured live (torch {torch.__version__}); speed ratio from "
            f"docs/measurements/bench ({prov['torch']}, {prov['cpu']}, {prov['threads']} thread(s), "
            f"{prov['date'][:10]})"
        )
    columns: dict[str, dict[str, Any]] = {}
    for name in ("inplace", *ir.RECIPES):
        fn = inplace_setitem if name == "inplace" else ir.RECIPES[name]
        c = x * 1
        try:
            nbytes: int | None = saved_bytes(fn, c, index, value)[0]
        except NotApplicable:
            nbytes = None
        columns[name] = {"saved_bytes": nbytes, "speed_ratio": ratios.get(name), "source": source}
    return columns


def slowest(results: dict[str, Any], write: str = "element") -> list[str]:
    """The recipes tied for slowest in the benchmark's ranking of ``write``: within the
    noise band of the slowest, or with a bootstrap interval against it that holds 1."""
    ranked = ranking(results).get(write, [])
    return tied_with_slowest(ranked, noise(results), results, write)


def _extremes(results: dict[str, Any]) -> dict[str, str]:
    """The recipes slowest (ties all marked) and with the largest peak memory, at the headline."""
    marks: dict[str, list[str]] = {}
    tied = slowest(results, HEADLINE["write"])
    for name in tied:
        word = "slowest" if len(tied) == 1 else "tied for slowest"
        marks.setdefault(name, []).append(f"{word} over 1e5 to 1e7 elements")
    found = {name: measured(results, name) for name in ir.RECIPES}
    peaks = {n: m["peak_bytes"] for n, m in found.items() if m and m["peak_bytes"] is not None}
    if peaks:
        top = max(peaks.values())
        for name in (n for n, v in peaks.items() if v == top):
            marks.setdefault(name, []).append("most memory-hungry")
    return {name: " and ".join(words) for name, words in marks.items()}


#: The cost answer's verdict, by (in place saves time, in place saves memory):
#: one sentence each, so that each has one translation.
VERDICTS = {
    (True, False): "In place saves time, not memory.",
    (False, True): "In place saves memory, not time.",
    (True, True): "In place saves both time and memory.",
    (False, False): "In place saves neither time nor memory.",
}


def verdict(inplace: dict[str, Any], clone: dict[str, Any], band: float) -> str | None:
    """What writing in place saves over clone-and-write, from their measurements.

    Time counts as saved only when clone-and-write is slower by more than the
    run's noise band ``band`` and, where both kept their rounds, by more than
    the bootstrap interval of the ratio (it lies above 1); memory when its peak
    is larger. ``None`` when the run left peak memory out.

    >>> verdict({"seconds": 1.0, "peak_bytes": 8}, {"seconds": 1.7, "peak_bytes": 8}, 1.2)
    'In place saves time, not memory.'
    >>> verdict({"seconds": 1.0, "peak_bytes": 8}, {"seconds": 1.1, "peak_bytes": 16}, 1.2)
    'In place saves memory, not time.'
    """
    if inplace["peak_bytes"] is None or clone["peak_bytes"] is None:
        return None
    saves_time = clone["seconds"] > inplace["seconds"] * band
    if saves_time and inplace.get("rounds") and clone.get("rounds"):
        lo, _ = ratio_interval(clone["rounds"], inplace["rounds"])
        saves_time = lo > 1.0
    saves_memory = clone["peak_bytes"] > inplace["peak_bytes"]
    return VERDICTS[saves_time, saves_memory]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:.1f} MiB"


def _times(ratio: float) -> str:
    return f"{ratio:.2f}\N{MULTIPLICATION SIGN}"


#: The cost answer's sentence on time, by whether in place and clone-and-write tie
#: (within the noise band or the bootstrap interval): one wording each, for translation.
TIME_SENTENCES = {
    False: "Time: clone-and-write takes {time} as long as in place at {size} elements.",
    True: "Time: at {size} elements, clone-and-write ties with in place, within the noise ({time}).",
}
#: Its sentence on memory, by what the peaks of clone-and-write over in place's are:
#: ``"same"`` in both forms, ``"rebound"`` (the same only when the tensor written from
#: is a temporary), ``"both"`` (different in both), ``"temporary"`` (no held form counted).
MEMORY_SENTENCES = {
    "same": "Memory: the peaks match, whether or not the tensor you wrote from stays alive "
    "through backward.",
    "rebound": "Memory: while the tensor you wrote from stays alive through backward, it "
    "peaks at {held} in place; rebind its name and the peaks match.",
    "both": "Memory: it peaks at {held} in place while the tensor you wrote from stays alive "
    "through backward, and at {temporary} when you rebind its name.",
    "temporary": "Memory: it peaks at {temporary} in place when the tensor written from is a "
    "temporary; that run did not count the tensor kept alive.",
    "none": "Memory: not counted in that run.",
}
#: When it matters: the size from which passes over memory decide (bench's crossover).
WHEN_SENTENCE = (
    "From {crossover} elements up, passes over memory decide the time; below, each call's "
    "fixed cost does."
)


def memory_case(costs: HeadlineCosts) -> str:
    """Which of :data:`MEMORY_SENTENCES` the peaks call for.

    >>> from inplace_recipes.bench._statistics import HeadlineCosts
    >>> memory_case(HeadlineCosts("clone", 1.4, False, {"temporary": 1.0, "held": 1.5}, 10**4))
    'rebound'
    """
    held, temporary = costs.peak["held"], costs.peak["temporary"]
    if temporary is None:
        return "none"
    if held is None:
        return "temporary"
    if held == temporary == 1.0:
        return "same"
    return "rebound" if temporary == 1.0 else "both"


def _cost_answer(costs: HeadlineCosts) -> str:
    """The three sentences (time, memory, when it matters) under the cost question."""
    size = size_label(HEADLINE["size"])
    time = TIME_SENTENCES[costs.tied].format(
        time=figure("clone_time", _times(costs.time)), size=size
    )
    held, temporary = costs.peak["held"], costs.peak["temporary"]
    memory = MEMORY_SENTENCES[memory_case(costs)].format(
        held=figure("clone_held_ratio", _times(held)) if held is not None else "",
        temporary=figure("clone_temporary_ratio", _times(temporary))
        if temporary is not None
        else "",
    )
    when = WHEN_SENTENCE.format(crossover=figure("bench_crossover", size_label(costs.crossover)))
    return f"{time} {memory} {when}"


def short_answers(results: dict[str, Any]) -> list[str]:
    """Each question of the lead with its answer, a paragraph each (at most 60 words: the
    recommended line, then time, memory and when it matters, one number a sentence)."""
    # what best_recipe picks for x[i] = 42 (PREFERENCES is this for the committed run)
    pick = preferences(results).get("row", ("clone",))[0]
    ties = ties_for_fastest(results, pick)
    where = how_many(ties["ties"], len(ranking(results)))
    recommended = (
        f"`{RECORDS[pick].line}`: in the committed benchmark no correct recipe is faster {where}"
    )
    if pick == "clone":
        recommended += (
            ", and it is the reference every other recipe is checked against. Inside "
            "`torch.func.vmap` with a batched value, use `where` instead"
        )
    answers = [f"**How do I write `x[i] = 42` without in-place?**\n{recommended}."]
    costs = headline_costs(
        results,
        noise(results),
        write=HEADLINE["write"],
        size=HEADLINE["size"],
        dtype=HEADLINE["dtype"],
    )
    question = "**What does in-place cost or save?**"
    if costs is None:
        answers.append(f"{question}\nNot measured in the committed results.")
    else:
        answers.append(f"{question}\n{_cost_answer(costs)}")
    return answers


def _tie_detail(results: dict[str, Any], pick: str) -> str:
    """What "faster" means in the first answer, and the writes the pick ties for fastest."""
    band = figure("bench_noise", _percent(noise(results)))
    ties = ties_for_fastest(results, pick)
    text = f"Faster means beyond the run's noise band ({band}) and the bootstrap interval"
    if not ties["not"]:
        return text + "."
    words = figure("bench_ties", ", ".join(WRITE_WORDS.get(w, w) for w in ties["ties"]))
    others = figure("bench_not", ", ".join(WRITE_WORDS.get(w, w) for w in ties["not"]))
    return text + f"; `{pick}` ties for fastest for {words}, not for {others}."


def _cost_detail(results: dict[str, Any]) -> str | None:
    """The figures behind the cost answer: times, peaks in both forms, the mask blend."""
    inplace, clone = measured(results, "inplace"), measured(results, "clone")
    if not inplace or not clone:
        return None
    text = (
        f"At {size_label(HEADLINE['size'])} float32 elements, writing one element and running "
        f"backward takes {figure('inplace_ms', _ms(inplace['seconds']))} in place and "
        f"{figure('clone_ms', _ms(clone['seconds']))} with clone-and-write"
    )
    if inplace["peak_bytes"] is None or clone["peak_bytes"] is None:
        text += ", peak memory not counted in that run"
    elif clone["peak_bytes_held"] is None:
        text += (
            f"; its peak memory is {figure('inplace_peak', _mib(inplace['peak_bytes']))} in "
            f"place and {figure('clone_peak', _mib(clone['peak_bytes']))} with clone-and-write"
        )
    else:
        text += (
            f"; its peak memory is {figure('inplace_peak', _mib(inplace['peak_bytes']))} in "
            "place, and with clone-and-write "
            f"{figure('clone_peak_held', _mib(clone['peak_bytes_held']))} when the caller keeps "
            "the tensor it wrote from (`y = f(c)` with `c` used again, or held by a list or a "
            f"module) and {figure('clone_peak', _mib(clone['peak_bytes']))} when the name is "
            "rebound (`c = f(c)` frees the old tensor)"
        )
    mask = measured(results, "mask")
    if mask:
        label = _extremes(results).get("mask")
        text += (
            "; the old mask blend"
            + (f" ({label})" if label else "")
            + f" takes {figure('mask_ms', _ms(mask['seconds']))}"
        )
        least = least_peak(results, HEADLINE["write"], HEADLINE["size"], "held")
        if mask["peak_bytes_held"] is not None and least:
            over = figure("mask_over_least", _times(mask["peak_bytes_held"] / least[0]))
            text += (
                f" and peaks at {figure('mask_peak_held', _mib(mask['peak_bytes_held']))} with "
                f"the tensor kept alive, {over} the least an out-of-place write needs there"
            )
        elif mask["peak_bytes"] is not None:
            text += " and " + figure("mask_peak", _mib(mask["peak_bytes"]))
    return (
        text + f" (eager, CPU, {_provenance(results)}; "
        "{doc}`how it is measured </auto_recipes/tools/plot_performance>`)."
    )


def render_lead(results: dict[str, Any] | None = None) -> str:
    """The landing page's first screen: each question answered in a few words, then the detail.

    Every word that ranks ("most", "slowest", "match") and every number comes
    from ``results`` (the committed run by default) and its noise band.
    """
    results = committed.bench_results() if results is None else results
    pick = preferences(results).get("row", ("clone",))[0]
    recommended, cost = short_answers(results)
    lead = [recommended, "", _tie_detail(results, pick), "", cost, ""]
    detail = _cost_detail(results)
    if detail:
        lead += [detail, ""]
    return "\n".join(lead[:-1]) + "\n"


#: What each kind of write of the benchmark looks like in code.
WRITE_CODE = {
    "element": "x[i, j] = 0.0",
    "row": "x[i] = 0.0",
    "slice": "x[:, 1::10] = 0.0",
    "boolean": "x[mask] = 0.0  (1% True)",
    "value_grad": "x[i] = v  (v requires grad)",
    "index": "x[t] = 0.0  (t: three rows)",
    "list": "x[[a, b, c]] = 0.0",
}


def render_which(results: dict[str, Any] | None = None) -> str:
    """Each write, the recipe ``best_recipe`` picks, and its measured speed."""
    results = committed.bench_results() if results is None else results
    shape = shape_for(10**6)
    x = torch.zeros(shape, requires_grad=True)
    band = noise(results)
    ranks = ranking(results)
    header = ["write", "`best_recipe` picks", "its time / in-place", "as fast, within the noise"]
    rows = [header]
    measured_writes = results.get("config", {}).get("writes", list(WRITES))
    for write in measured_writes:  # the writes the run timed, in its order
        index, value = WRITES[write](shape, x)
        pick = ir.best_recipe(x, index, value)
        ranked = ranks.get(write, [])
        measured = dict(ranked)
        tied = tied_with_fastest(ranked, band, results, write)
        x_sign = "\N{MULTIPLICATION SIGN}"
        rows.append(
            [
                f"`{WRITE_CODE[write]}`",
                f"`{pick}`",
                f"{measured[pick]:.2f}{x_sign}" if pick in measured else "not measured",
                ", ".join(f"`{name}`" for name in tied),
            ]
        )
    out = ["```{list-table}", ":header-rows: 1", ""]
    for row in rows:
        out.append(f"* - {row[0]}")
        out.extend(f"  - {cell}" for cell in row[1:])
    out += ["```", ""]
    out.append(
        "Forward + backward over in-place, eager, geometric mean over 1e5 to 1e7 elements and "
        "both dtypes (the ranking `best_recipe` follows), from the committed results "
        f"({_provenance(results)}). Identical work timed twice at those sizes disagreed by up "
        f"to {figure('bench_noise', _percent(band))} (its noise band), so recipes closer than "
        "that, or whose bootstrap interval of their ratio holds 1, are listed together as a "
        "tie. Details on the performance page."
    )
    return "\n".join(out) + "\n"


def write(outdir: Path) -> None:
    """The landing page's generated parts, and its two answers as the performance page's
    first screen (``answer_short.html``, rendered by ``performance_prose``)."""
    import performance_prose

    outdir.mkdir(parents=True, exist_ok=True)
    results = committed.bench_results()
    short = performance_prose.Prose(performance_prose.short_answer(results))._repr_html_()
    pages = [
        ("answer_lead.md", render_lead(results)),
        ("answer_table.md", render()),
        ("which_recipe.md", render_which(results)),
        ("answer_short.html", short + "\n"),
    ]
    for name, text in pages:
        path = outdir / name
        if not path.exists() or path.read_text() != text:  # keep the mtime: no needless rebuild
            path.write_text(text)


if __name__ == "__main__":
    print(render_lead())
    print(render())
    print(render_which())
