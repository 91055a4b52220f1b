"""What a falsifying reader of issue 28's fixes found, each against torch's own statement.

The reader (2026-12-02) wrote generators over the axes the battery walks and
some it does not; these are the findings fixed since, each written as the
statement torch runs (``y = x.clone(); y[index] = value`` or ``y[index] op=
value``) against the package, over the whole set the finding names. Each
failed on the code before its fix.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from inplace_recipes import RECIPES, NotApplicable, at

Op = Callable[[torch.Tensor, Any], torch.Tensor]
#: y[index] op= value as torch runs it, on the copy that indexing with a mask gives.
STATEMENTS: dict[str, Op] = {
    "add": lambda part, v: part.__iadd__(v),
    "subtract": lambda part, v: part.__isub__(v),
    "multiply": lambda part, v: part.__imul__(v),
    "divide": lambda part, v: part.__itruediv__(v),
    "power": lambda part, v: part.__ipow__(v),
    "min": lambda part, v: torch.minimum(part, torch.as_tensor(v)),
    "max": lambda part, v: torch.maximum(part, torch.as_tensor(v)),
}


def _torch(x: torch.Tensor, index: Any, op: str, value: Any) -> torch.Tensor | type[Exception]:
    y = x.clone()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y[index] = STATEMENTS[op](y[index], value)
    except Exception as error:  # noqa: BLE001 - torch's error is the answer
        return type(error)
    return y


def _same(got: Callable[[], torch.Tensor], want: torch.Tensor | type[Exception]) -> None:
    if isinstance(want, type):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # uint8 masks: torch's deprecation warning
            with pytest.raises(want):
                got()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = got()
    assert result.dtype == want.dtype
    assert torch.equal(result, want), (result, want)


DTYPES = [torch.float32, torch.int32, torch.int64, torch.uint8, torch.bool]


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "value",
    [2.5, float("-inf"), 1e39, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)],
    ids=["2.5", "-inf", "1e39", "float64[3]"],
)
def test_min_and_max_through_a_lone_bool_cast_as_setitem(
    index: bool, op: str, dtype: torch.dtype, value: Any
) -> None:
    """x[True] = torch.minimum(x[True], v) copies (casting any dtype); at() used index_put's
    rule, which requires x's dtype."""
    x = torch.zeros(3, dtype=dtype)
    _same(lambda: getattr(at(x)[index], op)(value), _torch(x, index, op, value))


@pytest.mark.parametrize("index", [True, False])
def test_apply_through_a_lone_bool_casts_as_setitem(index: bool) -> None:
    x = torch.arange(3, dtype=torch.int32)
    y = x.clone()
    y[index] = y[index] * 2.5
    _same(lambda: at(x)[index].apply(lambda t: t * 2.5), y)


@pytest.mark.parametrize("op", list(STATEMENTS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.int64])
@pytest.mark.parametrize("selected", [1, 2], ids=["one selected", "two selected"])
@pytest.mark.parametrize(
    "value",
    [1.0, 2, True, torch.tensor(1.5), torch.tensor([2.0])],
    ids=["1.0", "2", "True", "0-d", "(1,)"],
)
def test_at_ops_through_a_uint8_mask_raise_where_setitem_raises(
    op: str, dtype: torch.dtype, selected: int, value: Any
) -> None:
    """A uint8 mask selecting one element sends the value to masked_fill_, which refuses
    uint8 masks: y[m8] += 1.0 raises there (and goes through for two elements)."""
    x = torch.arange(4).to(dtype)
    mask = torch.tensor([1, 0, 1, 0] if selected == 2 else [1, 0, 0, 0], dtype=torch.uint8)
    _same(lambda: getattr(at(x)[mask], op)(value), _torch(x, mask, op, value))


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool])
def test_a_value_that_requires_grad_through_a_mask_into_integers(
    name: str, dtype: torch.dtype
) -> None:
    """Torch writes it (masked_fill_'s checked conversion); the recipes raised 'Autograd not
    support dtype'. The result has no grad_fn (documented in recipes/_value.py)."""
    x, mask = torch.zeros(3, dtype=dtype), torch.tensor([True, False, True])
    value = torch.tensor(1.5, requires_grad=True)
    y = x.clone()
    y[mask] = value
    try:
        got = RECIPES[name](x, mask, value)
    except NotApplicable:
        assert name == "select_scatter"  # takes only ints and slices
        return
    assert got.dtype == y.dtype
    assert torch.equal(got, y.detach())
    at_got = at(x)[mask].set(value)
    assert torch.equal(at_got, y.detach())


@pytest.mark.parametrize("name", [n for n in RECIPES if n != "select_scatter"])
@pytest.mark.parametrize(
    "value",
    [
        torch.tensor(2.7, dtype=torch.float64),
        torch.tensor([1.0, 2.0], dtype=torch.float64),
        torch.tensor([1, 2]),
    ],
    ids=["0-d float64", "float64[2]", "int64[2]"],
)
def test_another_dtype_through_index_tensors_raises_under_compile_too(
    name: str, value: torch.Tensor
) -> None:
    """Eager setitem and compiled clone + setitem raise 'Index put requires the source and
    destination dtypes match'; compiled, the recipes cast silently (Dynamo traced the
    kernel on empty tensors without its check). Now Dynamo meets torch's RuntimeError."""
    x, index = torch.zeros(4), torch.tensor([2, 0])
    y = x.clone()
    with pytest.raises(RuntimeError, match="dtypes match"):
        y[index] = value
    torch._dynamo.reset()
    compiled = torch.compile(RECIPES[name], backend="aot_eager", fullgraph=True)
    try:
        with pytest.raises(RuntimeError, match="dtypes match"):
            compiled(x, index, value)
    except NotApplicable:
        assert name == "masked_fill"
        assert value.numel() != 1
    finally:
        torch._dynamo.reset()


def test_under_compile_the_shape_error_still_comes_before_the_dtype_error() -> None:
    """y[t] = v with a value of another dtype that does not fit: torch names the shapes."""
    x, index, value = torch.zeros(4), torch.tensor([0, 1]), torch.ones(3, dtype=torch.float64)
    y = x.clone()
    with pytest.raises(RuntimeError, match="shape mismatch"):
        y[index] = value
    torch._dynamo.reset()
    try:
        for name in ("where", "index_put", "scatter"):
            compiled = torch.compile(RECIPES[name], backend="aot_eager", fullgraph=True)
            with pytest.raises(RuntimeError, match="shape mismatch"):
                compiled(x, index, value)
            torch._dynamo.reset()
    finally:
        torch._dynamo.reset()


def test_the_dtype_names_are_torchs_own() -> None:
    """The words raised under compile name each dtype as torch's eager error does."""
    from inplace_recipes.recipes._value import _SCALAR_TYPES

    for dtype, name in _SCALAR_TYPES.items():
        other = torch.float32 if dtype is not torch.float32 else torch.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ComplexHalf: torch's "experimental" warning
            y = torch.zeros(2, dtype=dtype)
            with pytest.raises(RuntimeError, match=f"got {name} for the destination"):
                y[torch.tensor([0, 1])] = torch.zeros(2, dtype=other)
