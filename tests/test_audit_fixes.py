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
from inplace_recipes.auditing.advice import out_of_place

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
