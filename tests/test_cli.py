"""The command line: ``python -m inplace_recipes``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inplace_recipes import RECIPES
from inplace_recipes.__main__ import main


def test_compare_prints_a_table_where_every_recipe_is_ok(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare"]) == 0
    out = capsys.readouterr().out
    for name in RECIPES:
        assert any(
            line.startswith(name + " ") and line.endswith("yes") for line in out.splitlines()
        )


def test_help_and_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "compare" in capsys.readouterr().out
    assert main(["frobnicate"]) == 2


def test_module_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inplace_recipes", "compare"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "index_put" in done.stdout
