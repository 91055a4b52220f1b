"""
Find the in-place operations in your model
==========================================

``one of the variables needed for gradient computation has been modified by an
inplace operation`` fires in ``backward()``, far from the line at fault, and a
``.data`` edit raises nothing at all: it just gives wrong gradients.
:func:`inplace_recipes.auditing.audit` runs your code once and lists every in-place write on
a tensor of the autograd graph, with its file and line, what backward will do
about it, and the out-of-place recipe that removes it.
"""

# %%
# A model with three hidden in-place writes
# -----------------------------------------
#
# ``nn.ReLU(inplace=True)`` overwrites the output that ``sigmoid`` saved for its
# backward; the residual ``r += h`` overwrites the output that ``tanh`` saved; and
# ``r.data.clamp_`` edits a value behind autograd's back. The last line, a
# ``r[:, 0] = 0`` on a non-leaf, is safe: autograd records it as ``CopySlices``.

import torch
from torch import nn

import inplace_recipes as ir


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 6)
        self.lin2 = nn.Linear(6, 6)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.sigmoid(self.lin1(x))
        h = self.act(h)
        r = torch.tanh(self.lin2(h))
        r += h
        r.data.clamp_(max=0.5)
        r[:, 0] = 0.0
        return r


torch.manual_seed(0)
net = Net()
x = torch.randn(5, 4)

# %%
# Backward fails, and the message does not say where
# ----------------------------------------------------

try:
    net(x).sum().backward()
except RuntimeError as exc:
    error = exc
    print(error)

# %%
# :func:`~inplace_recipes.error_reference.explain` says what it means and links the
# :ref:`error reference <error-saved-tensor-modified>`:

print(ir.explain(error))

# %%
# Audit one step
# --------------
#
# ``audit(fn, *args)`` calls ``fn`` and returns the report; the error ``fn``
# raised is kept in ``report.error`` so that the report can be read. The table
# puts the worst first: wrong gradients, then writes that break backward.

report = ir.audit(lambda: net(x).sum().backward())
print(report)

# sphinx_gallery_start_ignore
assert [f.consequence for f in report] == [
    "backward fails",
    "backward fails",
    "wrong gradients",
    "safe",
]
assert all(f.file.endswith("plot_audit_model.py") for f in report), [f.file for f in report]
# sphinx_gallery_end_ignore

# %%
# ``report.to_records()`` gives the same as plain dicts, for tests and tools:

print(report.to_records()[0])

# %%
# Apply the recipes
# -----------------
#
# Each fix is the line the report suggests: ``inplace=False``, ``r = r + h``, an
# out-of-place ``clamp``. The safe ``r[:, 0] = 0`` becomes a ``select_scatter``
# recipe too, so the whole forward is out of place.


class FixedNet(Net):
    def forward(self, x):
        h = torch.sigmoid(self.lin1(x))
        h = torch.relu(h)
        r = torch.tanh(self.lin2(h))
        r = r + h
        r = r.clamp(max=0.5)
        return ir.RECIPES["select_scatter"](r, (slice(None), 0), 0.0)


fixed = FixedNet()
fixed.load_state_dict(net.state_dict())
report = ir.audit(lambda: fixed(x).sum().backward())
print(report)
assert report.findings == []
assert report.error is None

# %%
# Check the gradients
# -------------------
#
# The recipe agrees with ``clone()`` then setitem, forward and backward:

r = torch.tanh(fixed.lin2(torch.relu(torch.sigmoid(fixed.lin1(x)))))
print(ir.compare_gradients(r, (slice(None), 0), 0.0, ["select_scatter", "where"]))

# %%
# and the whole fixed model passes :func:`torch.autograd.gradcheck` in float64,
# with respect to its input, so its gradients are the true ones:

fixed64 = FixedNet().double()
fixed64.load_state_dict(net.state_dict())
x64 = (x.double() * 0.1).requires_grad_()
print(torch.autograd.gradcheck(fixed64, (x64,)))

# %%
# The ``.data`` edit was silent: keep the two in-place writes that raise out of
# the model and compare its gradients with the fixed model's. They differ, with
# no error.


class DataEditNet(FixedNet):
    def forward(self, x):
        h = torch.relu(torch.sigmoid(self.lin1(x)))
        r = torch.tanh(self.lin2(h)) + h
        r.data.clamp_(max=0.5)
        return ir.RECIPES["select_scatter"](r, (slice(None), 0), 0.0)


silent = DataEditNet()
silent.load_state_dict(net.state_dict())
silent(x).sum().backward()
fixed.zero_grad()
fixed(x).sum().backward()
print(
    "largest difference in lin1.weight.grad:",
    (silent.lin1.weight.grad - fixed.lin1.weight.grad).abs().max().item(),
)

# sphinx_gallery_start_ignore
assert not torch.allclose(silent.lin1.weight.grad, fixed.lin1.weight.grad)
# sphinx_gallery_end_ignore

# %%
# What an audit costs
# -------------------
#
# The audit runs Python for every op, so audit a few steps, not a training
# run. Measured here, when this page was built, on a 3-layer MLP (64 wide,
# batch 32, one thread), after checking that the audit leaves the gradients
# unchanged. Outside ``with ir.audit()`` nothing is installed and nothing runs.

from torch.utils.benchmark import Timer

torch.manual_seed(0)
mlp = torch.nn.Sequential(
    torch.nn.Linear(64, 64),
    torch.nn.ReLU(),
    torch.nn.Linear(64, 64),
    torch.nn.ReLU(),
    torch.nn.Linear(64, 64),
)
batch = torch.randn(32, 64)


def step():
    mlp.zero_grad(set_to_none=True)
    mlp(batch).sum().backward()
    return [p.grad for p in mlp.parameters()]


def audited_step():
    with ir.audit():
        return step()


assert all(torch.equal(a, b) for a, b in zip(step(), audited_step(), strict=True))
times = {
    name: Timer("fn()", globals={"fn": fn}, num_threads=1).blocked_autorange(min_run_time=1).median
    for name, fn in [("without audit", step), ("with audit", audited_step)]
}
for name, seconds in times.items():
    print(f"{name:14} {seconds * 1e3:.2f} ms per forward + backward")
print(f"overhead: {times['with audit'] / times['without audit']:.1f}x")

# %%
# Learn more
# ----------
#
# - :doc:`The error reference </errors>`: every in-place error of torch 2.13, with its fix.
# - `Autograd mechanics: in-place operations
#   <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`_
# - `torch.autograd.graph.saved_tensors_hooks
#   <https://pytorch.org/docs/stable/autograd.html#saved-tensors-default-hooks>`_, and why
#   the audit does not use them: any such hook turns the version check off.
