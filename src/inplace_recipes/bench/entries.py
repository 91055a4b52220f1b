"""What the benchmark measures: the writes, and what each entry runs in their place.

The graph is the classic one, ``c = a + b; c[index] = value; c.sum().backward()``,
with ``c[index] = value`` replaced by each entry:

- ``"inplace"``: the in-place write on the non-leaf ``c``, the baseline;
  ``"inplace_again"`` is the very same entry timed a second time, a control
  that the self-consistency check compares with it;
- ``"plain_clone"``: a plain ``x.clone()``, timed alone (the clone floor);
- ``"inplace_on_clone"``: ``y = c.clone(); y[index] = value`` with no recipe
  code, the floor as one step and the raw one-liner of the ``clone`` recipe;
- every recipe in :data:`~inplace_recipes.RECIPES`;
- ``"raw_<recipe>"``: the torch call the recipe wraps, written as a user
  would, index tensors made in the call from the ints and slices of the
  index (a mask or an index tensor is used as given), see :data:`ONE_LINERS`;
- ``"at"``: ``at(c)[index].set(value)``, which runs the recipe
  :func:`~inplace_recipes.updates.default_method` picks.

>>> shape_for(10**6)
(1000, 1000)
>>> RAW_OF["where"], RAW_OF["clone"]
('raw_where', 'inplace_on_clone')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..recipes import RECIPES, NotApplicable, inplace_setitem
from ..updates import at

__all__ = [
    "BASELINES",
    "COLD",
    "ENTRIES",
    "EXACTNESS_COSTS",
    "INDEX_ONE_LINERS",
    "INSTRUCTION_WRITES",
    "MASK_ONE_LINERS",
    "ONE_LINERS",
    "OVERHEAD_ENTRIES",
    "OVERHEAD_WRITES",
    "RAW_OF",
    "WRITES",
    "cold_indices",
    "forward_fn",
    "raw_fn",
    "shape_for",
    "write_fn",
]


def shape_for(size: int) -> tuple[int, int]:
    """The 2-D shape used for ``size`` elements: rows x columns, columns a power of ten.

    >>> shape_for(100), shape_for(1_000_000)
    ((10, 10), (1000, 1000))
    """
    digits = max(1, round(math.log10(size)))
    cols = 10 ** math.ceil(digits / 2)
    return size // cols, cols


def _write_element(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return (shape[0] // 2, shape[1] // 2), 0.0


def _write_row(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return shape[0] // 2, 0.0


def _write_slice(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return (slice(None), slice(1, None, 10)), 0.0


def _write_mask(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    n = shape[0] * shape[1]
    gen = torch.Generator().manual_seed(0)
    picked = torch.randperm(n, generator=gen)[: max(1, n // 100)]
    mask = torch.zeros(n, dtype=torch.bool)
    mask[picked] = True
    return mask.view(shape).to(like.device), 0.0


def _write_value_grad(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    gen = torch.Generator().manual_seed(1)
    value = torch.rand(shape[1], generator=gen, dtype=like.dtype).to(like.device)
    return shape[0] // 2, value.requires_grad_(True)


def _write_index(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    rows = shape[0]
    return torch.tensor([rows // 4, rows // 2, 3 * rows // 4], device=like.device), 0.0


def _write_list(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    rows = shape[0]
    return [rows // 4, rows // 2, 3 * rows // 4], 0.0


#: The write kinds: name -> ``make(shape, like) -> (index, value)``.
WRITES: dict[str, Callable[[tuple[int, int], Tensor], tuple[Any, Any]]] = {
    "element": _write_element,  # x[r // 2, c // 2] = 0.0
    "row": _write_row,  # x[r // 2] = 0.0
    "slice": _write_slice,  # x[:, 1::10] = 0.0 (10% of elements, strided)
    "mask": _write_mask,  # x[mask] = 0.0, a random mask with 1% True
    "value_grad": _write_value_grad,  # x[r // 2] = v, v a row that requires grad
    "index": _write_index,  # x[t] = 0.0, t an index tensor of three rows
    "list": _write_list,  # x[[a, b, c]] = 0.0: three rows, as a list
}

#: The writes of the overhead comparison (raw one-liners and ``at()``).
OVERHEAD_WRITES: tuple[str, ...] = ("element", "row", "slice", "mask", "index", "list")
#: The writes whose instructions are counted, each also *cold*: with a new
#: index (another row, another slice, a new tensor or list) on every call.
INSTRUCTION_WRITES: tuple[str, ...] = OVERHEAD_WRITES
COLD = "cold "  #: the prefix of a cold write's name in the instruction counts


def cold_indices(write: str, shape: tuple[int, int], like: Tensor, n: int) -> list[Any]:
    """``n`` different indices of the write ``write``, new objects, for cold calls.

    >>> cold_indices("row", (10, 100), torch.zeros(()), 3)
    [1, 2, 3]
    >>> cold_indices("slice", (10, 100), torch.zeros(()), 2)
    [(slice(None, None, None), slice(2, None, 10)), (slice(None, None, None), slice(3, None, 10))]
    """
    rows, cols = shape
    out: list[Any] = []
    for k in range(1, n + 1):
        r = k % rows
        if write == "element":
            out.append((r, (k * 7) % cols))
        elif write in ("row", "value_grad"):
            out.append(r)
        elif write == "slice":
            out.append((slice(None), slice(1 + k % 9, None, 10)))
        elif write == "mask":
            out.append(_write_mask(shape, like)[0].roll(k))
        elif write == "index":
            out.append(torch.tensor([r, (r + 3) % rows, (r + 5) % rows], device=like.device))
        elif write == "list":
            out.append([r, (r + 3) % rows, (r + 5) % rows])
        else:
            raise KeyError(write)
    return out


#: Each recipe's raw one-liner entry; ``clone``'s is the plain in-place write on a clone.
RAW_OF: dict[str, str] = {
    name: "inplace_on_clone" if name == "clone" else f"raw_{name}" for name in RECIPES
}

#: The code of each raw one-liner for ints and slices, as a user writes it for
#: ``x[r] = v`` (``R, C = x.shape``): the index tensors are made in the call,
#: from the ints and slices of the index, as a recipe must make them. The
#: benchmark's other basic writes follow the same pattern (``x[i, j]``:
#: ``m[i, j] = True``, ``(torch.tensor(i), torch.tensor(j))``; ``x[:, 1::10]``:
#: ``x.scatter(1, torch.arange(1, C, 10).expand(R, -1), v)``).
ONE_LINERS: dict[str, str] = {
    "inplace_on_clone": "y = x.clone(); y[index] = v",
    "raw_mask": "m = torch.zeros_like(x); m[r] = 1; x * (1 - m) + v * m",
    "raw_where": "m = torch.zeros_like(x, dtype=torch.bool); m[r] = True; torch.where(m, v, x)",
    "raw_index_put": "x.index_put((torch.tensor([r]),), torch.tensor(v))",
    "raw_scatter": "x.scatter(0, torch.full((1, C), r), v)",
    "raw_select_scatter": "x.select_scatter(torch.full((C,), v), 0, r)",
    "raw_masked_fill": "m = torch.zeros_like(x, dtype=torch.bool); m[r] = True; x.masked_fill(m, v)",
}

#: The one-liners that differ for a mask write, ``x[mask] = v``: there the
#: index already *is* a tensor, and what a recipe must compute from it on
#: every call (its positions, its complement), the one-liner computes too.
MASK_ONE_LINERS: dict[str, str] = {
    "raw_mask": "x * ~mask + v * mask",
    "raw_where": "torch.where(mask, v, x)",
    "raw_index_put": "x.index_put((mask,), torch.tensor(v))",
    "raw_scatter": "x.flatten().scatter(0, mask.flatten().nonzero().squeeze(1), v).view_as(x)",
    "raw_masked_fill": "x.masked_fill(mask, v)",
}

#: The one-liners for index tensors, ``x[t] = v`` (a list ``[a, b, c]`` is
#: ``t = torch.tensor([a, b, c])``, made in the call).
INDEX_ONE_LINERS: dict[str, str] = {
    "raw_mask": "m = torch.zeros_like(x); m[t] = 1; x * (1 - m) + v * m",
    "raw_where": "m = torch.zeros_like(x, dtype=torch.bool); m[t] = True; torch.where(m, v, x)",
    "raw_index_put": "x.index_put((t,), torch.tensor(v))",
    "raw_scatter": "x.scatter(0, t.unsqueeze(1).expand(-1, C), v)",
    "raw_masked_fill": "m = torch.zeros_like(x, dtype=torch.bool); m[t] = True; x.masked_fill(m, v)",
}

#: Where a recipe must do more than its one-liner to give setitem's answer:
#: ``(recipe, write) -> (instruction goal, why)``, instead of
#: ``OVERHEAD_GOALS["recipe"]``; cold writes share their warm write's entry.
_SCATTER_INDEX_TENSOR = (
    "scatter takes no negative position and raises RuntimeError out of range, so the "
    "recipe reads t through torch's indexing once (torch.arange(R)[t]), a gather the "
    "one-liner skips"
)
EXACTNESS_COSTS: dict[tuple[str, str], tuple[float, str]] = {
    ("scatter", "index"): (1.25, _SCATTER_INDEX_TENSOR),
    ("scatter", "list"): (1.25, _SCATTER_INDEX_TENSOR),
}

#: Entries that are not recipes and not raw one-liners.
BASELINES: tuple[str, ...] = ("inplace", "inplace_again", "plain_clone", "inplace_on_clone")
#: Entries measured only where the overhead is compared (``Config.overhead_sizes``).
OVERHEAD_ENTRIES: tuple[str, ...] = (*(r for r in RAW_OF.values() if r.startswith("raw_")), "at")
#: Everything measured, in this order.
ENTRIES: tuple[str, ...] = (*BASELINES, *RECIPES, *OVERHEAD_ENTRIES)


def _form(index: Any) -> str:
    """Which of the benchmark's own writes ``index`` is (not a parser: these five forms only)."""
    if type(index) is int:
        return "row"
    if type(index) is list:
        return "list"
    if isinstance(index, Tensor):
        return "mask" if index.dtype == torch.bool else "index"
    if type(index) is tuple and len(index) == 2:
        if all(type(i) is int for i in index):
            return "element"
        if index[0] == slice(None) and type(index[1]) is slice:
            return "slice"
    raise NotApplicable(f"no raw one-liner for the index {index!r}")


def _scalar(v: Any, x: Tensor) -> Tensor:
    return v if isinstance(v, Tensor) else torch.tensor(v, dtype=x.dtype)


def _marked(x: Tensor, index: Any, dtype: torch.dtype | None) -> Tensor:
    """``m = torch.zeros_like(x, dtype=dtype); m[index] = 1``, as a user writes a mask."""
    m = torch.zeros_like(x, dtype=dtype)
    m[index] = 1
    return m


def _raw_mask(x: Tensor, index: Any, v: Any) -> Tensor:
    if _form(index) == "mask" and not isinstance(v, Tensor):
        blended: Tensor = x * ~index + v * index
        return blended
    m = _marked(x, index, None)
    blended = x * (1 - m) + v * m
    return blended


def _raw_where(x: Tensor, index: Any, v: Any) -> Tensor:
    mask = index if _form(index) == "mask" else _marked(x, index, torch.bool)
    return torch.where(mask, v, x)


def _raw_masked_fill(x: Tensor, index: Any, v: Any) -> Tensor:
    if isinstance(v, Tensor) and v.numel() != 1:
        raise NotApplicable("masked_fill writes a single value")
    mask = index if _form(index) == "mask" else _marked(x, index, torch.bool)
    return x.masked_fill(mask, v)


def _raw_index_put(x: Tensor, index: Any, v: Any) -> Tensor:
    form = _form(index)
    if form == "row":
        return x.index_put((torch.tensor([index]),), _scalar(v, x))
    if form == "element":
        i, j = index
        return x.index_put((torch.tensor(i), torch.tensor(j)), _scalar(v, x))
    if form == "slice":
        s = index[1]
        rows = torch.arange(x.shape[0])[:, None]
        return x.index_put((rows, torch.arange(s.start, x.shape[1], s.step)), _scalar(v, x))
    if form == "list":
        return x.index_put((torch.tensor(index),), _scalar(v, x))
    return x.index_put((index,), _scalar(v, x))  # a mask or an index tensor


def _raw_scatter(x: Tensor, index: Any, v: Any) -> Tensor:
    form = _form(index)
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
    if form == "mask":
        return x.flatten().scatter(0, index.flatten().nonzero().squeeze(1), v).view_as(x)
    t = torch.tensor(index) if form == "list" else index
    return x.scatter(0, t.unsqueeze(1).expand(-1, cols), v)


def _raw_select_scatter(x: Tensor, index: Any, v: Any) -> Tensor:
    form = _form(index)
    src = v if isinstance(v, Tensor) else None
    if form == "row":
        return x.select_scatter(
            torch.full((x.shape[1],), v, dtype=x.dtype) if src is None else src, 0, index
        )
    if form == "element":
        i, j = index
        return x.select_scatter(x[i].select_scatter(_scalar(v, x), 0, j), 0, i)
    if form == "slice":
        s = index[1]
        width = len(range(s.start, x.shape[1], s.step))
        return x.slice_scatter(
            torch.full((x.shape[0], width), v, dtype=x.dtype), 1, s.start, None, s.step
        )
    raise NotApplicable("select_scatter takes only ints and slices")


_RAW: dict[str, Callable[[Tensor, Any, Any], Tensor]] = {
    "raw_mask": _raw_mask,
    "raw_where": _raw_where,
    "raw_index_put": _raw_index_put,
    "raw_scatter": _raw_scatter,
    "raw_select_scatter": _raw_select_scatter,
    "raw_masked_fill": _raw_masked_fill,
}


def raw_fn(entry: str) -> Callable[[Tensor, Any, Any], Tensor]:
    """``(x, index, value) -> y``: the raw one-liner ``entry``, as a user writes it.

    It raises :class:`~inplace_recipes.NotApplicable` for a write it has no
    one-liner for.

    >>> raw_fn("raw_index_put")(torch.zeros(2, 3), 1, 4.0)
    tensor([[0., 0., 0.],
            [4., 4., 4.]])
    """
    return _RAW[entry]


def _inplace_on_clone(x: Tensor, index: Any, value: Any) -> Tensor:
    """The floor as one step: the in-place write on one plain clone, no recipe code."""
    y = x.clone()
    y[index] = value
    return y


def _at(x: Tensor, index: Any, value: Any) -> Tensor:
    return at(x)[index].set(value)


def write_fn(entry: str) -> Callable[[Tensor, Any, Any], Tensor]:
    """``(x, index, value) -> y`` for an entry that takes the index as the user wrote it.

    >>> write_fn("inplace_on_clone")(torch.zeros(3), 1, 2.0)
    tensor([0., 2., 0.])
    """
    if entry in {"inplace", "inplace_again"}:
        return inplace_setitem
    if entry == "inplace_on_clone":
        return _inplace_on_clone
    if entry == "at":
        return _at
    if entry in _RAW:
        return _RAW[entry]
    return RECIPES[entry]


def forward_fn(
    entry: str, index: Any, value: Any, like: Tensor
) -> Callable[[Tensor, Tensor], Tensor]:
    """``(a, b) -> y``: the classic forward with ``entry`` as the write.

    >>> a, b = torch.zeros(3), torch.ones(3)
    >>> forward_fn("where", 0, 5.0, a)(a, b)
    tensor([5., 1., 1.])
    """
    write = write_fn(entry)
    if entry in _RAW:
        _form(index)  # NotApplicable here, before anything is timed

    def forward(a: Tensor, b: Tensor) -> Tensor:
        return write(a + b, index, value)

    return forward
