"""The benchmark tool: valid results, exact saved bytes, a working command line.

These tests never assert a speed: timings are measured, not tested.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import inplace_recipes as ir
from inplace_recipes import bench
from inplace_recipes.bench import WRITES, Config, saved_bytes

TINY = Config(
    sizes=(100, 1000),
    dtypes=("float32",),
    compile_sizes=(),
    min_run_time=0.001,
    rounds=1,
    peak=False,
)


@pytest.fixture(scope="module")
def tiny_results() -> dict:
    return bench.run(TINY)


def test_run_covers_every_entry_size_and_write(tiny_results: dict) -> None:
    results = json.loads(json.dumps(tiny_results))  # valid JSON, round-trips
    seen = {(r["entry"], r["size"], r["write"]) for r in results["records"]}
    expected = {(e, s, w) for e in bench.ENTRIES for s in TINY.sizes for w in WRITES}
    assert seen == expected
    assert set(bench.ENTRIES) == {"inplace", "plain_clone", "inplace_on_clone", *ir.RECIPES}
    for key in ("torch", "cpu", "threads", "date", "command", "git_commit"):
        assert key in results["provenance"]
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
    assert ("select_scatter", "mask") in refused
    assert ("masked_fill", "value_grad") in refused
    assert ("clone", "mask") not in refused


def test_command_line_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "quick.json"
    argv = ["--quick", "--sizes", "100", "--writes", "element", "mask", "--entries", "where"]
    argv += ["--min-run-time", "0.001", "--rounds", "1", "--no-progress", "-o", str(out)]
    assert bench.main(argv) == 0
    results = bench.load_results(out)
    entries = {r["entry"] for r in results["records"]}
    assert entries == {"inplace", "plain_clone", "inplace_on_clone", "where"}
    assert results["provenance"]["threads"] == 1
    assert "bench --quick" in results["provenance"]["command"]
    assert str(out) in capsys.readouterr().out
    table = bench.ratio_table(results, write="mask")
    assert table["inplace"] == {100: 1.0}


def _non_leaf(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.rand(*shape, dtype=dtype, requires_grad=True) * 1


# Counted by hand for a 4 x 5 float32 tensor (20 elements) and x[1, 2] = 0.0:
# index_put and scatter save the one flat position (an int64, 8 bytes);
# where and masked_fill a bool mask (one byte per element); the blend a mask
# of x's dtype (4 bytes per element); setitem-based recipes nothing.
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("inplace", 0),
        ("inplace_on_clone", 0),
        ("clone", 0),
        ("select_scatter", 0),
        ("index_put", 8),
        ("scatter", 8),
        ("where", 20),
        ("masked_fill", 20),
        ("mask", 80),
    ],
)
def test_saved_bytes_one_element(name: str, expected: int) -> None:
    fn = bench._write_fn(name)
    assert saved_bytes(fn, _non_leaf(4, 5), (1, 2), 0.0) == (expected, 0)


def test_saved_bytes_by_hand_for_other_writes() -> None:
    x = _non_leaf(4, 5)
    # one row: index_fill saves its one int64 position; index_put all 5 positions
    assert saved_bytes(ir.RECIPES["masked_fill"], x, 1, 0.0) == (8, 0)
    assert saved_bytes(ir.RECIPES["index_put"], x, 1, 0.0) == (40, 0)
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
    def step() -> torch.Tensor:
        a = torch.empty(1000)  # 4000 bytes, then 8000 alive at once
        b = torch.empty(1000)
        return a, b

    peak = bench.peak_bytes(step, torch.device("cpu"))
    assert peak is None or peak == 8000


def test_answer_columns_without_results(tmp_path: Path) -> None:
    cols = bench.answer_columns(tmp_path / "missing.json")
    assert set(cols) == {"inplace", *ir.RECIPES}
    assert cols["inplace"]["saved_bytes"] == 0
    assert cols["where"]["saved_bytes"] == 10**6
    assert cols["mask"]["saved_bytes"] == 4 * 10**6
    assert all(c["speed_ratio"] is None and c["source"] for c in cols.values())


def test_answer_columns_from_results(tmp_path: Path, tiny_results: dict) -> None:
    fake = json.loads(json.dumps(tiny_results))
    for r in fake["records"]:
        r["size"] = 10**6 if r["size"] == 1000 else r["size"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(fake))
    cols = bench.answer_columns(path)
    assert cols["inplace"]["speed_ratio"] == 1.0
    assert isinstance(cols["index_put"]["speed_ratio"], float)
    assert "benchmarks/results" in cols["index_put"]["source"]


def test_shape_for_keeps_the_size() -> None:
    for size in (*TINY.sizes, 10**2, 10**5, 10**7):
        rows, cols = bench.shape_for(size)
        assert rows * cols == size
