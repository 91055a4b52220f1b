"""``pytest --inplace-audit`` fails the tests that plant the audit's bugs, with the audit's row.

Each run is a separate pytest process (``pytester.runpytest_subprocess``), so
that this suite can itself run under ``--inplace-audit`` without auditing
the planted bugs of the inner runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import inplace_recipes
from inplace_recipes import pytest_plugin

pytest_plugins = ["pytester"]

#: The src/ (or site-packages) folder this process imports the package from.
PACKAGE_ROOT = Path(inplace_recipes.__file__).resolve().parents[1]

#: The planted bugs of tests/test_audit.py, each in a test that passes without the audit,
#: and the clean training step of test_out_of_place_code_reports_nothing.
PLANTED = """\
import torch
from torch import nn


def inputs():
    gen = torch.Generator().manual_seed(0)
    return (
        torch.randn(4, 5, generator=gen, requires_grad=True),
        torch.randn(5, 5, generator=gen, requires_grad=True),
    )


def test_data_edit_of_a_saved_tensor():
    x, w = inputs()
    h = torch.sigmoid(x @ w)
    h.data.mul_(0.5)  # W:data_saved
    h.sum().backward()
    assert w.grad is not None


def test_relu_inplace_after_sigmoid_forward_only():
    x, w = inputs()
    h = torch.sigmoid(x @ w)
    h = nn.functional.relu(h, inplace=True)  # W:relu
    assert h.shape == (4, 5)


def test_clean_training_step():
    torch.manual_seed(0)
    x, w = inputs()
    net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(inplace=True), nn.LayerNorm(8))
    h = x @ w
    h[0] = 0.0  # a safe write: CopySlices on a non-leaf
    loss = net(h).pow(2).sum()
    loss.backward()
    torch.optim.SGD([w, *net.parameters()], lr=0.1).step()
"""


def line_of(marker: str) -> int:
    (line,) = [n for n, text in enumerate(PLANTED.splitlines(), 1) if f"# W:{marker}" in text]
    return line


@pytest.fixture(autouse=True)
def same_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inner pytest processes import this very package (not another install of it)."""
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_ROOT))


@pytest.fixture
def planted(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder with the planted tests."""
    pytester.makepyfile(test_planted=PLANTED)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "inplace_recipes.pytest_plugin", *args)


def test_without_the_flag_every_planted_bug_passes(planted: pytest.Pytester) -> None:
    run(planted).assert_outcomes(passed=3)


def test_the_default_fails_the_wrong_gradients_with_the_audit_row(
    planted: pytest.Pytester,
) -> None:
    result = run(planted, "--inplace-audit")
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert "FAILED test_planted.py::test_data_edit_of_a_saved_tensor" in output
    where = f"test_planted.py:{line_of('data_saved')}: wrong gradients: mul_ (.data alias"
    assert where in output
    assert "h.data.mul_(0.5)" in output
    assert "fix: h = h.mul(0.5)" in output
    assert "inplace audit: on, failing on wrong-gradients" in output


def test_a_write_before_any_backward_is_an_unused_graph_not_a_failed_backward(
    planted: pytest.Pytester,
) -> None:
    """No backward ran through the written graph: ``unused-graph`` fails it, ``backward-fails`` not."""
    passed = run(planted, "--inplace-audit", "--inplace-audit-fail-on", "backward-fails")
    passed.assert_outcomes(passed=3)
    result = run(planted, "--inplace-audit", "--inplace-audit-fail-on", "unused-graph")
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert "FAILED test_planted.py::test_relu_inplace_after_sigmoid_forward_only" in output
    row = (
        rf"test_planted.py:{line_of('relu')}: fails if backpropagated: "
        r"relu\(inplace=True\) .*\n"
    )
    assert re.search(row + r"(    .*\n)*    fix: \S", output), output


def test_any_fails_both_and_passes_the_clean_step(planted: pytest.Pytester) -> None:
    result = run(planted, "--inplace-audit-fail-on=any", "--inplace-audit")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.no_fnmatch_line("FAILED*test_clean_training_step*")


def test_the_ini_options_turn_it_on(planted: pytest.Pytester) -> None:
    planted.makeini("[pytest]\ninplace_audit = true\ninplace_audit_fail_on = any\n")
    run(planted).assert_outcomes(passed=1, failed=2)
    planted.makeini("[pytest]\ninplace_audit = true\ninplace_audit_fail_on = everything\n")
    result = run(planted)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*inplace_audit_fail_on = 'everything': choose one of *"])


def test_the_fixture_gives_the_report_and_the_flag_judges_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixture="""
        import torch

        def step(w):
            h = w.sigmoid()
            h.data.mul_(0.5)
            h.sum().backward()

        def test_reads_the_report(inplace_audit):
            w = torch.ones(3, requires_grad=True)
            report = inplace_audit(step, w)
            assert [f.consequence for f in report] == ["wrong gradients"]
            with inplace_audit() as again:
                step(w)
            assert not again.ok
        """
    )
    run(pytester).assert_outcomes(passed=1)
    result = run(pytester, "--inplace-audit")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*2 harmful in-place writes*", "*test_fixture.py:5: wrong grad*"])


def test_a_test_that_raises_keeps_its_error_beside_the_row(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_raises="""
        import torch

        def test_backward_after_relu_():
            h = torch.ones(3, requires_grad=True).sigmoid()
            torch.relu_(h)
            h.sum().backward()
        """
    )
    result = run(pytester, "--inplace-audit", "--inplace-audit-fail-on", "backward-fails")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*test_raises.py:5: backward fails*", "*(the test also raised RuntimeError: one of*"]
    )


def test_failing_rows_follow_the_fail_on_table() -> None:
    report = inplace_recipes.audit(_data_edit)  # no backward: nothing was computed wrong yet
    for fail_on in ("any", "unused-graph"):
        assert [r["consequence"] for r in pytest_plugin.failing_rows([report], fail_on)] == [
            "wrong gradients if backpropagated"
        ]
    assert pytest_plugin.failing_rows([report], "wrong-gradients") == []
    assert pytest_plugin.failing_rows([report], "backward-fails") == []
    with pytest.raises(KeyError):
        pytest_plugin.failing_rows([report], "everything")


def _data_edit() -> None:
    import torch

    h = torch.ones(3, requires_grad=True).sigmoid()
    h.data.mul_(0.5)


#: Forward-only tests: none runs a backward. The first writes through ``.data`` into a buffer
#: saved for backward (a vector quantizer's EMA update); the second catches autograd's refusal;
#: the third clips an activation through ``.data``.
FORWARD_ONLY = """\
import pytest
import torch


def test_ema_update_of_a_codebook_forward_only():
    x = torch.randn(3, 4, requires_grad=True)
    embed = torch.randn(5, 4)
    dist = torch.einsum("bd,kd->bk", x, embed)
    embed.data[1:3] = 0.0  # W:ema
    assert dist.shape == (3, 5)


def test_the_error_of_a_write_into_a_leaf():
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.add_(1)  # W:leaf


def test_a_clipped_activation_forward_only():
    h = torch.randn(3, 4, requires_grad=True) * 2
    h.data.clamp_(-1, 1)  # W:clip
    assert h.abs().max() <= 1
"""


@pytest.fixture
def forward_only(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_forward_only=FORWARD_ONLY)
    return pytester


def forward_line(marker: str) -> int:
    (line,) = [n for n, text in enumerate(FORWARD_ONLY.splitlines(), 1) if f"# W:{marker}" in text]
    return line


def audited(pytester: pytest.Pytester, fail_on: str) -> pytest.RunResult:
    return run(pytester, "--inplace-audit", "--inplace-audit-fail-on", fail_on)


def test_the_default_fails_no_forward_only_test(forward_only: pytest.Pytester) -> None:
    run(forward_only).assert_outcomes(passed=3)
    run(forward_only, "--inplace-audit").assert_outcomes(passed=3)


def test_unused_graph_is_the_class_for_forward_only_tests(forward_only: pytest.Pytester) -> None:
    result = audited(forward_only, "unused-graph")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            f"test_forward_only.py:{forward_line('ema')}: wrong gradients if backpropagated*",
            f"test_forward_only.py:{forward_line('clip')}: wrong gradients if backpropagated*",
        ]
    )


def test_backward_fails_fails_a_caught_refusal_and_nothing_else(
    forward_only: pytest.Pytester,
) -> None:
    result = audited(forward_only, "backward-fails")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"test_forward_only.py:{forward_line('leaf')}: raises*",
            "FAILED test_forward_only.py::test_the_error_of_a_write_into_a_leaf*",
        ]
    )
    audited(forward_only, "any").assert_outcomes(failed=3)


def test_the_same_write_with_a_backward_fails_the_default() -> None:
    """The forward-only write above, followed by a backward: wrong gradients, which the default fails."""
    import torch

    def step() -> None:
        x = torch.randn(3, 4, requires_grad=True)
        embed = torch.randn(5, 4)
        dist = torch.einsum("bd,kd->bk", x, embed)
        embed.data[1:3] = 0.0
        dist.sum().backward()

    report = inplace_recipes.audit(step)
    assert [r["consequence"] for r in pytest_plugin.failing_rows([report], "wrong-gradients")] == [
        "wrong gradients"
    ]


def test_the_docstring_names_every_class() -> None:
    doc = pytest_plugin.__doc__ or ""
    for name in pytest_plugin.FAIL_ON:
        assert f"``{name}``" in doc, name
