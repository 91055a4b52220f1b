"""compare_gradients must pass agreeing recipes and flag every way to be wrong."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import Tensor

from inplace_recipes import RECIPES, at, compare_gradients
from inplace_recipes.compare import FULL_GRADCHECK_MAX
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
        (writes_nan, "result is nan or infinite at 1 of 4 positions"),
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
    with pytest.raises(ValueError, match="unknown recipe 'nope'; choose from mask"):
        compare_gradients(torch.zeros(3), 0, 1.0, ["nope"])
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor"):
        compare_gradients([0.0], 0, 1.0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.complex64, torch.int64])
def test_other_dtypes(dtype: torch.dtype) -> None:
    x = torch.arange(6).reshape(2, 3).to(dtype)
    report = compare_gradients(x, (slice(None), 1), 2)
    report.assert_ok()


def test_unknown_recipe_raises_what_at_method_raises() -> None:
    """The same exception type for the same mistake in both entry points."""
    with pytest.raises(ValueError) as from_at:
        at(torch.zeros(3))[0].set(1.0, method="nope")
    with pytest.raises(type(from_at.value)):
        compare_gradients(torch.zeros(3), 0, 1.0, ["nope"])
    with pytest.raises(type(from_at.value), match="unknown recipe 'nope'"):
        compare_gradients(torch.zeros(3), 0, 1.0, reference="nope")


def overwrites_with_a_number(x: Tensor, index: Any, value: Any) -> Tensor:
    """What select_scatter did for x[...] = 5.0: right values, no graph."""
    return torch.full_like(x.detach(), float(value))


def forgets_x(x: Tensor, index: Any, value: Any) -> Tensor:
    """Right values and value gradient; x is not in the graph (clone + setitem keeps it)."""
    return torch.zeros_like(x.detach()) + value


def returns_x_itself(x: Tensor, index: Any, value: Any) -> Tensor:
    """Right for an index that selects nothing, but the result is x."""
    return x


@pytest.mark.parametrize("index", [Ellipsis, None, slice(None), ()])
def test_a_result_cut_from_the_graph_is_flagged(index: Any) -> None:
    x = torch.rand(3)
    report = compare_gradients(
        x, index, 5.0, {"cut": overwrites_with_a_number, "ok": RECIPES["clone"]}
    )
    assert report["ok"].ok
    problems = "; ".join(report["cut"].problems)
    assert "result is disconnected from the graph (no grad_fn)" in problems
    # forward and gradients agree (x's gradient is zero either way): only the graph check sees it
    assert report["cut"].forward == 0
    assert report["cut"].grad_x == 0


def test_a_zero_dim_overwrite_cut_from_the_graph_is_flagged() -> None:
    report = compare_gradients(torch.tensor(2.0), (), 5.0, {"cut": overwrites_with_a_number})
    assert "disconnected" in "; ".join(report["cut"].problems)


def test_an_input_missing_from_the_graph_is_flagged() -> None:
    report = compare_gradients(torch.rand(3), Ellipsis, torch.tensor(5.0), {"forgets": forgets_x})
    result = report["forgets"]
    assert result.forward == result.grad_x == result.grad_value == 0
    assert result.problems == [
        "x is not in the result's graph (its gradient is None, the reference's is a tensor)"
    ]


def test_returning_the_input_itself_is_flagged() -> None:
    nothing = torch.zeros(3, dtype=torch.bool)
    report = compare_gradients(torch.rand(3), nothing, 1.0, {"same": returns_x_itself})
    problems = "; ".join(report["same"].problems)
    assert "result shares memory with x" in problems
    assert "result has no grad_fn, the reference's has" in problems


def test_a_changed_value_is_flagged() -> None:
    def bumps_value(x: Tensor, index: Any, value: Any) -> Tensor:
        out = RECIPES["clone"](x, index, value)
        value.add_(1)
        return out

    value = torch.tensor(7)
    report = compare_gradients(torch.arange(3), 0, value, {"bumps": bumps_value})
    assert report["bumps"].problems == ["changed its input value"]
    assert report["bumps"].mutated
    assert int(value) == 7


def blend(x: Tensor, index: Any, value: Any) -> Tensor:
    """The arithmetic mask blend, written here so the test does not depend on recipes.py."""
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[index] = True
    return x * ~mask + torch.as_tensor(value, dtype=x.dtype) * mask


def test_a_blend_with_a_non_finite_value_is_flagged() -> None:
    """inf * 0 is nan: the blend spoils every element it did not write."""
    assert torch.equal(
        blend(torch.zeros(3), 0, float("inf")).isnan(), torch.tensor([False, True, True])
    )
    report = compare_gradients(torch.zeros(3), 0, float("inf"), {"blend": blend})
    assert report["blend"].problems[0] == (
        "result is nan or infinite at 2 of 3 positions where the reference's is not"
    )
    assert report["blend"].nonfinite


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_the_mask_recipe_with_a_non_finite_value_is_flagged_or_refused(value: float) -> None:
    result = compare_gradients(torch.zeros(3), 0, value, ["mask"])["mask"]
    written = RECIPES["clone"](torch.zeros(3), 0, value)
    try:
        got = RECIPES["mask"](torch.zeros(3), 0, value)
    except NotApplicable:
        assert result.not_applicable is not None
        return
    if torch.equal(got.isnan(), written.isnan()) and bool((got[1:] == 0).all()):
        assert result.ok  # the recipe learned to be exact here
    else:
        assert not result.ok
        assert "nan or infinite" in result.problems[0]


@pytest.mark.parametrize("bad_loss", [lambda out: 1.0, lambda out: None, lambda out: out])
def test_a_loss_that_is_not_a_one_element_tensor_is_named(bad_loss: Any) -> None:
    x, value = torch.rand(3), torch.tensor(1.0)
    with pytest.raises(TypeError, match=r"loss .*<lambda> must return a one-element torch\.Tensor"):
        compare_gradients(x, 0, value, loss=bad_loss)


def test_a_loss_that_ignores_the_result_is_refused() -> None:
    def constant(out: Tensor) -> Tensor:
        return torch.tensor(1.0)

    with pytest.raises(ValueError, match=r"loss .*constant does not depend on the result"):
        compare_gradients(torch.rand(3), 0, 1.0, loss=constant)
    with pytest.raises(TypeError, match="loss must be callable"):
        compare_gradients(torch.rand(3), 0, 1.0, loss=3.0)  # type: ignore[arg-type]


def test_progress_names_each_recipe() -> None:
    seen: list[str] = []
    compare_gradients(torch.rand(3), 0, 1.0, ["where", "clone"], progress=seen.append)
    assert seen == ["where", "clone"]


def test_gradcheck_of_a_large_input_is_fast_and_still_fails() -> None:
    """Above FULL_GRADCHECK_MAX elements gradcheck projects; a wrong backward still fails."""
    x = torch.rand(FULL_GRADCHECK_MAX * 4, dtype=torch.float64)
    recipe = {"flipped": lambda x, i, v: FlippedBackward.apply(x), "where": RECIPES["where"]}
    report = compare_gradients(x, 0, 0.0, recipe, gradcheck=True, second_order=True)
    assert report["where"].gradcheck is True
    assert report["flipped"].gradcheck is False


def test_an_empty_value_outside_the_graph_is_not_a_problem() -> None:
    """An empty value has no gradient values to lose: None and an empty tensor say the same."""
    nothing = torch.tensor([], dtype=torch.long)
    report = compare_gradients(
        torch.rand(3), nothing, torch.tensor([]), {"copy": lambda x, i, v: x * 1}
    )
    report.assert_ok()
