"""A new recipe is its function and its record, and nothing else.

The fixture adds ``index_copy`` (``x.flatten().index_copy(0, positions, v)``:
ints, slices and index tensors, not masks) by writing only a
:class:`~inplace_recipes.recipes.RecipeRecord`, and each test shows that one
consumer picks it up with no other edit: ``RECIPES``, the refusal rule,
``compare_gradients``, the compatibility matrix, the benchmark's entries,
``best_recipe``, ``at()`` and the landing table.
"""

from __future__ import annotations

from types import MappingProxyType, ModuleType
from typing import Any

import pytest
import torch
from torch import Tensor

import inplace_recipes as ir
from inplace_recipes import _pick, recipes
from inplace_recipes._indexing import IndexPlan
from inplace_recipes.bench import _entries as entries
from inplace_recipes.recipes import OneLiner, RecipeRecord, UnsupportedIndexError


def _index_copy(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """``x.flatten().index_copy(0, positions, value)``, for ints, slices and index tensors
    (``value`` comes as setitem makes it: a tensor of ``x``'s dtype)."""
    positions = plan.flat_positions(flatten=True)
    source = plan.fit(value).reshape(-1)
    return x.flatten().index_copy(0, positions, source).view_as(x)


def _raw_index_copy(x: Tensor, index: Any, v: Any) -> Tensor:
    rows = torch.tensor([index]) if type(index) is int else torch.as_tensor(index)
    return x.index_copy(0, rows, torch.full((len(rows), x.shape[1]), v, dtype=x.dtype))


RECORD = RecipeRecord(
    name="index_copy",
    write=_index_copy,
    index_kinds=frozenset({"basic", "advanced"}),
    duplicates="kernel order",
    line="y = x.index_copy(0, torch.tensor([i]), v.reshape(1))",
    pitfall="no masks; duplicate positions keep one write",
    pitfall_claims=(),
    one_liner=OneLiner(
        "raw_index_copy", _raw_index_copy, {"basic": "x.index_copy(0, torch.tensor([r]), v)"}
    ),
)


@pytest.fixture
def with_index_copy(monkeypatch: pytest.MonkeyPatch) -> RecipeRecord:
    """The package with ``index_copy`` declared: its record, nothing else."""
    monkeypatch.setitem(recipes._RECORDS, "index_copy", RECORD)
    return RECORD


def test_recipes_lists_it(with_index_copy: RecipeRecord) -> None:
    assert list(ir.RECIPES)[-1] == "index_copy"
    y = ir.RECIPES["index_copy"](torch.zeros(3, 2), 1, 5.0)
    assert torch.equal(y, torch.tensor([[0.0, 0.0], [5.0, 5.0], [0.0, 0.0]]))


def test_the_refusal_rule_reads_its_record(with_index_copy: RecipeRecord) -> None:
    x, mask = torch.zeros(3), torch.tensor([True, False, True])
    assert with_index_copy.refusal(x, mask, 1.0) is UnsupportedIndexError
    with pytest.raises(UnsupportedIndexError, match="'index_copy' takes only"):
        ir.RECIPES["index_copy"](x, mask, 1.0)
    assert with_index_copy.refusal(x, [0, 2], 1.0) is None


def test_compare_gradients_checks_it(with_index_copy: RecipeRecord) -> None:
    x = torch.rand(4, 3, requires_grad=True)
    report = ir.compare_gradients(x, (slice(1, 3), 0), torch.rand(2, requires_grad=True))
    assert "index_copy" in [result.name for result in report]
    report.assert_ok()


def test_the_matrix_has_its_row(with_index_copy: RecipeRecord) -> None:
    m = ir.compatibility_matrix(columns=["autograd", "float64"])
    assert "index_copy" in m.rows
    assert m["index_copy", "autograd"].status == "works", m["index_copy", "autograd"]


def test_the_benchmark_measures_it_and_its_one_liner(with_index_copy: RecipeRecord) -> None:
    assert "index_copy" in entries.all_entries()
    assert entries.raw_of()["index_copy"] == "raw_index_copy"
    assert "raw_index_copy" in entries.overhead_entries()
    assert entries.one_liners()["raw_index_copy"] == "x.index_copy(0, torch.tensor([r]), v)"
    config = ir.bench.Config(
        sizes=(100,),
        dtypes=("float32",),
        writes=("row",),
        compile_sizes=(),
        overhead_sizes=(100,),
        min_run_time=0.001,
        rounds=1,
        peak=False,
        attempts=1,
        instruction_sizes=(),
        audit=False,
    )
    assert "index_copy" in config.entries  # the default entries, read when the run is made
    records = {r["entry"]: r for r in ir.bench.run(config)["records"]}
    assert records["index_copy"]["correct"] is True
    assert records["raw_index_copy"]["correct"] is True


def _preferring(name: str) -> MappingProxyType[str, tuple[str, ...]]:
    return MappingProxyType({kind: (name, *prefs) for kind, prefs in _pick.PREFERENCES.items()})


def test_best_recipe_and_at_pick_it_where_it_is_ranked_first(
    with_index_copy: RecipeRecord, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a benchmark run that ranked it first would make PREFERENCES."""
    monkeypatch.setattr(_pick, "PREFERENCES", _preferring("index_copy"))
    x = torch.zeros(3, 2)
    assert ir.best_recipe(x, 1, 0.0) == "index_copy"
    assert _pick.quick_recipe(1, 0.0) == "index_copy"
    # ... never where its record says it does not take the write
    mask = torch.tensor([[True, False], [False, False], [True, True]])
    assert ir.best_recipe(x, mask, 0.0) == "where"  # masks: refused
    assert ir.best_recipe(x, torch.tensor([0, 0]), 0.0) == "clone"  # duplicates: kernel order
    calls: list[str] = []
    real = with_index_copy.function
    monkeypatch.setitem(
        recipes._RECORDS,
        "index_copy",
        _replaced(with_index_copy, lambda *a: calls.append("index_copy") or real(*a)),
    )
    assert torch.equal(ir.at(x)[1].set(5.0), ir.RECIPES["clone"](x, 1, 5.0))
    assert calls == ["index_copy"]


def _replaced(record: RecipeRecord, function: Any) -> RecipeRecord:
    import dataclasses

    return dataclasses.replace(record, write=function, planned=False)


def test_at_takes_it_by_name(with_index_copy: RecipeRecord) -> None:
    x = torch.arange(6.0).view(3, 2)
    got = ir.at(x)[torch.tensor([2, 0])].set(
        torch.tensor([[1.0, 1.0], [2.0, 2.0]]), method="index_copy"
    )
    assert torch.equal(got, torch.tensor([[2.0, 2.0], [2.0, 3.0], [1.0, 1.0]]))


def test_the_landing_table_shows_its_line_checked(
    with_index_copy: RecipeRecord, answer_table: ModuleType
) -> None:
    table = answer_table.render()
    assert "`y = x.index_copy(0, torch.tensor([i]), v.reshape(1))`" in table
    assert "no masks; duplicate positions keep one write" in table
