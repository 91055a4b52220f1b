"""Hypothesis profiles: the default run draws a few hundred examples per recipe; shared fixtures."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

DOCS = Path(__file__).resolve().parents[1] / "docs"


def import_docs_module(name: str) -> ModuleType:
    """A module of ``docs/`` (``answer_table``, ``error_patterns``), imported as conf.py
    imports it: with the docs folder on the path."""
    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(DOCS))


@pytest.fixture(scope="module")
def answer_table() -> ModuleType:
    """``docs/answer_table.py``, the landing page's generator."""
    return import_docs_module("answer_table")


@pytest.fixture(scope="module")
def error_patterns() -> ModuleType:
    """``docs/error_patterns.py``, the error box's pattern exporter."""
    return import_docs_module("error_patterns")


settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# CI draws the same examples every run, so a submission cannot fail on a new
# draw; local runs keep exploring (and keep failures in .hypothesis/).
settings.register_profile(
    "ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=3000)
settings.register_profile("quick", max_examples=25, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def pytest_report_header() -> str:
    """The battery's size and what this run takes of it (issue 28; tests/battery/)."""
    from battery.axes import header

    return header()
