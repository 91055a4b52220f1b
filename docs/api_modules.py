"""Write ``_generated/api_modules.md``: one autodoc section per package module.

Each section ends with a mini-gallery of the pages that use the module's
public names, reached as ``ir.name`` or as ``inplace_recipes.module.name``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

#: The package's public modules, in the order the API page presents them (the
#: package itself comes first); every other module is private (``_``-prefixed).
MODULES = (
    "recipes",
    "compare",
    "bench",
    "matrix",
    "graph",
    "auditing",
    "pytest_plugin",
    "error_reference",
    "claims",
)


def _documented_below() -> set[str]:
    """The package's names that a public module documents: the package's own section skips them."""
    import inplace_recipes

    found = set()
    for name in MODULES:
        module = importlib.import_module(f"inplace_recipes.{name}")
        for attr in getattr(module, "__all__", ()):
            if attr in inplace_recipes.__all__ and getattr(inplace_recipes, attr) is getattr(
                module, attr
            ):
                found.add(attr)
    return found


def render() -> str:
    below = ", ".join(sorted(_documented_below()))
    parts = [
        "## `inplace_recipes`\n",
        (
            "```{eval-rst}\n.. automodule:: inplace_recipes\n   :members:\n"
            f"   :exclude-members: {below}\n```\n"
        ),
    ]
    for name in MODULES:
        full = f"inplace_recipes.{name}"
        parts.append(f"## `{full}`\n")
        # eval-rst: docstrings are reST; parsed as MyST, their >>> blocks
        # would not be doctest blocks and the doctest builder would skip them.
        public = getattr(importlib.import_module(full), "__all__", ())
        used = " ".join(f"inplace_recipes.{n} {full}.{n}" for n in public)
        # A module with no public names (pytest_plugin: pytest is its interface)
        # has no pages that use a name of it; minigallery refuses an empty list.
        gallery = (
            f"\n.. minigallery:: {used}\n   :add-heading: Pages that use ``{full}``\n"
            if used
            else ""
        )
        parts.append(f"```{{eval-rst}}\n.. automodule:: {full}\n   :members:\n{gallery}```\n")
    return "\n".join(parts)


def write(outdir: Path) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "api_modules.md"
    text = render()
    if not path.exists() or path.read_text() != text:  # keep the mtime: no needless rebuild
        path.write_text(text)
    return path
