"""Bad input to the command line and to ``compare_gradients`` (issue 9 and its neighbours).

Every case gives a clear error that names the problem, never a traceback, a
silently wrong report or a changed input. The command line's errors are
argparse's: a usage line, then one line ``inplace-recipes <command>: error:
...`` naming the option and the value, and exit status 2.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch

from inplace_recipes import RECIPES, compare_gradients
from inplace_recipes.__main__ import main

# -- the command line --------------------------------------------------------------

BAD_COMMAND_LINES = [
    # (argv, words the one-line error must contain)
    (["frobnicate"], ["unknown command 'frobnicate'", "compare", "matrix", "bench"]),
    (["Compare"], ["unknown command 'Compare'"]),
    (["--frobnicate"], ["unrecognized option '--frobnicate'"]),
    (["--size", "3"], ["unrecognized option '--size'"]),
    ([], ["say which command to run"]),
    (["compare", "--size", "0"], ["argument --size", "at least 1", "'0'"]),
    (["compare", "--size", "-1"], ["argument --size", "at least 1", "'-1'"]),
    (["compare", "--size", "nope"], ["argument --size", "whole number", "'nope'"]),
    (["compare", "--size", "nan"], ["argument --size", "whole number", "'nan'"]),
    (["compare", "--size", "2.5"], ["argument --size", "'2.5'"]),
    (["compare", "--size", "1e9"], ["argument --size", "at most 1,000,000"]),
    (["compare", "--size"], ["argument --size", "expected one argument"]),
    (["compare", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["compare", "extra"], ["unrecognized arguments: extra"]),
    (["compare", "--gradcheck=yes"], ["--gradcheck", "ignored explicit argument 'yes'"]),
    (["matrix", "--rows", "nope"], ["argument --rows", "invalid choice: 'nope'", "at[].set"]),
    (["matrix", "--rows"], ["argument --rows", "expected at least one argument"]),
    (["matrix", "--columns", "jit"], ["argument --columns", "invalid choice: 'jit'", "jvp"]),
    (["matrix", "--json", "--markdown"], ["not allowed with argument --json"]),
    (["matrix", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["bench", "--threads", "0"], ["argument --threads", "at least 1", "'0'"]),
    (["bench", "--threads", "-2"], ["argument --threads", "'-2'"]),
    (["bench", "--sizes", "0"], ["argument --sizes", "at least 1", "'0'"]),
    (["bench", "--sizes", "1e4", "-5"], ["argument --sizes", "'-5'"]),
    (["bench", "--sizes", "nan"], ["argument --sizes", "'nan'"]),
    (["bench", "--sizes", "inf"], ["argument --sizes", "'inf'"]),
    (["bench", "--sizes", "1.5"], ["argument --sizes", "'1.5'"]),
    (["bench", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
]


@pytest.mark.parametrize(("argv", "words"), BAD_COMMAND_LINES, ids=lambda a: " ".join(a))
def test_bad_command_line_is_one_named_error_and_exit_2(
    argv: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2  # returned, not raised: no traceback
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, captured.err
    assert captured.err.rstrip().endswith(errors[0])  # the error is the last line
    command = argv[0] if argv and argv[0] in ("compare", "matrix", "bench") else ""
    assert errors[0].startswith(f"inplace-recipes {command}".rstrip() + ": error: "), errors[0]
    for word in words:
        assert word in errors[0], errors[0]
    assert "Traceback" not in captured.err


def test_the_process_exits_2_without_a_traceback() -> None:
    """The same through ``python -m``: what a shell sees."""
    for argv in (["compare", "--size", "0"], ["bench", "--sizes", "0"], ["frobnicate"]):
        done = subprocess.run(
            [sys.executable, "-m", "inplace_recipes", *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.splitlines()[-1].startswith("inplace-recipes")


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["compare", "--help"], ["matrix", "-h"]])
def test_help_is_not_an_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert "usage:" in capsys.readouterr().out


# -- compare_gradients ---------------------------------------------------------------


def fresh() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.arange(4.0, requires_grad=True), torch.tensor(9.0, requires_grad=True)


BAD_CALLS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    # (what, keyword overrides of (x, index, value), error type, message pattern)
    ("x a list", {"x": [0.0, 1.0]}, TypeError, r"x must be a torch\.Tensor, got list"),
    ("x a NumPy array", {"x": np.zeros(3)}, TypeError, r"x must be a torch\.Tensor, got ndarray"),
    ("x None", {"x": None}, TypeError, r"x must be a torch\.Tensor, got NoneType"),
    ("index out of range", {"index": 7}, IndexError, "index 7 is out of bounds"),
    ("index a string", {"index": "a"}, IndexError, r"only integers, slices"),
    ("value a string", {"value": "a"}, TypeError, "value must be a Python number or a torch"),
    ("value too long", {"index": slice(None), "value": torch.ones(3)}, RuntimeError, "shape"),
    ("unknown recipe", {"recipes": ["nope"]}, ValueError, "unknown recipe 'nope'; choose from"),
    ("recipe name not a str", {"recipes": [3]}, TypeError, "recipe names are strings, got int"),
    ("recipes a number", {"recipes": 3}, TypeError, "recipes must be recipe names or a mapping"),
    ("recipe not callable", {"recipes": {"a": 3}}, TypeError, "recipe 'a' must be a callable"),
    ("unknown reference", {"reference": "nope"}, ValueError, "unknown recipe 'nope'"),
    ("reference a number", {"reference": 3}, TypeError, "reference must be a recipe name"),
    ("loss a number", {"loss": 3.0}, TypeError, "loss must be callable, got float"),
    ("loss returns a float", {"loss": lambda out: 1.0}, TypeError, "<lambda> must return a one-element torch.Tensor, got float"),
    ("loss returns None", {"loss": lambda out: None}, TypeError, "<lambda> must return a one-element torch.Tensor, got NoneType"),
    ("loss returns a vector", {"loss": lambda out: out * 2}, TypeError, r"got shape \[4\]"),
    ("loss ignores the result", {"loss": lambda out: torch.tensor(1.0)}, ValueError, "does not depend on the result"),
    ("x sparse", {"x": torch.zeros(4).to_sparse()}, TypeError, "Cannot assign to a sparse tensor"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "changes", "error", "pattern"), BAD_CALLS, ids=lambda a: str(a))
def test_bad_call_is_a_clear_error_and_changes_nothing(
    what: str, changes: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    x, value = fresh()
    arguments: dict[str, Any] = {"x": x, "index": 1, "value": value, **changes}
    before = {k: v.detach().clone() for k, v in arguments.items() if isinstance(v, torch.Tensor)}
    versions = {k: v._version for k, v in arguments.items() if isinstance(v, torch.Tensor)}
    with pytest.raises(error, match=pattern):
        compare_gradients(**arguments)
    for name, tensor in before.items():
        now = arguments[name]
        assert now._version == versions[name], name
        if now.layout == torch.strided:
            assert torch.equal(now.detach(), tensor), name
    assert x.grad is None
    assert value.grad is None


def test_recipes_that_break_are_reported_and_change_nothing() -> None:
    """A recipe's own failure is a row of the report, not an exception, and inputs stay put."""

    def returns_a_list(x: torch.Tensor, index: Any, value: Any) -> Any:
        return [1.0]

    def writes_in_place(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
        with torch.no_grad():
            x[index] = value
        return x

    x, value = fresh()
    report = compare_gradients(
        x, 1, value, {"list": returns_a_list, "inplace": writes_in_place, "where": RECIPES["where"]}
    )
    assert report["list"].problems == ["raised TypeError: returned list, not a torch.Tensor"]
    problems = "; ".join(report["inplace"].problems)
    assert "changed its input x" in problems
    assert "result shares memory with x" in problems
    assert report["where"].ok
    assert torch.equal(x.detach(), torch.arange(4.0))
    assert float(value.detach()) == 9.0


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_values_are_compared_exactly(value: float) -> None:
    """clone + setitem writes the value and leaves the rest: any recipe that spreads it is flagged."""
    report = compare_gradients(torch.zeros(3), 0, value)
    for result in report:
        out = None
        try:
            out = RECIPES[result.name](torch.zeros(3), 0, value)
        except Exception:  # noqa: BLE001 - a refusal is reported as not applicable or an error
            assert not result.ok or result.not_applicable is not None
            continue
        exact = bool((out[1:] == 0).all()) and (
            bool(out[0].isnan()) if np.isnan(value) else float(out[0]) == value
        )
        assert result.ok == exact, (result.name, out, result.problems)
