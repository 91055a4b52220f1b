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
- ``"raw_<recipe>"``: the torch call the recipe wraps, written as a user would
  with the index already in tensor form (made once, outside the timing), see
  :data:`ONE_LINERS`;
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
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..recipes import RECIPES, NotApplicable, inplace_setitem
from ..updates import at

__all__ = [
    "BASELINES",
    "ENTRIES",
    "MASK_ONE_LINERS",
    "ONE_LINERS",
    "OVERHEAD_ENTRIES",
    "RAW_OF",
    "WRITES",
    "TensorForms",
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


#: The write kinds: name -> ``make(shape, like) -> (index, value)``.
WRITES: dict[str, Callable[[tuple[int, int], Tensor], tuple[Any, Any]]] = {
    "element": _write_element,  # x[r // 2, c // 2] = 0.0
    "row": _write_row,  # x[r // 2] = 0.0
    "slice": _write_slice,  # x[:, 1::10] = 0.0 (10% of elements, strided)
    "mask": _write_mask,  # x[mask] = 0.0, a random mask with 1% True
    "value_grad": _write_value_grad,  # x[r // 2] = v, v a row that requires grad
}

#: Each recipe's raw one-liner entry; ``clone``'s is the plain in-place write on a clone.
RAW_OF: dict[str, str] = {
    name: "inplace_on_clone" if name == "clone" else f"raw_{name}" for name in RECIPES
}

#: The code of each raw one-liner for ints and slices: ``mask``,
#: ``positions``, ``indices``, ``keep``, ``put`` and ``src`` are tensors made
#: once from the index, before the timing, as a recipe keeps them from one
#: call to the next.
ONE_LINERS: dict[str, str] = {
    "inplace_on_clone": "y = x.clone(); y[index] = v",
    "raw_mask": "x * keep + v * put  (keep, put: ~mask, mask in x's dtype)",
    "raw_where": "torch.where(mask, v, x)",
    "raw_index_put": "x.index_put(mask.nonzero(as_tuple=True), v)",
    "raw_scatter": "x.flatten().scatter(0, positions, v).view_as(x)",
    "raw_select_scatter": "x.select_scatter(src, 0, i) / x.slice_scatter(src, 1, 1, None, 10)",
    "raw_masked_fill": "x.masked_fill(mask, v)",
}

#: The one-liners that differ for a mask write, ``x[mask] = v``: there the
#: index already *is* a tensor, and what a recipe must compute from it on
#: every call (its positions, its complement), the one-liner computes too.
MASK_ONE_LINERS: dict[str, str] = {
    "raw_mask": "x * ~mask + v * mask",
    "raw_index_put": "x.index_put((mask,), v)",
    "raw_scatter": "x.flatten().scatter(0, mask.flatten().nonzero().squeeze(1), v).view_as(x)",
}

#: Entries that are not recipes and not raw one-liners.
BASELINES: tuple[str, ...] = ("inplace", "inplace_again", "plain_clone", "inplace_on_clone")
#: Entries measured only where the overhead is compared (``Config.overhead_sizes``).
OVERHEAD_ENTRIES: tuple[str, ...] = (*(r for r in RAW_OF.values() if r.startswith("raw_")), "at")
#: Everything measured, in this order.
ENTRIES: tuple[str, ...] = (*BASELINES, *RECIPES, *OVERHEAD_ENTRIES)


@dataclass(frozen=True)
class TensorForms:
    """An index in the forms a user would have ready: made once, by torch, outside the timing.

    >>> forms = TensorForms.of((2, 3), (1, slice(None, None, 2)), 5.0, torch.zeros(()))
    >>> forms.positions
    tensor([3, 5])
    >>> forms.src
    tensor([5., 5.])
    """

    index: Any
    value: Any
    mask: Tensor  #: bool, of x's shape, True where the index writes
    positions: Tensor  #: flat positions in the order ``x[index]`` reads them
    indices: tuple[Tensor, ...]  #: ``mask.nonzero(as_tuple=True)``
    keep: Tensor  #: ``~mask`` in x's dtype
    put: Tensor  #: ``mask`` in x's dtype
    src: Tensor  #: the value expanded to ``x[index].shape`` (for select/slice_scatter)

    @classmethod
    def of(cls, shape: tuple[int, ...], index: Any, value: Any, like: Tensor) -> TensorForms:
        """Torch's own setitem reads the index: no second index parser here."""
        mask = torch.zeros(shape, dtype=torch.bool, device=like.device)
        mask[index] = True
        selected = mask[index].shape
        if isinstance(value, Tensor):  # keeps value's graph; expanded only when it must be
            src = value if value.shape == selected else value.expand(selected)
        else:
            src = torch.full(selected, value, dtype=like.dtype, device=like.device)
        return cls(
            index=index,
            value=value,
            mask=mask,
            positions=mask.reshape(-1).nonzero().squeeze(1),
            indices=mask.nonzero(as_tuple=True),
            keep=(~mask).to(like.dtype),
            put=mask.to(like.dtype),
            src=src,
        )


def _number_or_tensor(value: Any, x: Tensor) -> Any:
    return value if isinstance(value, Tensor) else torch.tensor(value, dtype=x.dtype)


def _select_scatter_chain(forms: TensorForms) -> Callable[[Tensor], Tensor]:
    """The select/slice_scatter call for the benchmark's basic writes (one row, one
    element, one strided column slice); a mask has none."""
    index, src = forms.index, forms.src
    if isinstance(index, int):
        return lambda x: x.select_scatter(src, 0, index)
    if isinstance(index, tuple) and len(index) == 2:
        first, second = index
        if isinstance(first, int) and isinstance(second, int):
            return lambda x: x.select_scatter(x[first].select_scatter(src, 0, second), 0, first)
        if first == slice(None) and isinstance(second, slice):
            s = second
            return lambda x: x.slice_scatter(src, 1, s.start, s.stop, s.step)
    raise NotApplicable("select_scatter takes only ints and slices")


def raw_fn(entry: str, forms: TensorForms, like: Tensor) -> Callable[[Tensor], Tensor]:
    """``x -> y``: the raw one-liner ``entry`` with the index already in tensor form.

    >>> x = torch.zeros(2, 3)
    >>> forms = TensorForms.of((2, 3), 1, 4.0, x)
    >>> raw_fn("raw_where", forms, x)(x)
    tensor([[0., 0., 0.],
            [4., 4., 4.]])
    """
    v = forms.value
    index = forms.index
    mask_write = isinstance(index, Tensor) and index.dtype == torch.bool
    if entry == "raw_where":
        mask = forms.mask
        return lambda x: torch.where(mask, v, x)
    if entry == "raw_masked_fill":
        if isinstance(v, Tensor) and v.numel() != 1:
            raise NotApplicable("masked_fill writes a single value")
        mask = forms.mask
        return lambda x: x.masked_fill(mask, v)
    if entry == "raw_index_put":
        indices, vt = ((index,) if mask_write else forms.indices), _number_or_tensor(v, like)
        return lambda x: x.index_put(indices, vt)
    if entry == "raw_scatter":
        positions = forms.positions
        if mask_write and not isinstance(v, Tensor):
            return lambda x: (
                x.flatten().scatter(0, index.flatten().nonzero().squeeze(1), v).view_as(x)
            )
        if isinstance(v, Tensor):
            return lambda x: x.flatten().scatter(0, positions, v.reshape(-1)).view_as(x)
        return lambda x: x.flatten().scatter(0, positions, v).view_as(x)
    if entry == "raw_mask":
        if mask_write and not isinstance(v, Tensor):
            return lambda x: x * ~index + v * index
        keep, put = forms.keep, forms.put
        return lambda x: x * keep + v * put
    if entry == "raw_select_scatter":
        return _select_scatter_chain(forms)
    raise KeyError(entry)


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
    return RECIPES[entry]


def forward_fn(
    entry: str, index: Any, value: Any, like: Tensor
) -> Callable[[Tensor, Tensor], Tensor]:
    """``(a, b) -> y``: the classic forward with ``entry`` as the write.

    >>> a, b = torch.zeros(3), torch.ones(3)
    >>> forward_fn("where", 0, 5.0, a)(a, b)
    tensor([5., 1., 1.])
    """
    if entry.startswith("raw_"):
        forms = TensorForms.of(tuple(like.shape), index, value, like)
        raw = raw_fn(entry, forms, like)

        def forward_raw(a: Tensor, b: Tensor) -> Tensor:
            return raw(a + b)

        return forward_raw
    write = write_fn(entry)

    def forward(a: Tensor, b: Tensor) -> Tensor:
        return write(a + b, index, value)

    return forward
