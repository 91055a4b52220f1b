"""The package's layers, lowest first: a module imports only from its own layer or below.

============  ================================================  =====================================
layer         modules                                           what it is
============  ================================================  =====================================
``base``      ``_table``, ``_cli_types``                        text tables, command-line argument types
``index``     ``_index_reading``, ``_indexing``                 reading an index as setitem does; its forms
``recipes``   ``recipes``                                       every recipe, one module and record each
``pick``      ``_pick``                                         which recipe to use (``best_recipe``)
``at``        ``_at``                                           ``at(x)[i].set(v)`` and friends
``tools``     ``compare``, ``_compare_cli``, ``matrix``,        what users run on their code and the
              ``graph``, ``claims``, ``error_reference`` (and   benchmark; tools may use each other,
              its ``_error_kinds``, ``_error_reading``,
              ``_error_words``),
              ``auditing``, ``pytest_plugin``, ``bench``,       never in a circle
              ``__main__``
============  ================================================  =====================================

The package itself (``__init__``) re-exports the public names and sits above
them all. ``tests/test_layers.py`` reads :data:`LAYERS` and fails on an
import (at the top of a module or inside a function) that runs downwards
against this order, or on a circle between modules.
"""

from __future__ import annotations

__all__ = ["LAYERS"]

#: ``(layer, modules)``, lowest first; a module is named by its first part
#: under ``inplace_recipes`` (``recipes`` covers ``recipes._where``).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("_table", "_cli_types", "_layers")),
    ("index", ("_index_reading", "_indexing")),
    ("recipes", ("recipes",)),
    ("pick", ("_pick",)),
    ("at", ("_at",)),
    (
        "tools",
        (
            "compare",
            "_compare_cli",
            "matrix",
            "graph",
            "claims",
            "_error_kinds",
            "_error_reading",
            "_error_words",
            "error_reference",
            "auditing",
            "pytest_plugin",
            "bench",
            "__main__",
        ),
    ),
)
