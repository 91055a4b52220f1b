"""The start every planned recipe shares, written once.

A planned recipe is a function ``write(x, index, value, plan)``; its record
(:class:`~inplace_recipes.recipes.RecipeRecord`) makes the public
``recipe(x, index, value)`` with :func:`planned`, which first

1. plans the index (:meth:`IndexPlan.of <inplace_recipes._indexing.IndexPlan.of>`:
   torch's errors for a bad int, slice or mask);
2. raises where setitem raises for a value of another dtype
   (:func:`~inplace_recipes.recipes._checks.refuse_other_dtype`);
3. writes a uint16, uint32 or uint64 ``x`` through a signed view, as setitem
   writes it (:func:`_wide_unsigned`);
4. refuses what the record says the recipe does not take, after torch's own
   index and shape errors (:meth:`RecipeRecord.refuse
   <inplace_recipes.recipes.RecipeRecord.refuse>`);

then calls ``write``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import Tensor

from .._indexing import IndexPlan, as_value
from ._checks import checked_value, refuse_other_dtype

if TYPE_CHECKING:
    from ._record import RecipeRecord

__all__ = ["SIGNED_OF", "Recipe", "Write", "planned"]

#: The signature every recipe shares.
Recipe = Callable[[Tensor, Any, Any], Tensor]
#: What a planned recipe's module writes: the recipe, given the planned index.
Write = Callable[[Tensor, Any, Any, IndexPlan], Tensor]

#: Unsigned dtypes that torch 2.13 can copy but not ``index_put``, ``scatter``,
#: ``masked_fill`` or add on the CPU: the recipes write them through a view as
#: the signed dtype of the same width (the same bits), see :func:`_wide_unsigned`.
SIGNED_OF = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def planned(record: RecipeRecord) -> Recipe:
    """``recipe(x, index, value)``: the shared start (the module docstring), then ``record.write``.

    The recipe takes the docstring, module and name (without its leading underscore) of
    ``record.write``.
    """
    write = cast(Write, record.write)
    refuses = record.refuses_anything

    def recipe(x: Tensor, index: Any, value: Any) -> Tensor:
        plan = IndexPlan.of(x, index)
        if isinstance(value, Tensor) and value.dtype is not x.dtype:
            refuse_other_dtype(x, index, plan, value)
        if x.dtype in SIGNED_OF:
            return _wide_unsigned(recipe, plan, x, index, value)
        if refuses:
            record.refuse(plan, x, value)
        return write(x, index, value, plan)

    recipe.__doc__ = write.__doc__
    recipe.__name__ = recipe.__qualname__ = write.__name__.lstrip("_")
    recipe.__module__ = write.__module__
    return recipe


def _wide_unsigned(recipe: Recipe, plan: IndexPlan, x: Tensor, index: Any, value: Any) -> Tensor:
    """``recipe`` on a uint16, uint32 or uint64 ``x``, as setitem writes it.

    Ints, slices, ``...``, ``None``, 0-d integer tensors and a lone bool go
    through the recipe on a view of ``x`` as the signed dtype of the same
    width (its kernels exist; integers have no gradient). A mask or index
    tensors go to setitem itself, which raises its ``NotImplementedError``
    naming the kernel and dtype where torch lacks them, as on the CPU, after
    torch's own index and shape errors.

    >>> from inplace_recipes import mask_blend, where
    >>> mask_blend(torch.zeros(3, dtype=torch.uint16), 1, 65535)
    tensor([    0, 65535,     0], dtype=torch.uint16)
    >>> where(torch.zeros(2, dtype=torch.uint32), torch.tensor([True, False]), 1)
    Traceback (most recent call last):
        ...
    NotImplementedError: "masked_fill" not implemented for 'UInt32'
    """
    lone_bool = index is True or index is False  # setitem copies or skips: no kernel
    if not lone_bool and any(
        isinstance(i, Tensor) and (i.ndim or i.dtype == torch.bool) for i in plan.index
    ):
        checked_value(plan, x, value)  # torch's index and shape errors come first
        y = x.clone()
        y[index] = value if type(value) in (bool, int, float) else as_value(value, x)
        return y
    signed = SIGNED_OF[x.dtype]
    written = recipe(x.view(signed), index, as_value(value, x).view(signed))
    return written.view(x.dtype)
