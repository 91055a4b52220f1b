"""The battery of issue 28 itself: its size is fixed, its sample is deterministic, and
every class of difference it counts is caught when a writer is planted that has it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import torch

from battery import axes, checks
from battery.spec import RECIPE_NAMES, Case, Value, X
from battery.verdict import CLASS, MUTATED, OK, RAISES, SILENT, TIMEOUT
from inplace_recipes import RECIPES

#: The battery's size, axis by axis: a change to an enumeration must change this table.
SIZES = {
    "dtypes": 22950,
    "literals": 23775,
    "indices": 9000,
    "extremes": 1440,
    "devices": 1800,
    "layouts": 2520,
    "subclasses": 750,
    "sparse": 342,
    "repeats": 981,
    "autograd": 16005,
    "contexts": 480,
    "vmap": 1740,
    "compile": 448,
}


def test_the_case_list_is_fixed_and_counted() -> None:
    assert {axis: len(axes.cases(axis)) for axis in axes.AXES} == SIZES
    every = [str(c) for axis in axes.AXES for c in axes.cases(axis)]
    assert len(every) == len(set(every)) == sum(SIZES.values())


def test_the_sample_is_deterministic_and_covers_every_writer() -> None:
    first = {axis: axes.sample(axis) for axis in axes.AXES}
    axes.sample.cache_clear()
    axes.cases.cache_clear()
    for axis, picked in first.items():
        again = axes.sample(axis)
        assert [str(c) for c in again] == [str(c) for c in picked]
        assert {c.writer for c in again} == {c.writer for c in axes.cases(axis)}


def test_the_writers_are_every_recipe() -> None:
    assert tuple(RECIPES) == RECIPE_NAMES


# -- planted faults: each is caught, with its class ------------------------------------


def _plant(
    monkeypatch: pytest.MonkeyPatch, fn: Callable[[torch.Tensor, Any, Any], torch.Tensor]
) -> None:
    monkeypatch.setattr(checks, "writer", lambda name: fn)
    monkeypatch.setattr(checks, "record", lambda *args: None)  # planted runs stay out of the log


def _setitem(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    y = x.clone()
    y[index] = value
    return y


UINT8_MASK = Case("literals", "clone", X("uint8"), "mask", Value("0d", "float32", "-3.0"))
FLOAT_INT = Case("dtypes", "where", X("float32"), "int", Value("full", "float32"))


def test_a_writer_that_agrees_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, _setitem)
    assert checks.run(FLOAT_INT).category == OK
    assert checks.run(UINT8_MASK).category == OK  # both raise torch's RuntimeError


def test_a_value_cast_before_setitem_is_silently_different(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, lambda x, i, v: _setitem(x, i, v.to(x.dtype)))  # -3.0 wraps to 253
    verdict = checks.run(UINT8_MASK)
    assert verdict.category == SILENT
    assert "writes where torch raises RuntimeError" in verdict.detail


def test_another_dtype_or_value_is_silently_different(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, lambda x, i, v: _setitem(x, i, v).double())
    assert checks.run(FLOAT_INT).detail.startswith("dtype torch.float64")
    _plant(monkeypatch, lambda x, i, v: _setitem(x, i, v) + 1e-7)
    assert checks.run(FLOAT_INT).detail.startswith("values differ")


def test_a_lost_sign_of_zero_is_silently_different(monkeypatch: pytest.MonkeyPatch) -> None:
    case = Case("literals", "where", X("float32"), "int", Value("py", "float", "-0.0"))
    _plant(monkeypatch, lambda x, i, v: _setitem(x, i, v) + 0.0)  # -0.0 + 0.0 is 0.0
    assert checks.run(case).category == SILENT


def test_a_changed_input_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def writes_into_x(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
        x[index] = value
        return x.clone()

    _plant(monkeypatch, writes_into_x)
    assert checks.run(FLOAT_INT).category == MUTATED


def test_another_exception_class_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuses(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
        raise TypeError("no")

    _plant(monkeypatch, refuses)
    assert checks.run(UINT8_MASK).category == CLASS
    assert checks.run(FLOAT_INT).category == RAISES


def test_a_disconnected_graph_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """None where torch gives a zero gradient (or the reverse) is a different graph, though
    both sum to zeros."""
    _plant(monkeypatch, lambda x, mask, v: torch.where(mask, v.detach(), x))  # no gradient to v
    reverse = Case("autograd", "where", X(grad=True), "mask", Value("0d", grad=True), "reverse")
    assert checks.run(reverse).detail.startswith("in the graph")
    batched = Case("vmap", "where", X(grad=True), "mask", Value("0d", grad=True), "vmap:value")
    assert checks.run(batched).detail.startswith("in the graph")


def test_a_wrong_gradient_or_tangent_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # the value's own value, twice its gradient
    _plant(monkeypatch, lambda x, mask, v: torch.where(mask, 2 * v - v.detach(), x))
    reverse = Case("autograd", "where", X(grad=True), "mask", Value("0d", grad=True), "reverse")
    assert checks.run(reverse).detail.startswith("gradient to value")
    assert checks.run(Case(**{**reverse.__dict__, "check": "jvp"})).detail.startswith("tangent")
    batched = Case("vmap", "where", X(grad=True), "mask", Value("0d", grad=True), "vmap:value")
    assert checks.run(batched).detail.startswith("gradient to value")


def test_a_compiled_writer_is_compared_with_eager_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, lambda x, i, v: _setitem(x, i, v) * 2)
    case = Case(
        "compile", "where", X(grad=True), "int", Value("0d", grad=True), "compile:aot_eager:static"
    )
    assert checks.run(case).category == SILENT


def test_a_hang_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def hangs(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
        time.sleep(10)
        return x

    _plant(monkeypatch, hangs)
    monkeypatch.setattr(checks, "DEFAULT_TIME_LIMIT", 0.2)
    start = time.perf_counter()
    assert checks.run(FLOAT_INT).category == TIMEOUT
    assert time.perf_counter() - start < 5
