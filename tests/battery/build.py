"""Tensors from a case: ``x``, the index and the value, made the same way on every run.

Every random draw is seeded from the text of what is drawn (a spec's ``str``
and a purpose), so the same spec gives the same tensor in every case and on
every run, whatever runs before it.

>>> from battery.spec import X
>>> x = make_x(X("int8"))
>>> x.dtype, tuple(x.shape), bool(torch.equal(x, make_x(X("int8"))))
(torch.int8, (3, 4), True)
>>> index("mask", (3, 4))
tensor([[False,  True, False, False],
        [ True, False, False,  True],
        [False, False,  True, False]])
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import Any

import torch
from torch import Tensor

from .spec import LITERALS, Value, X

_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_PY_PLAIN: dict[str, bool | int | float | complex] = {
    "bool": True,
    "int": 3,
    "float": 1.5,
    "complex": 1.5 - 2j,
}


class Tagged(torch.Tensor):
    """A subclass that keeps ``torch.Tensor.__torch_function__``: every result is ``Tagged``."""


def dtype_of(name: str) -> torch.dtype:
    dtype = getattr(torch, name)
    assert isinstance(dtype, torch.dtype), name
    return dtype


def _generator(*text: object) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32("/".join(map(str, text)).encode()))


def numbers(name: str, shape: tuple[int, ...], *seed: object, small: bool = False) -> Tensor:
    """Seeded entries of dtype ``name``: normal values (times 2) for inexact
    dtypes, or with ``small`` multiples of 0.5 in [-3, 3] (exact in every
    float dtype); integers in [-4, 6) (unsigned: [0, 6)); bools."""
    gen = _generator(name, shape, *seed)
    dtype = dtype_of(name)
    if name == "bool":
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not (dtype.is_floating_point or dtype.is_complex):
        low = 0 if name in _UNSIGNED else -4
        return torch.randint(low, 6, shape, generator=gen).to(dtype)
    if small:
        parts = torch.randint(-6, 7, (*shape, 2), generator=gen, dtype=torch.float64) / 2
        if dtype.is_complex:
            return torch.view_as_complex(parts).to(dtype)
        return parts[..., 0].to(dtype)
    draw = torch.randn(
        shape, generator=gen, dtype=torch.complex128 if dtype.is_complex else torch.float64
    )
    return (draw * 2).to(dtype)


def _laid_out(make: Any, shape: tuple[int, ...], layout: str) -> Tensor:
    """``make(shape')`` arranged so that the result has ``shape`` and ``layout``."""
    if layout in ("contiguous", "strided"):
        return make(shape)  # type: ignore[no-any-return]
    if layout == "transposed":  # a permuted view; a strided slice for one dimension
        if not shape:
            return make(shape)  # type: ignore[no-any-return]
        if len(shape) == 1:
            return make((2 * shape[0],))[::2]  # type: ignore[no-any-return]
        dims = tuple(reversed(range(len(shape))))
        return make(tuple(shape[d] for d in dims)).permute(dims)  # type: ignore[no-any-return]
    if layout == "channels_last":
        return make(shape).contiguous(memory_format=torch.channels_last)  # type: ignore[no-any-return]
    if layout == "expanded":  # stride 0 on the first dimension
        if not shape:
            return make(shape)  # type: ignore[no-any-return]
        return make((1, *shape[1:])).expand(shape)  # type: ignore[no-any-return]
    if layout == "sparse":
        return make(shape).to_sparse()  # type: ignore[no-any-return]
    raise ValueError(f"unknown layout {layout!r}")


def _dressed(t: Tensor, device: str, kind: str, grad: bool) -> Tensor:
    if device != "cpu":
        t = t.to(device)
    if kind == "parameter":
        return torch.nn.Parameter(t, requires_grad=grad)
    if grad:
        t = t.detach().requires_grad_(True)  # a leaf, with the layout's strides
    if kind == "tagged":
        return t.as_subclass(Tagged)
    return t


def make_x(spec: X, batch: int | None = None) -> Tensor:
    """The tensor written into; ``batch`` draws example ``batch`` of a ``vmap`` batch."""

    def draw(shape: tuple[int, ...]) -> Tensor:
        t = numbers(spec.dtype, shape, "x", spec.content, batch)
        if spec.content == "negative":
            t = -(t.abs() + 0.5).to(t.dtype)
        return t

    t = _laid_out(draw, spec.shape, spec.layout)
    return _dressed(t, spec.device, spec.kind, spec.grad)


def _mask(shape: tuple[int, ...], shift: int = 0) -> Tensor:
    numel = 1
    for s in shape:
        numel *= s
    return ((torch.arange(numel) + shift) % 3 == 1).view(shape)


def _row_mask(rows: int, shift: int = 0) -> Tensor:
    """Every row but one (the ``shift``-th from the end): the same count for every shift."""
    mask = torch.ones(rows, dtype=torch.bool)
    mask[(rows - 1 - shift) % rows] = False
    return mask


def index(name: str, shape: tuple[int, ...], device: str = "cpu", batch: int | None = None) -> Any:
    """The index called ``name`` (see :data:`battery.spec.INDICES`) for an ``x`` of ``shape``.

    ``batch`` draws example ``batch`` of a batched index (masks with the same
    number of True entries in every example, index tensors of the same length).
    """
    s0 = shape[0] if shape else 1
    shift = batch or 0
    two = len(shape) >= 2
    t = torch.tensor
    made: Any
    if name == "int":
        made = 1 if s0 > 1 else 0
    elif name == "neg_int":
        made = -1
    elif name == "slice":
        made = slice(1, None)
    elif name == "step_slice":
        made = (slice(None), slice(None, None, 2)) if two else slice(None, None, 2)
    elif name == "int_slice":
        made = (1, slice(None, None, 2)) if two else slice(None, None, 2)
    elif name == "ellipsis_int":
        made = (..., 1)
    elif name == "none_int":
        made = (None, 1)
    elif name == "full":
        made = slice(None)
    elif name == "ellipsis":
        made = ...
    elif name == "mask":
        made = _mask(shape, shift)
    elif name == "row_mask":
        made = _row_mask(s0, shift)
    elif name == "empty_mask":
        made = torch.zeros(shape, dtype=torch.bool)
    elif name == "mask_0d":
        made = t(True)
    elif name == "bool_true":
        made = True
    elif name == "bool_false":
        made = False
    elif name == "uint8_mask":
        made = _mask(shape, shift).to(torch.uint8)
    elif name in ("tensor", "tensor_int32"):
        made = t([(s0 - 1 + shift) % s0, shift % s0])
        if name == "tensor_int32":
            made = made.int()
    elif name == "tensor_2d":
        made = t([[shift % s0], [(s0 - 1 + shift) % s0]])
    elif name == "tensor_pair":
        made = (t([0, s0 - 1]), t([1, 0])) if two else t([0, s0 - 1])
    elif name == "list":
        made = [s0 - 1, 0]
    elif name == "slice_tensor":
        made = (slice(None), t([1, 0])) if two else t([1, 0])
    elif name == "int_tensor":
        made = (0, t([1, 0])) if two else t([1, 0])
    elif name == "tensor_0d":
        made = t(1)
    elif name == "empty_tensor":
        made = t([], dtype=torch.long)
    # -- extreme ------------------------------------------------------------------
    elif name == "int_oob":
        made = s0
    elif name == "int_neg_oob":
        made = -s0 - 1
    elif name == "int_2**62":
        made = 1 << 62
    elif name == "int_-2**63":
        made = -(1 << 63)
    elif name == "int_2**64":
        made = 1 << 64
    elif name == "slice_huge":
        made = slice(-(1 << 62), 1 << 62)
    elif name == "slice_step_huge":
        made = slice(None, None, 1 << 62)
    elif name == "slice_past":
        made = slice(10, 20)
    elif name == "tensor_oob":
        made = t([s0])
    elif name == "tensor_neg_oob":
        made = t([-s0 - 1])
    elif name == "tensor_2**62":
        made = t([1 << 62])
    elif name == "tensor_int32_min":
        made = t([-(1 << 31)], dtype=torch.int32)
    elif name == "tensor_int64_min":
        made = t([-(1 << 63)])
    elif name == "mask_wrong_shape":
        made = torch.ones(s0 + 1, dtype=torch.bool)
    # -- repeated positions -------------------------------------------------------
    elif name == "dup":
        made = t([1, 1])
    elif name == "dup3":
        made = t([0, 2, 0, 0])
    elif name == "dup_pair":
        made = (t([1, 1]), t([2, 2])) if two else t([1, 1])
    else:
        raise ValueError(f"unknown index {name!r}")
    return _on(made, device)


def _on(index: Any, device: str) -> Any:
    if device == "cpu":
        return index
    if isinstance(index, Tensor):
        return index.to(device)
    if isinstance(index, tuple):
        return tuple(_on(i, device) for i in index)
    return index


def has_tensor(index: Any) -> bool:
    """Whether an index holds a tensor (so that its device matters)."""
    if isinstance(index, Tensor):
        return True
    return isinstance(index, tuple) and any(isinstance(i, Tensor) for i in index)


def written_shape(shape: tuple[int, ...], index_name: str) -> tuple[int, ...] | None:
    """The shape of ``x[index]`` as torch reads it, or ``None`` where torch refuses the index."""
    return _written_shape(shape, index_name)


@cache
def _written_shape(shape: tuple[int, ...], index_name: str) -> tuple[int, ...] | None:
    try:
        return tuple(torch.empty(shape)[index(index_name, shape)].shape)
    except Exception:  # noqa: BLE001 - a refused index: any shape will do
        return None


def value_shape(spec: Value, x_shape: tuple[int, ...], index_name: str) -> tuple[int, ...]:
    """The shape of a tensor value of ``spec`` written through ``index_name``."""
    full = written_shape(x_shape, index_name)
    if full is None:  # torch refuses the index: a row of x, which fits any write of rows
        full = x_shape[-1:]
    if spec.form == "0d":
        return ()
    if spec.form == "one":
        return (1,)
    if spec.form == "full":
        return full
    if spec.form == "row":
        return full[-1:]
    if spec.form == "lead1":
        return (1, *full)
    raise ValueError(f"unknown value form {spec.form!r}")


@cache
def holds(dtype: str, literal: str) -> bool:
    """Whether a tensor of ``dtype`` can hold the literal as written (torch's own check)."""
    try:
        made = torch.full((1,), LITERALS[literal], dtype=dtype_of(dtype))
    except (RuntimeError, TypeError, OverflowError):
        return False
    number = LITERALS[literal]
    return not (isinstance(number, complex) and not made.is_complex())


def make_value(
    spec: Value, x_shape: tuple[int, ...], index_name: str, batch: int | None = None
) -> Any:
    """The value written: a Python number, or a tensor as ``spec`` says."""
    if spec.form == "py":
        if spec.content == "plain":
            return _PY_PLAIN[spec.dtype]
        return LITERALS[spec.content]
    shape = value_shape(spec, x_shape, index_name)

    def draw(s: tuple[int, ...]) -> Tensor:
        if spec.content == "plain":
            return numbers(spec.dtype, s, "value", batch, small=True)
        if spec.content == "zero_first":  # 0 then 2s: a non-finite step for divide
            out = torch.full(s, 2, dtype=dtype_of(spec.dtype))
            out.view(-1)[:1] = 0
            return out
        if spec.content == "half_first":  # 0.5 then 2s: a root of a negative base for power
            out = torch.full(s, 2.0, dtype=dtype_of(spec.dtype))
            out.view(-1)[:1] = 0.5
            return out
        return torch.full(s, LITERALS[spec.content], dtype=dtype_of(spec.dtype))

    t = _laid_out(draw, shape, spec.layout)
    return _dressed(t, spec.device, spec.kind, spec.grad)


def weights(shape: tuple[int, ...], dtype: torch.dtype, *seed: object) -> Tensor:
    """Integer weights 1..3 for a weighted-sum loss: every gradient of a write is a
    sum of at most a few dozen of them, exact in every float dtype (bfloat16 holds
    the integers up to 256)."""
    gen = _generator("weights", shape, *seed)
    return torch.randint(1, 4, shape, generator=gen).to(dtype)
