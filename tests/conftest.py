"""Hypothesis profiles: the default run draws a few hundred examples per recipe; shared fixtures."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

#: tests/wheel/ checks the installed wheel from outside the tree (nox -s build), not the tree.
collect_ignore = ["wheel"]

from docs_modules import import_docs_module
from strategies import DEFAULT_EXAMPLES


@pytest.fixture(scope="module")
def answer_table() -> ModuleType:
    """``docs/answer_table.py``, the landing page's generator."""
    return import_docs_module("answer_table")


@pytest.fixture(scope="module")
def committed() -> ModuleType:
    """``docs/committed.py``: where the committed runs live in the source tree."""
    return import_docs_module("committed")


@pytest.fixture(scope="module")
def bench_results(committed: ModuleType) -> dict[str, Any]:
    """The committed benchmark run, ``docs/measurements/bench/cpu-full.json``."""
    results: dict[str, Any] = committed.bench_results()
    return results


@pytest.fixture(scope="module")
def prose() -> ModuleType:
    """``docs/performance_prose.py``: the performance page's prose."""
    return import_docs_module("performance_prose")


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    """``docs/performance_figures.py``: the performance page's figures."""
    return import_docs_module("performance_figures")


@pytest.fixture(scope="module")
def error_patterns() -> ModuleType:
    """``docs/error_patterns.py``, the error box's pattern exporter."""
    return import_docs_module("error_patterns")


settings.register_profile(
    "default",
    max_examples=DEFAULT_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# CI draws the same examples every run, so a submission cannot fail on a new
# draw; local runs keep exploring (and keep failures in .hypothesis/).
settings.register_profile(
    "ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True
)
# Ten times the examples in every property test: the slow ones scale through
# strategies.examples(n).
settings.register_profile(
    "thorough", parent=settings.get_profile("default"), max_examples=10 * DEFAULT_EXAMPLES
)
settings.register_profile("quick", max_examples=25, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def pytest_report_header() -> str:
    """The battery's size and what this run takes of it (issue 28; tests/battery/)."""
    from battery.axes import header

    return header()
