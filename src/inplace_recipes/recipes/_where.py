"""``where``: ``torch.where(mask, value, x)``."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._one_liners import form_of, marked
from ._record import OneLiner, RecipeRecord

__all__ = ["RECORD", "where"]


def _where(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """``torch.where(mask, value, x)``.

    Pitfall: ``torch.where`` sends a zero gradient to the branch it did not
    select; if that branch was computed by an op whose derivative is infinite
    there (``sqrt`` at 0, ``log`` at 0), the op's backward makes it ``nan``.
    A second ``where`` on that op's *input*, before it runs, fixes it; one on
    its output does not. The same ``nan`` comes from overwriting such an
    element with any recipe or setitem (its gradient is zero too), and the
    same fix applies. Here both branches are inputs, so the recipe itself is
    safe. It saves the boolean mask (one byte per
    element) for backward, and, where it first spreads a value that requires
    grad with ``index_put`` (index tensors; a mask or slices and several
    values), the written positions too (8 bytes each). With index tensors that name a position twice,
    values and gradients match setitem's (the value is scattered first).

    >>> where(torch.ones(3), torch.tensor([True, False, True]), 0.0)
    tensor([0., 1., 0.])
    """
    if type(value) is float:
        return torch.where(plan.mask(), value, x)
    return torch.where(plan.mask(), plan.spread(value), x)


def _raw_where(x: Tensor, index: Any, v: Any) -> Tensor:
    mask = index if form_of(index) == "boolean" else marked(x, index, torch.bool)
    return torch.where(mask, v, x)


RECORD = RecipeRecord(
    name="where",
    write=_where,
    takes_numbers=True,
    line="y = torch.where(m, v, x)",
    pitfall="the unselected branch gets a zero gradient, `nan` where it came from an op with an "
    "infinite derivative (`sqrt` at 0), as does any overwritten element with every recipe: "
    "fix it with a second `where` on that op's input",
    pitfall_claims=("zero_gradient_into_sqrt_at_zero_is_nan",),
    one_liner=OneLiner(
        "raw_where",
        _raw_where,
        {
            "basic": "m = torch.zeros_like(x, dtype=torch.bool); m[r] = True; torch.where(m, v, x)",
            "boolean": "torch.where(mask, v, x)",
            "index": "m = torch.zeros_like(x, dtype=torch.bool); m[t] = True; torch.where(m, v, x)",
        },
    ),
)
where = RECORD.function
