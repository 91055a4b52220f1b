"""Out-of-place alternatives to ``x[index] = value`` under autograd, checked.

>>> import torch, inplace_recipes as ir
>>> ir.RECIPES["index_put"](torch.zeros(3), 1, 42.0)
tensor([ 0., 42.,  0.])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .compare import GradientReport, RecipeResult, compare_gradients, tolerances
from .indexing import IndexPlan
from .recipes import (
    RECIPES,
    NotApplicable,
    UnsupportedIndexError,
    UnsupportedValueError,
    clone_setitem,
    index_put,
    inplace_setitem,
    mask_blend,
    masked_fill,
    scatter,
    select_scatter,
    where,
)

#: The package's version, its one source (pyproject.toml reads it from here;
#: CHANGELOG.md says what each version changed).
__version__ = "0.3.0"

if TYPE_CHECKING:  # what type checkers see of the names loaded on first use
    from .auditing import AuditReport, audit
    from .error_reference import explain
    from .graph import draw_graph, graph_nodes
    from .matrix import compatibility_matrix
    from .recommend import best_recipe
    from .updates import at

# Tools beyond the recipes load on first use, so `import inplace_recipes`
# stays as cheap as importing torch and nothing runs until it is asked for.
_LAZY = {
    "at": "updates",
    "audit": "auditing",
    "AuditReport": "auditing",
    "explain": "error_reference",
    "best_recipe": "recommend",
    "compatibility_matrix": "matrix",
    "draw_graph": "graph",
    "graph_nodes": "graph",
}


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext inplace_recipes``: the ``%%inplace_audit`` cell magic (:mod:`.auditing.notebook`)."""
    from .auditing.notebook import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "RECIPES",
    "AuditReport",
    "GradientReport",
    "IndexPlan",
    "NotApplicable",
    "RecipeResult",
    "UnsupportedIndexError",
    "UnsupportedValueError",
    "__version__",
    "at",
    "audit",
    "best_recipe",
    "clone_setitem",
    "compare_gradients",
    "compatibility_matrix",
    "draw_graph",
    "explain",
    "graph_nodes",
    "index_put",
    "inplace_setitem",
    "mask_blend",
    "masked_fill",
    "scatter",
    "select_scatter",
    "tolerances",
    "where",
]
