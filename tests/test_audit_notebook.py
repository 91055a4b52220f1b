"""``%load_ext inplace_recipes`` and ``%%inplace_audit``, in IPython's own test shell.

The shell is IPython's (``IPython.testing.globalipapp.get_ipython``), the
output is captured with ``IPython.utils.capture.capture_output``: the cell
runs as IPython runs it (its traceback printed, not raised), and the report's
rows name the cell and its line as that traceback does.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output


@pytest.fixture(scope="module")
def shell() -> Any:
    ip = get_ipython()
    ip.run_line_magic("load_ext", "inplace_recipes")
    ip.run_cell("import torch", store_history=True)
    return ip


def run(shell: Any, cell: str) -> tuple[Any, str]:
    """Run ``cell`` as the next numbered cell; its result and everything it printed."""
    with capture_output() as captured:
        result = shell.run_cell(cell, store_history=True)
    return result, captured.stdout + captured.stderr


def test_the_magic_reports_the_write_at_its_cell_and_line(shell: Any) -> None:
    result, output = run(
        shell,
        "%%inplace_audit report\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "h = torch.sigmoid(x)\n"
        "h.mul_(2)  # sigmoid saved h\n"
        "h.sum().backward()\n",
    )
    number = shell.execution_count  # the cell's, while it ran (IPython counts it first)
    report = shell.user_ns["report"]
    (finding,) = [f for f in report if f.harmful]
    assert (finding.file, finding.line) == (f"In[{number}]", 3)
    assert finding.code == "h.mul_(2)  # sigmoid saved h"
    assert finding.consequence == "backward fails"
    assert f"saved by SigmoidBackward0 (In[{number}]:2)" in finding.detail
    assert f"used by the backward at In[{number}]:4" in finding.detail
    assert finding.fix == "h = h.mul(2)"
    assert f"backward fails  In[{number}]:3" in output
    # IPython printed the cell's traceback, naming the same cell and line
    assert f"Cell In[{number}], line 4" in output
    assert "RuntimeError" in type(report.error).__name__
    assert result.error_in_exec is None  # the magic itself did not raise


def test_a_clean_cell_runs_and_says_so(shell: Any) -> None:
    result, output = run(
        shell,
        "%%inplace_audit\nw = torch.ones(2, requires_grad=True)\n(w * 2).relu_().sum().backward()\nw.grad\n",
    )
    assert result.error_in_exec is None
    assert "No harmful in-place writes." in output
    assert "tensor([2., 2.])" in output  # the cell's last value is shown, as IPython shows it
    assert shell.user_ns["w"].grad.tolist() == [2.0, 2.0]


def test_fail_on_makes_the_cell_raise(shell: Any) -> None:
    result, output = run(
        shell,
        "%%inplace_audit --fail-on unused-graph\n"
        "y = torch.ones(3, requires_grad=True).exp()\n"
        "y.add_(1)\n",
    )
    assert type(result.error_in_exec).__name__ == "AuditFailed"
    assert "fails if backpropagated" in output
    assert "--fail-on unused-graph: 1 write of its class" in str(result.error_in_exec)


def test_the_audit_does_not_outlive_the_cell(shell: Any) -> None:
    import torch

    run(shell, "%%inplace_audit\nz = torch.ones(2, requires_grad=True) * 1\n")
    assert torch.overrides._get_current_function_mode_stack() == []
