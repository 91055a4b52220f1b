"""The errors a recipe raises for a write it does not take by design.

A recipe that refuses a write raises a subclass of :class:`NotApplicable`
that names the recipe and what to use instead; which writes each recipe
refuses is declared once, in its record (:class:`~inplace_recipes.recipes.RecipeRecord`).
"""

from __future__ import annotations

__all__ = ["NotApplicable", "UnsupportedIndexError", "UnsupportedValueError"]


class NotApplicable(Exception):
    """Base of the errors a recipe raises for an index or value it cannot take."""


class UnsupportedIndexError(NotApplicable, TypeError):
    """The recipe cannot express this kind of index."""


class UnsupportedValueError(NotApplicable, ValueError):
    """The recipe cannot write this kind of value."""
