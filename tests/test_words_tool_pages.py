"""The general words of the tool pages, each checked over the set it names.

The pages: ``recipes/tools/plot_audit_command.py``, ``plot_audit_model.py``,
``plot_performance.py`` and ``plot_releases.py``. Each test enumerates its set
from the package's own tables (``FAIL_ON``, ``CONSEQUENCE_TABLE``), the page's
own code, the committed benchmark run or the committed release runs, so that a
new class, write, recipe or release file is covered by itself.
``docs/general_words/tool-pages.json`` names, for each sentence, its checks.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import test_audit as audit_cases
import test_audit_consequences as consequence_cases
import test_audit_functions as function_cases
from docs_modules import import_docs_module
from inplace_recipes import RECIPES, audit
from inplace_recipes.auditing import CONSEQUENCE_TABLE, FAIL_ON, RECORD_FIELDS
from inplace_recipes.auditing._cli import EXIT_NOT_RUN, EXIT_UNAUDITED

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "recipes" / "tools"


def audit_command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "inplace_recipes", "audit", *args]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, timeout=240
    )


# -- plot_audit_command.py ------------------------------------------------------------------

#: A child of each kind that leaves no report: killed, ``os._exit``, ``python -c``.
NO_REPORT = """
    import multiprocessing as mp
    import os
    import signal
    import subprocess
    import sys


    def killed():
        os.kill(os.getpid(), signal.SIGKILL)


    def leave():
        os._exit(0)


    if __name__ == "__main__":
        subprocess.run([sys.executable, "-c", "print('code on the command line')"], check=True)
        for target in (killed, leave):
            process = mp.get_context("spawn").Process(target=target)
            process.start()
            process.join()
        print("parent done")
"""


@pytest.mark.parametrize("fail_on", list(FAIL_ON))
def test_a_child_that_leaves_no_report_fails_every_fail_on_class(
    tmp_path: Path, fail_on: str
) -> None:
    """Killed, ``os._exit`` and ``python -c``: counted unaudited, under each ``--fail-on``."""
    (tmp_path / "train.py").write_text(textwrap.dedent(NO_REPORT))
    done = audit_command(tmp_path, "--fail-on", fail_on, "train.py")
    assert "parent done" in done.stdout, done.stderr
    assert "3 child processes ran unaudited" in done.stderr, done.stderr
    assert done.returncode == EXIT_UNAUDITED, done.stderr


def test_a_missing_script_gives_the_not_run_code(tmp_path: Path) -> None:
    done = audit_command(tmp_path, "no_such_script.py")
    assert done.returncode == EXIT_NOT_RUN, done.stderr
    assert "inplace_recipes audit of" not in done.stderr


def test_the_fail_on_classes_fail_what_the_page_says() -> None:
    """``any``: every consequence that needs a fix; ``unused-graph``: those that need a
    backward the code did not run; ``wrong-gradients``: only a wrong backward that ran;
    ``backward-fails``: a refusal, at the write or in a backward that ran."""
    page = (TOOLS / "plot_audit_command.py").read_text()
    listed = re.findall(r"^# - ``([\w-]+)``", page, re.MULTILINE)
    assert sorted(listed) == sorted(FAIL_ON), listed  # the page's list is the whole set
    needs_a_fix = [c.name for c in CONSEQUENCE_TABLE if c.harmful]
    assert list(FAIL_ON["any"]) == needs_a_fix
    unrun = [c.name for c in CONSEQUENCE_TABLE if c.name.endswith(("if backpropagated", "again"))]
    assert list(FAIL_ON["unused-graph"]) == unrun
    assert list(FAIL_ON["wrong-gradients"]) == ["wrong gradients"]
    assert list(FAIL_ON["backward-fails"]) == ["backward fails", "raises"]
    for consequence in CONSEQUENCE_TABLE:  # the table and FAIL_ON say the same
        assert {k for k, names in FAIL_ON.items() if consequence.name in names} == set(
            consequence.fail_on
        ), consequence.name


# -- plot_audit_model.py --------------------------------------------------------------------


def _page_class(path: Path, name: str, namespace: dict[str, Any]) -> type:
    """The class ``name`` as the page defines it (its source, not a copy)."""
    tree = ast.parse(path.read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)  # noqa: S102
    cls: type = namespace[name]
    return cls


def _page_net() -> tuple[type, list[str]]:
    """The audit page's ``Net`` and the lines of its forward."""
    path = TOOLS / "plot_audit_model.py"
    net = _page_class(path, "Net", {"torch": torch, "nn": nn})
    source = textwrap.dedent(ast.get_source_segment(path.read_text(), _forward(path)) or "")
    return net, source.splitlines()


def _forward(path: Path) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Net"]
    (fn,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
    return fn


def test_each_write_that_breaks_the_page_models_backward_breaks_it_alone() -> None:
    """Every write the audit says breaks backward does so with the other writes removed,
    and the one it calls ``wrong gradients`` does not raise (the page says so of it)."""
    net_class, forward = _page_net()
    torch.manual_seed(0)
    net, x = net_class(), torch.randn(5, 4)
    report = audit(lambda: net(x).sum().backward())
    written = {f.code.strip(): f.consequence for f in report}
    assert len(written) == 4, report
    assert set(written.values()) == {"backward fails", "wrong gradients"}
    writes = [line for line in forward if line.strip() in written]
    assert len(writes) == len(written)
    for kept in writes:
        body = [line for line in forward if line not in writes or line == kept]
        namespace: dict[str, Any] = {"torch": torch}
        exec("\n".join(body), namespace)  # noqa: S102 - the page's forward, one write kept
        alone = type("Alone", (net_class,), {"forward": namespace["forward"]})()
        alone.load_state_dict(net.state_dict())
        broke = None
        try:
            alone(x).sum().backward()
        except RuntimeError as error:
            broke = error
        if written[kept.strip()] == "backward fails":
            assert "modified by an inplace operation" in str(broke), kept
        else:
            assert broke is None, kept


def _case_reports() -> list[Any]:
    """Reports of the audit tests' cases: every consequence the tests plant."""
    reports = []
    for case in audit_cases.CASES:
        reports.append(audit(lambda c=case: c.inplace(*audit_cases.inputs()).backward()))
        reports.append(audit(case.inplace, *audit_cases.inputs()))
    for c in consequence_cases.CASES:
        reports.append(audit(lambda c=c: c.program(consequence_cases.x_()).backward()))
        reports.append(audit(lambda c=c: c.program(consequence_cases.x_())))
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    reports.append(audit(function_cases.double_then_rebind, a, function_cases.DoubleUnmarked.apply))
    reports.append(audit(_retained_then_written))
    return reports


def _retained_then_written() -> None:
    h = torch.exp(torch.randn(3, requires_grad=True))
    h.sum().backward(retain_graph=True)
    h.add_(1)  # fails if backward again


def test_every_record_has_the_fixed_keys_and_no_fix_when_harmless() -> None:
    records = [r for report in _case_reports() for r in report.to_records()]
    harmful = {c.name for c in CONSEQUENCE_TABLE if c.harmful}
    assert {r["consequence"] for r in records} == {c.name for c in CONSEQUENCE_TABLE}
    for record in records:
        assert tuple(record) == tuple(RECORD_FIELDS), record
        if record["consequence"] not in harmful:
            assert record["fix"] is None, record


def test_non_reentrant_checkpoint_never_runs_a_write_after_the_last_saved_tensor_again() -> None:
    """Early stop (torch's default): the recomputation ends at the last saved tensor."""
    from torch.utils.checkpoint import checkpoint

    runs: list[int] = []

    def doubled_last(h: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(h)  # the last tensor saved for backward
        runs.append(1)
        return s.mul_(2).sum()  # after it: never recomputed

    x = torch.linspace(-1, 1, 4).requires_grad_()
    for _ in range(3):
        runs.clear()
        x.grad = None
        checkpoint(doubled_last, x, use_reentrant=False).backward()
        assert runs == [1], "the write after the last saved tensor ran again in backward"
        true = torch.autograd.grad((torch.sigmoid(x) * 2).sum(), x)[0]
        assert torch.allclose(x.grad, true)
    x.grad = None
    report = audit(lambda: checkpoint(doubled_last, x, use_reentrant=False).backward())
    assert report.ok, report


# -- plot_performance.py --------------------------------------------------------------------


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    run: dict[str, Any] = import_docs_module("committed").bench_results()
    return run


def test_every_timing_is_the_fastest_of_eight_interleaved_rounds(results: dict[str, Any]) -> None:
    """Each timed record: eight rounds, its time their fastest, every ratio with its interval."""
    from inplace_recipes.bench import FULL

    assert FULL.rounds == 8
    timed = [r for r in results["records"] if r.get("correct") and r.get("forward_backward")]
    assert timed
    for r in timed:
        for part in ("forward", "forward_backward"):
            rounds = r[part]["round_minima"]
            assert len(rounds) == FULL.rounds, (r["entry"], r["write"], r["size"])
            assert r[part]["min"] == min(rounds), (r["entry"], r["write"], r["size"])
        if r["entry"] != "inplace" and r.get("ratio_forward_backward") is not None:
            assert r.get("ratio_forward_backward_interval"), (r["entry"], r["write"], r["size"])
            assert r["ratio_forward_backward"] == r["ratio_forward_backward_min"]


def test_the_records_without_rounds_are_the_ones_not_timed(results: dict[str, Any]) -> None:
    untimed = [r for r in results["records"] if not (r.get("forward_backward") or {})]
    assert all(not (r["applicable"] and r["correct"]) for r in untimed)


def test_every_recipe_has_its_line_with_intervals_in_each_write_s_figure(
    results: dict[str, Any],
) -> None:
    figures = import_docs_module("performance_figures")
    from inplace_recipes.bench import _statistics as stats

    for write in stats.measured_writes(results):
        timed = {
            r["entry"]
            for r in results["records"]
            if r["write"] == write
            and (r["device"], r["mode"], r["dtype"]) == ("cpu", "eager", "float32")
            and r["entry"] in RECIPES
            and r.get("correct")
            and r.get("ratio_forward_backward") is not None
        }
        fig = figures.figure_against_size(results, write)
        labels = {text.get_text() for legend in fig.legends for text in legend.get_texts()}
        assert timed, write
        assert timed <= labels, (write, timed - labels)
        for entry in timed:
            for size in stats.sizes_timed(results, write):
                record = stats.find_record(results, entry, write, size)
                if record and record.get("ratio_forward_backward") is not None:
                    assert record.get("ratio_forward_backward_interval"), (entry, write, size)
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_ci_counts_the_one_liners_warm_and_cold_and_checks_the_goals() -> None:
    """``.ci/run`` runs nox's default sessions; ``bench`` is one, with ``--check`` and
    instruction counts of every overhead write, warm and cold."""
    from inplace_recipes.bench import QUICK
    from inplace_recipes.bench._entries import OVERHEAD_WRITES

    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"-m nox --non-interactive", ci)
    assert " -s " not in ci
    noxfile = ast.parse((ROOT / "noxfile.py").read_text())
    sessions = next(
        ast.literal_eval(node.value)
        for node in noxfile.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "nox.options.sessions"
    )
    assert "bench" in sessions
    bench_session = next(
        n for n in noxfile.body if isinstance(n, ast.FunctionDef) and n.name == "bench"
    )
    assert '"--quick", "--check"' in ast.unparse(bench_session).replace("'", '"')
    assert QUICK.instruction_sizes
    assert set(QUICK.writes) >= set(OVERHEAD_WRITES)


@pytest.mark.parametrize("write", ["element", "row", "slice", "boolean", "index", "list"])
def test_a_cold_call_gets_a_new_index_every_time(write: str) -> None:
    from inplace_recipes.bench._entries import OVERHEAD_WRITES, cold_indices

    assert set(OVERHEAD_WRITES) <= {"element", "row", "slice", "boolean", "index", "list"}
    if write not in OVERHEAD_WRITES:
        pytest.skip(f"{write} is not counted")
    indices = cold_indices(write, (10, 100), torch.zeros(()), 6)
    assert len({id(i) for i in indices}) == 6
    if write != "element":  # new objects, each another index
        assert len({repr(i) for i in indices}) > 1


def test_the_bench_measures_time_only_through_torch_s_timer() -> None:
    """``torch.utils.benchmark.Timer`` makes every timing: no other module of the
    benchmark reads a clock to time a step."""
    bench_dir = ROOT / "src" / "inplace_recipes" / "bench"
    timing = (bench_dir / "_timing.py").read_text()
    assert "from torch.utils.benchmark import Timer" in timing
    clocks = re.compile(r"\b(perf_counter|process_time|monotonic|time\.time)\b")
    for path in sorted(bench_dir.glob("*.py")):
        if path.name == "_timing.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if clocks.search(code) and "seconds" not in code and "provenance" not in code:
                assert "started" in code or "elapsed" in code, f"{path.name}:{n}: {line.strip()}"


def _compiled_named(line: str) -> list[str]:
    alone = re.search(r"the fastest compiled recipe, (\w+),", line)
    if alone:
        return [alone.group(1)]
    tied = re.search(r"the fastest compiled recipes, tied within the noise \(([\w, ]+)\),", line)
    assert tied, line
    return [name.strip() for name in tied.group(1).split(",")]


def test_the_fastest_compiled_recipes_are_every_recipe_tied_with_the_fastest(
    results: dict[str, Any],
) -> None:
    """On the committed run, at the one size and dtype the lines cover (1e6 float32)."""
    prose = import_docs_module("performance_prose")
    from inplace_recipes.bench import _consistency as consistency
    from inplace_recipes.bench import _statistics as stats

    size = 10**6
    band = consistency.noise_band(results, mode="compile", sizes=[size])
    lines = prose.compiled_lines(results, size=size)
    assert lines
    for line in lines:
        write = line.split(":")[0]
        ratios = {
            e: v
            for e in RECIPES
            if (v := stats.compiled_ratio(results, e, write, size)) is not None
        }
        best = min(ratios, key=ratios.__getitem__)
        named = _compiled_named(line)
        assert best in named
        for entry in ratios:
            tied = entry == best or stats.tie(
                results, entry, best, write, size, band, mode="compile"
            )
            assert (entry in named) == tied, (write, entry)


def test_a_compiled_recipe_slower_beyond_the_noise_is_not_called_fastest(
    results: dict[str, Any],
) -> None:
    """Altered run: one compiled recipe made 3x faster than the rest is named alone."""
    prose = import_docs_module("performance_prose")
    fast = copy.deepcopy(results)
    for r in fast["records"]:
        if r["mode"] == "compile" and r["entry"] == "scatter" and r["size"] == 10**6:
            for key in list(r):
                if key.startswith("ratio_forward_backward") and r[key] is not None:
                    value = r[key]
                    r[key] = [v / 3 for v in value] if isinstance(value, list) else value / 3
            for part in ("forward", "forward_backward"):
                if r.get(part):
                    r[part] = {
                        k: ([v / 3 for v in x] if isinstance(x, list) else x / 3)
                        if k in ("min", "median", "round_minima")
                        else x
                        for k, x in r[part].items()
                    }
    for line in prose.compiled_lines(fast):
        assert _compiled_named(line) == ["scatter"], line
        assert "the fastest compiled recipe, scatter," in line


# -- plot_releases.py -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def releases() -> Any:
    return import_docs_module("releases")


def test_every_release_run_covers_every_repro_claim_and_matrix_cell(releases: Any) -> None:
    """Each committed run holds every repro of the error page, every claim the package
    registers and every cell of the matrix, as the tree has them today."""
    from inplace_recipes.claims import CLAIMS
    from inplace_recipes.matrix import COLUMNS, default_rows

    repros = [(e.section, e.source.strip()) for e in releases.error_examples()]
    claims = {c.statement for c in CLAIMS.values()}
    runs = releases.load_results()
    assert len(runs) >= 2
    for release, run in runs.items():
        got = [(e["section"], e["source"]) for e in run["errors"]["examples"]]
        assert got == repros, release
        assert {c["statement"] for c in run["claims"]["records"]} == claims, release
        cells = {(c["row"], c["column"]) for c in run["matrix"]["cells"]}
        assert len(cells) == len(run["matrix"]["cells"]), release
        assert len(cells) == len(list(default_rows())) * len(COLUMNS), release
        assert run["conformance"]["files"] == list(releases.CONFORMANCE_FILES), release
        assert run["conformance"]["tests"], release


def test_the_page_shows_every_file_of_the_releases_folder(releases: Any) -> None:
    files = sorted(releases.RESULTS_DIR.glob("torch-*.json"))
    named = {json.loads(p.read_text())["provenance"]["release"] for p in files}
    comparison = releases.side_by_side()
    assert set(comparison.releases) == named
    assert set(comparison.provenance) == named
    assert len(named) == len(files)
    for path in files:
        assert path.name == f"torch-{json.loads(path.read_text())['provenance']['release']}.json"


def _cells(table: str) -> list[list[str]]:
    body = table.partition("<tbody>")[2]
    rows = re.findall(r"<tr><th>.*?</th>(.*?)</tr>", body, re.DOTALL)
    return [re.findall(r"<td>(.*?)</td>", row, re.DOTALL) for row in rows]


def _check_marks(comparison: Any) -> int:
    """Every value that differs from the baseline's is marked, and no other; how many were."""
    marked = 0
    for kind, rows in comparison.rows.items():
        cells = _cells(comparison.to_html(kind))
        assert len(cells) == len(rows), kind
        for row, shown in zip(rows, cells, strict=True):
            base = row.values.get(comparison.baseline)
            for release, cell in zip(comparison.releases, shown, strict=True):
                differs = release != comparison.baseline and row.values.get(release) != base
                assert cell.startswith("<mark>") == differs, (kind, row.label, release)
                marked += differs
    return marked


def test_every_value_that_differs_from_the_pin_is_highlighted(releases: Any) -> None:
    comparison = releases.side_by_side()
    _check_marks(comparison)
    assert set(comparison.rows) == {"errors", "claims", "matrix", "conformance"}


def test_a_changed_value_in_any_part_is_highlighted(releases: Any) -> None:
    """Altered runs: one value changed in each part of a copy of the pin's run."""
    runs = releases.load_results()
    pin = releases.pinned_torch()
    fake = copy.deepcopy(runs[pin])
    fake["provenance"]["release"] = "9.0.0"
    next(e for e in fake["errors"]["examples"] if e["expected_exception"])["observed"] = "Other"
    fake["claims"]["records"][0]["holds"] = False
    fake["claims"]["records"][0]["observed"] = "ClaimBroken: no"
    fake["matrix"]["cells"][0]["status"] = "changed"
    fake["conformance"]["tests"][0]["outcome"] = "failed"
    comparison = releases.side_by_side({pin: runs[pin], "9.0.0": fake}, pin)
    assert _check_marks(comparison) == 4
    assert {k for k, rows in comparison.rows.items() if any(r.changed for r in rows)} == set(
        comparison.rows
    )


def test_every_claim_has_a_row_with_a_value_for_every_release(releases: Any) -> None:
    comparison = releases.side_by_side()
    runs = releases.load_results()
    statements = {c["statement"] for run in runs.values() for c in run["claims"]["records"]}
    rows = comparison.rows["claims"]
    assert {row.label for row in rows} == statements
    for row in rows:
        assert set(row.values) == set(runs), row.label
    table = comparison.to_html("claims")
    assert "(not run)" not in table
    assert len(_cells(table)) == len(statements)


@pytest.mark.parametrize("entry", [*RECIPES, "at"])
def test_an_entry_that_gives_a_wrong_answer_is_not_timed(
    monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """Any recipe (or ``at()``) made wrong is recorded incorrect, and has no time to show."""
    from inplace_recipes import bench
    from inplace_recipes.bench import Config
    from inplace_recipes.bench import _entries as entries

    real = entries.write_fn

    def made_wrong(name: str) -> Any:
        fn = real(name)
        return (lambda x, i, v: fn(x, i, v) + 1) if name == entry else fn

    monkeypatch.setattr(entries, "write_fn", made_wrong)
    config = Config(
        sizes=(100,),
        dtypes=("float32",),
        writes=("element",),
        entries=("inplace", entry),
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
    assert records[entry]["correct"] is False, entry
    assert records[entry]["forward_backward"] is None, entry
    assert records[entry].get("ratio_forward_backward") is None, entry


def test_the_audit_page_says_how_many_scripts_the_default_run_audits() -> None:
    import test_audit_unchanged as unchanged

    numbers = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
    page = " ".join((TOOLS / "plot_audit_model.py").read_text().replace("#", " ").split())
    said = re.search(
        r"\((\w+) of them by default, all under ``HYPOTHESIS_PROFILE=thorough``\)", page
    )
    assert said, "the page no longer says how many scripts the default run audits"
    sample = [p for p in unchanged.SCRIPTS if p.name in unchanged.SAMPLE - unchanged.COMPILING]
    assert numbers[said.group(1)] == len(sample)


def test_the_compiled_figure_and_lines_are_for_the_size_the_page_names(
    results: dict[str, Any],
) -> None:
    """The page: "The figure and the lines under it are for 1e6 float32 elements"."""
    import inspect

    figures = import_docs_module("performance_figures")
    prose = import_docs_module("performance_prose")
    page = " ".join((TOOLS / "plot_performance.py").read_text().replace("#", " ").split())
    assert "The figure and the lines under it are for 1e6 float32 elements." in page
    assert "figures.figure_compiled(results)" in page
    assert "prose.compiled_lines(results)" in page
    for fn in (figures.figure_compiled, prose.compiled_lines):
        assert inspect.signature(fn).parameters["size"].default == 10**6, fn.__name__
    compiled = {r["dtype"] for r in results["records"] if r["mode"] == "compile"}
    assert compiled == {"float32"}


def test_the_live_run_uses_the_rounds_the_page_names() -> None:
    numbers = {"three": 3, "four": 4, "five": 5, "six": 6, "eight": 8}
    page = (TOOLS / "plot_performance.py").read_text()
    prose = " ".join(page.replace("#", " ").split())
    said = re.search(r"the fastest of (\w+) interleaved rounds, and a bootstrap interval", prose)
    assert said, "the live run's paragraph no longer names its rounds"
    (live,) = re.findall(r"\n\s+rounds=(\d+),", page)
    assert numbers[said.group(1)] == int(live)


def test_the_goal_line_says_every_recipe_only_when_every_recipe_meets_its_goal(
    results: dict[str, Any],
) -> None:
    """Generated on the page: "every recipe within 1.10x its raw one-liner", on the committed
    run and on altered runs where each recipe in turn counts 20% more instructions."""
    from inplace_recipes.bench import _results as results_of
    from inplace_recipes.bench import _summary as summary

    line = summary.goal_line(results)
    assert ("every recipe within" in line) == (not results_of.over_goals(results)), line
    counted = {c["entry"] for c in results["instructions"]["counts"]}
    for recipe in [r for r in RECIPES if r in counted]:
        worse = copy.deepcopy(results)
        for count in worse["instructions"]["counts"]:
            if count["entry"] == recipe and count["instructions"]:
                count["instructions"] = round(count["instructions"] * 1.2)
        line = summary.goal_line(worse)
        assert "every recipe within" not in line, (recipe, line)
        assert line.startswith("goals (instructions, "), (recipe, line)
        assert " missed: " in line, (recipe, line)
