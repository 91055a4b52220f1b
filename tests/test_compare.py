"""compare_gradients must pass agreeing recipes and flag every way to be wrong."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import Tensor

from inplace_recipes import RECIPES, compare_gradients
from inplace_recipes.recipes import NotApplicable


def detaches(x: Tensor, index: Any, value: Any) -> Tensor:
    return RECIPES["clone"](x.detach(), index, value)


def wrong_position(x: Tensor, index: Any, value: Any) -> Tensor:
    shifted = index + 1 if isinstance(index, int) else index
    return RECIPES["clone"](x, shifted, value)


def loses_value_gradient(x: Tensor, index: Any, value: Any) -> Tensor:
    value = value.detach() if isinstance(value, Tensor) else value
    return RECIPES["clone"](x, index, value)


def writes_nan(x: Tensor, index: Any, value: Any) -> Tensor:
    out = RECIPES["clone"](x, index, value)
    return out + torch.where(torch.arange(out.numel()) == 2, torch.nan, 0.0).view(out.shape)


def mutates(x: Tensor, index: Any, value: Any) -> Tensor:
    with torch.no_grad():
        x[index] = value
    return x * 1


@pytest.fixture
def inputs() -> tuple[Tensor, int, Tensor]:
    torch.manual_seed(0)
    return torch.rand(4, requires_grad=True) * 1, 1, torch.tensor(3.0, requires_grad=True)


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (detaches, "gradient to x differs"),
        (wrong_position, "result differs"),
        (loses_value_gradient, "gradient to value differs"),
        (writes_nan, "result differs"),
        (mutates, "changed its input x"),
    ],
)
def test_report_fails_and_says_why(fn: Any, problem: str, inputs: Any) -> None:
    report = compare_gradients(*inputs, {"bad": fn, "good": RECIPES["where"]})
    assert not report.ok
    assert not report["bad"].ok
    assert report["good"].ok
    assert problem in "; ".join(report["bad"].problems)
    with pytest.raises(AssertionError, match=f"bad: .*{problem}"):
        report.assert_ok()
    assert "NO:" in str(report)


def test_nan_output_is_flagged_as_non_finite(inputs: Any) -> None:
    report = compare_gradients(*inputs, {"nan": writes_nan})
    assert report["nan"].nonfinite
    assert report.to_records()[0]["nonfinite"] is True


def test_every_recipe_agrees_on_the_readme_example() -> None:
    report = compare_gradients(torch.rand(3, requires_grad=True) * 1, 0, 42.0)
    report.assert_ok()
    assert list(report.results) == list(RECIPES)
    lines = str(report).splitlines()
    assert lines[0].split() == ["recipe", "forward", "grad", "x", "grad", "value", "ok"]
    assert len(lines) == 2 + len(RECIPES)
    assert all(line.rstrip().endswith("yes") for line in lines[2:])


def test_inputs_are_never_changed(inputs: Any) -> None:
    _, index, value = inputs
    x = torch.rand(4, requires_grad=True)
    x_before, v_before = x.detach().clone(), value.detach().clone()
    versions = x._version, value._version
    compare_gradients(x, index, value, {"mutates": mutates})
    assert torch.equal(x, x_before)
    assert torch.equal(value, v_before)
    assert (x._version, value._version) == versions
    assert x.grad is None
    assert value.grad is None


class FlippedBackward(torch.autograd.Function):
    """Right forward; the gradients of the kept positions arrive reversed."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return RECIPES["clone"](x, 0, 0.0)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        kept = RECIPES["clone"](grad, 0, 0.0)
        return RECIPES["clone"](kept, slice(1, None), kept[1:].flip(0))


def test_default_loss_tells_positions_apart() -> None:
    """A plain .sum() sends the same gradient everywhere and misses this bug."""
    x = torch.arange(4.0)
    recipe = {"flipped": lambda x, i, v: FlippedBackward.apply(x)}
    plain = compare_gradients(x, 0, 0.0, recipe, loss=lambda out: out.sum())
    assert plain.ok
    default = compare_gradients(x, 0, 0.0, recipe)
    assert "gradient to x differs" in "; ".join(default["flipped"].problems)


def test_user_loss_and_reference(inputs: Any) -> None:
    report = compare_gradients(
        *inputs, ["mask", "where"], loss=lambda out: (out**3).sum(), reference="index_put"
    )
    assert report.ok
    assert report.reference == "index_put"


def test_second_order_and_gradcheck() -> None:
    x = torch.rand(3, 4, dtype=torch.float64)
    value = torch.rand(4, dtype=torch.float64)
    report = compare_gradients(x, 1, value, second_order=True, gradcheck=True)
    report.assert_ok()
    assert report["index_put"].gradcheck is True
    assert report["index_put"].second_order == 0.0
    assert "gradcheck" in str(report)
    assert "2nd order" in str(report)


def test_second_order_catches_a_once_differentiable_recipe() -> None:
    class Blend(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            return RECIPES["clone"](x, 0, 0.0)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Tensor) -> Tensor:
            return RECIPES["clone"](grad, 0, 0.0)

    report = compare_gradients(
        torch.rand(3, dtype=torch.float64),
        0,
        0.0,
        {"once": lambda x, i, v: Blend.apply(x)},
        second_order=True,
    )
    assert not report.ok


def test_refusing_recipe_is_not_applicable_not_a_failure() -> None:
    report = compare_gradients(torch.zeros(3), torch.tensor([True, False, True]), torch.ones(2))
    assert report.ok
    assert report["select_scatter"].not_applicable is not None
    assert report["masked_fill"].not_applicable is not None
    assert "n/a" in str(report)


def test_recipe_that_raises_is_reported(inputs: Any) -> None:
    def broken(x: Tensor, index: Any, value: Any) -> Tensor:
        raise RuntimeError("boom")

    report = compare_gradients(*inputs, {"broken": broken})
    assert isinstance(report["broken"].error, RuntimeError)
    assert report["broken"].problems == ["raised RuntimeError: boom"]
    assert not issubclass(RuntimeError, NotApplicable)


def test_bad_input_raises_the_reference_error() -> None:
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        compare_gradients(torch.zeros(3), 5, 1.0)
    with pytest.raises(KeyError, match="no recipe named 'nope'"):
        compare_gradients(torch.zeros(3), 0, 1.0, ["nope"])
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor"):
        compare_gradients([0.0], 0, 1.0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.complex64, torch.int64])
def test_other_dtypes(dtype: torch.dtype) -> None:
    x = torch.arange(6).reshape(2, 3).to(dtype)
    report = compare_gradients(x, (slice(None), 1), 2)
    report.assert_ok()
