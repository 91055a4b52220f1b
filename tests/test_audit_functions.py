"""audit() on custom autograd Functions and on torch.compile'd code.

A Function that writes its input and calls ``ctx.mark_dirty`` is safe (its
gradients are right); one that does not is ``wrong gradients`` when the
tensor it wrote is used again (on a non-leaf and on a leaf that requires
grad), and ``wrong gradients if reused`` when it is not, where the gradients
are right. A compiled function is audited as eager
code runs it, and the audit never fails inside Dynamo.

Torch 2.14 moved ``Function.apply`` into C++: the audit then finds a forward by
its class, not by the ``apply`` frame of torch 2.13. The Function cases run both
ways on every release (``forward_found``).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest
import torch
from torch import Tensor

from inplace_recipes import audit
from inplace_recipes.auditing import _recorder


class DoubleMarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        return 2 * grad


class DoubleUnmarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        return 2 * grad


class DoubleMarkedInSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(x: Tensor) -> Tensor:
        x.mul_(2)
        return x

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Tensor], output: Tensor) -> None:
        ctx.mark_dirty(inputs[0])

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        return 2 * grad


@pytest.fixture(params=["as this release calls it", "by its class"])
def forward_found(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit finds a Function's forward by torch 2.13's ``apply`` frame, or as on 2.14."""
    if request.param == "by its class":
        monkeypatch.setattr(_recorder, "_APPLY_IN_PYTHON", False)


def test_apply_is_python_exactly_before_torch_2_14() -> None:
    """Torch 2.14 made ``Function.apply`` ``_C._FunctionBase.apply`` (pytorch/pytorch#190694)."""
    assert _recorder._APPLY_IN_PYTHON is (torch.__version__ < "2.14.0")


def test_a_forward_is_found_by_its_class_and_nothing_else_is() -> None:
    seen: dict[str, bool] = {}

    def here(label: str) -> None:
        seen[label] = _recorder._runs_a_function_method(sys._getframe(1))

    class Old(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            here("forward")
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Tensor:
            return 2 * grad

    class New(torch.autograd.Function):
        @staticmethod
        def forward(x: Tensor) -> Tensor:
            here("forward without ctx")
            return x * 2

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Tensor], output: Tensor) -> None:
            here("setup_context")

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Tensor:
            return 2 * grad

    class Inherited(Old):
        pass

    class Module(torch.nn.Module):
        def forward(self, x: Tensor) -> Tensor:
            here("a module's forward")
            return x

    x = torch.ones(2, requires_grad=True)
    Old.apply(x)
    New.apply(x)
    Module()(x)
    here("a function")
    assert seen == {
        "forward": True,
        "forward without ctx": True,
        "setup_context": True,
        "a module's forward": False,
        "a function": False,
    }
    seen.clear()
    Inherited.apply(x)
    assert seen == {"forward": True}


def double_then_reuse(a: Tensor, double: Any) -> Tensor:
    h = a * 1
    y = double(h)
    (y + h * 3).sum().backward()
    return h


def known_good(a: Tensor) -> Tensor:
    h = a * 1
    h = h * 2
    return torch.autograd.grad((h + h * 3).sum(), a)[0]


@pytest.mark.usefixtures("forward_found")
@pytest.mark.parametrize("function", [DoubleMarked, DoubleMarkedInSetupContext])
def test_marked_dirty_write_is_safe_and_its_gradients_are_right(function: Any) -> None:
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    report = audit(double_then_reuse, a, function.apply)
    records = report.to_records()
    assert [(r["code"], r["consequence"]) for r in records] == [("x.mul_(2)", "safe")], records
    assert report.ok
    assert report.error is None
    assert a.grad is not None
    assert torch.equal(a.grad, known_good(a.detach().requires_grad_()))


@pytest.mark.usefixtures("forward_found")
def test_unmarked_write_is_wrong_gradients_and_they_are() -> None:
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    report = audit(double_then_reuse, a, DoubleUnmarked.apply)
    records = report.to_records()
    assert [(r["code"], r["consequence"]) for r in records] == [("x.mul_(2)", "wrong gradients")]
    assert records[0]["fix"].startswith("x.mul_(2); ctx.mark_dirty(x)"), records[0]
    assert "used again at" in records[0]["detail"], records[0]
    assert a.grad is not None
    assert not torch.equal(a.grad, known_good(a.detach().requires_grad_()))


def double_then_rebind(a: Tensor, double: Any) -> None:
    h = a * 1
    h = double(h)
    ((h * h).sum() + h[1:].sum()).backward()  # the output and a view of it: never the old h


@pytest.mark.usefixtures("forward_found")
def test_unmarked_write_not_used_again_is_not_called_wrong_gradients_and_they_are_right() -> None:
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    report = audit(double_then_rebind, a, DoubleUnmarked.apply)
    records = report.to_records()
    assert [(r["code"], r["consequence"]) for r in records] == [
        ("x.mul_(2)", "wrong gradients if reused")
    ], records
    assert records[0]["fix"].startswith("x = x.mul(2)"), records[0]
    b = a.detach().requires_grad_()
    h = 2 * (b * 1)
    ((h * h).sum() + h[1:].sum()).backward()
    assert a.grad is not None
    assert torch.equal(a.grad, b.grad)


@pytest.mark.usefixtures("forward_found")
def test_a_view_of_the_written_tensor_made_after_the_function_is_a_use_again() -> None:
    def double_then_view(a: Tensor) -> None:
        h = a * 1
        y = DoubleUnmarked.apply(h)
        (y + h[0]).sum().backward()

    report = audit(double_then_view, torch.ones(3, requires_grad=True))
    assert [r["consequence"] for r in report.to_records()] == ["wrong gradients"]


@pytest.mark.usefixtures("forward_found")
def test_unmarked_write_into_a_leaf_is_reported() -> None:
    leaf = torch.ones(3, requires_grad=True)
    report = audit(DoubleUnmarked.apply, leaf)
    records = report.to_records()
    assert [(r["consequence"], r["kind"]) for r in records] == [
        ("wrong gradients if reused", "leaf written in a custom Function")
    ], records
    assert torch.equal(leaf.detach(), torch.full((3,), 2.0))  # the leaf changed, silently

    def leaf_used_again(leaf: Tensor) -> None:
        (DoubleUnmarked.apply(leaf) + leaf * 3).sum().backward()

    report = audit(leaf_used_again, torch.ones(3, requires_grad=True))
    assert [r["consequence"] for r in report.to_records()] == ["wrong gradients"]


@pytest.mark.usefixtures("forward_found")
def test_a_later_torch_call_inside_forward_does_not_settle_the_write_early() -> None:
    class WriteThenCompute(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> tuple[Tensor, Tensor]:
            x.add_(1)
            other = x * 2  # a torch call after the write, before mark_dirty
            ctx.mark_dirty(x)
            return x, other

        @staticmethod
        def backward(ctx: Any, grad: Tensor, grad_other: Tensor) -> Tensor:
            return grad + 2 * grad_other

    a = torch.ones(2, requires_grad=True)
    report = audit(lambda: sum(t.sum() for t in WriteThenCompute.apply(a * 1)).backward())
    assert [r["consequence"] for r in report.to_records()] == ["safe"], report.to_records()


def write_then_scale(x: Tensor) -> Tensor:
    y = x * 1
    y[0] = 0.0
    y[1:] *= 2
    return y


def exp_then_write(x: Tensor) -> Tensor:
    y = x.exp()
    y[0] = 0.0
    return y


# Dynamo reads .grad of the intermediate tensors it passes to the recorder.
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")
def test_compiled_function_is_audited_as_eager_code_without_crashing() -> None:
    torch._dynamo.reset()
    compiled = torch.compile(write_then_scale, backend="aot_eager")
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    report = audit(lambda: compiled(x).sum().backward())
    assert report.error is None, repr(report.error)
    records = report.to_records()
    assert {r["code"] for r in records} == {"y[0] = 0.0", "y[1:] *= 2"}, records
    assert {r["consequence"] for r in records} == {"safe"}
    assert all(r["inside"] is None for r in records), records
    assert x.grad is not None
    assert torch.equal(x.grad, torch.tensor([0.0, 2.0, 2.0]))


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")
def test_compiled_write_into_a_saved_tensor_is_found() -> None:
    torch._dynamo.reset()
    compiled = torch.compile(exp_then_write, backend="aot_eager")
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # AOTAutograd's anomaly-mode traceback
        report = audit(lambda: compiled(x).sum().backward())
    fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
    assert [r["code"] for r in fails] == ["y[0] = 0.0"], report.to_records()
    assert fails[0]["fix"] == "y = inplace_recipes.at(y)[0].set(0.0)"
    assert type(report.error) is RuntimeError
