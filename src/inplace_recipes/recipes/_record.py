"""A recipe's record: everything the package and its site say about one recipe, in one place.

Each recipe module declares one :class:`RecipeRecord` (its ``RECORD``): the
code that writes, what it takes and refuses, how it behaves with duplicate
positions and under ``torch.func`` transforms, the one line of code the
landing page shows, its pitfall and the claims that check it, and the torch
call it wraps as a user writes it (the benchmark's raw entry). Every
consumer reads the records, never a table of its own: ``RECIPES``,
:func:`~inplace_recipes.best_recipe`, :func:`~inplace_recipes.at`, the
benchmark's entries, the compatibility matrix, the landing table and the
tests' refusal rule (:meth:`RecipeRecord.refusal`).

>>> import torch
>>> from inplace_recipes.recipes import RECORDS
>>> record = RECORDS["select_scatter"]
>>> sorted(record.index_kinds), record.refusal(torch.zeros(3), [0, 1], 1.0).__name__
(['basic'], 'UnsupportedIndexError')
>>> record.refusal(torch.zeros(3), 1, 1.0) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, cast

from torch import Tensor

from .._indexing import IndexPlan, Kind
from ._errors import NotApplicable, UnsupportedIndexError, UnsupportedValueError
from ._start import Recipe, Write, planned

__all__ = ["ALL_KINDS", "Duplicates", "OneLiner", "RecipeRecord"]

#: Every kind of index (:attr:`IndexPlan.kind <inplace_recipes._indexing.IndexPlan.kind>`).
ALL_KINDS: frozenset[Kind] = frozenset({"basic", "boolean", "advanced"})

#: What a recipe gives when index tensors name a position twice:
#: ``"as setitem"``, setitem's values and gradients by construction (the value
#: is scattered first, or it *is* setitem); ``"kernel order"``, setitem's on the
#: CPU because both run the same kernel in the same order (torch's documentation
#: leaves the order undefined, so :func:`~inplace_recipes.best_recipe` avoids it
#: there); ``"refused for a value that requires grad"``, setitem's values, but a
#: value that requires grad would get fewer gradients, so the recipe refuses it.
Duplicates = Literal["as setitem", "kernel order", "refused for a value that requires grad"]

_KINDS_IN_WORDS = {
    frozenset({"basic"}): "ints, slices, '...' and None, not an index with tensors",
}


@dataclass(frozen=True)
class OneLiner:
    """The torch call a recipe wraps, as a user writes it: the benchmark's raw entry.

    ``code`` shows it per form of write: ``"basic"`` for ``x[r] = v``,
    ``"boolean"`` for ``x[mask] = v``, ``"index"`` for ``x[t] = v``; ``run``
    runs it for each of the benchmark's writes (and raises
    :class:`~inplace_recipes.NotApplicable` for one it has no line for).
    """

    entry: str
    run: Recipe
    code: Mapping[str, str]


@dataclass(frozen=True)
class RecipeRecord:
    """One recipe, declared once. ``function`` is the recipe users call.

    A *planned* recipe's ``write(x, index, value, plan)`` receives the planned
    index after the shared start (:mod:`inplace_recipes.recipes._start`); an
    unplanned one (``clone``) is ``write(x, index, value)`` itself.
    """

    #: The key in :data:`~inplace_recipes.RECIPES`.
    name: str
    #: The code that writes (see the class docstring).
    write: Write | Recipe
    #: The landing page's one line for ``x[i] = v`` (``m``: a boolean mask, True at ``i``).
    line: str
    #: The pitfall the landing page lists, a sentence about torch...
    pitfall: str
    #: ... and the claims (:mod:`inplace_recipes.claims`) that check it at build time.
    pitfall_claims: tuple[str, ...]
    #: The torch call it wraps, as a user writes it (for ``clone``, setitem on a clone).
    one_liner: OneLiner
    #: Whether ``write`` takes the planned index (the shared start runs first).
    planned: bool = True
    #: The kinds of index it writes; any other raises :class:`~inplace_recipes.UnsupportedIndexError`.
    index_kinds: frozenset[Kind] = ALL_KINDS
    #: Whether it writes only one value (a number or a one-element tensor); a
    #: tensor of values raises :class:`~inplace_recipes.UnsupportedValueError`.
    single_value: bool = False
    #: What the recipe's refusals point to instead.
    instead: str = "'index_put' or 'where'"
    #: Whether ``write`` takes a Python float as it is (for a float32 or float64
    #: ``x``; any other value comes as a tensor of ``x``'s dtype, see
    #: :func:`~inplace_recipes.recipes._value.setitem_value`).
    takes_numbers: bool = False
    #: Why it refuses a mask that ``vmap`` batches (empty: it writes through one).
    not_with_batched_masks: str = ""
    #: Where it does not give setitem's answer although it runs (empty: nowhere):
    #: the documented exception to the rule "exact, or a clear error".
    #: :func:`~inplace_recipes.best_recipe` never picks such a recipe.
    not_exact: str = ""
    #: What it gives for duplicate positions (see :data:`Duplicates`).
    duplicates: Duplicates = "as setitem"
    #: Why :func:`~inplace_recipes.at` avoids it inside ``torch.func`` transforms
    #: (empty: it does not).
    not_under_transforms: str = ""
    #: Where giving setitem's answer costs more instructions than the one-liner:
    #: ``write -> (goal, why)``, instead of the benchmark's common goal.
    exactness_costs: Mapping[str, tuple[float, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: The recipe: ``function(x, index, value) -> Tensor``.
    function: Recipe = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        function = planned(self) if self.planned else cast(Recipe, self.write)
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "exactness_costs", MappingProxyType(dict(self.exactness_costs)))

    @property
    def refuses_anything(self) -> bool:
        """Whether the record declares a write the recipe refuses."""
        return (
            self.index_kinds != ALL_KINDS
            or self.single_value
            or self.duplicates == "refused for a value that requires grad"
            or bool(self.not_with_batched_masks)
        )

    @property
    def refuses_only_batched_masks(self) -> bool:
        """Whether the one write the record declares refused is through a mask batched by vmap."""
        return (
            self.index_kinds == ALL_KINDS
            and not self.single_value
            and self.duplicates != "refused for a value that requires grad"
        )

    @property
    def under_transforms(self) -> bool:
        """Whether :func:`~inplace_recipes.at` may pick it inside ``torch.func`` transforms."""
        return not self.not_under_transforms

    def refusal(self, x: Tensor, index: Any, value: Any) -> type[NotApplicable] | None:
        """The error the recipe raises by design for ``x[index] = value``, or ``None``.

        The one refusal rule: tests, :func:`~inplace_recipes.best_recipe` and
        the matrix read it. Where torch's setitem itself raises, the recipe
        raises torch's error instead (index and shape errors come first).
        """
        return self.refusal_of(IndexPlan.of(x, index), value)

    def refusal_of(self, plan: IndexPlan, value: Any) -> type[NotApplicable] | None:
        """:meth:`refusal` for an index already planned."""
        found = self._refused(plan, value)
        return None if found is None else found[0]

    def refuse(self, plan: IndexPlan, value: Any, written: Tensor | float | None) -> None:
        """Raise what :meth:`refusal` names for ``value``, after torch's own index and
        shape errors; ``written`` is what setitem makes of ``value``
        (:func:`~inplace_recipes.recipes._value.setitem_value`), or ``None`` where setitem
        writes nothing and checks no shape (a lone ``False``)."""
        found = self._refused(plan, value)
        if found is None:
            return
        error, message = found
        if isinstance(written, Tensor) and written.numel() != 1:
            plan.fit(written)  # a value that does not fit: torch's shape error, first
        if not plan.mask_batched():
            plan.check()  # torch's error for index tensors past the end, next
        raise error(message)

    def _refused(self, plan: IndexPlan, value: Any) -> tuple[type[NotApplicable], str] | None:
        if plan.kind not in self.index_kinds:
            kinds = _KINDS_IN_WORDS.get(
                self.index_kinds, f"{' and '.join(sorted(self.index_kinds))} indices"
            )
            return UnsupportedIndexError, (
                f"recipe {self.name!r} takes only {kinds} ({plan.kind} index); use {self.instead}"
            )
        if self.not_with_batched_masks and plan.mask_batched():
            return UnsupportedIndexError, (
                f"recipe {self.name!r} cannot write through a mask batched by torch.func.vmap "
                f"({self.not_with_batched_masks}); use 'where'"
            )
        tensor = isinstance(value, Tensor)
        if self.single_value and tensor and value.numel() != 1:
            return UnsupportedValueError, (
                f"recipe {self.name!r} writes a single value, not a value of shape "
                f"{list(value.shape)}; use {self.instead}"
            )
        if (
            self.duplicates == "refused for a value that requires grad"
            and tensor
            and value.requires_grad
            and plan.kind == "advanced"
            and plan.duplicates_checkable()
            and plan.has_duplicates()
        ):
            return UnsupportedIndexError, (
                f"recipe {self.name!r} cannot write one value that requires grad to duplicate "
                "positions: setitem sends it one gradient per index entry, a mask one per "
                f"position. Use recipe {self.instead} (exact), or, to add rather than "
                "overwrite, at(x)[index].add(value) or x.index_put(indices, value, accumulate=True)"
            )
        return None
