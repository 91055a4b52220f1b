"""``clone``: ``y = x.clone(); y[index] = value``, the reference every recipe matches."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._record import OneLiner, RecipeRecord
from ._value import not_a_number, number_error, setitem_value

__all__ = ["RECORD", "clone_setitem"]


def clone_setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """``y = x.clone(); y[index] = value``: the reference every recipe matches.

    For ints and slices autograd records the write as ``CopySlices`` and
    saves nothing for backward; with index tensors or a mask it is
    ``IndexPutBackward0``, which saves them. The index is planned only if setitem refuses it, so that the
    error is the one every recipe gives; on small tensors planning costs more
    than the write. Pitfall: under ``torch.func.vmap`` the write fails with a
    batched ``value`` or index tensor and an unbatched ``x``, since the clone
    has no batch dimension to receive it, and with a batched mask in every
    case (torch 2.13's setitem cannot batch a boolean index); ``where`` takes
    both.

    >>> clone_setitem(torch.zeros(2, 2), (0, 1), 3.0)
    tensor([[0., 3.],
            [0., 0.]])
    >>> x = torch.zeros(3, requires_grad=True)
    >>> [type(clone_setitem(x, i, 3.0).grad_fn).__name__ for i in (1, [1])]
    ['CopySlices', 'IndexPutBackward0']
    >>> torch.func.vmap(lambda v: clone_setitem(torch.zeros(3), 0, v))(torch.ones(2))
    Traceback (most recent call last):
        ...
    RuntimeError: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that has more elements than `self`. ...
    >>> masks = torch.tensor([[True, False], [False, True]])
    >>> torch.func.vmap(lambda x, m: clone_setitem(x, m, 1.0))(torch.zeros(2, 2), masks)
    Traceback (most recent call last):
        ...
    RuntimeError: vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing with a boolean mask.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.layout is not torch.strided:
        IndexPlan.of(x, index)  # torch's own message for sparse tensors
    y = x.clone()
    try:
        y[index] = value
    except (IndexError, RuntimeError, TypeError, ValueError, NotImplementedError):
        # Plan the index only now: it costs more than the write itself on
        # small tensors, and gives the same clear error every recipe gives.
        if (not_number := not_a_number(value)) is not None:
            raise not_number from None  # the message every recipe gives
        if number_error(x, value) is not None:
            raise  # setitem's own, which comes first
        if isinstance(value, Tensor) and value.layout is not torch.strided:
            raise  # torch refuses the value's layout before it reads the index
        try:
            plan = IndexPlan.of(x, index)
            v = setitem_value(x, index, plan, value)  # a tensor: no numbers asked for
            if isinstance(v, Tensor) and v.numel() != 1:
                plan.fit(v)
        except Exception as clear:
            raise clear from None
        raise
    return y


def inplace_on_clone(x: Tensor, index: Any, value: Any) -> Tensor:
    """The floor as one step: the in-place write on one plain clone, no recipe code.

    >>> inplace_on_clone(torch.zeros(3), 1, 2.0)
    tensor([0., 2., 0.])
    """
    y = x.clone()
    y[index] = value
    return y


RECORD = RecipeRecord(
    name="clone",
    write=clone_setitem,
    planned=False,
    line="y = x.clone(); y[i] = v",
    pitfall="fails under `vmap` with a batched mask, and with a batched value or index "
    "tensor when `x` is not batched",
    pitfall_claims=(),
    one_liner=OneLiner(
        "inplace_on_clone", inplace_on_clone, {"basic": "y = x.clone(); y[index] = v"}
    ),
    not_under_transforms="vmap refuses setitem into a clone for a batched value or index, "
    "and through a batched mask",
)
