"""Every fix line the audit prints is code that runs and removes the write.

For each in-place op, a function writes into a tensor that ``exp`` saved; the
audit's fix for that line is executed on a copy of the tensor and must give the
values the in-place op gives, without writing into the saved tensor.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from inplace_recipes import audit
from inplace_recipes.auditing._advice import out_of_place

#: (the call on ``y``, written as on the user's line); names from ``namespace()``.
CALLS = [
    "y.copy_(b)",
    "y.copy_(b64)",
    "y.copy_(b[0])",
    "y.fill_(2.0)",
    "y.zero_()",
    "y.index_put_((idx,), v.unsqueeze(1))",
    "y.masked_fill_(mask, 0.0)",
    "y.clamp_(min=0.5)",
    "y.clamp_min_(1.0)",
    "y.add_(b, alpha=2)",
    "y.mul_(2)",
    "y.index_add_(1, idx, v.unsqueeze(0).expand(3, 2))",
    "y.index_fill_(1, idx, 1.0)",
    "y.index_copy_(1, idx, v.unsqueeze(0).expand(3, 2))",
    "y.scatter_(1, idx.unsqueeze(0).expand(3, 2), 7.0)",
    "y.masked_scatter_(mask, b)",
    "y.put_(idx, v)",
    "y.uniform_()",
    "y.normal_()",
    "y.exponential_()",
    "y.random_(0, 5)",
    "y.bernoulli_(0.5)",
    "y.fill_diagonal_(3.0)",
    "y.sigmoid_()",
    "y.exp_()",
    "y.t_()",
]


def namespace() -> dict[str, object]:
    gen = torch.Generator().manual_seed(0)
    b = torch.randn(3, 4, generator=gen)
    return {
        "b": b,
        "b64": b.double(),
        "idx": torch.tensor([0, 2]),
        "v": torch.tensor([5.0, 6.0]),
        "mask": torch.tensor([True, False, True, False]).expand(3, 4),
    }


@pytest.fixture(scope="module")
def writers(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """A module with one function per call: ``y = x.exp()`` (saved), then the call."""
    lines = []
    for number, call in enumerate(CALLS):
        lines += [
            f"def write_{number}(x, b, b64, idx, v, mask):",
            "    y = x.exp()",
            f"    {call}",
            "    return y",
            "",
        ]
    path = Path(tmp_path_factory.mktemp("fixes")) / "writers.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("writers", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["writers"] = module
    spec.loader.exec_module(module)
    return module


def names_in(code: str) -> list[str]:
    """The methods and torch functions ``code`` calls."""
    return re.findall(r"\.(\w+)\(", code)


@pytest.mark.parametrize("number", range(len(CALLS)), ids=CALLS)
def test_fix_line_runs_and_gives_the_in_place_values(writers: ModuleType, number: int) -> None:
    call = CALLS[number]
    x = torch.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()
    values = namespace()
    report = audit(getattr(writers, f"write_{number}"), x, **values)
    assert report.error is None, report.error
    values["torch"] = torch
    records = [r for r in report.to_records() if r["consequence"] == "fails if backpropagated"]
    assert [r["code"] for r in records] == [call], report.to_records()
    fix = records[0]["fix"]
    assert isinstance(fix, str), records[0]
    assert fix.startswith("y = "), fix
    code = fix.split("#")[0].strip()
    for name in names_in(code):
        assert hasattr(torch.Tensor, name) or hasattr(torch, name), (name, fix)

    saved = x.detach().exp()
    before = saved.clone()
    expected = saved.clone()
    torch.manual_seed(1)
    eval(call, {**values, "y": expected})  # the op itself, on a copy
    scope = {**values, "y": saved}
    torch.manual_seed(1)
    exec(code, scope)  # noqa: S102 - the fix line, as printed
    assert torch.equal(saved, before), f"{fix} wrote into the saved tensor"
    assert scope["y"] is not saved, fix
    assert scope["y"].dtype == expected.dtype, fix
    assert torch.equal(scope["y"], expected), fix


@pytest.mark.parametrize(
    "name", ["copy_", "fill_", "zero_", "index_put_", "masked_fill_", "clamp_", "normal_"]
)
def test_fix_without_the_arguments_names_real_functions(name: str) -> None:
    code = out_of_place(name, "x", "...")
    assert code.startswith(("x.", "torch.")), code
    for method in names_in(code):
        assert hasattr(torch.Tensor, method) or hasattr(torch, method), (method, code)


def _no_grad_shift(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    with torch.no_grad():
        y.add_(1.0)
    return (y * y).sum()


def _no_grad_scale(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    with torch.no_grad():
        y.mul_(3.0)
    return (y * y).sum()


def _no_grad_shift_by_x(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    with torch.no_grad():
        y.add_(x)
    return (y * y).sum()


@pytest.mark.parametrize(
    ("fn", "consequence", "true_grad"),
    [
        (_no_grad_shift, "safe", lambda x: 4 * (2 * x + 1)),  # d/dx (2x + 1)^2
        (_no_grad_scale, "wrong gradients", lambda x: 72 * x),  # d/dx (6x)^2
        (_no_grad_shift_by_x, "wrong gradients", lambda x: 18 * x),  # d/dx (3x)^2
    ],
    ids=["shift by a constant", "scale", "shift by x"],
)
def test_no_grad_write_on_a_non_leaf_is_wrong_gradients_only_when_they_are(
    fn: object, consequence: str, true_grad: object
) -> None:
    """A no_grad write autograd does not see leaves the gradients right when its
    derivative is 1 (a shift by a constant); the audit says so, and says wrong
    gradients where backward's answer differs from the true derivative."""
    assert callable(fn)
    assert callable(true_grad)
    x0 = torch.linspace(-1, 1, 3, dtype=torch.float64)
    x = x0.clone().requires_grad_()
    with audit() as report:
        fn(x).backward()
    assert [r["consequence"] for r in report.to_records()] == [consequence]
    right = torch.allclose(x.grad, true_grad(x0))
    assert right == (consequence == "safe"), (x.grad, true_grad(x0))


@pytest.mark.parametrize(
    "code",
    [
        "with torch.no_grad(): h.mul_(2)",
        "h = x.sigmoid(); h.mul_(2)",
        "h.mul_(2); z = h",
        "run(lambda h: h.mul_(2))",
        "if h.mul_(2).sum() > 0: pass",
        "for _ in range(1): h.mul_(2)",
    ],
)
def test_the_rewritten_line_parses_and_keeps_the_statement_order(code: str) -> None:
    from inplace_recipes.auditing._advice import _rewrite_call

    fix = _rewrite_call(code, "mul_", False)
    if fix is None:  # not a statement of its own: the audit says it in words
        assert "lambda" in code or code.startswith("if "), code
        return
    compile(fix, "<fix>", "exec")
    assert "no_grad" not in fix, fix
    if code.startswith("h = x.sigmoid()"):
        assert fix.index("x.sigmoid()") < fix.index("h.mul(2)"), fix
