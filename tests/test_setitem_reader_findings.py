"""What a falsifying reader of issue 28's fixes found, each against torch's own statement.

The reader (2026-12-02) wrote generators over the axes the battery walks and
some it does not; these are the findings fixed since, each written as the
statement torch runs (``y = x.clone(); y[index] = value`` or ``y[index] op=
value``) against the package, over the whole set the finding names. Each
failed on the code before its fix.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwad

from inplace_recipes import RECIPES, NotApplicable, at
from inplace_recipes.recipes import RECORDS

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


JVP_INDEXES = {
    "int": 0,
    "slice": slice(0, 2),
    "mask": torch.tensor([True, False, True]),
    "index tensor": torch.tensor([0, 2]),
}


def _jvp(f: Callable[[torch.Tensor], torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.tensor([1.0, -2.0, 3.0])
    return torch.func.jvp(f, (x,), (torch.tensor([0.5, 0.25, -1.0]),))


@pytest.mark.parametrize("where", list(JVP_INDEXES))
@pytest.mark.parametrize("name", list(RECIPES))
def test_jvp_of_a_0d_part_and_a_python_float(name: str, where: str) -> None:
    """Torch 2.13's jvp gives ``a[0] + 1.5`` a float64 tangent; setitem casts it (and
    raises on it through index tensors)."""
    index = JVP_INDEXES[where]

    def statement(a: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[index] = a[0] + 1.5
        return y

    try:
        want = _jvp(statement)
    except RuntimeError:  # index tensors: torch's index_put_ refuses the float64 tangent
        with pytest.raises((RuntimeError, NotApplicable)):
            _jvp(lambda a: RECIPES[name](a, index, a[0] + 1.5))
        return
    try:
        got = _jvp(lambda a: RECIPES[name](a, index, a[0] + 1.5))
    except NotApplicable:
        return
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype, (got, want)
        assert torch.equal(g, w), (got, want)


@pytest.mark.parametrize("where", list(JVP_INDEXES))
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_jvp_of_at_ops_with_a_python_float(op: str, where: str) -> None:
    index = JVP_INDEXES[where]

    def statement(a: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[index] = STATEMENTS[op](y[index], 1.5)
        return y

    want = _jvp(statement)
    got = _jvp(lambda a: getattr(at(a)[index], op)(1.5))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype, (got, want)
        assert torch.allclose(g, w), (got, want)


#: ``y[i] op= v``'s method for each of at()'s arithmetic ops.
IN_PLACE_METHODS = {
    "add": "__iadd__",
    "subtract": "__isub__",
    "multiply": "__imul__",
    "divide": "__itruediv__",
    "power": "__ipow__",
}
#: x's dtype and a value's of another precision.
MIXED_PRECISION = [
    (torch.bfloat16, torch.float32),
    (torch.bfloat16, torch.float64),
    (torch.float16, torch.float32),
    (torch.float16, torch.float64),
    (torch.float16, torch.bfloat16),
    (torch.float32, torch.float64),
]

VMAP_INDEXES = {
    "int": 0,
    "slice": slice(0, 20),
    "mask": torch.arange(40) % 3 == 0,
    "index tensor": torch.tensor([0, 2, 7]),
}


@pytest.mark.parametrize("where", list(VMAP_INDEXES))
@pytest.mark.parametrize("op", list(IN_PLACE_METHODS))
@pytest.mark.parametrize(("dtype", "value_dtype"), MIXED_PRECISION, ids=str)
def test_at_ops_under_vmap_read_a_batched_0d_value_as_the_kernel_reads_it(
    dtype: torch.dtype, value_dtype: torch.dtype, op: str, where: str
) -> None:
    """Per example, ``y[i] *= v`` reads a 0-d ``v`` in float32 for a float16 or bfloat16
    ``y`` (``mul`` and ``div``); vmap's own rule rounds it to ``y``'s dtype first."""
    index = VMAP_INDEXES[where]
    generator = torch.Generator().manual_seed(7)
    x = (torch.randn(40, generator=generator) * 3).to(dtype).abs()
    values = torch.randn(6, generator=generator, dtype=torch.float64).to(value_dtype)
    statement = IN_PLACE_METHODS[op]

    def one(v: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[index] = getattr(y[index], statement)(v)
        return y

    want = torch.stack([one(v) for v in values])
    got = torch.vmap(lambda v: getattr(at(x)[index], op)(v))(values)
    assert torch.equal(got.nan_to_num(), want.nan_to_num()), (got - want).abs().max()


@pytest.mark.parametrize("where", list(JVP_INDEXES))
@pytest.mark.parametrize("op", list(IN_PLACE_METHODS))
@pytest.mark.parametrize(("dtype", "value_dtype"), MIXED_PRECISION, ids=str)
def test_at_ops_under_jvp_give_the_tangent_of_the_in_place_op(
    dtype: torch.dtype, value_dtype: torch.dtype, op: str, where: str
) -> None:
    """``y[0] /= v``'s forward rule reads the result rounded to ``y``'s dtype."""
    index = JVP_INDEXES[where]
    if isinstance(index, torch.Tensor) and index.dtype is torch.bool:
        index = torch.tensor([True, False, True, False, True])
    generator = torch.Generator().manual_seed(1)
    x = (torch.randn(5, generator=generator) * 3).abs().to(dtype)
    dx = torch.randn(5, generator=generator).to(dtype)
    v = torch.randn((), generator=generator, dtype=torch.float64).to(value_dtype)
    dv = torch.randn((), generator=generator, dtype=torch.float64).to(value_dtype)

    def statement(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[index] = getattr(y[index], IN_PLACE_METHODS[op])(b)
        return y

    want = torch.func.jvp(statement, (x, v), (dx, dv))
    got = torch.func.jvp(lambda a, b: getattr(at(a)[index], op)(b), (x, v), (dx, dv))
    for g, w in zip(got, want, strict=True):
        assert torch.equal(g.nan_to_num(), w.nan_to_num()), (g, w)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("op", ["add", "multiply", "max", "power"])
@pytest.mark.parametrize(
    "index",
    [
        (torch.tensor([True, False, True, True, False]), 1),
        (slice(None), torch.tensor([True, False, True])),
        (1, torch.tensor([True, False, True])),
        (Ellipsis, torch.tensor([True, False, True])),
    ],
    ids=["mask, int", "slice, mask", "int, mask", "..., mask"],
)
def test_at_ops_through_a_mask_beside_other_indices_compile_with_fullgraph(
    index: tuple[Any, ...], op: str, dynamic: bool
) -> None:
    """No count of repeated positions to read: masks never repeat a position. (Two masks
    side by side fail inside Dynamo for torch's own ``y[m1, m2] += 2.5`` as well.)"""
    torch._dynamo.reset()
    x = torch.arange(15.0).reshape(5, 3)
    compiled = torch.compile(
        lambda a: getattr(at(a)[index], op)(2.5),
        fullgraph=True,
        backend="aot_eager",
        dynamic=dynamic,
    )
    y = x.clone()
    y[index] = STATEMENTS[op](y[index], 2.5)
    assert torch.equal(compiled(x), y)


def _recipes_and_at_set() -> dict[str, Callable[[torch.Tensor, Any, Any], torch.Tensor]]:
    """Every recipe by name, and ``at(x)[i].set(v)`` as ``"at"``: the writers of setitem."""
    writers: dict[str, Callable[[torch.Tensor, Any, Any], torch.Tensor]] = dict(RECIPES)
    writers["at"] = lambda a, i, v: at(a)[i].set(v)
    return writers


NUMBERS = [
    (torch.int8, 300),
    (torch.int8, 300.0),
    (torch.uint8, 256),
    (torch.float32, 1e39),
    (torch.float32, -1e39),
    (torch.float32, float("inf")),
    (torch.float32, torch.finfo(torch.float32).max),
    (torch.float16, 1e6),
    (torch.float64, 1e300),
]
NUMBER_INDEXES = {
    "int past the end": 5,
    "int": 0,
    "index tensor past the end": torch.tensor([5]),
    "index tensor": torch.tensor([0]),
    "empty index tensor": torch.tensor([], dtype=torch.long),
    "mask of another length": torch.tensor([True, False]),
    "two ints into 1-d": (0, 0),
    "slice": slice(None),
}


@pytest.mark.parametrize("shape", [(3,), (0,)], ids=["3 elements", "empty"])
@pytest.mark.parametrize("where", list(NUMBER_INDEXES))
@pytest.mark.parametrize(("dtype", "number"), NUMBERS, ids=str)
def test_a_number_that_the_dtype_cannot_hold_raises_first(
    dtype: torch.dtype, number: float, where: str, shape: tuple[int, ...]
) -> None:
    """Setitem converts a Python number before it reads the index: the overflow comes
    before the index's error, and scatter on an empty ``x`` raises it too."""
    index = NUMBER_INDEXES[where]
    x = torch.zeros(shape, dtype=dtype)
    y = x.clone()
    try:
        y[index] = number
        want: torch.Tensor | type[Exception] = y
    except Exception as error:  # noqa: BLE001 - torch's error is the answer
        want = type(error)
    writers = _recipes_and_at_set()
    for name, write in writers.items():
        if isinstance(want, type):
            with pytest.raises((want, NotApplicable)):
                write(x, index, number)
            continue
        try:
            got = write(x, index, number)
        except NotApplicable:
            continue
        assert got.dtype == want.dtype, name
        spreads = not math.isfinite(number) or not bool(want.isfinite().all())
        if name in RECORDS and RECORDS[name].not_exact and spreads:
            continue  # the mask blend's declared exception: a non-finite value, or float16 overflow
        assert torch.equal(got, want), (name, got, want)


def test_scatter_writes_the_bits_of_a_bfloat16_nan_as_torchs_scatter_kernel_does() -> None:
    """A followed torch quirk, not a difference of the recipe: torch 2.13's own bfloat16
    ``scatter`` kernel writes a nan as 0xFFFF where setitem writes 0x7FC0; nan either way."""
    x = torch.zeros(4, dtype=torch.bfloat16)
    index = torch.tensor([1, 2])
    nan = torch.full((2,), float("nan"), dtype=torch.bfloat16)
    y = x.clone()
    y[index] = nan
    got = RECIPES["scatter"](x, index, nan)
    assert torch.equal(got.view(torch.int16), x.scatter(0, index, nan).view(torch.int16))
    assert bool(got[1:3].isnan().all())
    assert got.view(torch.int16)[1].item() != y.view(torch.int16)[1].item()  # the quirk


def test_a_meta_value_into_a_cpu_x_raises_torchs_copy_error() -> None:
    """Torch 2.13's setitem writes nothing there and raises nothing (``y`` stays zeros); the
    recipes raise the error of copying out of a meta tensor, which names the problem."""
    x = torch.zeros(3)
    index = torch.tensor([0, 2])
    value = torch.ones(2, device="meta")
    y = x.clone()
    y[index] = value
    assert torch.equal(y, x)
    for name in RECIPES:
        if name == "clone":  # setitem itself
            continue
        with pytest.raises((NotImplementedError, NotApplicable), match=r"meta|takes only"):
            RECIPES[name](x, index, value)


def test_a_0d_value_inside_jvp_of_vmap_is_written() -> None:
    """Second reader: the tangent's dtype cannot be read under vmap (no batching rule for
    unpacking a dual tensor); the value goes on as it is, as before."""
    xs, vs = torch.rand(3, 4), torch.rand(3)
    tangents = (torch.ones_like(xs), torch.ones_like(vs))

    def loop(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.stack([_set_first(a[i], b[i]) for i in range(3)])

    want = torch.func.jvp(loop, (xs, vs), tangents)
    writes = [
        lambda x, v: at(x)[0].set(v),
        lambda x, v: RECIPES["index_put"](x, torch.tensor([0]), v),
        lambda x, v: RECIPES["where"](x, torch.tensor([True, False, False, False]), v),
    ]
    for write in writes:
        got = torch.func.jvp(lambda a, b, w=write: torch.func.vmap(w)(a, b), (xs, vs), tangents)
        assert torch.equal(got[0], want[0])
        assert torch.equal(got[1], want[1])


def _set_first(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[0] = v
    return y


@pytest.mark.parametrize("name", list(RECIPES))
def test_under_jvp_an_index_past_the_end_raises_before_the_tangents_dtype(name: str) -> None:
    x, a = torch.zeros(4), torch.ones(3)
    with pytest.raises(IndexError):
        torch.func.jvp(lambda b: RECIPES[name](x, torch.tensor([9]), b[0] + 1.5), (a,), (a,))


def test_at_set_raises_a_numbers_overflow_before_the_index_error() -> None:
    x = torch.zeros(0, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="without overflow"):
        at(x)[..., 0].set(300)
    with pytest.raises(RuntimeError, match="without overflow"):
        at(x)[..., 0].set(300, method="where")


def test_vmap_multiply_of_a_0d_part_reads_an_integer_value_as_the_kernel_does() -> None:
    x = torch.full((3, 4), 3.0, dtype=torch.bfloat16)
    v = torch.tensor([257, 257, 257])
    got = torch.func.vmap(lambda a, b: at(a)[0].multiply(b))(x, v)
    want = torch.stack([_multiply_first(x[i], v[i]) for i in range(3)])
    assert torch.equal(got, want)


def _multiply_first(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[0] *= v
    return y


@pytest.mark.parametrize(
    ("shape", "index", "value"),
    [
        ((4,), torch.tensor([9]), torch.ones(2)),
        ((4,), [9, 0], torch.ones(3)),
        ((4,), torch.tensor([9]), torch.ones(1, 2)),
        ((4,), torch.tensor([[0], [9]]), torch.ones(3)),
        ((3, 4), (slice(None), torch.tensor([9])), torch.ones(7)),
        ((3, 4), (torch.tensor([9]), slice(None)), torch.ones(7)),
        ((3, 4), (slice(0, 2), torch.tensor([0, 9])), torch.ones(3)),
        ((3, 4), (slice(None), [1, 9]), torch.ones(1, 1, 7)),
        ((3, 4), (slice(None), torch.tensor([9])), torch.ones(3, 1)),
        ((3, 4), (slice(None), torch.tensor([9])), torch.ones(1, 1, 3, 1)),
    ],
    ids=[
        "one past the end",
        "list",
        "leading one",
        "2-d index",
        "beside a slice",
        "before a slice",
        "beside a part slice",
        "list beside a slice",
        "fits beside a slice",
        "fits with leading ones",
    ],
)
def test_a_value_that_does_not_fit_raises_before_an_index_past_the_end(
    shape: tuple[int, ...], index: Any, value: torch.Tensor
) -> None:
    """Torch checks the value's shape before an index tensor's bounds, also beside a slice,
    where ``x[index]``'s shape is read without the positions; a value that fits gets the
    index's ``IndexError``."""
    x = torch.zeros(shape)
    y = x.clone()
    with pytest.raises(Exception) as torch_error:
        y[index] = value
    writers = _recipes_and_at_set()
    for name, write in writers.items():
        with pytest.raises(Exception) as error:
            write(x, index, value)
        assert isinstance(error.value, torch_error.type), (name, error.value)
    with pytest.raises(Exception) as torch_error:
        y[index] += value  # reads y[index] first: the index's error comes first here
    with pytest.raises(Exception) as error:
        at(x)[index].add(value)
    assert isinstance(error.value, torch_error.type), ("at add", error.value)


#: Decided, not fixed: where torch's own statement raises for a reason that is not the write.
FLOATS_FOR_JACFWD = [torch.float16, torch.bfloat16, torch.float64]


@pytest.mark.parametrize("value_dtype", FLOATS_FOR_JACFWD, ids=str)
@pytest.mark.parametrize("name", ["mask", "where", "index_put", "scatter", "masked_fill", "at"])
def test_jacfwd_through_a_mask_with_a_0d_value_of_another_dtype_follows_forward_mode(
    name: str, value_dtype: torch.dtype
) -> None:
    """Torch's own ``jacfwd`` of ``y[m] = v`` (``v`` 0-d, another float dtype) raises
    ``Index put requires the source and destination dtypes match``: ``jacfwd`` is ``vmap``
    of ``jvp``, and ``vmap``'s ``index_put_`` does not cast. Torch's forward mode itself
    (dual tensors) writes it, and the recipes give that Jacobian; ``clone`` runs torch's
    statement and raises as torch does. If torch's ``jacfwd`` starts to write, this fails."""
    x = torch.tensor([2.0, 3.0, 4.0])
    m = torch.tensor([True, False, True])
    v = torch.tensor(5.0, dtype=value_dtype)

    def statement(a: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[m] = v
        return y

    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        torch.func.jacfwd(statement)(x)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        torch.func.jacfwd(lambda a: RECIPES["clone"](a, m, v))(x)
    write = (lambda a: at(a)[m].set(v)) if name == "at" else (lambda a: RECIPES[name](a, m, v))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # vmap's performance warning for masked_fill
        got = torch.func.jacfwd(write)(x)
    forward = []
    for k in range(3):
        with fwad.dual_level():
            y = statement(fwad.make_dual(x, torch.eye(3)[k]))
            forward.append(fwad.unpack_dual(y).tangent)
    assert torch.equal(got, torch.stack(forward, dim=1))


@pytest.mark.parametrize("transform", ["eager", "grad"])
def test_at_power_gives_the_gradient_where_torchs_in_place_power_raises(transform: str) -> None:
    """``y[0] **= v`` saves ``y[0]`` for its backward and then overwrites it, so torch's
    backward raises "modified by an inplace operation" (eager and under ``torch.func.grad``);
    that error is what ``at()`` is for, and it gives the gradient of ``y[0] = a[0] ** v``,
    the battery's oracle (``tests/battery/oracle.py``: ``torch_write``)."""
    x = torch.tensor([2.0, 3.0])
    v = torch.tensor(3.0)

    def statement(a: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[0] **= v
        return y.sum()

    def out_of_place(a: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[0] = a[0] ** v  # the part read from the input, as the oracle reads it
        return y.sum()

    def written(a: torch.Tensor) -> torch.Tensor:
        return at(a)[0].power(v).sum()

    def gradient(f: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        if transform == "grad":
            return torch.func.grad(f)(x)
        a = x.clone().requires_grad_()
        f(a).backward()
        assert a.grad is not None
        return a.grad

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        gradient(statement)
    assert torch.equal(gradient(written), gradient(out_of_place))
    assert torch.equal(gradient(written), torch.tensor([12.0, 1.0]))


@pytest.mark.parametrize("index", [5, -6, (0, 9), (slice(None), 9), (None, 5), (..., 9), 1])
@pytest.mark.parametrize("value", ["a", None, [1.0], b"x", object()], ids=repr)
def test_a_value_that_is_not_a_number_is_a_type_error_before_the_index(
    index: Any, value: Any
) -> None:
    """Setitem converts the value before it reads an int index, so a value that is not a
    number is torch's ``TypeError`` even where the index is past the end (the third
    falsifying reader, 2026-12-03: ``IndexError`` after 2198c1f, 35 of 35 cases)."""
    x = torch.zeros(3, 4)
    y = x.clone()
    with pytest.raises(TypeError):
        y[index] = value
    writers = _recipes_and_at_set()
    for name, write in writers.items():
        with pytest.raises(TypeError) as error:
            write(x, index, value)
        assert "value must be a Python number or a torch.Tensor" in str(error.value), name


LONE_FALSE_VALUES: dict[str, Callable[[], Any]] = {
    "fits no write": lambda: torch.ones(5, requires_grad=True),
    "fits": lambda: torch.ones(3, requires_grad=True),
    "0-d": lambda: torch.tensor(2.0, requires_grad=True),
    "another dtype": lambda: torch.ones(2, dtype=torch.float64, requires_grad=True),
    "complex": lambda: torch.ones(2, dtype=torch.complex64),
    "meta": lambda: torch.ones(2, device="meta"),
    "sparse": lambda: torch.ones(2).to_sparse(),
    "int8 overflow": lambda: 300,
    "complex number": lambda: 1j,
    "not a number": lambda: "a",
    "number": lambda: 7.0,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8])
@pytest.mark.parametrize("value", list(LONE_FALSE_VALUES))
@pytest.mark.parametrize("method", [None, *RECIPES])
def test_a_lone_false_writes_nothing_and_reads_no_tensor_value(
    method: str | None, value: str, dtype: torch.dtype
) -> None:
    """Third reader: ``y[False] = v`` converts a number (its errors), then returns without
    reading a tensor ``v`` (its shape, dtype, device, layout); every recipe but clone
    raised the shape error of a ``v`` that fits no write. The value gets no gradient, as in
    torch (``v.grad`` stays None), and the result requires grad only where ``x`` does; a
    record's refusal (masked_fill's one value, select_scatter's basic index) stays."""
    for requires_grad in (False, True):
        x = torch.zeros(3, dtype=dtype, requires_grad=requires_grad and dtype.is_floating_point)
        y, v = x.clone(), LONE_FALSE_VALUES[value]()
        try:
            y[False] = v
            want: torch.Tensor | type[Exception] = y
        except Exception as error:  # noqa: BLE001 - torch's error is the answer
            want = type(error)
        write = RECIPES[method] if method else (lambda a, i, b: at(a)[i].set(b))
        if isinstance(want, type):
            with pytest.raises(want):
                write(x, False, v)
            continue
        if method and (refusal := RECORDS[method].refusal(x, False, v)) is not None:
            with pytest.raises(refusal):  # the record's refusal, as for any index
                write(x, False, v)
            continue
        got = write(x, False, v)
        assert got.dtype == want.dtype
        assert torch.equal(got.detach(), want.detach())
        assert got.requires_grad == want.requires_grad
        if got.requires_grad:
            got.sum().backward()
            assert x.grad is not None
            assert torch.equal(x.grad, torch.ones(3))
        if isinstance(v, torch.Tensor) and v.requires_grad:
            assert v.grad is None


EMPTY_SELECTIONS = {
    "an empty index tensor": torch.tensor([], dtype=torch.long),
    "beside a slice": (slice(None), torch.tensor([], dtype=torch.long), torch.tensor([1])),
    "two empty index tensors": (torch.tensor([], dtype=torch.long),) * 2,
    "an all-False mask beside an index tensor": (torch.tensor([False, False, False]), 1),
}


@pytest.mark.parametrize("where", list(EMPTY_SELECTIONS))
@pytest.mark.parametrize("op", list(STATEMENTS))
@pytest.mark.parametrize("shape", [(), (1,)], ids=["0-d value", "(1,) value"])
def test_an_empty_selection_gives_the_value_torchs_zero_gradient(
    where: str, op: str, shape: tuple[int, ...]
) -> None:
    """Third reader: through index tensors that select nothing, ``at()`` ran no round, so
    the value was not in the graph (``v.grad`` None, a disconnected graph) where torch's
    ``y[i] op= v`` gives zeros."""
    index = EMPTY_SELECTIONS[where]
    x = torch.rand(3, 4, 5, requires_grad=True)
    grads = []
    for write in (
        lambda a, b: _torch(a, index, op, b),
        lambda a, b: getattr(at(a)[index], op)(b),
    ):
        v = torch.full(shape, 2.0, requires_grad=True)
        result = write(x, v)
        assert isinstance(result, torch.Tensor)
        (g,) = torch.autograd.grad(result.sum(), v, allow_unused=True)
        grads.append(g)
    want, got = grads
    assert want is not None
    assert got is not None, "a disconnected graph: torch gives the value zeros"
    assert torch.equal(got, want)


@pytest.mark.parametrize("op", list(STATEMENTS))
@pytest.mark.parametrize("x_requires_grad", [False, True], ids=["x plain", "x requires grad"])
def test_a_lone_false_leaves_the_value_out_of_the_graph_in_at(
    op: str, x_requires_grad: bool
) -> None:
    """Fourth reader: ``y[False] op= v`` computes on the empty ``y[False]`` and writes
    nothing, so ``v`` is not in torch's graph; since the empty-selection round (above),
    ``at(x)[False].op(v)`` gave ``v`` a zero gradient, a zero tangent and ``requires_grad``
    where torch gives none. Index tensors that select nothing keep torch's zeros (above)."""
    x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_(x_requires_grad)
    outs = []
    for write in (
        lambda a, b: _torch(a, False, op, b),
        lambda a, b: getattr(at(a)[False], op)(b),
    ):
        v = torch.tensor(2.0, requires_grad=True)
        result = write(x, v)
        assert isinstance(result, torch.Tensor)
        grad = None
        if result.requires_grad:
            grad = torch.autograd.grad(result.sum(), (x, v), allow_unused=True)[1:]
        with fwad.dual_level():
            dual = fwad.make_dual(torch.tensor(2.0), torch.tensor(1.0))
            tangent = fwad.unpack_dual(write(x.detach(), dual)).tangent
        outs.append((result.detach(), result.requires_grad, grad, tangent))
    (want, want_rg, want_grad, want_tangent), (got, got_rg, got_grad, got_tangent) = outs
    assert torch.equal(got, want)
    assert got_rg == want_rg
    assert got_grad == want_grad  # (None,) for both: v is unused
    assert want_tangent is None
    assert got_tangent is None


@pytest.mark.parametrize("op", list(STATEMENTS))
def test_a_lone_false_keeps_torchs_errors_in_at(op: str) -> None:
    """The op on the empty ``y[False]`` raises what torch raises: a value that does not
    broadcast, and a result type the in-place op cannot cast back."""
    for x, v in (
        (torch.zeros(3, 4), torch.ones(5)),
        (torch.zeros(3, dtype=torch.long), torch.tensor(1.5)),
        (torch.zeros(3), torch.tensor(1j)),
    ):
        _same(lambda x=x, v=v: getattr(at(x)[False], op)(v), _torch(x, False, op, v))


def test_a_lone_false_leaves_applys_result_out_of_the_graph() -> None:
    """``y[False] = fn(y[False])`` writes nothing: ``fn``'s result (and what it read) is not
    in torch's graph; ``at(x)[False].apply(fn)`` wrote it through an empty ``index_put``."""
    x = torch.arange(12.0).reshape(3, 4)
    v = torch.tensor(2.0, requires_grad=True)
    y = x.clone()
    y[False] = y[False] + v
    got = at(x)[False].apply(lambda part: part + v)
    assert not y.requires_grad
    assert not got.requires_grad
    assert torch.equal(got, y)


@pytest.mark.parametrize(
    "index",
    [[False], [True], torch.tensor([True, False]), (torch.tensor([True]),), [0, 9], (0, [5])],
    ids=["[False]", "[True]", "a short mask", "a short mask in a tuple", "past the end", "0, [5]"],
)
@pytest.mark.parametrize("value", ["(1,)", "(4,)"])
def test_a_sparse_value_through_a_refused_index_raises_torchs_class(index: Any, value: str) -> None:
    """Fourth reader: torch's kernels refuse a sparse value before they read the index, so
    ``y[[False]] = sparse`` into a (3, 4) ``y`` is a ``NotImplementedError``; every recipe
    raised the mask's ``IndexError``."""
    x = torch.zeros(3, 4)
    v = torch.ones(4 if value == "(4,)" else 1).to_sparse()
    y = x.clone()
    with pytest.raises(Exception) as torch_error:  # torch's own class is the answer
        y[index] = v
    for recipe in RECIPES.values():
        with pytest.raises(type(torch_error.value)):
            recipe(x, index, v)


@pytest.mark.parametrize("mode", ["drop", "fill", "clip"])
@pytest.mark.parametrize("method", ["set", "add", "apply"])
def test_a_lone_false_means_the_same_in_every_mode(mode: str, method: str) -> None:
    """Fifth reader: ``mode=`` rewrote a lone ``False`` as ``(False,)``, which torch reads as
    another write (an empty selection: the value's shape checked, the value in the graph)."""
    x = torch.ones(3, 4, requires_grad=True)

    def write(v: torch.Tensor) -> torch.Tensor:
        if method == "set":
            return at(x)[False].set(v, mode=mode)
        if method == "add":
            return at(x)[False].add(v, mode=mode)
        return at(x)[False].apply(lambda part: part + v.sum(), mode=mode)

    for shape in [(4,), (5,)]:
        v = torch.ones(shape, requires_grad=True)
        y = x.clone()
        if method == "add" and shape == (5,):
            with pytest.raises(RuntimeError):  # torch's: y[False] is (0, 3, 4), v does not fit
                y[False] += v
            with pytest.raises(RuntimeError):
                write(v)
            continue
        y[False] = v
        got = write(v)
        assert torch.equal(got, y)
        assert torch.autograd.grad(got.sum(), v, allow_unused=True) == (None,)


def test_a_uint8_mask_of_the_wrong_shape_raises_torchs_index_error() -> None:
    """Fifth reader: a bare uint8 mask skipped the mask's shape check (its kind is
    "advanced"), so a number value met ``masked_fill_``'s uint8 error first: a
    ``RuntimeError`` where torch raises ``IndexError``."""
    x = torch.zeros(3, 4)
    for mask in (torch.tensor([1, 0], dtype=torch.uint8), torch.ones(3, 5, dtype=torch.uint8)):
        for value in (2.5, torch.tensor(2.5), torch.ones(2)):
            y = x.clone()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(IndexError):  # torch's class
                    y[mask] = value
            for write in [*RECIPES.values(), lambda a, i, v: at(a)[i].set(v)]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # torch's uint8 deprecation warning
                    with pytest.raises(IndexError):
                        write(x, mask, value)


@pytest.mark.parametrize(
    "mask",
    [torch.tensor([True, False]), torch.tensor([1, 0], dtype=torch.uint8)],
    ids=["bool", "uint8"],
)
@pytest.mark.parametrize("on_meta", [True, False], ids=["meta mask", "CPU mask"])
def test_a_meta_x_takes_a_mask_of_the_wrong_shape_as_setitem_does(
    mask: torch.Tensor, on_meta: bool
) -> None:
    """Fifth reader: torch's meta kernels do not check a mask's shape, so ``y[m] = 1.0`` into
    a meta ``y`` returns; every recipe but ``clone`` raised the CPU kernels' ``IndexError``."""
    x = torch.zeros(3, 4, device="meta")
    mask = mask.to("meta") if on_meta else mask
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's uint8 deprecation warning
        y = x.clone()
        y[mask] = 1.0
        for write in [*RECIPES.values(), lambda a, i, v: at(a)[i].set(v)]:
            got = write(x, mask, 1.0)
            assert (got.shape, got.dtype, got.device) == (y.shape, y.dtype, y.device)


MODES = ["clip", "drop", "fill"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "index",
    [
        (np.array(True), ..., 1),
        (np.array(True), 0, ..., 2),
        ([[True, False, True], [False, True, True]], ..., 1),
        (None, ..., np.array(True), -1),
    ],
    ids=["0-d NumPy bool, ..., int", "with an int before ...", "nested bools", "None first"],
)
def test_a_mode_keeps_what_the_items_mean(mode: str, index: Any) -> None:
    """Sixth reader: ``mode=`` rebuilt the index from the items as read, counting a 0-d NumPy
    bool (and a nested list of bools) as torch's ``...`` does not: an in-bounds write went to
    ``x[:, :, 1]`` where torch writes ``x[:, 1, :]``."""
    x = torch.arange(24.0).reshape(2, 3, 4)
    for method in ("set", "add", "multiply"):
        if method == "add":  # mode=None is torch's own
            _same(lambda: at(x)[index].add(1.0), _torch(x, index, "add", 1.0))
        try:
            want: torch.Tensor | type[Exception] = getattr(at(x)[index], method)(1.0)
        except IndexError:
            want = IndexError  # torch's, for an index that does not fit
        _same(lambda method=method: getattr(at(x)[index], method)(1.0, mode=mode), want)


@pytest.mark.parametrize("mode", MODES)
def test_a_mode_keeps_a_uint8_mask_a_uint8_mask(mode: str) -> None:
    """Sixth reader: ``mode=`` rebuilt a uint8 mask as ``mask.bool()``, so ``set`` with a number
    wrote where setitem (and ``mode=None``) raise ``masked_fill_``'s uint8 error."""
    x = torch.zeros(3, 4)
    mask = torch.tensor([1, 0, 0], dtype=torch.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's uint8 deprecation warning
        with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
            at(x)[mask].set(2.0)
        with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
            at(x)[mask].set(2.0, mode=mode)


@pytest.mark.parametrize("mode", ["drop", "fill"])
@pytest.mark.parametrize(
    ("op", "values"),
    [
        ("power", [0.5, 0.5, 2.0]),
        ("power", [-1.0, 0.5, 2.0]),
        ("divide", [0.0, 0.0, 2.0]),
        ("multiply", [math.inf, 0.0, 2.0]),
    ],
)
@pytest.mark.parametrize("as_int", [False, True], ids=["index tensor", "int"])
def test_a_dropped_update_gives_its_value_a_zero_gradient(
    mode: str, op: str, values: list[float], as_int: bool
) -> None:
    """Sixth reader: dropped updates went, with their values, to the slot padded on (0 for
    ``drop``), so ``0 ** v`` or ``0 / v`` there gave the value a nan gradient. A dropped update
    has no effect: its value's gradient is 0, as if it were not in the index."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    index: Any = 5 if as_int else torch.tensor([5, 7, 1])
    v = torch.tensor(values[0] if as_int else values, requires_grad=True)
    got = getattr(at(x)[index], op)(v, mode=mode)
    gx, gv = torch.autograd.grad(got.sum(), (x, v))
    kept = torch.tensor([1]) if not as_int else torch.tensor([], dtype=torch.long)
    v_kept = (v.detach()[2:] if not as_int else torch.ones(0)).clone().requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    want = _torch(x_ref, kept, op, v_kept)
    assert isinstance(want, torch.Tensor)
    assert torch.equal(got.detach(), want.detach())
    wx, wv = torch.autograd.grad(want.sum(), (x_ref, v_kept), allow_unused=True)
    assert torch.equal(gx, wx)
    expected_gv = torch.zeros_like(v)
    if not as_int:
        expected_gv[2:] = wv
    assert not gv.isnan().any(), gv
    assert torch.equal(gv, expected_gv)


@pytest.mark.parametrize("wrap", [tuple, list], ids=["(mask,)", "[mask]"])
def test_apply_through_a_wrapped_uint8_mask_refuses_as_setitem(wrap: type) -> None:
    """The mode property's find: ``apply`` handed the recipe the mask as read (bool), so one
    element through ``(uint8_mask,)`` was written where ``y[i] = fn(y[i])`` raises
    ``masked_fill_``'s uint8 error."""
    x = torch.tensor([1.5, 2.0, 3.0])
    index = wrap([torch.tensor([1, 0, 0], dtype=torch.uint8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's uint8 deprecation warning
        y = x.clone()
        with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
            y[index] = y[index] * 2
        with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
            at(x)[index].apply(lambda part: part * 2)


@pytest.mark.parametrize("mode", ["drop", "fill"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_mode_in_bounds_keeps_a_low_precision_gradient_to_the_bit(
    mode: str, dtype: torch.dtype
) -> None:
    """Seventh reader: under ``drop``/``fill`` a 0-d divisor that requires grad was laid per
    position for the padded slot even with every position in range, so its gradient was
    summed in float32 where torch's ``y[i] /= v`` sums it in bfloat16 (-3.828 for -3.844).
    The result was also a non-contiguous view of the padded copy."""
    x = torch.tensor([[3.8281, 2.4375, 1.1172, 3.5781]] * 2, dtype=dtype)
    index = (slice(None), torch.tensor([0, 2]))
    weights = torch.tensor([0.3, -1.7, 0.9, 1.1], dtype=torch.float64)

    def gradient(write: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        v = torch.tensor(0.75, dtype=dtype, requires_grad=True)
        out = write(v)
        assert out.is_contiguous()
        return torch.autograd.grad((out.double() * weights).sum(), v)[0]

    def in_place(v: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[index] /= v
        return y

    want = gradient(in_place)
    assert torch.equal(gradient(lambda v: at(x)[index].divide(v)), want)
    assert torch.equal(gradient(lambda v: at(x)[index].divide(v, mode=mode)), want)
