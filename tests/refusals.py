"""The one refusal rule every test uses: what each recipe's record says it refuses.

A recipe that refuses a write raises :class:`~inplace_recipes.NotApplicable`
naming itself; whether it may is read from its record
(:meth:`RecipeRecord.refusal <inplace_recipes.recipes.RecipeRecord.refusal>`),
never recomputed here, so a new recipe's refusals are tested with no edit.
"""

from __future__ import annotations

from typing import Any

import torch

from inplace_recipes.recipes import RECORDS


def refused(name: str, x: torch.Tensor, index: Any, value: Any) -> bool:
    """Whether recipe ``name`` refuses ``x[index] = value`` by design (``False`` for
    what is not a recipe, such as ``at``). Call it where torch's setitem takes the write."""
    record = RECORDS.get(name)
    return record is not None and record.refusal(x, index, value) is not None


def refused_with_grad(name: str, x: torch.Tensor, index: Any, value: Any) -> bool:
    """:func:`refused` for ``value`` made to require grad (where it can)."""
    if isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
        value = value.detach().requires_grad_(True)
    return refused(name, x, index, value)
