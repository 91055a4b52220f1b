"""Out-of-place alternatives to ``x[index] = value`` under autograd, checked.

The names below are the package's interface, with the public modules
:mod:`~inplace_recipes.recipes` (each recipe and its record),
:mod:`~inplace_recipes.compare`, :mod:`~inplace_recipes.bench`,
:mod:`~inplace_recipes.matrix`, :mod:`~inplace_recipes.graph`,
:mod:`~inplace_recipes.auditing` (and its pytest plugin),
:mod:`~inplace_recipes.error_reference` and :mod:`~inplace_recipes.claims`;
every other module is private (``_``-prefixed). How the modules depend on
each other: :mod:`inplace_recipes._layers`.

>>> import torch, inplace_recipes as ir
>>> ir.RECIPES["index_put"](torch.zeros(3), 1, 42.0)
tensor([ 0., 42.,  0.])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# (the `as` aliases: also here, as the pages write them, `ir.where`; documented in
# their own module, so not in __all__)
from .compare import GradientReport as GradientReport
from .compare import RecipeResult as RecipeResult
from .compare import compare_gradients
from .compare import tolerances as tolerances
from .recipes import (
    RECIPES,
    NotApplicable,
    UnsupportedIndexError,
    UnsupportedValueError,
    inplace_setitem,
)
from .recipes import clone_setitem as clone_setitem
from .recipes import index_put as index_put
from .recipes import mask_blend as mask_blend
from .recipes import masked_fill as masked_fill
from .recipes import scatter as scatter
from .recipes import select_scatter as select_scatter
from .recipes import where as where

#: The package's version, its one source (pyproject.toml reads it from here;
#: CHANGELOG.md says what each version changed).
__version__ = "0.4.0"

if TYPE_CHECKING:  # what type checkers see of the names loaded on first use
    from ._at import at
    from ._pick import best_recipe
    from .auditing import AuditReport, audit
    from .error_reference import explain
    from .graph import draw_graph, graph_nodes
    from .matrix import compatibility_matrix

# Tools beyond the recipes load on first use, so `import inplace_recipes`
# stays as cheap as importing torch and nothing runs until it is asked for.
_LAZY = {
    "at": "_at",
    "audit": "auditing",
    "AuditReport": "auditing",
    "explain": "error_reference",
    "best_recipe": "_pick",
    "compatibility_matrix": "matrix",
    "draw_graph": "graph",
    "graph_nodes": "graph",
}


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext inplace_recipes``: the ``%%inplace_audit`` cell magic (``inplace_recipes.auditing._notebook``)."""
    from .auditing._notebook import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The loaded names and the lazy ones: ``dir()``, tab completion and autodoc see ``at`` before its first use."""
    return sorted({*globals(), *_LAZY})


__all__ = [
    "RECIPES",
    "AuditReport",
    "NotApplicable",
    "UnsupportedIndexError",
    "UnsupportedValueError",
    "__version__",
    "at",
    "audit",
    "best_recipe",
    "compare_gradients",
    "compatibility_matrix",
    "draw_graph",
    "explain",
    "graph_nodes",
    "inplace_setitem",
]
