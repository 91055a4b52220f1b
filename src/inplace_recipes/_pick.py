"""Which recipe to use for an index: the fastest that is correct for it, clone on a tie.

:data:`PREFERENCES` is, for each kind of write, the order the committed
benchmark ranks the recipes in (the ranking itself, with its noise band and
intervals, lives with the benchmark: :mod:`inplace_recipes.bench`; a test
fails when the two disagree). :func:`best_recipe` takes the first recipe in
it that writes the index and value exactly, as each recipe's record says
(:meth:`RecipeRecord.refusal <inplace_recipes.recipes.RecipeRecord.refusal>`,
its duplicates and its documented exceptions), and inside ``torch.func``
transforms the first that works there.

>>> import torch
>>> best_recipe(torch.zeros(3, 4), 1, 0.0)
'clone'
>>> best_recipe(torch.zeros(3, 4), torch.tensor([[True] * 4, [False] * 4, [True] * 4]), 0.0)
'where'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch import Tensor

from ._indexing import IndexPlan
from .recipes import RECORDS, RecipeRecord

__all__ = ["PREFERENCES", "UNDER_TRANSFORMS", "best_recipe", "quick_recipe", "write_kind"]

#: For each kind of write, the recipe to use, then ``clone`` (clone then
#: setitem), the reference, correct for every index: the committed
#: benchmark's choice (``bench``'s ``preferences``), the fastest recipe or
#: ``clone`` where it ties. Read-only, so nothing derived from it can go stale.
PREFERENCES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # x[i, j] = v: ints only, more than one
        "element": ("clone",),
        # x[i] = v: one int, a whole slab
        "row": ("clone",),
        # a basic index with a slice: x[:, 1::10] = v
        "slice": ("clone",),
        # x[mask] = v: one boolean mask
        "boolean": ("where", "clone"),
        # a basic index and a tensor value that requires grad
        "value_grad": ("clone",),
        # index tensors and lists (benchmarked as x[t] = 0 and x[[a, b, c]] = 0)
        "advanced": ("clone",),
    }
)

#: The recipe for a write inside a ``torch.func`` transform when no preferred
#: one works there: ``index_put`` takes every index, a batched one too, and
#: needs no data-dependent check (the records say why the others are avoided:
#: :attr:`RecipeRecord.not_under_transforms <inplace_recipes.recipes.RecipeRecord.not_under_transforms>`).
UNDER_TRANSFORMS = "index_put"

_BASIC_WRITES = ("element", "row", "slice", "value_grad")
_current_level = torch._C._functorch.maybe_current_level


def _answers_by_type(record: RecipeRecord, kind: str) -> bool:
    """Whether ``record`` takes every write of ``kind`` whatever its value and data."""
    return (
        kind in record.index_kinds
        and not record.single_value
        and not record.not_exact
        and (kind != "advanced" or record.duplicates == "as setitem")
    )


def quick_recipe(index: Any, value: Any) -> str | None:
    """:func:`best_recipe`'s answer when the index's type alone gives it, else ``None``.

    It does not check the index (the recipe will): for ints and slices when
    every basic write ranks the same recipe first, for one boolean mask, and
    for one index tensor or list of ints when index tensors rank first a
    recipe that needs no duplicate check. :func:`~inplace_recipes.at` asks it
    first (outside ``torch.func`` transforms), so that a common write is not
    planned twice.

    >>> import torch
    >>> quick_recipe(1, 0.0), quick_recipe(torch.tensor([True, False]), 0.0)
    ('clone', 'where')
    >>> quick_recipe([0, 1], 0.0), quick_recipe([0, slice(None)], 0.0)
    ('clone', None)
    """
    tp = type(index)
    if tp is Tensor:
        if index.dtype != torch.bool:
            return _first_for_index_tensors()
        if index.ndim == 0:
            return None
        single = not isinstance(value, Tensor) or value.numel() == 1
        for name in PREFERENCES["boolean"]:
            record = RECORDS[name]
            takes = "boolean" in record.index_kinds and not record.not_exact
            if takes and (single or not record.single_value):
                return name
        return None
    if tp is list:
        for i in index:
            if type(i) is not int:
                return None
        return _first_for_index_tensors()
    if tp is int or tp is slice:
        return _first_for_every_basic_write()
    if tp is tuple:
        for i in index:
            if type(i) is not int and type(i) is not slice:
                return None
        return _first_for_every_basic_write()
    return None


def _first_for_index_tensors() -> str | None:
    """The recipe index tensors rank first, if it needs no duplicate check."""
    name = PREFERENCES["advanced"][0]
    return name if _answers_by_type(RECORDS[name], "advanced") else None


def _first_for_every_basic_write() -> str | None:
    """The recipe every kind of write with ints and slices ranks first, if one
    does and it takes every value (``masked_fill`` writes single values only)."""
    name = PREFERENCES["element"][0]
    for kind in _BASIC_WRITES:
        if PREFERENCES[kind][0] != name:
            return None
    return name if _answers_by_type(RECORDS[name], "basic") else None


def write_kind(x: Tensor, index: Any) -> str:
    """The key of :data:`PREFERENCES` for ``x[index] = ...``.

    >>> import torch
    >>> [write_kind(torch.zeros(4, 4), i) for i in [(1, 2), 1, (slice(None), slice(0, 4, 2))]]
    ['element', 'row', 'slice']
    """
    return _write_kind(IndexPlan.of(x, index))


def _write_kind(plan: IndexPlan) -> str:
    if plan.kind == "boolean":
        return "boolean"
    if plan.kind == "advanced":
        return "advanced"
    ints = [s for _, s in plan.steps if not isinstance(s, slice)]
    if len(ints) == len(plan.steps) and len(ints) >= 2:
        return "element"
    if len(plan.steps) == 1 and ints:
        return "row"
    return "slice"


def best_recipe(x: Tensor, index: Any, value: Any) -> str:
    """The name in :data:`~inplace_recipes.RECIPES` to use for ``x[index] = value``.

    The fastest measured recipe for this kind of write, or ``clone`` where it
    is as fast within the benchmark's noise band: the first recipe of
    :data:`PREFERENCES` for this kind of write that its record says writes
    the index and value exactly (``masked_fill`` writes only a single value,
    ``select_scatter`` only basic indices; a recipe whose duplicates follow
    the kernel's order, ``index_put`` and ``scatter``, is skipped when an
    index tensor names a position twice, or may). Inside a ``torch.func``
    transform, only recipes that work there count, and
    :data:`UNDER_TRANSFORMS` comes last.

    >>> import torch
    >>> best_recipe(torch.zeros(4, 4), (1, 2), 0.0)
    'clone'
    >>> best_recipe(torch.zeros(4, 4), torch.tensor([0, 2]), 0.0)
    'clone'
    >>> torch.func.vmap(lambda v: print(best_recipe(torch.zeros(3), 1, v)) or v)(torch.ones(2))
    index_put
    tensor([1., 1.])
    """
    plan = IndexPlan.of(x, index)  # once; duplicates are looked for only if it matters
    kind = _write_kind(plan)
    single = not isinstance(value, Tensor) or value.numel() == 1
    if kind in {"element", "row", "slice"} and not single and value.requires_grad:
        kind = "value_grad"
    transformed = _current_level() is not None
    names: Iterable[str] = PREFERENCES[kind]
    if transformed:
        names = [*names, UNDER_TRANSFORMS]
    for name in names:
        record = RECORDS[name]
        if transformed and not record.under_transforms:
            continue
        if record.not_exact or record.refusal_of(plan, value) is not None:
            continue
        if (
            record.duplicates == "kernel order"
            and plan.kind == "advanced"
            and name != UNDER_TRANSFORMS
            and (not plan.duplicates_checkable() or plan.has_duplicates())
        ):
            continue
        return name
    return UNDER_TRANSFORMS if transformed else "clone"
