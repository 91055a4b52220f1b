"""The checks recipes share: setitem's rules for the value's dtype and for duplicates.

Every recipe casts a value the way setitem casts it and raises where setitem
raises (:func:`refuse_other_dtype`); :func:`~inplace_recipes.at` uses the
same rule for ``min`` and ``max``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan, as_value

__all__ = [
    "FLOAT_DTYPES",
    "checked_value",
    "in_transform",
    "plain_float",
    "refuse_other_dtype",
]

#: Dtypes that a Python float is written into exactly as setitem writes it,
#: so the recipes hand it to torch as a number, with no tensor to build.
FLOAT_DTYPES = (torch.float32, torch.float64)

_current_level = torch._C._functorch.maybe_current_level


def checked_value(plan: IndexPlan, x: Tensor, value: Any) -> Tensor:
    """The value cast to ``x``'s dtype; torch's shape error when it does not fit."""
    v = as_value(value, x)
    if type(value) is not float and v.numel() != 1:  # one element always fits
        plan.fit(v)
    return v


def plain_float(x: Tensor, value: Any) -> bool:
    """Whether ``value`` is a Python float that torch can take as it is."""
    return type(value) is float and x.dtype in FLOAT_DTYPES


def in_transform() -> bool:
    """Whether a ``torch.func`` transform (``vmap``, ``grad``, ``jvp``, ...) is active."""
    return _current_level() is not None


def _setitem_casts(x: Tensor, index: Any, plan: IndexPlan, value: Tensor) -> bool:
    """Whether setitem casts a tensor ``value`` of another dtype to ``x``'s (else it raises).

    Setitem writes ints, slices, ``...`` and ``None`` (and a lone Python
    bool) with ``copy_``, which casts. With an index tensor (a list, an
    array, a 0-d bool tensor or a bool inside a tuple included) it calls
    ``index_put_``, which requires equal dtypes, except that ``index_put_``
    hands one mask of at least one dimension and a one-element value on the
    CPU to ``masked_fill_``, which casts:

    >>> plan = IndexPlan.of(torch.zeros(3), torch.tensor([0, 2]))
    >>> _setitem_casts(torch.zeros(3), torch.tensor([0, 2]), plan, torch.tensor(1.0).double())
    False
    """
    if plan.kind == "basic" or index is True or index is False:
        return True
    tensors = [i for i in plan.index if isinstance(i, Tensor) and (i.ndim or i.dtype is torch.bool)]
    if not tensors:  # several '...': no tensor, a copy
        return True
    if value.numel() != 1 or value.device.type != "cpu" or len(tensors) != 1:
        return False
    mask = tensors[0]
    return mask.ndim > 0 and mask.dtype is torch.bool and mask.device == x.device


def _dtype_mismatch(x: Tensor, value: Tensor) -> RuntimeError:
    """Torch's own error for ``index_put_`` of a ``value.dtype`` value into ``x``, with a fix."""
    try:
        empty = torch.empty(0, dtype=torch.long)
        torch.empty(0, dtype=x.dtype).index_put_((empty,), torch.empty(0, dtype=value.dtype))
        message = f"Index put requires the source and destination dtypes match, got {x.dtype} and {value.dtype}"
    except RuntimeError as torch_error:
        message = str(torch_error)
    return RuntimeError(
        f"{message} (setitem casts a tensor value only for ints and slices, or for "
        "one element written through a mask; write value.to(x.dtype))"
    )


def refuse_other_dtype(x: Tensor, index: Any, plan: IndexPlan, value: Any) -> None:
    """Raise where setitem raises for a tensor ``value`` of another dtype than ``x``'s.

    Every recipe calls it first (and :func:`~inplace_recipes.at`'s ``min`` and
    ``max`` on the dtype of their result).

    Outside ``torch.func`` transforms and ``torch.compile``, torch's own setitem
    writes the value into a scratch tensor of ``x``'s shape, so that a shape or
    index error torch checks first comes first, as in setitem; inside them the
    dtype error is raised at once.

    >>> from inplace_recipes import where
    >>> where(torch.zeros(3), [0, 2], torch.tensor(1.0, dtype=torch.float64))
    Traceback (most recent call last):
        ...
    RuntimeError: Index put requires the source and destination dtypes match, got Float for the destination and Double for the source. (setitem casts ...)
    """
    if not isinstance(value, Tensor) or value.dtype is x.dtype:
        return
    if value.is_complex() and not x.is_complex():
        return  # as_value's TypeError names the lost imaginary part
    if _setitem_casts(x, index, plan, value):
        return
    if not (in_transform() or torch.compiler.is_compiling()):
        scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        try:
            scratch[index] = value.detach()
        except RuntimeError as error:
            if "dtypes match" in str(error):
                raise _dtype_mismatch(x, value) from None
            raise
        return  # torch cast it after all: so do the recipes
    raise _dtype_mismatch(x, value)
