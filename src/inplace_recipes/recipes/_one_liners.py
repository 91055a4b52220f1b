"""What the one-liners share: the benchmark's write forms, and a mask as a user builds it.

A recipe's :class:`~inplace_recipes.recipes.OneLiner` is the torch call it
wraps, as a user writes it for the benchmark's writes (``x[i, j]``, ``x[r]``,
``x[:, 1::10]``, ``x[mask]``, ``x[t]`` and ``x[[a, b, c]]``): index tensors
are made in the call from the ints and slices of the index, as a recipe
must make them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ._errors import NotApplicable

__all__ = ["form_of", "marked", "scalar"]


def form_of(index: Any) -> str:
    """Which of the benchmark's own writes ``index`` is (not a parser: these six forms only).

    >>> form_of(3), form_of((slice(None), slice(1, None, 10))), form_of([1, 2])
    ('row', 'slice', 'list')
    """
    if type(index) is int:
        return "row"
    if type(index) is list:
        return "list"
    if isinstance(index, Tensor):
        return "boolean" if index.dtype == torch.bool else "index"
    if type(index) is tuple and len(index) == 2:
        if all(type(i) is int for i in index):
            return "element"
        if index[0] == slice(None) and type(index[1]) is slice:
            return "slice"
    raise NotApplicable(f"no raw one-liner for the index {index!r}")


def scalar(v: Any, x: Tensor) -> Tensor:
    """``v`` as a tensor, as a user writes ``torch.tensor(v)`` for ``x``'s dtype."""
    return v if isinstance(v, Tensor) else torch.tensor(v, dtype=x.dtype)


def marked(x: Tensor, index: Any, dtype: torch.dtype | None) -> Tensor:
    """``m = torch.zeros_like(x, dtype=dtype); m[index] = 1``, as a user writes a mask."""
    m = torch.zeros_like(x, dtype=dtype)
    m[index] = 1
    return m
