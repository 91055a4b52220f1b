"""No state outlives a call: the four ways a cache of plans failed, each a test.

The index model once kept plans, masks, positions and 0-d scalars in
module-level dicts. That held memory after a loop over rows, handed a
functional tensor to a later eager call, raced under threads, and made a
call with a new index cost more than a repeated one. Each test below
reproduces one of those failures (each fails on that code) and checks that
every recipe still gives the answer of ``clone()`` then setitem.
"""

from __future__ import annotations

import gc
import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from inplace_recipes import RECIPES, at
from inplace_recipes._pick import best_recipe, quick_recipe
from strategies import SEQUENCE_WARNING, Case, cases

NAMES = list(RECIPES)


def reference(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    y = x.clone()
    y[index] = value
    return y


def live_tensors() -> dict[int, torch.Tensor]:
    """Every tensor the garbage collector can reach, by id."""
    gc.collect()
    return {id(o): o for o in gc.get_objects() if issubclass(type(o), torch.Tensor)}


def bytes_of(tensors: dict[int, torch.Tensor]) -> int:
    return sum(t.untyped_storage().nbytes() for t in tensors.values() if t.layout == torch.strided)


# -- 1. memory: a loop over rows or slices leaves nothing behind ----------------------


@pytest.mark.parametrize("name", NAMES)
def test_a_loop_over_rows_leaves_no_tensor_behind(name: str) -> None:
    x = torch.zeros(200, 1000)
    RECIPES[name](x, 0, 1.0)  # torch's own first-call allocations
    before = live_tensors()
    for row in range(200):
        RECIPES[name](x, row, 1.0)
        RECIPES[name](x, (row, slice(None, None, 3)), 2.0)
    left = {k: t for k, t in live_tensors().items() if k not in before}
    assert not left, f"{len(left)} tensors, {bytes_of(left)} bytes outlive the loop"


@pytest.mark.parametrize("name", NAMES)
def test_a_loop_over_slices_of_a_long_vector_leaves_no_tensor_behind(name: str) -> None:
    x = torch.zeros(1 << 15)
    before = live_tensors()
    for start in range(160):
        RECIPES[name](x, slice(start, None, 2), 1.0)
    left = {k: t for k, t in live_tensors().items() if k not in before}
    assert not left, f"{len(left)} tensors, {bytes_of(left)} bytes outlive the loop"


def test_at_leaves_no_tensor_behind() -> None:
    x = torch.zeros(50, 100)
    before = live_tensors()
    for row in range(50):
        at(x)[row].set(1.0)
        at(x)[row, ::7].add(1.0)
        at(x)[torch.tensor([row, 0])].set(3.0)
    left = {k: t for k, t in live_tensors().items() if k not in before}
    assert not left, f"{len(left)} tensors outlive the loop"


# -- 2. transforms: nothing made under a transform reaches a later call ----------------


@pytest.mark.parametrize("name", NAMES)
def test_an_eager_call_after_functionalize_is_plain_and_differentiable(name: str) -> None:
    torch.func.functionalize(lambda t: RECIPES[name](t, 1, 7.0))(torch.zeros(2, 3))
    torch.func.functionalize(lambda t: RECIPES[name](t, (0, slice(1, None)), 7.0))(
        torch.zeros(2, 3)
    )
    xl = torch.zeros(2, 3, requires_grad=True)
    for index in (1, (0, slice(1, None))):
        y = RECIPES[name](xl, index, 7.0)
        assert not torch._is_functional_tensor(y)
        assert torch.equal(y, reference(xl.detach(), index, 7.0))
        (grad,) = torch.autograd.grad(y.sum(), xl)
        want = torch.ones(2, 3)
        want[index] = 0.0
        assert torch.equal(grad, want)


def _functorch_wrappers() -> list[torch.Tensor]:
    gc.collect()
    is_wrapper = torch._C._functorch.is_functorch_wrapped_tensor
    return [o for o in gc.get_objects() if issubclass(type(o), torch.Tensor) and is_wrapper(o)]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "clone"])
def test_no_functorch_wrapper_outlives_grad_jacrev_or_jvp(name: str) -> None:
    before = {id(t) for t in _functorch_wrappers()}

    def f(t: torch.Tensor) -> torch.Tensor:
        return RECIPES[name](t * 2, (1, slice(None, 2)), 3.0)

    x = torch.rand(2, 3)
    torch.func.grad(lambda t: f(t).sum())(x)
    torch.func.jacrev(f)(x)
    torch.func.jvp(f, (x,), (torch.ones(2, 3),))
    torch.func.vmap(f)(torch.rand(4, 2, 3))
    left = [t for t in _functorch_wrappers() if id(t) not in before]
    assert not left, f"{len(left)} functorch wrappers outlive the transforms"
    y = RECIPES[name](x, (1, slice(None, 2)), 3.0)
    assert not torch._C._functorch.is_functorch_wrapped_tensor(y)
    assert torch.equal(y, reference(x, (1, slice(None, 2)), 3.0))


# -- 3. threads: many threads writing many slices never fail -------------------------


@pytest.mark.parametrize("name", ["index_put", "where", "mask", "scatter"])
def test_eight_threads_of_two_thousand_writes_never_fail(name: str) -> None:
    n, calls, threads = 64, 2000, 8
    errors: list[BaseException] = []
    wrong: list[tuple[int, int]] = []
    recipe: Callable[..., torch.Tensor] = RECIPES[name]

    def work(seed: int) -> None:
        try:
            for k in range(calls):
                a = (seed * 7 + k) % (n // 2)
                b = a + 1 + (k * 13 + seed) % (n // 2)
                got = recipe(torch.zeros(n), slice(a, b), 1.0)
                if k % 97 == 0 and not torch.equal(
                    got, reference(torch.zeros(n), slice(a, b), 1.0)
                ):
                    wrong.append((a, b))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=work, args=(s,)) for s in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, repr(errors[:3])
    assert not wrong


# -- 4. cold calls: a new index costs what a repeated one costs ---------------------------


def _aten_calls(fn: Callable[[], Any]) -> list[str]:
    """The aten operators ``fn`` runs, in order (the profiler is no dispatch mode)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return [e.name for e in prof.events() if e.name.startswith("aten::")]


COLD_WRITES: list[tuple[Any, Any]] = [
    (3, 5),  # a row, then another row
    ((3, 4), (5, 6)),  # an element
    ((slice(None), slice(1, None, 10)), (slice(None), slice(2, None, 10))),  # a strided slice
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("first", "other"), COLD_WRITES)
def test_a_new_index_runs_the_same_torch_calls_as_a_repeated_one(
    name: str, first: Any, other: Any
) -> None:
    x = torch.rand(10, 100, requires_grad=True) * 1
    recipe = RECIPES[name]
    cold = _aten_calls(lambda: recipe(x, first, 0.5))
    warm = _aten_calls(lambda: recipe(x, first, 0.5))
    new = _aten_calls(lambda: recipe(x, other, 0.5))
    assert cold == warm == new


# -- values are written as given ----------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in NAMES if n != "mask"])
def test_negative_zero_and_nan_are_written_as_given(name: str) -> None:
    x = torch.ones(4, dtype=torch.float64)
    for value in (0.0, -0.0, 0.0, math.nan, math.nan, -0.0):
        got = RECIPES[name](x, slice(1, 3), value)
        want = reference(x, slice(1, 3), value)
        torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
        assert torch.equal(torch.signbit(got), torch.signbit(want))


def test_the_mask_blend_writes_negative_zero_as_zero_as_its_docstring_says() -> None:
    x = torch.ones(4, dtype=torch.float64)
    for value in (-0.0, 0.0, -0.0):
        got = RECIPES["mask"](x, slice(1, 3), value)
        assert torch.equal(got, reference(x, slice(1, 3), value))  # -0.0 == 0.0
        assert not torch.signbit(got).any()  # 0.0 * 1 + -0.0 * 0 is 0.0
    assert "-0.0" in (RECIPES["mask"].__doc__ or "")


@pytest.mark.parametrize("name", NAMES)
def test_a_value_that_starts_requiring_grad_gets_its_gradient(name: str) -> None:
    x = torch.zeros(2, 3)
    value = torch.tensor(2.0)
    RECIPES[name](x, (1, slice(None)), value)
    value.requires_grad_(True)
    out = RECIPES[name](x, (1, slice(None)), value)
    (grad,) = torch.autograd.grad(out.sum(), value)
    assert grad.item() == 3.0


@pytest.mark.parametrize("name", NAMES)
def test_nothing_made_in_inference_mode_is_reused_by_autograd(name: str) -> None:
    x = torch.rand(3, 4, requires_grad=True)
    with torch.inference_mode():
        RECIPES[name](x.detach(), (slice(None), 1), 5.0)
        RECIPES[name](x.detach(), (slice(None), 1), torch.tensor(5.0))
    out = RECIPES[name](x * 1, (slice(None), 1), 5.0)  # would fail on an inference tensor
    (grad,) = torch.autograd.grad((out * torch.arange(12.0).view(3, 4)).sum(), x)
    want = torch.arange(12.0).view(3, 4)
    want[:, 1] = 0
    assert torch.equal(grad, want)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True), value=st.sampled_from([0.5, -1.0]))
def test_quick_recipe_agrees_with_best_recipe(case: Case, value: float) -> None:
    quick = quick_recipe(case.index, value)
    if quick is not None:
        assert quick == best_recipe(case.x, case.index, value)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True))
def test_a_write_repeated_matches_setitem(case: Case) -> None:
    for name, recipe in RECIPES.items():
        try:
            first = recipe(case.x, case.index, 1.5)
        except (TypeError, ValueError):
            continue
        again = recipe(case.x, case.index, 1.5)
        want = reference(case.x, case.index, 1.5)
        assert torch.equal(first, want), name
        assert torch.equal(again, want), name
    assert torch.equal(at(case.x)[case.index].set(1.5), reference(case.x, case.index, 1.5))
