"""The package's imports run one way: up the layers of ``inplace_recipes._layers``, in no circle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import inplace_recipes
from inplace_recipes._layers import LAYERS

PACKAGE = Path(inplace_recipes.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def _imports(name: str, source: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every import of the package in ``source``,
    at the top of the module or inside a function, relative ones resolved."""
    here = name.split(".") if name else []
    base = here if is_package else here[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("inplace_recipes."):
                    yield alias.name.removeprefix("inplace_recipes."), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - (node.level - 1)]
                target = [*parent, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith("inplace_recipes"):
                target = node.module.split(".")[1:]
            else:
                continue
            if target:
                yield ".".join(target), node.lineno
            else:  # from . import x: the package's own submodules
                for alias in node.names:
                    yield alias.name, node.lineno


def _unit(module: str) -> str:
    return module.split(".")[0]


def violations(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Each import in ``sources`` (``{module: (source, is_package)}``) that runs
    against :data:`LAYERS`, or a unit missing from it."""
    rank = {unit: k for k, (_, units) in enumerate(LAYERS) for unit in units}
    found = []
    for name, (source, is_package) in sources.items():
        if not name:
            continue  # the package's __init__ re-exports from every layer
        mine = _unit(name)
        if mine not in rank:
            found.append(f"{name}: not in any layer of inplace_recipes._layers")
            continue
        for imported, line in _imports(name, source, is_package):
            other = _unit(imported)
            if other == mine or other not in rank:
                continue
            if rank[other] > rank[mine]:
                found.append(
                    f"{name}:{line} imports {imported}, a layer above "
                    f"({LAYERS[rank[mine]][0]} < {LAYERS[rank[other]][0]})"
                )
    return found


def circles(sources: dict[str, tuple[str, bool]]) -> list[list[str]]:
    """Circles between units (``recipes``, ``bench``, ...), counting imports inside functions."""
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in sources.items():
        if not name:
            continue
        graph.setdefault(_unit(name), set()).update(
            _unit(m) for m, _ in _imports(name, source, is_package) if _unit(m) != _unit(name)
        )
    found = []

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == path[0]:
                found.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:  # report each circle once
                walk(nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, [start])
    return found


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {
        _module_name(path): (path.read_text(), path.name == "__init__.py")
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_every_import_of_the_package_runs_up_its_layers() -> None:
    assert violations(_package_sources()) == []


def test_no_circle_between_the_package_s_modules() -> None:
    assert circles(_package_sources()) == []


def test_an_import_against_the_layers_is_found() -> None:
    """The check fails on what it must fail on: a recipe importing ``at``, even
    inside a function, and a module the layers do not name."""
    sources = {
        "recipes._where": ("def f():\n    from .._at import at\n", False),
        "recipes._index_put": ("from ..bench import run\n", False),
        "_new_module": ("", False),
        "compare": ("from .recipes import RECIPES\n", False),  # upward: fine
    }
    assert violations(sources) == [
        "recipes._where:2 imports _at, a layer above (recipes < at)",
        "recipes._index_put:1 imports bench, a layer above (recipes < tools)",
        "_new_module: not in any layer of inplace_recipes._layers",
    ]


def test_a_circle_is_found() -> None:
    sources = {
        "compare": ("from .matrix import x\n", False),
        "matrix": ("def f():\n    from . import compare\n", False),
    }
    assert circles(sources) == [["compare", "matrix", "compare"]]


@pytest.mark.parametrize("unit", [u for _, units in LAYERS for u in units])
def test_every_layer_names_a_module_that_exists(unit: str) -> None:
    assert (PACKAGE / f"{unit}.py").exists() or (PACKAGE / unit / "__init__.py").exists(), unit
