"""The caches that make a repeated write cheap never change an answer.

Plans of int/slice indices, the masks and positions they build, shared 0-d
scalars and broadcast values are kept from one call to the next
(``inplace_recipes.indexing``). Each test here makes a cached object stale in
one way a user could (writing into it, a value that compares equal but is
not the same, a mode in which nothing may be kept) and checks that every
recipe still gives the answer of ``clone()`` then setitem.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from inplace_recipes import RECIPES, at
from inplace_recipes.indexing import IndexPlan, clear_cache
from inplace_recipes.recommend import best_recipe, quick_recipe
from strategies import SEQUENCE_WARNING, Case, cases

BASIC_RECIPES = list(RECIPES)


def reference(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    y = x.clone()
    y[index] = value
    return y


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    clear_cache()


def test_a_plan_is_shared_between_calls_for_the_same_index_shape_and_device() -> None:
    x = torch.zeros(3, 4)
    assert IndexPlan.of(x, (1, slice(0, 2))) is IndexPlan.of(torch.ones(3, 4), (1, slice(0, 2)))
    assert IndexPlan.of(x, 1) is IndexPlan.of(torch.ones(3, 4), 1)
    assert IndexPlan.of(x, 1) is not IndexPlan.of(torch.zeros(3, 5), 1)
    assert IndexPlan.of(x, slice(1, 2)) is not IndexPlan.of(x, (1, 2))


@pytest.mark.parametrize("bad", [slice(1.0, None), (0, slice(1.5, 3)), slice(None, "3")])
def test_a_slice_bound_torch_refuses_is_refused_after_an_equal_int_bound(bad: Any) -> None:
    x = torch.zeros(3, 4)
    IndexPlan.of(x, (0, slice(1, 3)))  # cached, with bounds equal to the bad ones
    IndexPlan.of(x, slice(1, None))
    with pytest.raises(TypeError):
        torch.zeros(3, 4)[bad] = 1.0  # torch refuses it
    with pytest.raises(TypeError):
        RECIPES["where"](x, bad, 1.0)


@pytest.mark.parametrize("name", BASIC_RECIPES)
def test_a_user_writing_into_a_cached_mask_does_not_change_the_next_write(name: str) -> None:
    x = torch.arange(12.0).view(3, 4)
    plan = IndexPlan.of(x, (1, slice(None, None, 2)))
    for tensor in (plan.mask(), plan.flat_positions(), *plan.nonzero(), *plan.weights(x.dtype)):
        tensor.zero_()  # against the docstrings' advice
    assert torch.equal(
        RECIPES[name](x, (1, slice(None, None, 2)), -1.0),
        reference(x, (1, slice(None, None, 2)), -1.0),
    )


@pytest.mark.parametrize("name", [n for n in BASIC_RECIPES if n != "mask"])
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


@pytest.mark.parametrize("name", BASIC_RECIPES)
def test_a_cached_scalar_written_into_by_someone_is_rebuilt(name: str) -> None:
    x = torch.zeros(5)
    plan = IndexPlan.of(x, 2)
    plan.value(3.0, x).fill_(99.0)  # the shared 0-d tensor for 3.0, changed
    assert torch.equal(RECIPES[name](x, 2, 3.0), reference(x, 2, 3.0))


@pytest.mark.parametrize("name", BASIC_RECIPES)
def test_a_value_that_starts_requiring_grad_gets_its_gradient(name: str) -> None:
    x = torch.zeros(2, 3)
    value = torch.tensor(2.0)
    RECIPES[name](x, (1, slice(None)), value)  # kept as the plan's broadcast value
    value.requires_grad_(True)
    out = RECIPES[name](x, (1, slice(None)), value)
    (grad,) = torch.autograd.grad(out.sum(), value)
    assert grad.item() == 3.0


@pytest.mark.parametrize("name", BASIC_RECIPES)
def test_nothing_made_in_inference_mode_is_reused_by_autograd(name: str) -> None:
    x = torch.rand(3, 4, requires_grad=True)
    with torch.inference_mode():
        RECIPES[name](x.detach(), (slice(None), 1), 5.0)
        RECIPES[name](x.detach(), (slice(None), 1), torch.tensor(5.0))
    with torch.no_grad():
        RECIPES[name](x.detach(), (slice(None), 1), 5.0)
    out = RECIPES[name](x * 1, (slice(None), 1), 5.0)  # would fail on an inference tensor
    (grad,) = torch.autograd.grad((out * torch.arange(12.0).view(3, 4)).sum(), x)
    want = torch.arange(12.0).view(3, 4)
    want[:, 1] = 0
    assert torch.equal(grad, want)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("name", BASIC_RECIPES)
def test_plans_made_under_vmap_serve_plain_calls(name: str) -> None:
    x = torch.zeros(2, 3)

    def write(v: torch.Tensor) -> torch.Tensor:
        return RECIPES[name](x, (0, slice(1, None)), v)

    if name == "clone":  # its docstring's pitfall: the clone has no batch dimension
        with pytest.raises(RuntimeError):
            torch.func.vmap(write)(torch.tensor([1.0, 2.0]))
    else:
        batched = torch.func.vmap(write)(torch.tensor([1.0, 2.0]))
        assert torch.equal(batched[:, 0, 1:], torch.tensor([[1.0, 1.0], [2.0, 2.0]]))
    assert torch.equal(
        RECIPES[name](x, (0, slice(1, None)), 4.0), reference(x, (0, slice(1, None)), 4.0)
    )


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True), value=st.sampled_from([0.5, -1.0]))
def test_quick_recipe_agrees_with_best_recipe(case: Case, value: float) -> None:
    quick = quick_recipe(case.index, value)
    if quick is not None:
        assert quick == best_recipe(case.x, case.index, value)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True))
def test_a_write_repeated_on_a_warm_cache_matches_setitem(case: Case) -> None:
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
