"""Write ``_generated/api_modules.md``: one autodoc section per package module.

Modules that are not in the package yet get a heading and a note instead of
an ``automodule`` directive, so the build never warns about a missing module.
"""

from __future__ import annotations

from pathlib import Path

#: The package's modules, in the order the API page presents them.
MODULES = (
    "recipes",
    "indexing",
    "compare",
    "recommend",
    "graph",
    "bench",
    "updates",
    "matrix",
    "auditing",
    "error_reference",
)


def render() -> str:
    parts = []
    for name in MODULES:
        full = f"inplace_recipes.{name}"
        parts.append(f"## `{full}`\n")
        # eval-rst: docstrings are reST; parsed as MyST, their >>> blocks
        # would not be doctest blocks and the doctest builder would skip them.
        parts.append(f"```{{eval-rst}}\n.. automodule:: {full}\n   :members:\n```\n")
    return "\n".join(parts)


def write(outdir: Path) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "api_modules.md"
    text = render()
    if not path.exists() or path.read_text() != text:  # keep the mtime: no needless rebuild
        path.write_text(text)
    return path
