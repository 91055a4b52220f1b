"""``python -m inplace_recipes audit script.py [args...]``: a script audited unchanged, for people and CI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_recipes.auditing.cli import EXIT_FOUND

BROKEN = """
    import sys
    import torch

    x = torch.randn(3, 4, requires_grad=True)
    for step in range(int(sys.argv[1])):
        h = torch.sigmoid(x)
        h.mul_(2)
        print("step", step)
        h.sum().backward()
"""

SILENT = """
    import torch

    w = torch.randn(4, requires_grad=True)
    loss = (w * w).sum()  # mul saves w
    w.data.mul_(0.5)
    loss.backward()
    print("done")
"""

CLEAN = """
    import sys
    import torch

    w = torch.randn(4, requires_grad=True)
    h = (w * 2).relu_()
    h.sum().backward()
    print("clean", sys.argv[1:])
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def run(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    command = [sys.executable, "-m", "inplace_recipes", "audit", *args]
    return subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )


def test_a_script_that_raises_gets_its_traceback_and_the_report(tmp_path: Path) -> None:
    done = run(tmp_path, BROKEN, "train.py", "3")
    assert done.returncode == 1
    assert done.stdout == "step 0\n"  # the script's own output, unchanged
    assert 'File "train.py", line 10, in <module>' in done.stderr
    assert "inplace_recipes" not in done.stderr.split("inplace_recipes audit of")[0]
    report = done.stderr.split("inplace_recipes audit of train.py:")[1]
    assert "backward fails  train.py:8" in report
    assert "fix: h = h.mul(2)" in report
    assert "The audited code raised RuntimeError" in report
    assert str(tmp_path) not in report  # paths relative to the working directory


def test_json_is_alone_on_stdout_with_the_documented_fields(tmp_path: Path) -> None:
    done = run(tmp_path, BROKEN, "--json", "train.py", "1")
    data = json.loads(done.stdout)
    (record,) = data["findings"]
    assert record["file"] == "train.py"
    assert record["line"] == 8
    assert record["consequence"] == "backward fails"
    assert record["count"] == 1
    assert data["error"].startswith("RuntimeError: one of the variables needed")
    assert "step 0" in done.stderr


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [(None, 0), ("backward-fails", 0), ("wrong-gradients", EXIT_FOUND), ("any", EXIT_FOUND)],
)
def test_fail_on_gives_its_exit_code_for_its_class(
    tmp_path: Path, fail_on: str | None, code: int
) -> None:
    options = ["--fail-on", fail_on] if fail_on else []
    done = run(tmp_path, SILENT, *options, "train.py")
    assert done.stdout == "done\n"
    assert done.returncode == code, done.stderr
    assert "wrong gradients" in done.stderr
    assert "torch.no_grad()" in done.stderr


def test_a_clean_script_keeps_its_arguments_and_exit_code(tmp_path: Path) -> None:
    done = run(tmp_path, CLEAN, "--fail-on", "any", "train.py", "5", "--flag")
    assert done.stdout == "clean ['5', '--flag']\n"
    assert done.returncode == 5
    assert "1 in-place write is safe" in done.stderr
    assert run(tmp_path, CLEAN, "train.py").returncode == 0


def test_help_names_the_exit_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inplace_recipes", "audit", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--fail-on" in done.stdout
    assert f"{EXIT_FOUND} if --fail-on found" in " ".join(done.stdout.split())
