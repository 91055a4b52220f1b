"""
Residual blocks: ``ReLU(inplace=True)``, ``out += shortcut`` and backward hooks
===============================================================================

ResNet-style blocks save memory with ``nn.ReLU(inplace=True)`` and
``out += shortcut``. In torchvision's order those writes are safe; move the
ReLU before the addition and backward fails; register a full backward hook
(Grad-CAM, attribution and second-order optimizers do) on a module whose
output is then written in place (or whose input the module itself writes, as
an in-place ReLU does) and the *forward* fails; write its input in place
after the call and backward fails. This page
runs each case, lets
:func:`~inplace_recipes.auditing.audit` point at the line, and checks that the
out-of-place block gives the same gradients. Users report it in
`pytorch/pytorch#61519 <https://github.com/pytorch/pytorch/issues/61519>`_.
"""

# %%
# The block as torchvision writes it
# ----------------------------------
#
# Two convolutions, an in-place ReLU after the first, the shortcut added in
# place, an in-place ReLU last. ``relu_`` returns the very tensor it was
# given:
#
# >>> x = torch.tensor([-1.0, 2.0])
# >>> torch.relu_(x) is x, x
# (True, tensor([0., 2.]))

import inspect
from pathlib import Path

import torch
from torch import nn

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# sphinx_gallery_end_ignore


class Block(nn.Module):
    def __init__(self, inplace: bool = True) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=inplace)

    def forward(self, x):
        shortcut = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += shortcut
        out = self.relu(out)
        return out


class OutOfPlaceBlock(Block):
    """The same block with no in-place write: the known-good version."""

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + x
        return torch.relu(out)


torch.manual_seed(0)
block = Block()
good = OutOfPlaceBlock()
good.load_state_dict(block.state_dict())
x = torch.randn(2, 4, 5, 5)


def gradients(model, x):
    """Gradients of a fixed loss to the model's parameters and its input."""
    model.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_()
    (model(x) * torch.linspace(-1, 1, x.numel()).view_as(x)).sum().backward()
    return [x.grad] + [p.grad for p in model.parameters()]


def same(a, b):
    return all(torch.allclose(u, v, atol=1e-6) for u, v in zip(a, b, strict=True))


print("in-place block == out-of-place block:", same(gradients(block, x), gradients(good, x)))
# sphinx_gallery_start_ignore
assert same(gradients(block, x), gradients(good, x))
# sphinx_gallery_end_ignore

# %%
# In this order every write is safe: none of them changes a tensor that a
# backward step saved. The audit says so, line by line:

report = ir.audit(lambda: block(x.clone().requires_grad_()).sum().backward())
print(report)
# sphinx_gallery_start_ignore
assert report.error is None
records = report.to_records()
assert [(r["code"], r["consequence"]) for r in records] == [
    ("out = self.relu(self.bn1(self.conv1(x)))", "safe"),
    ("out += shortcut", "safe"),
    ("out = self.relu(out)", "safe"),
], records
assert all(r["file"].endswith(PAGE) for r in records)
# sphinx_gallery_end_ignore

# %%
# ReLU before the addition: backward fails
# -----------------------------------------
#
# Move the second ReLU before the addition, a common variant, and ``+=``
# overwrites the output that ``relu`` saved for its backward. Nothing
# fails until ``backward()``, which does not say where:


class ReluThenAdd(Block):
    def forward(self, x):
        shortcut = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += shortcut
        return out


relu_then_add = ReluThenAdd()
relu_then_add.load_state_dict(block.state_dict())
# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    relu_then_add(x).sum().backward()
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "relu then += did not fail"
assert "modified by an inplace operation" in str(error)
assert "which is output 0 of Relu, is at version 2; expected version 1" in str(error), str(error)
# sphinx_gallery_end_ignore

# %%
# The audit names the ``+=`` line and the ReLU that saved the tensor:

report = ir.audit(lambda: relu_then_add(x).sum().backward())
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == ["out += shortcut"], report.to_records()
assert fails[0]["file"].endswith(PAGE)
assert "Relu" in fails[0]["detail"], fails[0]
# sphinx_gallery_end_ignore

# %%
# A full backward hook where a write follows: the forward fails
# --------------------------------------------------------------
#
# ``register_full_backward_hook`` wraps a module's inputs and outputs in a
# ``BackwardHookFunction``, a custom autograd Function that returns them
# as views. Autograd forbids writing into such a view in place, at the write.
# Hook ``bn2``, as Grad-CAM does to read a layer's gradient, and ``+=`` writes
# into its output:

hooked = Block()
hooked.load_state_dict(block.state_dict())
seen = []
hooked.bn2.register_full_backward_hook(lambda module, grad_in, grad_out: seen.append(grad_out))
# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    hooked(x.clone().requires_grad_())
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "the hooked block did not fail"
hooked_output = hooked.bn2(torch.randn(2, 4, 5, 5, requires_grad=True))
assert hooked_output.grad_fn.name() == "BackwardHookFunctionBackward"
assert hooked_output._is_view()
assert str(error).startswith(
    "Output 0 of BackwardHookFunction is a view and is being modified inplace"
), str(error)
# sphinx_gallery_end_ignore

# %%
# ``nn.ReLU(inplace=False)`` does not help here: the ``+=`` itself writes the
# hooked output. A hook fails only where the hooked module's input or output
# is then written in place; on ``conv1``, ``conv2`` or the whole block, whose
# outputs nothing writes, the in-place block runs as it is:


def hooked_block(name, inplace=True):
    """A copy of ``block`` with a full backward hook on ``name`` (or on the block)."""
    model = Block(inplace)
    model.load_state_dict(block.state_dict())
    module = model if name == "block" else getattr(model, name)
    module.register_full_backward_hook(lambda module, grad_in, grad_out: None)
    return model


def runs(model):
    try:
        gradients(model, x)
    except RuntimeError as exc:
        return str(exc).split(" is a view")[0]
    return "runs"


for name, inplace in [("bn2", False), ("conv1", True), ("conv2", True), ("block", True)]:
    print(f"hook on {name}, ReLU(inplace={inplace}):", runs(hooked_block(name, inplace)))
# sphinx_gallery_start_ignore
assert runs(hooked_block("bn2", inplace=False)) == "Output 0 of BackwardHookFunction"
for name in ("conv1", "conv2", "block"):
    assert runs(hooked_block(name)) == "runs", name
    assert same(gradients(hooked_block(name), x), gradients(good, x)), name
# bn1 is followed by the in-place ReLU, which writes its hooked output
assert runs(hooked_block("bn1")) == "Output 0 of BackwardHookFunction"
assert runs(hooked_block("bn1", inplace=False)) == "runs"
# the input written after the call: the forward runs, backward fails
probe = nn.Linear(3, 3)
probe.register_full_backward_hook(lambda module, grad_in, grad_out: None)
probe_h = torch.randn(2, 3, requires_grad=True) * 1
probe_y = probe(probe_h)
probe_h.add_(1)  # no error here
probe_error = None
try:
    probe_y.sum().backward()
except RuntimeError as exc:
    probe_error = exc
assert probe_error is not None, "backward ran after the hooked input was written"
assert str(probe_error).startswith(
    "Output 0 of BackwardHookFunction is a view and its base or another view of its base "
    "has been modified inplace"
), probe_error
# sphinx_gallery_end_ignore

# %%
# Hook the shared ``relu`` module instead and it is the in-place ReLU that
# writes into its own (wrapped) input. The audit reports both as ``raises``,
# at the line that wrote:

for name in ("bn2", "relu"):
    hooked = Block()
    hooked.load_state_dict(block.state_dict())
    getattr(hooked, name).register_full_backward_hook(lambda module, grad_in, grad_out: None)
    report = ir.audit(hooked, x.clone().requires_grad_())
    print(f"hook on {name}:")
    print(report)
    # sphinx_gallery_start_ignore
    raised = [r for r in report.to_records() if r["consequence"] == "raises"]
    expected = {"bn2": "out += shortcut", "relu": "out = self.relu(self.bn1(self.conv1(x)))"}
    assert [r["code"] for r in raised] == [expected[name]], report.to_records()
    assert raised[0]["file"].endswith(PAGE)
    assert raised[0]["kind"] == "view from a custom Function", raised[0]
    # sphinx_gallery_end_ignore

# %%
# The fix: out of place, then hook anything
# -----------------------------------------
#
# Take every in-place op on a hooked module's input or output out of place:
# ``out = out + shortcut`` and ``inplace=False`` (or ``torch.relu``). The
# audit finds nothing, the hook fires, and the gradients are those of the
# in-place block without hooks. (Or hook the enclosing block, above, and keep
# the in-place writes.)

fixed = OutOfPlaceBlock()
fixed.load_state_dict(block.state_dict())
seen = []
fixed.bn2.register_full_backward_hook(lambda module, grad_in, grad_out: seen.append(grad_out))
report = ir.audit(lambda: gradients(fixed, x))
print(report)
print("hook saw grad_output of shape", tuple(seen[-1][0].shape))
print("hooked out-of-place == unhooked in-place:", same(report.result, gradients(block, x)))
# sphinx_gallery_start_ignore
assert report.error is None
assert report.findings == []
assert seen
assert seen[-1][0].shape == (2, 4, 5, 5)
assert same(report.result, gradients(block, x))
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `pytorch/pytorch#61519 <https://github.com/pytorch/pytorch/issues/61519>`_:
#   "Inplace ReLU incompatible with backward hook".
# - `torch.nn.Module.register_full_backward_hook
#   <https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook>`_
# - :doc:`/auto_recipes/tools/plot_audit_model`: the audit on a whole model.
# - :doc:`The error reference </errors>`: both messages, with their fixes.
