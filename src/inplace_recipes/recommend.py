"""Which recipe to use for an index: the fastest one that is correct for it.

>>> import torch
>>> best_recipe(torch.zeros(3, 4), 1, 0.0)
'select_scatter'
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from .indexing import IndexPlan

__all__ = ["best_recipe"]


def best_recipe(x: Tensor, index: Any, value: Any) -> str:
    """The name in :data:`~inplace_recipes.RECIPES` to use for ``x[index] = value``.

    Rule: basic indices (ints, slices) use ``select_scatter``, which saves
    nothing for backward; a boolean mask uses ``masked_fill`` for a single
    value and ``where`` otherwise; index tensors use ``index_put``.
    """
    plan = IndexPlan.of(x, index)
    if plan.kind == "basic":
        return "select_scatter"
    if plan.kind == "mask":
        single = not isinstance(value, Tensor) or value.numel() == 1
        return "masked_fill" if single else "where"
    return "index_put"
