"""``select_scatter``: a chain of ``select_scatter``/``slice_scatter``, one per int or slice."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._errors import NotApplicable
from ._one_liners import form_of, scalar
from ._record import OneLiner, RecipeRecord
from ._value import in_transform

__all__ = ["RECORD", "select_scatter"]


def _select_scatter(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """A chain of ``select_scatter``/``slice_scatter``, one per int or slice.

    Takes basic indices only (ints, slices, ``...``, ``None``); it raises
    ``TypeError`` for index tensors. Nothing is saved for backward but by a
    write of every element (below: ``torch.where`` saves its 0-d mask). Torch
    has no complex autograd for these two ops, so complex tensors are
    written as real pairs through ``torch.view_as_real``. An index that
    overwrites every element is written as ``torch.where(True, value, x)``,
    so that ``x`` stays in the graph (with a zero gradient, as setitem's).

    Torch pitfall, avoided here: under ``torch.func.vmap``, torch 2.13's
    ``select_scatter`` sends the written *source* ``x.shape[dim]`` times its
    gradient, even for a one-step write and whether or not ``x`` is batched
    (``slice_scatter`` is right). Inside any ``torch.func`` transform this
    recipe therefore writes each int step as ``slice_scatter`` over a slice
    of length one.

    >>> select_scatter(torch.zeros(2, 3), (1, slice(None, None, 2)), 1.0)
    tensor([[0., 0., 0.],
            [1., 0., 1.]])
    >>> select_scatter(torch.zeros(3), torch.tensor([0, 2]), 1.0)
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedIndexError: recipe 'select_scatter' takes only ints, slices, '...' and None, not an index with tensors (advanced index); use 'index_put' or 'where'
    >>> select_scatter(torch.zeros(3), torch.tensor([True, False, True]), 1.0)
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedIndexError: recipe 'select_scatter' takes only ints, slices, '...' and None, not an index with tensors (boolean index); use 'index_put' or 'where'
    """
    if type(value) is float:  # as a user writes it: torch.full(shape, value), x's dtype and device
        part = x.new_full(plan.written_shape, value)
    else:
        part = plan.fit(value)  # torch's shape error if it does not fit
        for axis in reversed(plan.new_axes):
            part = part.squeeze(axis)
    steps = plan.steps
    if not steps:  # the whole tensor is overwritten: keep x in the graph
        every = torch.ones((), dtype=torch.bool, device=x.device)
        return torch.where(every, part.expand(x.shape), x)
    exact_vmap = in_transform()
    if len(steps) == 1 and not exact_vmap and not x.dtype.is_complex:  # one step: one call
        dim, where_ = steps[0]
        if type(where_) is slice:
            return x.slice_scatter(part, dim, where_.start, where_.stop, where_.step)
        return x.select_scatter(part, dim, where_)
    if x.dtype.is_complex:  # select_scatter has no complex autograd: write real pairs
        pairs = torch.view_as_real(x.resolve_conj())
        written = _scatter_steps(pairs, steps, torch.view_as_real(part.resolve_conj()), exact_vmap)
        return torch.view_as_complex(written)
    return _scatter_steps(x, steps, part, exact_vmap)


def _scatter_steps(base: Tensor, steps: tuple[Any, ...], part: Tensor, exact_vmap: bool) -> Tensor:
    """Write ``part`` (of the shape ``base[steps]`` selects) into ``base``
    through a chain of select/slice steps."""
    (dim, where_), rest = steps[0], steps[1:]
    if isinstance(where_, slice):
        if rest:
            inner = base[(slice(None),) * dim + (where_,)]
            src = _scatter_steps(inner, rest, part, exact_vmap)
        else:
            src = part
        return base.slice_scatter(src, dim, where_.start, where_.stop, where_.step)
    src = _scatter_steps(base.select(dim, where_), rest, part, exact_vmap) if rest else part
    if exact_vmap:  # select_scatter's gradient is wrong under vmap; a 1-long slice is not
        return base.slice_scatter(src.unsqueeze(dim), dim, where_, where_ + 1)
    return base.select_scatter(src, dim, where_)


def _raw_select_scatter(x: Tensor, index: Any, v: Any) -> Tensor:
    form = form_of(index)
    src = v if isinstance(v, Tensor) else None
    if form == "row":
        return x.select_scatter(
            torch.full((x.shape[1],), v, dtype=x.dtype) if src is None else src, 0, index
        )
    if form == "element":
        i, j = index
        return x.select_scatter(x[i].select_scatter(scalar(v, x), 0, j), 0, i)
    if form == "slice":
        s = index[1]
        width = len(range(s.start, x.shape[1], s.step))
        return x.slice_scatter(
            torch.full((x.shape[0], width), v, dtype=x.dtype), 1, s.start, None, s.step
        )
    raise NotApplicable("select_scatter takes only ints and slices")


RECORD = RecipeRecord(
    name="select_scatter",
    write=_select_scatter,
    takes_numbers=True,
    index_kinds=frozenset({"basic"}),
    line="y = x.select_scatter(v, 0, i)",
    pitfall="ints and slices only; under `vmap` this line's gradient to the value is "
    "`x.shape[dim]` times too large (torch 2.13 bug; the package's recipe avoids it)",
    pitfall_claims=("select_scatter_vmap_grad_scaled",),
    one_liner=OneLiner(
        "raw_select_scatter",
        _raw_select_scatter,
        {"basic": "x.select_scatter(torch.full((C,), v), 0, r)"},
    ),
    not_under_transforms="autograd through vmap counts x's gradient twice for a chain of "
    "select_scatter(x, f(x.select(...))) (see the compatibility matrix)",
)
select_scatter = RECORD.function
