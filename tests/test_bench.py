"""The benchmark tool: valid results, exact saved bytes, raw one-liners that match
the reference, a self-consistency check that can fail, a working command line.

These tests never assert a speed: timings are measured, not tested.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

import inplace_recipes as ir
from docs_modules import import_docs_module
from inplace_recipes import bench, recipes
from inplace_recipes.bench import WRITES, Config, saved_bytes
from inplace_recipes.bench import _cli as cli
from inplace_recipes.bench import _consistency as consistency
from inplace_recipes.bench import _entries as entries
from inplace_recipes.bench import _instructions as instructions
from inplace_recipes.bench import _measure as measure
from inplace_recipes.bench import _results as results_of
from inplace_recipes.bench import _statistics as statistics
from inplace_recipes.bench import _summary as summary
from inplace_recipes.recipes import OneLiner

TINY = Config(
    sizes=(100, 1000),
    dtypes=("float32",),
    compile_sizes=(),
    overhead_sizes=(1000,),
    min_run_time=0.001,
    rounds=1,
    peak=False,
    attempts=1,
    instruction_sizes=(),
    audit=False,
)


@pytest.fixture(scope="module")
def tiny_results() -> dict:
    return bench.run(TINY)


def test_run_covers_every_entry_size_and_write(tiny_results: dict) -> None:
    results = json.loads(json.dumps(tiny_results))  # valid JSON, round-trips
    seen = {(r["entry"], r["size"], r["write"]) for r in results["records"]}
    expected = {
        (e, s, w)
        for e in entries.all_entries()
        for s in TINY.sizes
        for w in WRITES
        if e not in entries.overhead_entries() or s in TINY.overhead_sizes
    }
    assert seen == expected
    assert set(entries.all_entries()) >= {"inplace", "plain_clone", "inplace_on_clone", *ir.RECIPES}
    assert set(entries.raw_of()) == set(ir.RECIPES)
    for key in ("torch", "cpu", "threads", "date", "command", "git_commit", "load_average_start"):
        assert key in results["provenance"]
    assert results["consistency"]["tolerance"] == consistency.TOLERANCE
    # CUDA is measured when present and skipped cleanly when not
    assert results["provenance"]["devices"] == ["cpu"] + ["cuda"] * torch.cuda.is_available()


def test_every_applicable_entry_is_checked_and_timed(tiny_results: dict) -> None:
    for r in tiny_results["records"]:
        if not r["applicable"]:
            assert r["forward"] is None
            assert r["note"]
            continue
        assert r["correct"] is True, r
        for phase in ("forward", "forward_backward"):
            assert r[phase]["median"] > 0
            assert r[f"ratio_{phase}"] > 0
        if r["entry"] == "inplace":
            assert r["ratio_forward_backward"] == 1.0


def test_refusals_are_recorded_as_not_applicable(tiny_results: dict) -> None:
    refused = {(r["entry"], r["write"]) for r in tiny_results["records"] if not r["applicable"]}
    assert ("select_scatter", "boolean") in refused
    assert ("raw_select_scatter", "boolean") in refused
    assert ("masked_fill", "value_grad") in refused
    assert ("raw_masked_fill", "value_grad") in refused
    assert ("clone", "boolean") not in refused


def test_at_records_the_recipe_it_picks(tiny_results: dict) -> None:
    picks = [r["picks"] for r in tiny_results["records"] if r["entry"] == "at"]
    assert picks
    assert set(picks) <= set(ir.RECIPES)


# -- raw one-liners ------------------------------------------------------------


def _expected(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """The reference, in plain torch: clone, then setitem."""
    y = x.clone()
    y[index] = value
    return y


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("name", [n for n, r in entries.raw_of().items() if r.startswith("raw_")])
def test_raw_one_liner_matches_setitem_value_and_gradients(write: str, name: str) -> None:
    """Where its record says it runs (the forms it has code for, and what the recipe takes)."""
    shape = entries.shape_for(1000)
    leaf = torch.rand(shape, dtype=torch.float64, requires_grad=True)
    index, value = WRITES[write](shape, leaf)
    if isinstance(value, torch.Tensor):
        value = value.detach().double().requires_grad_(True)
    raw = entries.raw_of()[name]
    if not entries.raw_takes(name, write, leaf, index, value):
        with pytest.raises(ir.NotApplicable):
            entries.raw_fn(raw)(leaf * 1, index, value)
        return
    got = entries.raw_fn(raw)(leaf * 1, index, value)
    weights = torch.rand(shape, dtype=torch.float64)
    wrt = [leaf] + ([value] if isinstance(value, torch.Tensor) else [])
    want = _expected(leaf * 1, index, value)
    assert torch.equal(got.detach(), want.detach())
    for g, w in zip(
        torch.autograd.grad((got * weights).sum(), wrt),
        torch.autograd.grad((want * weights).sum(), wrt),
        strict=True,
    ):
        torch.testing.assert_close(g, w)


def test_a_wrong_raw_one_liner_is_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    record = recipes.RECORDS["where"]
    real = record.one_liner.run
    wrong = OneLiner("raw_where", lambda x, i, v: real(x, i, v) + 1, record.one_liner.code)
    monkeypatch.setitem(recipes._RECORDS, "where", dataclasses.replace(record, one_liner=wrong))
    config = Config(
        sizes=(100,),
        dtypes=("float32",),
        writes=("row",),
        entries=("inplace", "where", "raw_where", "raw_index_put"),
        compile_sizes=(),
        overhead_sizes=(100,),
        min_run_time=0.001,
        rounds=1,
        peak=False,
        attempts=1,
        instruction_sizes=(),
        audit=False,
    )
    records = {r["entry"]: r for r in bench.run(config)["records"]}
    assert records["raw_where"]["correct"] is False
    assert records["raw_where"]["forward_backward"] is None
    assert records["raw_index_put"]["correct"] is True


# -- self-consistency ------------------------------------------------------------


def _record(entry: str, seconds: float, size: int = 10**6) -> dict[str, Any]:
    return {
        "device": "cpu",
        "dtype": "float32",
        "size": size,
        "write": "row",
        "mode": "eager",
        "entry": entry,
        "forward": {"median": seconds / 2},
        "forward_backward": {"median": seconds},
    }


def test_consistency_flags_disagreeing_twins_only() -> None:
    agree = [_record("inplace", 1.0), _record("inplace_again", 1.09)]
    assert consistency.inconsistencies(agree) == []
    apart = [_record("clone", 1.3), _record("inplace_on_clone", 1.0)]
    (found,) = consistency.inconsistencies(apart)
    assert (found["entry"], found["same_as"], found["ratio"]) == ("clone", "inplace_on_clone", 1.3)
    # below CLONE_FROM the recipe's own Python time may show: not compared
    small = [_record("clone", 1.3, size=100), _record("inplace_on_clone", 1.0, size=100)]
    assert consistency.inconsistencies(small) == []


def test_an_inconsistent_configuration_is_measured_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake(config: Any, plan: Any, mode: str, checks: Any, bar: Any) -> list[dict[str, Any]]:
        calls.append(1)
        again = 1.5 if len(calls) == 1 else 1.02
        return [_record("inplace", 1.0), _record("inplace_again", again)]

    monkeypatch.setattr(measure, "_measure", fake)
    plan = measure._Plan("cpu", "float32", 10**6, "row", ["eager"])
    records, attempts = measure._measure_consistent(Config(attempts=3), plan, "eager", {}, None)
    assert attempts == 2
    assert consistency.inconsistencies(records) == []


def test_a_configuration_that_never_agrees_is_kept_flagged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fake(config: Any, plan: Any, mode: str, checks: Any, bar: Any) -> list[dict[str, Any]]:
        return [_record("inplace", 1.0), _record("inplace_again", 2.0)]

    monkeypatch.setattr(measure, "_measure", fake)
    plan = measure._Plan("cpu", "float32", 10**6, "row", ["eager"])
    records, attempts = measure._measure_consistent(Config(attempts=2), plan, "eager", {}, None)
    assert attempts == 2
    assert consistency.inconsistencies(records)


def test_remeasure_noisy_replaces_only_the_disagreeing_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fake(config: Any, plan: Any, mode: str, checks: Any, bar: Any) -> list[dict[str, Any]]:
        return [_record("inplace", 1.0), _record("inplace_again", 1.01)]

    monkeypatch.setattr(measure, "_measure", fake)
    monkeypatch.setattr(measure, "_checked_recipes", lambda *args: {})
    other = [_record("inplace", 1.0, size=100), _record("inplace_again", 1.05, size=100)]
    results = {
        "config": json.loads(json.dumps(measure.asdict(Config()))),
        "provenance": {},
        "consistency": {"tolerance": consistency.TOLERANCE, "repeated": [], "noisy": []},
        "records": [_record("inplace", 1.0), _record("inplace_again", 1.4), *other],
    }
    assert measure.remeasure_noisy(results) == ["cpu float32 1000000 row eager"]
    assert consistency.inconsistencies(results["records"]) == []
    assert results["provenance"]["noisy"] is False
    assert len(results["records"]) == 4
    assert [r for r in results["records"] if r["size"] == 100] == other
    assert measure.remeasure_noisy(results) == []  # nothing left to do


@pytest.mark.xfail(
    import_docs_module("committed").bench_results()["provenance"].get("noisy", True),
    reason="on this project's shared 2-core VM, identical operations differ by 10-25% in "
    "CPU time even at a load average of 1 (the committed run lists them in "
    "consistency.noisy); rerun on a dedicated machine (docs/measurements/bench/README.md). Strict: "
    "passes as soon as they agree.",
    strict=True,
)
def test_committed_results_pass_the_self_consistency_check(bench_results: dict) -> None:
    results = bench_results
    info = results["consistency"]
    assert info["tolerance"] <= 1.10
    assert consistency.inconsistencies(results["records"], info["tolerance"]) == []
    assert results["provenance"]["noisy"] is False
    # the pairs were really measured: the check is not vacuous
    pairs = {
        (r["entry"], r["size"], r["write"]) for r in results["records"] if r["forward_backward"]
    }
    assert any(e == "inplace_again" for e, _, _ in pairs)
    assert any(e == "clone" and s >= consistency.CLONE_FROM for e, s, _ in pairs)


def test_committed_results_hold_the_overhead_comparisons(bench_results: dict) -> None:
    results = bench_results
    raw = results_of.raw_overhead(results)
    for recipe in ("where", "index_put", "scatter", "masked_fill", "mask", "clone"):
        assert {(w, s) for w, s in raw[recipe]} >= {
            (w, s) for w in ("element", "row", "slice", "boolean") for s in (10**3, 10**4, 10**6)
        }, recipe
    config = results["config"]
    writes = [w for w in config["writes"] if w in entries.OVERHEAD_WRITES]
    assert len(results_of.at_overhead(results)) == len(writes) * len(config["overhead_sizes"])
    assert set(results["audit"]["ratio"]) == {"audit", "anomaly", "audit_over_anomaly"}


def test_committed_results_meet_the_overhead_goals_in_instructions(bench_results: dict) -> None:
    """Issue 11: each recipe within 1.10x of its raw one-liner, at() within 1.05x of its pick."""
    results = bench_results
    counted = results_of.instruction_overhead(results)
    for name in (*ir.RECIPES, "at"):
        sizes = {s for _, s in counted[name]}
        assert sizes >= {10**3, 10**4, 10**6}, (name, sizes)
    assert results_of.over_goals(results) == []


# -- instruction counts ----------------------------------------------------------


def test_instruction_counts_without_valgrind_say_so() -> None:
    counts = instructions.instruction_counts((100,), ("row",), valgrind="")
    assert counts == {
        "available": False,
        "reason": "valgrind not found",
        "number": 10,
        "counts": [],
    }


def test_callgrind_dumps_are_read_in_order(tmp_path: Path) -> None:
    out = tmp_path / "callgrind.out"
    for i, n in [(2, 200), (10, 1000), (1, 100)]:
        (tmp_path / f"callgrind.out.{i}").write_text(f"events: Ir\nsummary: {n}\ntotals: {n}\n")
    out.write_text("summary: 0\n")  # the dump at exit: not one of ours
    assert instructions._read_dumps(out) == [100, 200, 1000]


def test_instruction_overhead_divides_by_the_raw_one_liner_and_the_pick() -> None:
    counts = [
        {"size": 1000, "write": "row", "entry": e, "instructions": n}
        for e, n in [("where", 300), ("raw_where", 200), ("at", 330), ("clone", 100)]
    ]
    counts.append({"size": 1000, "write": "row", "entry": "inplace_on_clone", "instructions": 90})
    at = _record("at", 1.0, size=1000) | {"picks": "where"}
    results = {"records": [at], "instructions": {"available": True, "counts": counts}}
    table = results_of.instruction_overhead(results)
    assert table["where"] == {("row", 1000): 1.5}
    assert table["at"] == {("row", 1000): 1.1}
    assert table["clone"] == {("row", 1000): pytest.approx(100 / 90)}


# -- reports ---------------------------------------------------------------------


def test_report_functions_read_the_committed_results(
    bench_results: dict, prose: ModuleType
) -> None:
    results = bench_results
    text = prose.answer(results)
    assert "best_recipe" in text
    assert "x" in text
    lines = summary.summary_lines(results)
    assert any("raw one-liner" in line for line in lines)
    assert any("at(x)[i].set(v)" in line for line in lines)
    assert any(line.startswith("self-consistency") for line in lines)


def test_figures_have_one_panel_each_and_fit_a_page(
    bench_results: dict, figures: ModuleType
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = bench_results
    drawn = [
        figures.figure_headline(results),
        figures.figure_overhead(results),
        figures.figure_compiled(results),
        *(
            figures.figure_against_size(results, w)
            for w in WRITES
            if any(r["write"] == w for r in results["records"])  # writes the run has
        ),
    ]
    for fig in drawn:
        assert len(fig.axes) == 1
        width, _ = fig.get_size_inches()
        assert width <= 7.5  # read at ~700 px: no figure wider than the page
        plt.close(fig)


def test_overhead_lines_show_a_missing_measurement_as_a_dash() -> None:
    results = {
        "records": [
            _record("where", 3.0, size=1000),
            _record("raw_where", 2.0, size=1000),
            _record("index_put", 3.0, size=10**4),
            _record("raw_index_put", 1.0, size=10**4),
        ]
    }
    lines = summary.overhead_lines(results)
    assert lines[-2].split() == ["where", "1.50x", "-"]
    assert lines[-1].split() == ["index_put", "-", "3.00x"]


# -- command line ----------------------------------------------------------------


ARGV = ["--quick", "--sizes", "100", "--writes", "element", "boolean", "--entries", "where"]
ARGV += ["--min-run-time", "0.001", "--rounds", "1", "--no-progress", "--no-audit"]
ARGV += ["--instruction-sizes", "--overhead-sizes", "100", "--attempts", "1"]


def test_command_line_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "quick.json"
    assert cli.main([*ARGV, "-o", str(out)]) == 0
    results = bench.load_results(out)
    recorded = {r["entry"] for r in results["records"]}
    assert recorded == {*entries.BASELINES, "where"}
    assert results["provenance"]["threads"] == 1
    assert "bench --quick" in results["provenance"]["command"]
    printed = capsys.readouterr().out
    assert str(out) in printed
    assert "self-consistency" in printed
    table = results_of.ratio_table(results, write="boolean")
    assert table["inplace"] == {100: 1.0}


def test_command_line_hooks_into_another_parser(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="inplace-recipes")
    sub = parser.add_subparsers(dest="command")
    cli.add_arguments(sub.add_parser("bench"))
    args = parser.parse_args(["bench", *ARGV, "--entries", "raw_where", "where"])
    assert args.entries == ["raw_where", "where"]

    assert cli.run(args, ["bench"]) == 0
    assert "recipe / its raw one-liner" in capsys.readouterr().out


def _counted(where: int, at: int) -> dict[str, Any]:
    """A results dict whose instruction counts put ``where`` and ``at()`` at these ratios (%)."""
    counts = [
        {"size": 1000, "write": "row", "entry": e, "instructions": n}
        for e, n in [("raw_where", 100), ("where", where), ("at", where * at // 100)]
    ]
    record = _record("at", 1.0, size=1000) | {"picks": "where"}
    return {"records": [record], "instructions": {"available": True, "counts": counts}}


@pytest.mark.parametrize(
    ("where", "at", "code", "named"),
    [(108, 104, 0, None), (112, 104, 1, "where at 1e3, row"), (108, 107, 1, "at at 1e3, row")],
)
def test_check_fails_on_a_recipe_or_at_over_its_goal(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: int,
    at: int,
    code: int,
    named: str | None,
) -> None:

    monkeypatch.setattr(cli, "measure", lambda *a, **kw: _counted(where, at))
    monkeypatch.setattr(cli, "summary_lines", lambda results: [])
    assert cli.main(["--quick", "--check"]) == code
    printed = capsys.readouterr().out
    if named:
        assert f"over the goal: {named}" in printed
    else:
        assert "within the overhead goals" in printed


def test_check_without_instruction_counts_fails_and_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    results = {"records": [], "instructions": {"available": False, "reason": "valgrind not found"}}
    monkeypatch.setattr(cli, "measure", lambda *a, **kw: results)
    monkeypatch.setattr(cli, "summary_lines", lambda results: [])
    assert cli.main(["--quick", "--check"]) == 1
    assert "valgrind not found" in capsys.readouterr().out


def test_python_dash_m_bench_still_dispatches(capsys: pytest.CaptureFixture[str]) -> None:
    from inplace_recipes.__main__ import main

    assert main(["bench", *ARGV]) == 0
    assert "raw one-liner" in capsys.readouterr().out


# -- memory ------------------------------------------------------------------------


def _non_leaf(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.rand(*shape, dtype=dtype, requires_grad=True) * 1


# Counted by hand for a 4 x 5 float32 tensor (20 elements) and x[1, 2] = 0.0:
# index_put saves the position as one int64 per dimension (2 x 8 bytes),
# scatter the one flat position (8 bytes); where and masked_fill a bool mask
# (one byte per element); the blend a mask of x's dtype (4 bytes per element);
# setitem-based recipes nothing.
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("inplace", 0),
        ("inplace_on_clone", 0),
        ("clone", 0),
        ("select_scatter", 0),
        ("index_put", 16),
        ("scatter", 8),
        ("where", 20),
        ("masked_fill", 20),
        ("mask", 80),
    ],
)
def test_saved_bytes_one_element(name: str, expected: int) -> None:
    fn = entries.write_fn(name)
    assert saved_bytes(fn, _non_leaf(4, 5), (1, 2), 0.0) == (expected, 0)


def test_saved_bytes_by_hand_for_other_writes() -> None:
    x = _non_leaf(4, 5)
    # one row: masked_fill saves its bool mask (20 bytes); index_put the 0-d
    # index of the row (8), as x.index_put((torch.tensor(1),), v) does; scatter
    # 5 flat positions
    assert saved_bytes(ir.RECIPES["masked_fill"], x, 1, 0.0) == (20, 0)
    assert saved_bytes(ir.RECIPES["index_put"], x, 1, 0.0) == (8, 0)
    assert saved_bytes(ir.RECIPES["scatter"], x, 1, 0.0) == (40, 0)
    # a row that requires grad: the blend saves two float64 masks (for x and value)
    v = torch.rand(5, dtype=torch.float64, requires_grad=True)
    assert saved_bytes(ir.RECIPES["mask"], _non_leaf(4, 5, dtype=torch.float64), 1, v) == (320, 0)
    # a user's mask: where and in-place setitem both save that very mask (an input)
    mask = torch.zeros(4, 5, dtype=torch.bool)
    mask[0, :3] = True
    assert saved_bytes(ir.RECIPES["where"], x, mask, 0.0) == (20, 20)
    assert saved_bytes(ir.inplace_setitem, x * 1, mask, 0.0) == (20, 20)


def test_saved_bytes_counts_a_storage_once() -> None:
    x = _non_leaf(6)

    def twice(t: torch.Tensor, index: object, value: object) -> torch.Tensor:
        return t * t * t  # x saved by two muls: counted once, as an input

    assert saved_bytes(twice, x, 0, 0.0)[1] == 24


def test_peak_bytes_cpu() -> None:
    def step() -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.empty(1000)  # 4000 bytes, then 8000 alive at once
        b = torch.empty(1000)
        return a, b

    peak = bench.peak_bytes(step, torch.device("cpu"))
    assert peak is None or peak == 8000


def test_answer_columns_without_results(tmp_path: Path, answer_table: ModuleType) -> None:
    cols = answer_table.answer_columns(tmp_path / "missing.json")
    assert set(cols) == {"inplace", *ir.RECIPES}
    assert cols["inplace"]["saved_bytes"] == 0
    assert cols["where"]["saved_bytes"] == 10**6
    assert cols["mask"]["saved_bytes"] == 4 * 10**6
    assert all(c["speed_ratio"] is None and c["source"] for c in cols.values())


def test_answer_columns_from_results(
    tmp_path: Path, tiny_results: dict, answer_table: ModuleType
) -> None:
    fake = json.loads(json.dumps(tiny_results))
    for r in fake["records"]:
        r["size"] = 10**6 if r["size"] == 1000 else r["size"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(fake))
    cols = answer_table.answer_columns(path)
    assert cols["inplace"]["speed_ratio"] == 1.0
    assert isinstance(cols["index_put"]["speed_ratio"], float)
    assert "docs/measurements/bench" in cols["index_put"]["source"]


def test_shape_for_keeps_the_size() -> None:
    for size in (*TINY.sizes, 10**2, 10**5, 10**7):
        rows, cols = entries.shape_for(size)
        assert rows * cols == size


def test_records_carry_the_minimum_of_rounds_and_its_interval(tiny_results: dict) -> None:
    """The robust statistic: fastest call per round, ratio of minima inside its bootstrap interval."""
    rounds = tiny_results["config"]["rounds"]
    timed_records = [r for r in tiny_results["records"] if r["forward_backward"]]
    assert timed_records
    for r in timed_records:
        minima = r["forward_backward"]["round_minima"]
        assert len(minima) == rounds
        assert r["forward_backward"]["min"] == min(minima) <= r["forward_backward"]["median"]
        lo, hi = r["ratio_forward_backward_interval"]
        assert lo <= r["ratio_forward_backward_min"] <= hi or rounds == 1


def test_ratio_interval_brackets_the_ratio_and_narrows_with_agreement() -> None:
    from inplace_recipes.bench._intervals import ratio_interval, ratio_of_minima

    steady = ratio_interval([2.0] * 6, [1.0] * 6)
    assert steady == (2.0, 2.0)
    noisy = [2.0, 2.6, 2.1, 3.0, 2.2, 2.9], [1.0, 1.4, 1.0, 1.2, 1.1, 1.3]
    lo, hi = ratio_interval(*noisy)
    assert lo <= ratio_of_minima(*noisy) <= hi
    assert hi - lo > 0
    with pytest.raises(ValueError, match="same, non-zero number of rounds"):
        ratio_interval([1.0], [1.0, 2.0])


def test_every_figure_has_labelled_axes(bench_results: dict, figures: ModuleType) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = bench_results
    for fig in [
        figures.figure_headline(results),
        figures.figure_instructions(results),
        figures.figure_overhead(results),
        figures.figure_compiled(results),
        *(figures.figure_against_size(results, w) for w in statistics.measured_writes(results)),
    ]:
        (ax,) = fig.axes
        assert ax.get_xlabel()
        assert ax.get_ylabel()
        assert ax.get_title()
        plt.close(fig)


def test_the_bench_package_imports_run_one_way() -> None:
    """No circle among ``bench/`` modules, counting imports inside functions too."""
    import ast

    folder = Path(bench.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        here = path.stem
        graph[here] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    graph[here].add(node.module.split(".")[0])
                else:
                    graph[here].update(alias.name for alias in node.names)
    graph = {k: {m for m in v if m in graph and m != "__init__"} for k, v in graph.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    circles = sorted(m for m in graph if m != "__init__" and reaches(m, m, {m}))
    assert not circles, circles


def test_over_goals_holds_an_exactness_cost_to_its_own_goal_only() -> None:
    def counts(write: str, ratio: float) -> list[dict[str, Any]]:
        row = lambda e, n: {"size": 1000, "write": write, "entry": e, "instructions": n}
        return [row("scatter", round(100 * ratio)), row("raw_scatter", 100)]

    goal, why = entries.exactness_costs()["scatter", "index"]
    assert goal > results_of.OVERHEAD_GOALS["recipe"]
    assert "negative" in why
    within = goal - 0.04  # over the recipes' goal, under this write's own
    for write, ratio, over in [
        ("index", within, False),
        ("cold index", within, False),
        ("index", goal + 0.05, True),
        ("slice", within, True),
    ]:
        results = {"instructions": {"available": True, "counts": counts(write, ratio)}}
        assert bool(results_of.over_goals(results)) is over, (write, ratio)


def test_the_goal_line_names_an_exactness_exception_apart() -> None:
    row = lambda e, w, n: {"size": 1000, "write": w, "entry": e, "instructions": n}
    counts = [
        row("scatter", "index", 123),
        row("raw_scatter", "index", 100),
        row("where", "row", 104),
        row("raw_where", "row", 100),
    ]
    results = {"instructions": {"available": True, "counts": counts}}
    line = summary.goal_line(results)
    assert "(largest: where 1.04x, row 1e3)" in line  # not scatter's 1.23x
    assert "scatter for index writes within its own 1.25x (largest: 1.23x;" in line
    counts[0] = row("scatter", "index", 130)
    assert summary.goal_line(results).startswith("goals (instructions, 1e3) missed: scatter")
