"""``index_put``: out-of-place ``Tensor.index_put`` on the positions of the index."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._indexing import IndexPlan
from ._one_liners import form_of, scalar
from ._record import OneLiner, RecipeRecord

__all__ = ["RECORD", "index_put", "index_put_indices", "writes_flat"]

_LONG = torch.long
#: ``aten::index_put``, which takes ``None`` for a full slice (``Tensor.index_put`` does not).
_INDEX_PUT = torch.ops.aten.index_put.default


def _index_put(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """Out-of-place ``Tensor.index_put`` on the positions of the index.

    A boolean mask tensor, and index tensors alone (``x[t]``, ``x[t, u]``),
    go to ``index_put`` as they are; ints and slices as an ``arange`` per
    slice and a tensor per int, with the leading full slices as ``None``
    (``x[:]`` and ``x[...]``: one ``arange``); other indices (an index tensor
    beside an int, a slice or ``...``, such as ``x[1, t]`` or ``x[:, t]``; a
    Python bool; any index of a 0-d ``x``) as flat positions, although
    setitem hands ``x[:, t] = v`` to ``index_put_`` as ``[None, t]``. With
    duplicate positions, values and gradients match
    setitem's on the CPU, as both run the same kernel in the same order: the
    last write wins (torch's documentation leaves it undefined for
    ``index_put``); ``accumulate=True`` adds them instead. It saves its index
    tensors for backward: 8 bytes per element of each int64 index tensor (4
    for int32; a mask, one byte per element), which for flat positions is 8
    bytes per written position.

    >>> index_put(torch.zeros(4), torch.tensor([3, 0]), torch.tensor([1.0, 2.0]))
    tensor([2., 0., 0., 1.])
    >>> masks = torch.tensor([[True, False], [False, True]])
    >>> torch.func.vmap(lambda x, m: index_put(x, m, 1.0))(torch.zeros(2, 2), masks)
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedIndexError: recipe 'index_put' cannot write through a mask batched by torch.func.vmap (torch 2.13 has no vmap rule for index_put with a boolean index: its shape depends on each example's mask); use 'where'
    """
    v = value
    if v.numel() != 1:  # torch's shape error when it does not fit
        plan.fit(v)
    if plan.kind == "boolean" and x.ndim:  # a 0-d mask of a 0-d x: flat, below
        # one element as 0-d: a (1, 1) value's gradient must come back as (1, 1)
        return x.index_put((plan.index[0],), plan.fit(v) if v.numel() != 1 else v.reshape(()))
    indices = index_put_indices(plan)
    source = _source(plan, v)
    if writes_flat(plan) and x.ndim != 1:  # flat positions, for x.reshape(-1)
        return x.flatten().index_put(indices, source).view_as(x)
    if indices[0] is None:  # leading full slices, as setitem writes them
        return _INDEX_PUT(x, list(indices), source)  # type: ignore[no-any-return]
    return x.index_put(indices, source)


def index_put_indices(plan: IndexPlan) -> tuple[Tensor | None, ...]:
    """The index as ``aten::index_put`` takes it: one entry per leading
    dimension, up to the last one the index restricts; together they write
    what ``x[index]`` names (less ``None``'s axes).

    For ints and slices: ``None`` for each full slice before the first
    int or partial slice (the form in which setitem hands ``x[:, t] = v``
    to ``aten::index_put_``, ``[None, t]``; ``Tensor.index_put`` takes no
    ``None``, so call ``torch.ops.aten.index_put``), then an ``arange``
    per slice and a one-element tensor per int (0-d where no slice is
    left beside it), shaped to broadcast together; ``x[:]`` and ``x[...]``
    give one ``arange`` over the first dimension. Index tensors alone are
    returned as they are; masks, other indices and any index of a 0-d
    ``x`` give their flat positions, for ``x.reshape(-1)``.

    >>> index_put_indices(IndexPlan.of(torch.zeros(3, 4), (slice(1, None), 2)))
    (tensor([1, 2]), tensor([2]))
    >>> index_put_indices(IndexPlan.of(torch.zeros(3, 4), (slice(None), 2)))
    (None, tensor(2))
    >>> index_put_indices(IndexPlan.of(torch.zeros(3, 4), (slice(None), slice(1, None, 2))))
    (None, tensor([1, 3]))
    """
    if plan.kind != "basic" or len(plan.shape) == 0:  # (``not Size``: Dynamo cannot trace it)
        tensors = plan.index_tensors()
        return tensors if tensors is not None else (plan.flat_positions(flatten=True),)
    steps, device = plan.steps, plan.device
    if steps and all(d == 0 and type(w) is int for d, w in steps):  # x[i, j]: one per int
        return tuple(
            torch.scalar_tensor(w, dtype=_LONG, device=device)  # type: ignore[arg-type]
            for _, w in steps  # ints only, checked above
        )
    # the dimension of x each step's dim names: steps count dims left after earlier ones
    by_dim: dict[int, int | slice] = {}
    removed = 0
    for dim, where in steps:
        by_dim[dim + removed] = where
        if type(where) is not slice:
            removed += 1
    if not by_dim:  # every slice is full: one arange, for the first dimension
        by_dim[0] = slice(0, plan.shape[0], 1)
    first, last = min(by_dim), max(by_dim)  # the dimensions that need a tensor
    kept = sum(1 for d in range(first, last + 1) if type(by_dim.get(d, slice(None))) is slice)
    out: list[Tensor | None] = [None] * first
    k = 0
    for d in range(first, last + 1):
        where = by_dim.get(d, slice(0, plan.shape[d], 1))
        if type(where) is slice:
            grid = torch.arange(where.start, where.stop, where.step, device=device)
            k += 1
            if k != kept:
                grid = grid.view((grid.shape[0],) + (1,) * (kept - k))
            out.append(grid)
        elif kept:  # (1,), which broadcasts as 0-d does beside a grid: under
            # torch.compile, a 0-d index after an arange breaks index_put's backward
            out.append(torch.full((1,), where, dtype=_LONG, device=device))
        else:
            out.append(torch.scalar_tensor(where, dtype=_LONG, device=device))
    return tuple(out)


def writes_flat(plan: IndexPlan) -> bool:
    """Whether :func:`index_put_indices` are flat positions, for ``x.reshape(-1)``.

    >>> writes_flat(IndexPlan.of(torch.zeros(3, 4), 1))
    False
    """
    if plan.kind == "basic":
        return len(plan.shape) == 0
    return plan.kind == "boolean" or plan.index_tensors() is None


def _source(plan: IndexPlan, value: Tensor) -> Tensor:
    """``value`` in the shape :func:`index_put_indices` write (a single element as 0-d).

    >>> _source(IndexPlan.of(torch.zeros(2, 3), (None, 1)), torch.ones(1, 3))
    tensor([1., 1., 1.])
    """
    if value.numel() == 1:
        return value if value.ndim == 0 else value.reshape(())
    fitted = plan.fit(value)
    if writes_flat(plan):
        return fitted.reshape(-1)
    if plan.kind == "basic":
        return fitted.reshape(plan.written_shape)
    return fitted


def _raw_index_put(x: Tensor, index: Any, v: Any) -> Tensor:
    form = form_of(index)
    if form == "row":
        return x.index_put((torch.tensor([index]),), scalar(v, x))
    if form == "element":
        i, j = index
        return x.index_put((torch.tensor(i), torch.tensor(j)), scalar(v, x))
    if form == "slice":
        s = index[1]
        rows = torch.arange(x.shape[0])[:, None]
        return x.index_put((rows, torch.arange(s.start, x.shape[1], s.step)), scalar(v, x))
    if form == "list":
        return x.index_put((torch.tensor(index),), scalar(v, x))
    return x.index_put((index,), scalar(v, x))  # a mask or an index tensor


RECORD = RecipeRecord(
    name="index_put",
    write=_index_put,
    line="y = x.index_put((torch.tensor([i]),), v)",
    pitfall="duplicate positions: one write is kept, undefined which, yet every value gets "
    "a gradient (`accumulate=True` adds)",
    pitfall_claims=("index_put_duplicate_positions_value_grad",),
    duplicates="kernel order",
    not_with_batched_masks="torch 2.13 has no vmap rule for index_put with a boolean index: "
    "its shape depends on each example's mask",
    one_liner=OneLiner(
        "raw_index_put",
        _raw_index_put,
        {
            "basic": "x.index_put((torch.tensor([r]),), torch.tensor(v))",
            "boolean": "x.index_put((mask,), torch.tensor(v))",
            "index": "x.index_put((t,), torch.tensor(v))",
        },
    ),
)
index_put = RECORD.function
