"""What the wheel promises: one version, written up in the changelog; types; the pytest plugin."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import inplace_recipes
from inplace_recipes import pytest_plugin

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def test_the_version_has_one_source_and_a_changelog_entry() -> None:
    assert 'dynamic = ["version"]' in PYPROJECT
    assert re.search(r'^path = "src/inplace_recipes/__init__.py"$', PYPROJECT, re.MULTILINE)
    assert not re.search(r"^version\s*=", PYPROJECT.partition("[project]")[2], re.MULTILINE)
    (newest, *_) = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert newest == inplace_recipes.__version__


def test_the_package_ships_its_types() -> None:
    assert (Path(inplace_recipes.__file__).parent / "py.typed").exists()


def test_the_pytest_entry_point_names_the_plugin_module() -> None:
    entry = re.search(r"^\[project\.entry-points\.pytest11\]\n(.+)$", PYPROJECT, re.MULTILINE)
    assert entry is not None
    assert entry.group(1) == f'"{pytest_plugin.__name__}" = "{pytest_plugin.__name__}"'
    assert callable(pytest_plugin.pytest_addoption)


def test_dir_lists_every_public_name_before_its_first_use() -> None:
    """autodoc and tab completion read ``dir()``: a lazy name (``at``) must be there unloaded.

    Without ``__dir__`` the API page documented ``at`` only when an earlier
    gallery script had imported it, so the gettext build (which runs none) lost it.
    """
    code = (
        "import sys, inplace_recipes as ir\n"
        "names = dir(ir)\n"
        "assert set(ir.__all__) <= set(names), set(ir.__all__) - set(names)\n"
        "assert 'inplace_recipes._at' not in sys.modules, 'dir() loaded a lazy module'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
