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
  index (a mask or an index tensor is used as given): each recipe's record
  holds it (:attr:`RecipeRecord.one_liner <inplace_recipes.recipes.RecipeRecord.one_liner>`),
  see :func:`one_liners`;
- ``"at"``: ``at(c)[index].set(value)``, which runs the recipe
  :func:`~inplace_recipes.best_recipe` picks.

Everything about a recipe is read from its record at each call, so a new
recipe is measured with no edit here.

>>> shape_for(10**6)
(1000, 1000)
>>> raw_of()["where"], raw_of()["clone"]
('raw_where', 'inplace_on_clone')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .._at import at
from ..recipes import RECORDS, inplace_setitem
from ..recipes._one_liners import form_of

__all__ = [
    "BASELINES",
    "COLD",
    "FORM_OF_WRITE",
    "INSTRUCTION_WRITES",
    "OVERHEAD_WRITES",
    "WRITES",
    "all_entries",
    "cold_indices",
    "exactness_costs",
    "forward_fn",
    "one_liners",
    "overhead_entries",
    "raw_fn",
    "raw_of",
    "raw_takes",
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


def _write_boolean(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
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
    "boolean": _write_boolean,  # x[mask] = 0.0, a random mask with 1% True
    "value_grad": _write_value_grad,  # x[r // 2] = v, v a row that requires grad
    "index": _write_index,  # x[t] = 0.0, t an index tensor of three rows
    "list": _write_list,  # x[[a, b, c]] = 0.0: three rows, as a list
}

#: The writes of the overhead comparison (raw one-liners and ``at()``).
OVERHEAD_WRITES: tuple[str, ...] = ("element", "row", "slice", "boolean", "index", "list")
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
        elif write == "boolean":
            out.append(_write_boolean(shape, like)[0].roll(k))
        elif write == "index":
            out.append(torch.tensor([r, (r + 3) % rows, (r + 5) % rows], device=like.device))
        elif write == "list":
            out.append([r, (r + 3) % rows, (r + 5) % rows])
        else:
            raise KeyError(write)
    return out


def raw_of() -> dict[str, str]:
    """Each recipe's raw one-liner entry; ``clone``'s is the plain in-place write on a clone.

    >>> raw_of()["index_put"]
    'raw_index_put'
    """
    return {name: record.one_liner.entry for name, record in RECORDS.items()}


def one_liners(form: str = "basic") -> dict[str, str]:
    """The code of each raw one-liner for a form of write, as a user writes it.

    ``"basic"``: for ``x[r] = v`` (``R, C = x.shape``); the index tensors are
    made in the call, from the ints and slices of the index, as a recipe must
    make them. The benchmark's other basic writes follow the same pattern
    (``x[i, j]``: ``m[i, j] = True``, ``(torch.tensor(i), torch.tensor(j))``;
    ``x[:, 1::10]``: ``x.scatter(1, torch.arange(1, C, 10).expand(R, -1), v)``).
    ``"boolean"``: for ``x[mask] = v``, where the index already *is* a tensor,
    and what a recipe must compute from it on every call (its positions,
    its complement), the one-liner computes too. ``"index"``: for ``x[t] =
    v`` (a list ``[a, b, c]`` is ``t = torch.tensor([a, b, c])``, made in the call).

    >>> one_liners("boolean")["raw_where"]
    'torch.where(mask, v, x)'
    """
    return {
        record.one_liner.entry: record.one_liner.code[form]
        for record in RECORDS.values()
        if form in record.one_liner.code
    }


def exactness_costs() -> dict[tuple[str, str], tuple[float, str]]:
    """Where a recipe must do more than its one-liner to give setitem's answer:
    ``(recipe, write) -> (instruction goal, why)``, instead of the common goal;
    cold writes share their warm write's entry. Each recipe's record holds its own.

    >>> exactness_costs()["scatter", "index"][0]
    1.25
    """
    return {
        (name, write): cost
        for name, record in RECORDS.items()
        for write, cost in record.exactness_costs.items()
    }


#: Entries that are not recipes and not raw one-liners.
BASELINES: tuple[str, ...] = ("inplace", "inplace_again", "plain_clone", "inplace_on_clone")


def overhead_entries() -> tuple[str, ...]:
    """Entries measured only where the overhead is compared (``Config.overhead_sizes``).

    >>> overhead_entries()[0], overhead_entries()[-1]
    ('raw_mask', 'at')
    """
    return (*(r for r in raw_of().values() if r not in BASELINES), "at")


def all_entries() -> tuple[str, ...]:
    """Everything measured, in this order: the baselines, the recipes, the one-liners, ``at``."""
    return (*BASELINES, *RECORDS, *overhead_entries())


#: The form of each write, as a one-liner's ``code`` names them: a raw one-liner
#: runs the writes of the forms its record gives code for.
FORM_OF_WRITE: dict[str, str] = {
    "element": "basic",
    "row": "basic",
    "slice": "basic",
    "value_grad": "basic",
    "boolean": "boolean",
    "index": "index",
    "list": "index",
}


def raw_takes(name: str, write: str, x: Tensor, index: Any, value: Any) -> bool:
    """Whether recipe ``name``'s raw one-liner writes the benchmark's ``write``: its
    record gives code for that form, and the recipe itself takes the write.

    >>> raw_takes("select_scatter", "boolean", torch.zeros(2), torch.tensor([True, False]), 0.0)
    False
    """
    record = RECORDS[name]
    form = FORM_OF_WRITE[write]
    return form in record.one_liner.code and record.refusal(x, index, value) is None


def raw_fn(entry: str) -> Callable[[Tensor, Any, Any], Tensor]:
    """``(x, index, value) -> y``: the raw one-liner ``entry``, as a user writes it.

    It raises :class:`~inplace_recipes.NotApplicable` for a write it has no
    one-liner for.

    >>> raw_fn("raw_index_put")(torch.zeros(2, 3), 1, 4.0)
    tensor([[0., 0., 0.],
            [4., 4., 4.]])
    """
    for record in RECORDS.values():
        if record.one_liner.entry == entry:
            return record.one_liner.run
    raise KeyError(entry)


def _at(x: Tensor, index: Any, value: Any) -> Tensor:
    return at(x)[index].set(value)


def write_fn(entry: str) -> Callable[[Tensor, Any, Any], Tensor]:
    """``(x, index, value) -> y`` for an entry that takes the index as the user wrote it.

    >>> write_fn("inplace_on_clone")(torch.zeros(3), 1, 2.0)
    tensor([0., 2., 0.])
    """
    if entry in {"inplace", "inplace_again"}:
        return inplace_setitem
    if entry == "at":
        return _at
    if entry in RECORDS:
        return RECORDS[entry].function
    return raw_fn(entry)


def forward_fn(
    entry: str, index: Any, value: Any, like: Tensor
) -> Callable[[Tensor, Tensor], Tensor]:
    """``(a, b) -> y``: the classic forward with ``entry`` as the write.

    >>> a, b = torch.zeros(3), torch.ones(3)
    >>> forward_fn("where", 0, 5.0, a)(a, b)
    tensor([5., 1., 1.])
    """
    write = write_fn(entry)
    if entry.startswith("raw_"):
        form_of(index)  # NotApplicable here, before anything is timed

    def forward(a: Tensor, b: Tensor) -> Tensor:
        return write(a + b, index, value)

    return forward
