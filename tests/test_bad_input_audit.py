"""Bad input to audit() and its command: a clear error that names the problem, never a silent run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from inplace_recipes import audit
from inplace_recipes.auditing._cli import EXIT_NOT_RUN, main


def test_the_block_form_takes_no_arguments() -> None:
    with pytest.raises(TypeError, match="takes arguments only after a function"):
        audit(None, 1)  # type: ignore[call-overload]


def test_an_audit_cannot_be_entered_twice() -> None:
    context = audit()
    with context, pytest.raises(RuntimeError, match="already running"), context:
        pass


def test_a_function_that_is_not_callable_is_reported_as_its_error() -> None:
    report = audit(42)  # type: ignore[call-overload]
    assert isinstance(report.error, TypeError)
    assert "not callable" in str(report.error)
    assert "The audited code raised TypeError" in str(report)


def test_errors_of_the_block_pass_through_unchanged() -> None:
    def fails() -> float:
        torch.ones(2).add_(1)
        return 1 / 0

    with pytest.raises(ZeroDivisionError), audit() as report:
        fails()
    assert report.findings == []


def test_inference_tensors_and_empty_tensors_are_not_a_problem() -> None:
    with torch.inference_mode():
        frozen = torch.ones(3)
    with audit() as report:
        with torch.inference_mode():
            frozen.add_(1)
        torch.empty(0, requires_grad=True).mul(2).add_(1)
    assert report.ok


def test_a_missing_script_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no_such_script.py"]) == EXIT_NOT_RUN
    err = capsys.readouterr().err
    assert "can't open file 'no_such_script.py': No such file or directory" in err
    assert "no_such_script.py did not run; nothing was audited." in err


def test_an_unknown_fail_on_class_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--fail-on", "everything", __file__])
    assert info.value.code == 2
    assert "invalid choice: 'everything'" in capsys.readouterr().err


def test_the_command_line_without_a_script_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inplace_recipes", "audit"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "the following arguments are required: script (or -m module)" in done.stderr
