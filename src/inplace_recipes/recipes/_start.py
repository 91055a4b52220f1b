"""The start every planned recipe shares, written once.

A planned recipe is a function ``write(x, index, value, plan)``; its record
(:class:`~inplace_recipes.recipes.RecipeRecord`) makes the public
``recipe(x, index, value)`` with :func:`planned`, which first

1. plans the index (:meth:`IndexPlan.of <inplace_recipes._indexing.IndexPlan.of>`:
   torch's errors for a bad int, slice or mask, after the error of a Python number that
   ``x``'s dtype cannot hold, which setitem raises first, and after a sparse value's
   error, which torch's kernels raise before they read the index (:func:`_layout_first`);
   into a meta ``x``, an index it refuses goes to setitem itself, as in 3);
2. for a lone ``False``, returns a copy of ``x`` after that number's error and the
   record's refusals, as setitem converts the value and then writes nothing, reading
   neither its shape, dtype nor device;
3. on the meta device, with an index tensor (or a mask of the wrong shape, which torch's
   meta kernels do not check), writes with setitem itself
   (:func:`_on_meta`);
4. makes the value what setitem makes of it, or raises setitem's error
   (:func:`~inplace_recipes.recipes._value.setitem_value`, the one rule for
   the value: ``write`` receives a tensor of ``x``'s dtype and device, or a
   float where the record says the recipe takes numbers);
5. writes a uint16, uint32 or uint64 ``x`` through a signed view, as setitem
   writes it (:func:`_wide_unsigned`);
6. refuses what the record says the recipe does not take, after torch's own
   index and shape errors (:meth:`RecipeRecord.refuse
   <inplace_recipes.recipes.RecipeRecord.refuse>`);

then calls ``write`` (where it raises an index tensor's ``IndexError``, a value that does
not fit raises torch's shape error instead, which torch checks first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._value import float_as_it_is, number_error, setitem_value

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
    numbers = record.takes_numbers
    # the refusals that any write may meet, and the one only a mask batched by vmap meets
    refuses = record.refuses_anything and not (
        record.not_with_batched_masks and record.refuses_only_batched_masks
    )
    batched_masks = bool(record.not_with_batched_masks)

    def recipe(x: Tensor, index: Any, value: Any) -> Tensor:
        try:
            plan = IndexPlan.of(x, index)
        except Exception:
            if isinstance(x, Tensor) and x.is_meta:
                return _on_meta(x, index, value)  # torch's meta kernels check less: setitem
            error = number_error(x, value)  # a number's error comes first, as in setitem
            if error is not None:
                raise error from None
            if isinstance(value, Tensor) and value.layout is not torch.strided:
                _layout_first(x, index, value)
            raise
        if index is False:
            if (error := number_error(x, value)) is not None:
                raise error
            if refuses:
                record.refuse(plan, value, None)  # what the record refuses, it refuses here too
            return x.clone()
        if plan.kind != "basic" and x.is_meta:
            return _on_meta(x, index, value)
        if (
            type(value) is float
            and numbers
            and float_as_it_is(x.dtype, value)
            and not plan.uint8_mask
        ):
            v: Tensor | float = value  # setitem_value's first case, without the call
        else:
            v = setitem_value(x, index, plan, value, numbers=numbers)
        if x.dtype in SIGNED_OF:
            return _wide_unsigned(recipe, plan, x, index, v)
        if refuses or (batched_masks and plan.mask_batched()):
            record.refuse(plan, value, v)
        try:
            return write(x, index, v, plan)
        except IndexError:
            if isinstance(v, Tensor) and v.numel() != 1:
                plan.fit(v)  # torch's shape error comes before an index tensor's bounds
            raise

    recipe.__doc__ = write.__doc__
    recipe.__name__ = recipe.__qualname__ = write.__name__.lstrip("_")
    recipe.__module__ = write.__module__
    return recipe


def _layout_first(x: Tensor, index: Any, value: Tensor) -> None:
    """Torch's error for a sparse (or other non-strided) ``value`` through an index it
    refuses: its kernels refuse the value's layout before they read the index, so
    setitem on a scratch tensor of ``x``'s shape raises what torch raises (a mask of
    the wrong shape with a sparse value: ``NotImplementedError``, not ``IndexError``).

    >>> from inplace_recipes import where
    >>> try:
    ...     where(torch.zeros(3), [False], torch.ones(1).to_sparse())
    ... except NotImplementedError as error:
    ...     print(type(error).__name__, str(error).split(" with ")[0])
    NotImplementedError Could not run 'aten::view'
    """
    scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    scratch[index] = value.detach()


def _on_meta(x: Tensor, index: Any, value: Any) -> Tensor:
    """A write through index tensors into a meta ``x``: setitem itself.

    A meta tensor has no data, so nothing a recipe computes can differ from
    setitem's result but its shape, dtype and device, and torch's meta kernels
    check no more than those (not a mask's count, nor the value's dtype for
    ``index_put_``): the recipes' forms that read an index's data (a mask's
    count, ``nonzero``) cannot run there, and setitem is the answer.

    >>> from inplace_recipes import where
    >>> where(torch.zeros(3, device="meta"), torch.tensor([True, False, True], device="meta"), 1.0)
    tensor(..., device='meta', size=(3,))

    It is the answer too for an index that torch's meta kernels take and its CPU ones
    refuse (a mask of the wrong shape):

    >>> where(torch.zeros(3, device="meta"), torch.tensor([True, False]), 1.0)
    tensor(..., device='meta', size=(3,))
    """
    y = x.clone()
    y[index] = value
    return y


def _wide_unsigned(recipe: Recipe, plan: IndexPlan, x: Tensor, index: Any, value: Any) -> Tensor:
    """``recipe`` on a uint16, uint32 or uint64 ``x``, as setitem writes it.

    ``value`` is already setitem's (:func:`~inplace_recipes.recipes._value.setitem_value`).
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
    v = value if isinstance(value, Tensor) else torch.scalar_tensor(value, dtype=x.dtype)
    if not lone_bool and any(
        isinstance(i, Tensor) and (i.ndim or i.dtype == torch.bool) for i in plan.index
    ):
        if v.numel() != 1:
            plan.fit(v)  # torch's index and shape errors come first
        y = x.clone()
        y[index] = v
        return y
    signed = SIGNED_OF[x.dtype]
    written = recipe(x.view(signed), index, v.view(signed))
    return written.view(x.dtype)
