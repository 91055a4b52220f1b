"""``mask``: the arithmetic blend ``x * (1 - m) + value * m``, the classic answer."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._one_liners import form_of, marked
from ._record import OneLiner, RecipeRecord

__all__ = ["RECORD", "mask_blend"]


def _mask_blend(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """Arithmetic blend ``x * (1 - m) + value * m`` with a mask ``m``.

    The classic answer, made general and dtype-safe: the mask is built in
    torch with ``x``'s dtype and device (a NumPy mask turns float32 into
    float64).

    Pitfalls: multiplying by zero does not erase ``inf`` or ``nan``
    (``inf * 0`` is ``nan``). A non-finite one-element value turns every
    element that is *not* written into ``nan`` (the written ones are right):
    ``mask_blend(torch.zeros(3), 0, float("inf"))`` is ``[inf, nan, nan]``;
    with index tensors only a Python float into float32 or float64 does (a
    tensor value is scattered into zeros first). A value tensor of several
    entries with non-finite ones does the same wherever the blend lays a
    copy of them over unwritten elements (for an index of ints and whole
    slices, such as a row or a column, every other row or column; for
    other slices, a mask or index tensors, nowhere, as it is scattered
    into zeros). A non-finite entry of ``x`` at a written position turns that
    element into ``nan``. Float16 overflow is a non-finite value too. A
    written ``-0.0`` comes out as ``0.0`` (``0.0 + -0.0`` is ``0.0``; the
    two compare equal). For ints and slices (and index tensors with a Python
    number) the blend also builds and saves
    a full-size mask of ``x``'s dtype for backward (4 bytes an element in
    float32; two with a value that requires grad); for a mask, boolean
    masks (one byte an element), as for index tensors with a tensor value,
    which also save the written positions (8 bytes each).

    With index tensors that name a position twice, values and gradients match
    setitem's (the value is scattered first).

    >>> mask_blend(torch.ones(3), 1, 5.0)
    tensor([1., 5., 1.])
    """
    if type(value) is float:  # x * (1 - m) + value * m, the product in x's dtype
        # torch 2.13's forward AD gives add(..., alpha=float) a float64 tangent when
        # ``other`` is bool, or both are 0-d: weights in x's dtype, and 0-d as (1,)
        # (alpha, not a product, so that torch's overflow error for the value stays)
        if plan.kind == "boolean":
            mask = plan.mask()
            keep, put = ~mask, mask.to(x.dtype)
        else:
            keep, put = _weights(plan, x.dtype)
        if not x.ndim:
            return torch.add((x * keep).reshape(1), put.reshape(1), alpha=value).reshape(())
        return torch.add(x * keep, put, alpha=value)
    if plan.kind == "basic":
        keep, put = _weights(plan, x.dtype)
    else:  # bool weights: x's dtype wins the promotion (0-d values are tensors below)
        put = plan.mask()
        keep = ~put
    spread = plan.spread(value)
    if x.dtype == torch.bool:
        return (x & keep) | (spread & put)
    return x * keep + spread * put


def _weights(plan: IndexPlan, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """``(keep, put)``: zero and one where written, one and zero elsewhere, in ``dtype``.

    >>> _weights(IndexPlan.of(torch.zeros(3), 1), torch.float32)
    (tensor([1., 0., 1.]), tensor([0., 1., 0.]))
    """
    put = plan.written(dtype)
    return (~put if dtype is torch.bool else 1 - put), put


def _raw_mask(x: Tensor, index: Any, v: Any) -> Tensor:
    if form_of(index) == "boolean" and not isinstance(v, Tensor):
        blended: Tensor = x * ~index + v * index
        return blended
    m = marked(x, index, None)
    blended = x * (1 - m) + v * m
    return blended


RECORD = RecipeRecord(
    name="mask",
    write=_mask_blend,
    takes_numbers=True,
    line="k = m.to(x.dtype); y = x * (1 - k) + v * k",
    pitfall="a non-finite value turns every other element into `nan`; `inf`/`nan` at a written "
    "position become `nan`; saves a full-size mask (two if the value requires grad)",
    pitfall_claims=(
        "mask_blend_nonfinite_value_spreads_nan",
        "mask_blend_saves_two_masks_with_value_grad",
        "mask_blend_nonfinite_x_at_written_position_is_nan",
    ),
    not_exact="a value that is not finite in x's dtype (an infinity, a nan, or a number past "
    "that dtype's range) makes every unwritten element it is laid over nan (in a complex x, "
    "the written ones too), a non-finite element of x at a written position becomes nan, "
    "and a written -0.0 comes out as 0.0",
    one_liner=OneLiner(
        "raw_mask",
        _raw_mask,
        {
            "basic": "m = torch.zeros_like(x); m[r] = 1; x * (1 - m) + v * m",
            "boolean": "x * ~mask + v * mask",
            "index": "m = torch.zeros_like(x); m[t] = 1; x * (1 - m) + v * m",
        },
    ),
)
mask_blend = RECORD.function
