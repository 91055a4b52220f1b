"""Hypothesis profiles: the default run draws a few hundred examples per recipe; shared fixtures."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def answer_table() -> Any:
    """``docs/answer_table.py``, the landing page's generator, imported from the docs folder."""
    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module("answer_table")
    finally:
        sys.path.remove(str(DOCS))


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
