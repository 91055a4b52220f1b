"""Every recipe against the reference: ``y = x.clone(); y[index] = value``."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import assume, event, given

import inplace_recipes as ir
from inplace_recipes import RECIPES, NotApplicable, compare_gradients
from inplace_recipes._indexing import IndexPlan
from refusals import refused, refused_with_grad
from strategies import SEQUENCE_WARNING, Case, cases

NAMES = list(RECIPES)


def refuses(name: str, case: Case, value_requires_grad: bool = False) -> bool:
    """Whether recipe ``name`` is documented (by its record) to refuse this case."""
    if value_requires_grad:
        return refused_with_grad(name, case.x, case.index, case.value)
    return refused(name, case.x, case.index, case.value)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
@given(case=cases(torch_forms=True, duplicates=True))
def test_recipe_matches_reference_forward_and_backward(name: str, case: Case) -> None:
    fn = RECIPES[name]
    kind = IndexPlan.of(case.x, case.index).kind
    event(f"{kind} index, {case.x.dtype}, {type(case.value).__name__} value")
    refused = case.torch_error()
    if refused is not None:  # torch refuses a value of another dtype with index tensors
        event(f"torch raises {type(refused).__name__}")
        with pytest.raises(type(refused)):
            fn(case.x, case.index, case.value)
        return
    if refuses(name, case):
        with pytest.raises(NotApplicable, match=name):
            fn(case.x, case.index, case.value)
        return
    x_before, version = case.x.clone(), case.x._version
    out = fn(case.x, case.index, case.value)
    expected = case.reference()
    assert out.dtype == case.x.dtype
    assert out.shape == case.x.shape
    assert out.device == case.x.device
    assert torch.equal(out, expected)
    assert torch.equal(case.x, x_before), "the recipe changed x"
    assert case.x._version == version, "the recipe wrote into x"
    report = compare_gradients(case.x, case.index, case.value, [name])
    report.assert_ok()


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
@given(case=cases(dtypes=(torch.float32,), torch_forms=True, duplicates=True))
def test_gradient_reaches_value(name: str, case: Case) -> None:
    """Duplicate positions included: setitem sends a value one gradient per index entry."""
    refused = case.torch_error()
    if refused is not None:  # a float64 value with index tensors: torch raises, so do we
        with pytest.raises(type(refused)):
            RECIPES[name](case.x, case.index, case.value)
        return
    if isinstance(case.value, torch.Tensor) and refuses(name, case, value_requires_grad=True):
        value = case.value.detach().requires_grad_(True)
        with pytest.raises(NotApplicable, match=name):
            RECIPES[name](case.x, case.index, value)
        return
    assume(isinstance(case.value, torch.Tensor))
    value = case.value.detach().requires_grad_(True)
    x = case.x.detach().requires_grad_(True)
    out = RECIPES[name](x, case.index, value)
    weights = torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
    grad_x, grad_v = torch.autograd.grad((out * weights).sum(), (x, value), allow_unused=True)
    ref_x, ref_v = x.detach().clone().requires_grad_(True), value.detach().clone().requires_grad_()
    ref = ref_x * 1
    ref[case.index] = ref_v  # torch casts here (it raised above where it does not)
    want_x, want_v = torch.autograd.grad((ref * weights).sum(), (ref_x, ref_v), allow_unused=True)
    zeros_x, zeros_v = torch.zeros_like(x), torch.zeros_like(value)
    torch.testing.assert_close(
        zeros_x if grad_x is None else grad_x, zeros_x if want_x is None else want_x
    )
    torch.testing.assert_close(
        zeros_v if grad_v is None else grad_v, zeros_v if want_v is None else want_v
    )
    if want_v is not None:  # connected wherever setitem connects it
        assert grad_v is not None
    if grad_v is not None:
        assert grad_v.dtype == value.dtype  # a float64 value gets a float64 gradient


GRADCHECK_CASES: list[tuple[str, tuple[int, ...], Any, Any]] = [
    ("element", (3, 4), (1, -1), "number"),
    ("row", (3, 4), 1, (4,)),
    ("strided slice", (5, 3), slice(0, None, 2), (3, 1)),
    ("new axis", (3, 4), (None, ..., 2), (1, 3)),
    ("mask", (3, 4), "mask", "matching"),
    ("leading mask", (3, 4), "row mask", (4,)),
    ("index tensor", (5,), "positions", (3,)),
    ("mixed", (3, 4), "mixed", (2,)),
    ("0-d", (), (), ()),
]


def _gradcheck_inputs(shape: tuple[int, ...], index: Any, vshape: Any) -> tuple[Any, ...]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    index = (
        {
            "mask": torch.tensor([[True, False, True, False]] * 3),
            "row mask": torch.tensor([True, False, True]),
            "positions": torch.tensor([4, 0, 2]),
            "mixed": (torch.tensor([0, 2]), torch.tensor([3, 1])),
        }.get(index, index)
        if isinstance(index, str)
        else index
    )
    if vshape == "number":
        return x, index, 0.5
    if vshape == "matching":
        vshape = x[index].shape
    return x, index, torch.randn(vshape, dtype=torch.float64, generator=gen)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("label", "shape", "index", "vshape"), GRADCHECK_CASES)
def test_gradcheck_and_gradgradcheck(
    name: str, label: str, shape: tuple[int, ...], index: Any, vshape: Any
) -> None:
    x, index, value = _gradcheck_inputs(shape, index, vshape)
    probe = Case(x, index, value)
    fn = RECIPES[name]
    if refuses(name, probe):  # a documented refusal must be a clear error
        with pytest.raises(NotApplicable, match=f"'{name}'"):
            fn(x, index, value)
        return
    x.requires_grad_(True)
    if isinstance(value, torch.Tensor):
        value.requires_grad_(True)
        inputs: tuple[torch.Tensor, ...] = (x, value)

        def call(*args: torch.Tensor) -> torch.Tensor:
            return fn(args[0], index, args[1])
    else:
        inputs = (x,)

        def call(*args: torch.Tensor) -> torch.Tensor:
            return fn(args[0], index, value)

    assert torch.autograd.gradcheck(call, inputs)
    assert torch.autograd.gradgradcheck(call, inputs)


@pytest.mark.parametrize("name", NAMES)
def test_integer_and_bool_tensors(name: str) -> None:
    x = torch.arange(6).reshape(2, 3)
    expected = x.clone()
    expected[:, 1] = 7
    torch.testing.assert_close(RECIPES[name](x, (slice(None), 1), 7), expected)
    flags = torch.tensor([True, False, True])
    assert torch.equal(RECIPES[name](flags, 1, True), torch.tensor([True, True, True]))


@pytest.mark.parametrize("name", NAMES)
def test_keeps_float32_with_a_float64_value(name: str) -> None:
    """The NumPy-mask answer turns float32 into float64; none of ours may."""
    x = torch.zeros(4)
    out = RECIPES[name](x, 2, torch.tensor(1.5, dtype=torch.float64))
    assert out.dtype == torch.float32


def test_blend_turns_overwritten_inf_into_nan_as_documented() -> None:
    x = torch.tensor([1.0, float("inf"), 3.0])
    assert torch.isnan(RECIPES["mask"](x, 1, 0.0)[1])
    for name in NAMES:
        if name != "mask":
            assert RECIPES[name](x, 1, 0.0)[1] == 0.0, name


def test_inplace_baseline_mutates_and_is_not_a_recipe() -> None:
    x = torch.zeros(3)
    assert ir.inplace_setitem(x, 0, 1.0) is x
    assert x[0] == 1.0
    assert ir.inplace_setitem not in RECIPES.values()


def test_recipes_is_read_only_and_ordered() -> None:
    assert list(RECIPES)[:7] == [
        "mask",
        "where",
        "clone",
        "index_put",
        "scatter",
        "select_scatter",
        "masked_fill",
    ]
    with pytest.raises(TypeError):
        RECIPES["mine"] = RECIPES["where"]  # type: ignore[index]


@pytest.mark.parametrize("name", NAMES)
def test_leaf_that_requires_grad_is_accepted(name: str) -> None:
    """What `x[0] = 42` refuses on a leaf, every recipe does out of place."""
    x = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 42.0
    out = RECIPES[name](x, 0, 42.0)
    out.sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.filterwarnings(
    "ignore:There is a performance drop because we have not yet implemented"
)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [1, (slice(None), 2), (0, slice(1, None, 2))])
def test_vmap_over_a_batched_value_matches_a_loop(name: str, index: Any) -> None:
    """torch 2.13's index_fill writes the last batch's value everywhere under vmap."""
    base = torch.zeros(3, 4)
    values = torch.arange(1.0, 5.0)
    fn = RECIPES[name]
    expected = torch.stack([fn(base, index, v) for v in values])
    if name == "clone":  # setitem cannot write a batched value into an unbatched clone
        with pytest.raises(RuntimeError, match="vmap"):
            torch.func.vmap(lambda v: fn(base, index, v))(values)
        return
    assert torch.equal(torch.func.vmap(lambda v: fn(base, index, v))(values), expected)


def test_blend_with_a_non_finite_value_spoils_every_unwritten_element() -> None:
    """As the docstring says: ``inf * 0`` is ``nan`` wherever the value is not written."""
    out = RECIPES["mask"](torch.zeros(3), 0, float("inf"))
    assert out[0] == float("inf")
    assert torch.isnan(out[1:]).all()
    half = RECIPES["mask"](torch.zeros(3, dtype=torch.float16), 1, 1e6)  # overflows to inf
    assert torch.isnan(half[[0, 2]]).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [Ellipsis, None, (), slice(None)], ids=repr)
def test_overwriting_everything_keeps_x_in_the_graph(name: str, index: Any) -> None:
    shape = () if index == () else (3,)
    x = torch.rand(shape, requires_grad=True)
    y = RECIPES[name](x, index, 2.0)
    assert y.grad_fn is not None
    (grad,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(grad, torch.zeros_like(x))


@pytest.mark.parametrize("name", ["mask", "where", "index_put", "scatter", "clone"])
def test_duplicate_positions_send_the_value_one_gradient_per_entry(name: str) -> None:
    x = torch.zeros(3, requires_grad=True)
    v = torch.tensor(1.0, requires_grad=True)
    RECIPES[name](x, torch.tensor([0, 0]), v).sum().backward()
    assert v.grad == 2.0  # setitem's answer


def test_masked_fill_refuses_duplicates_for_a_value_that_requires_grad() -> None:
    x = torch.zeros(3)
    v = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(NotApplicable, match=r"at\(x\)\[index\]\.add\(value\)"):
        RECIPES["masked_fill"](x, torch.tensor([0, 0]), v)
    # a number, or a value without grad, is written exactly
    assert RECIPES["masked_fill"](x, torch.tensor([0, 0]), 1.0).tolist() == [1.0, 0.0, 0.0]


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
def test_nested_list_means_what_it_means_to_torch(name: str) -> None:
    x = torch.zeros(3, 4)
    expected = x.clone()
    expected[[[0, 1], [1, 2]]] = 5.0
    assert expected.sum() == 10.0  # torch writes (0, 1) and (1, 2) only
    try:
        out = RECIPES[name](x, [[0, 1], [1, 2]], 5.0)
    except NotApplicable:
        assert name == "select_scatter"
        return
    assert torch.equal(out, expected)


def test_select_scatter_gradient_to_the_source_is_right_under_vmap() -> None:
    """torch 2.13's own select_scatter sends x.shape[0] times the gradient here."""
    x0 = torch.randn(7, 4, requires_grad=True)
    s = torch.randn(5, 4, requires_grad=True)
    raw = torch.func.vmap(lambda s: x0.select_scatter(s, 0, 1))(s)
    assert torch.equal(torch.autograd.grad(raw.sum(), s)[0], torch.full((5, 4), 7.0))
    out = torch.func.vmap(lambda s: RECIPES["select_scatter"](x0, 1, s))(s)
    grad_s, grad_x = torch.autograd.grad(out.sum(), (s, x0))
    assert torch.equal(grad_s, torch.ones(5, 4))
    expected_x = torch.full((7, 4), 5.0)
    expected_x[1] = 0.0
    assert torch.equal(grad_x, expected_x)
