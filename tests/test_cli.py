"""The command line: ``python -m inplace_recipes``."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from inplace_recipes import RECIPES
from inplace_recipes.__main__ import SUBCOMMANDS, Subcommand, available, main


def test_compare_prints_a_table_where_every_recipe_is_ok(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare"]) == 0
    out = capsys.readouterr().out
    assert "gradcheck" in out
    for name in RECIPES:
        assert any(
            line.startswith(name + " ") and line.endswith("yes") for line in out.splitlines()
        )


def test_compare_without_gradcheck_and_with_progress(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--size", "200", "--no-gradcheck", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "gradcheck" not in captured.out
    assert "with x of shape [200]" in captured.out
    for name in RECIPES:  # tqdm's bar, or one line per recipe
        assert name in captured.err


def test_help_lists_every_installed_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, sub in available().items():
        assert f"  {name}" in out
        assert sub.summary in out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["frobnicate"], "unknown command 'frobnicate'; choose from compare"),
        (["--frobnicate"], "unrecognized option '--frobnicate'"),
        ([], "say which command to run"),
    ],
)
def test_unknown_commands_are_named(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert named in capsys.readouterr().err


def test_a_registered_module_is_a_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hook other commands (audit) plug into: a module with main(argv) -> int."""
    seen: list[list[str]] = []
    module = types.ModuleType("inplace_recipes_fake_command")
    module.main = lambda argv: seen.append(list(argv)) or 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: object())
    monkeypatch.setitem(SUBCOMMANDS, "fake", Subcommand(module.__name__, "a fake command"))
    assert main(["fake", "train.py", "--lr", "0.1", "--", "-x"]) == 3
    assert seen == [["train.py", "--lr", "0.1", "--", "-x"]]
    assert main(["--help"]) == 0
    assert "a fake command" in capsys.readouterr().out


def test_a_command_whose_module_is_missing_is_not_offered(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SUBCOMMANDS, "ghost", Subcommand("inplace_recipes.no_such_module", "x"))
    assert "ghost" not in available()
    assert main(["ghost"]) == 2
    assert "unknown command 'ghost'" in capsys.readouterr().err


def test_module_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inplace_recipes", "compare", "--no-gradcheck"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "index_put" in done.stdout
    assert done.stderr == ""  # no progress bar when stderr is not a terminal


def test_progress_without_tqdm_is_one_line_per_recipe(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """tqdm comes with the bench extra only; the plain package still shows progress."""
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    assert main(["compare", "--no-gradcheck", "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"[{n}/{len(RECIPES)}] {name}" for n, name in enumerate(RECIPES, 1)]
