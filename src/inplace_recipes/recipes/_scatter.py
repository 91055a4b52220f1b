"""``scatter``: ``torch.scatter`` on the flat positions of the index."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._index_reading import _readable
from .._indexing import IndexPlan
from ._errors import NotApplicable
from ._one_liners import form_of
from ._record import OneLiner, RecipeRecord

__all__ = ["RECORD", "scatter"]

_LONG = torch.long


def _scatter(x: Tensor, index: Any, value: Any, plan: IndexPlan) -> Tensor:
    """``torch.scatter`` on the flat positions of the index.

    ``x.scatter(dim, positions, source)`` when the index writes along one
    dimension (one int or slice, or one index tensor over the first
    dimension: ``x.scatter(0, torch.full((1, C), r), v)`` for a row), and
    ``x.flatten().scatter(0, positions, source).view_as(x)`` otherwise; a
    mask's positions come from ``nonzero``, those of ints and slices from one
    ``arange`` per dimension they keep. With duplicate
    positions, values and gradients match setitem's on the CPU (the last
    write wins); ``scatter_reduce``/``scatter_add`` combine them instead.

    Pitfall of the one-liner: ``scatter`` takes no negative position and
    refuses one out of range with a ``RuntimeError``, where setitem counts ``-1`` from the end and raises
    ``IndexError``. The recipe therefore reads each index tensor's smallest and
    largest entries once (``torch.aminmax``: one pass over the index, none over
    ``x``), raises setitem's ``IndexError`` where one is out of range, and adds
    the dimension's size to negative entries (``torch.where``) only where there
    are any: one torch call more than ``x.scatter(0, t.unsqueeze(1).expand(-1, C), v)``.
    Index tensors over several dimensions give their flat positions the same way
    (a sum of each one's positions times its stride); no grid of ``x``'s size is
    built. Where the index's data cannot be read (under ``torch.compile`` or
    ``vmap``, on the meta device) torch's own indexing reads it:
    ``torch.arange(n)[t]`` per dimension.

    >>> scatter(torch.zeros(3), torch.tensor([False, True, True]), torch.tensor([4.0, 5.0]))
    tensor([0., 4., 5.])
    >>> masks = torch.tensor([[True, False], [False, True]])
    >>> torch.func.vmap(lambda x, m: scatter(x, m, 1.0))(torch.zeros(2, 2), masks)
    Traceback (most recent call last):
        ...
    inplace_recipes.recipes._errors.UnsupportedIndexError: recipe 'scatter' cannot write through a mask batched by torch.func.vmap (a mask's positions come from nonzero, which vmap cannot batch: its size depends on each example's mask); use 'where'
    """
    plain = type(value) is float
    along = _along_one_dim(plan)
    if along is not None:  # along one dimension: x.scatter(dim, index, source)
        dim, positions = along
        source = value if plain else _source(plan, value, dim)
        return x.scatter(dim, positions, source)
    positions = _flat_positions(plan)
    source = value if plain else plan.fit(value).reshape(-1)
    return x.flatten().scatter(0, positions, source).view_as(x)


def _rows(t: Tensor, size: int, device: torch.device) -> Tensor:
    """The positions an index tensor ``t`` names along a dimension of ``size``, as
    setitem reads them (negative ones from the end; torch's ``IndexError`` out of
    range), int64 and on ``device``: one pass over ``t`` where its data can be read.

    >>> _rows(torch.tensor([0, -1]), 3, torch.device("cpu"))
    tensor([0, 2])
    >>> _rows(torch.tensor([3]), 3, torch.device("cpu"))
    Traceback (most recent call last):
        ...
    IndexError: index 3 is out of bounds for dimension 0 with size 3
    """
    if t.device != device:
        t = t.to(device)
    if not (_readable(t) and t.numel()):
        return torch.arange(size, device=device)[t]  # torch reads it, with its checks
    low, high = torch.aminmax(t)
    lowest = int(low)
    if lowest < -size or int(high) >= size:
        torch.arange(size, device=device)[t]  # raises torch's own IndexError
    if t.dtype is not _LONG:
        t = t.long()
    return torch.where(t < 0, t + size, t) if lowest < 0 else t


def _flat_positions(plan: IndexPlan) -> Tensor:
    """Flat positions of ``x[index]``: for index tensors alone, the sum of each
    one's rows (:func:`_rows`) times its dimension's stride, then the trailing
    dimensions' offsets; every other index as the plan gives them."""
    tensors = plan.index_tensors()
    if tensors is None:
        if plan.kind == "basic" or (
            plan.kind == "boolean" and plan.index[0].ndim == len(plan.shape)
        ):
            return plan.flat_positions(flatten=True)  # aranges of the kept dims, or nonzero
        return plan.positions_per_dimension().reshape(-1)  # tensors beside slices, a row mask
    shape, device = plan.shape, plan.device
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    try:
        broadcast = torch.broadcast_tensors(*tensors)  # type: ignore[no-untyped-call]
    except RuntimeError:  # torch's own IndexError for tensors that do not broadcast
        return plan.flat_positions(flatten=True)
    flat: Tensor | None = None
    for d, t in enumerate(broadcast):
        term = _rows(t, shape[d], device) * strides[d]
        flat = term if flat is None else flat + term
    assert flat is not None  # index_tensors() holds at least one
    rest = shape[len(tensors) :]
    if rest:  # every element of the trailing dimensions, in row-major order
        trailing = torch.arange(rest.numel(), device=device).view(rest)
        flat = flat.view(flat.shape + (1,) * len(rest)) + trailing
    return flat.reshape(-1)


def _along_one_dim(plan: IndexPlan) -> tuple[int, Tensor] | None:
    """``(dim, index)`` for ``x.scatter(dim, index, src)`` when the index writes
    along one dimension: one int or slice (``src`` then has the shape of
    ``x[index]`` with that dimension kept, length one for an int), or one
    1-D index tensor over the first dimension; ``None`` otherwise (then
    scatter the flat positions into ``x.reshape(-1)``).

    >>> _along_one_dim(IndexPlan.of(torch.zeros(2, 3), (slice(None), slice(1, None))))
    (1, tensor([[1, 2],
            [1, 2]]))
    """
    shape, device = plan.shape, plan.device
    if plan.kind == "basic":
        steps = plan.steps
        if len(steps) != 1 or len(shape) == 0:
            return None
        dim, where = steps[0]
        if type(where) is slice:
            grid = torch.arange(where.start, where.stop, where.step, device=device)
            if len(shape) == 1:
                return dim, grid
            if dim != len(shape) - 1:
                grid = grid.view((-1,) + (1,) * (len(shape) - 1 - dim))
            kept = list(shape)
            kept[dim] = -1
            return dim, grid.expand(kept)
        ones = (*shape[:dim], 1, *shape[dim + 1 :])
        return dim, torch.full(ones, where, dtype=_LONG, device=device)
    tensors = plan.index_tensors()
    if tensors is None or len(tensors) != 1 or tensors[0].ndim != 1:
        return None
    rows = _rows(tensors[0], shape[0], device)  # setitem's reading: negatives, IndexError
    if len(shape) == 1:
        return 0, rows
    # ints, not torch.Size arithmetic: view and expand parse a Size slowly (torch 2.13)
    return 0, rows.view(-1, *(1,) * (len(shape) - 1)).expand(-1, *shape[1:])


def _source(plan: IndexPlan, value: Tensor, dim: int) -> Tensor:
    """``value`` in the shape :func:`_along_one_dim` writes along ``dim``.

    >>> _source(IndexPlan.of(torch.zeros(2, 3), 1), torch.tensor([1.0, 2.0, 3.0]), 0)
    tensor([[1., 2., 3.]])
    """
    fitted = plan.fit(value)
    if plan.kind != "basic":
        return fitted
    for axis in reversed(plan.new_axes):
        fitted = fitted.squeeze(axis)
    if type(plan.steps[0][1]) is not slice:
        fitted = fitted.unsqueeze(dim)
    return fitted


def _raw_scatter(x: Tensor, index: Any, v: Any) -> Tensor:
    form = form_of(index)
    rows, cols = x.shape
    if isinstance(v, Tensor) and v.ndim == 1 and form == "row":
        return x.scatter(0, torch.full((1, cols), index), v.unsqueeze(0))
    if isinstance(v, Tensor):
        raise NotApplicable("the raw scatter writes a number, or a row")
    if form == "row":
        return x.scatter(0, torch.full((1, cols), index), v)
    if form == "element":
        i, j = index
        return x.flatten().scatter(0, torch.tensor([i * cols + j]), v).view_as(x)
    if form == "slice":
        s = index[1]
        return x.scatter(1, torch.arange(s.start, cols, s.step).expand(rows, -1), v)
    if form == "boolean":
        return x.flatten().scatter(0, index.flatten().nonzero().squeeze(1), v).view_as(x)
    t = torch.tensor(index) if form == "list" else index
    return x.scatter(0, t.unsqueeze(1).expand(-1, cols), v)


_NEGATIVE_POSITIONS = (
    "scatter takes no negative position and raises RuntimeError out of range, so the "
    "recipe reads t's smallest and largest entries once (torch.aminmax), a pass over the "
    "index the one-liner skips"
)

RECORD = RecipeRecord(
    name="scatter",
    write=_scatter,
    takes_numbers=True,
    line="y = x.scatter(0, torch.tensor([i]), v.reshape(1))",
    pitfall="duplicate positions: one write is kept, undefined which, yet every value gets "
    "a gradient",
    pitfall_claims=("scatter_duplicate_positions_value_grad",),
    duplicates="kernel order",
    not_with_batched_masks="a mask's positions come from nonzero, which vmap cannot batch: "
    "its size depends on each example's mask",
    one_liner=OneLiner(
        "raw_scatter",
        _raw_scatter,
        {
            "basic": "x.scatter(0, torch.full((1, C), r), v)",
            "boolean": "x.flatten().scatter(0, mask.flatten().nonzero().squeeze(1), v).view_as(x)",
            "index": "x.scatter(0, t.unsqueeze(1).expand(-1, C), v)",
        },
    ),
    exactness_costs={
        "index": (1.25, _NEGATIVE_POSITIONS),
        "list": (1.25, _NEGATIVE_POSITIONS),
    },
)
scatter = RECORD.function
