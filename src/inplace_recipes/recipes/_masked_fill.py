"""``masked_fill``: ``x.masked_fill(mask, value)``, for a single value."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._errors import NotApplicable
from ._one_liners import form_of, marked
from ._record import OneLiner, RecipeRecord

__all__ = ["RECORD", "masked_fill"]


def _masked_fill(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """``x.masked_fill(mask, value)``.

    Writes a single value (a number or a one-element tensor, which receives
    its gradient); it raises ``ValueError`` for a tensor of values. A
    one-element value of another dtype than ``x``'s that requires grad,
    written through ints and slices, is written with ``torch.where`` instead:
    setitem sums its gradient over the written positions in the value's own
    dtype (``copy_`` casts after it broadcasts), which ``masked_fill`` cannot.

    Duplicates: a mask names each position once, so with index tensors that
    name a position twice a value that requires grad would get a smaller
    gradient than setitem gives it. In eager mode the recipe checks and
    refuses that case (pointing to ``index_put``); the check reads the
    index's data, so it cannot run while ``torch.compile`` traces or on an
    index batched by ``vmap``, and there the gradient counts each position
    once. Values and forward-mode derivatives are right in every case.

    Torch pitfall: under ``torch.func.vmap``, torch 2.13's ``index_fill``
    with an unbatched ``x`` and a batched one-element value writes the last
    batch's value into every batch (a batched ``x`` is right); this recipe
    does not use ``index_fill``.

    >>> masked_fill(torch.zeros(2, 3), (slice(None), 1), 9.0)
    tensor([[0., 9., 0.],
            [0., 9., 0.]])
    >>> masked_fill(torch.zeros(3), [0, 1], torch.tensor([1.0, 2.0]))
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedValueError: recipe 'masked_fill' writes a single value, not a value of shape [2]; use 'where' or 'index_put'
    >>> masked_fill(torch.zeros(3), torch.tensor([0, 0]), torch.tensor(1.0, requires_grad=True))
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedIndexError: recipe 'masked_fill' cannot write one value that requires grad to duplicate positions: setitem sends it one gradient per index entry, a mask one per position. Use recipe 'where' or 'index_put' (exact), or, to add rather than overwrite, at(x)[index].add(value) or x.index_put(indices, value, accumulate=True)
    """
    if type(value) is float:
        return x.masked_fill(plan.mask(), value)
    if value.numel() != 1:  # one value of another dtype that requires grad, laid over x[index]
        return torch.where(plan.mask(), plan.spread(value), x)  # by setitem's rule: cast last
    return x.masked_fill(plan.mask(), value.reshape(()))


def _raw_masked_fill(x: Tensor, index: Any, v: Any) -> Tensor:
    if isinstance(v, Tensor) and v.numel() != 1:
        raise NotApplicable("masked_fill writes a single value")
    mask = index if form_of(index) == "boolean" else marked(x, index, torch.bool)
    return x.masked_fill(mask, v)


RECORD = RecipeRecord(
    name="masked_fill",
    write=_masked_fill,
    takes_numbers=True,
    single_value=True,
    instead="'where' or 'index_put'",
    duplicates="refused for a value that requires grad",
    line="y = x.masked_fill(m, v)",
    pitfall="one value only, not a tensor of values",
    pitfall_claims=(),
    one_liner=OneLiner(
        "raw_masked_fill",
        _raw_masked_fill,
        {
            "basic": "m = torch.zeros_like(x, dtype=torch.bool); m[r] = True; x.masked_fill(m, v)",
            "boolean": "x.masked_fill(mask, v)",
            "index": "m = torch.zeros_like(x, dtype=torch.bool); m[t] = True; x.masked_fill(m, v)",
        },
    ),
    not_under_transforms="index_fill under vmap writes the last batch's fill value everywhere",
)
masked_fill = RECORD.function
