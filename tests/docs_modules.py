"""Import a module of ``docs/`` (the site's tooling) as ``docs/conf.py`` imports it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

DOCS = Path(__file__).resolve().parents[1] / "docs"


def import_docs_module(name: str) -> ModuleType:
    """A module of ``docs/`` (``answer_table``, ``error_patterns``), imported as conf.py
    imports it: with the docs folder on the path."""
    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(DOCS))
