"""Out-of-place recipes for ``y = x.clone(); y[index] = value``.

Each recipe is a function ``recipe(x, index, value) -> Tensor`` that returns a
new tensor and never changes ``x``. It is differentiable with respect to ``x``
and to ``value`` (when ``value`` is a tensor that requires grad), keeps ``x``'s
dtype, device and shape, and takes every index that setitem takes, except
what its record says it refuses. :data:`RECIPES` lists them in the order
the documentation presents them; :data:`RECORDS` holds each one's record
(:class:`RecipeRecord`), the one place a recipe is declared.

>>> import torch
>>> x = torch.zeros(4)
>>> RECIPES["where"](x, slice(1, None, 2), 7.0)
tensor([0., 7., 0., 7.])
>>> x  # unchanged
tensor([0., 0., 0., 0.])

Torch can copy uint16, uint32 and uint64 tensors but has no ``index_put``,
``scatter``, ``masked_fill`` or addition for them on the CPU: the recipes write
ints and slices into them through a view as the signed dtype of the same width,
and for a mask or index tensors raise setitem's own ``NotImplementedError``.

A lone ``False`` writes nothing, as setitem: every recipe returns a copy of ``x``
without reading the value (its shape, dtype and device), after the error of a Python
number that ``x``'s dtype cannot hold (which setitem skips on the meta device) and what
its record refuses:

>>> y = torch.zeros(2)
>>> y[False] = torch.ones(5)  # no error, nothing written
>>> RECIPES["where"](y, False, torch.ones(5))
tensor([0., 0.])
>>> RECIPES["where"](y.to(torch.int8), False, 300)
Traceback (most recent call last):
    ...
RuntimeError: value cannot be converted to type int8_t without overflow

One difference is kept: a meta value written through a mask or index tensors into a
tensor on another device. Torch 2.13's setitem writes nothing there and raises nothing
(nor checks the value's shape), a write that is silently lost; every recipe but ``clone``
(which is setitem) raises the error torch raises for such a value of the right shape
through an int or a slice, which names the problem:

>>> y[torch.tensor([0, 1])] = torch.ones(2, device="meta")  # no error, nothing written
>>> RECIPES["where"](y, torch.tensor([0, 1]), torch.ones(2, device="meta"))
Traceback (most recent call last):
    ...
NotImplementedError: Cannot copy out of meta tensor; no data!

Through a lone mask of the wrong shape they raise the mask's ``IndexError`` first, as for
any other value:

>>> y[torch.tensor([True])] = torch.ones(1, device="meta")  # no error, nothing written
>>> RECIPES["where"](y, torch.tensor([True]), torch.ones(1, device="meta"))
Traceback (most recent call last):
    ...
IndexError: The shape of the mask [1] at index 0 does not match the shape of the indexed tensor [2] at index 0

A recipe is one module of this package (``_where.py`` and so on): its
function and its ``RECORD``. To add one, see CONTRIBUTING.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from torch import Tensor

from . import _clone, _index_put, _mask_blend, _masked_fill, _scatter, _select_scatter, _where
from ._errors import NotApplicable, UnsupportedIndexError, UnsupportedValueError
from ._record import OneLiner, RecipeRecord
from ._start import Recipe

__all__ = [
    "RECIPES",
    "RECORDS",
    "NotApplicable",
    "OneLiner",
    "Recipe",
    "RecipeRecord",
    "UnsupportedIndexError",
    "UnsupportedValueError",
    "clone_setitem",
    "index_put",
    "inplace_setitem",
    "mask_blend",
    "masked_fill",
    "scatter",
    "select_scatter",
    "where",
]

# The records, in the order the docs present the recipes. Consumers read
# RECORDS at each call, never a copy, so a record added here (or by a test's
# fixture) reaches every one of them.
_RECORDS: dict[str, RecipeRecord] = {
    module.RECORD.name: module.RECORD
    for module in (_mask_blend, _where, _clone, _index_put, _scatter, _select_scatter, _masked_fill)
}
RECORDS: Mapping[str, RecipeRecord] = MappingProxyType(_RECORDS)
"""Every recipe's record, by name, in the order the docs present them."""


class _Functions(Mapping[str, Recipe]):
    """``name -> function`` over :data:`RECORDS`, read at each lookup."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Recipe:
        return _RECORDS[name].function

    def __iter__(self) -> Iterator[str]:
        return iter(_RECORDS)

    def __len__(self) -> int:
        return len(_RECORDS)

    def __contains__(self, name: object) -> bool:
        return name in _RECORDS

    def __repr__(self) -> str:
        return f"RECIPES({', '.join(_RECORDS)})"


RECIPES: Mapping[str, Recipe] = _Functions()
"""Every out-of-place recipe, by name, in the order the docs present them."""

mask_blend = _mask_blend.mask_blend
where = _where.where
clone_setitem = _clone.clone_setitem
index_put = _index_put.index_put
scatter = _scatter.scatter
select_scatter = _select_scatter.select_scatter
masked_fill = _masked_fill.masked_fill


def inplace_setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """The in-place baseline: ``x[index] = value``; returns ``x`` itself.

    This is what every recipe replaces, exposed for comparisons and
    benchmarks. It mutates ``x`` (and fails on a leaf that requires grad), so
    it is not in :data:`RECIPES`.

    >>> import torch
    >>> x = torch.zeros(3)
    >>> inplace_setitem(x, 0, 1.0) is x
    True
    """
    x[index] = value
    return x
