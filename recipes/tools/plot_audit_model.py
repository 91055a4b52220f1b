"""
Find the in-place operations in your model
==========================================

``one of the variables needed for gradient computation has been modified by an
inplace operation`` fires in ``backward()``, far from the line at fault, and a
``.data`` edit raises nothing: it just gives wrong gradients.
:func:`inplace_recipes.auditing.audit` runs your code once and lists the in-place writes
it sees on tensors of the autograd graph, with their file and line, what backward
will do about each, and the out-of-place recipe that removes it. It sees the
torch calls made on the calling thread inside the audit, into graphs built
there: run the forward inside it. What it does not see is listed at the end.
"""

# %%
# A model with four hidden in-place writes
# -----------------------------------------
#
# ``nn.ReLU(inplace=True)`` overwrites the output that ``sigmoid`` saved for its
# backward; the residual ``r += h`` overwrites the output that ``tanh`` saved;
# ``r.data.clamp_`` edits that output behind autograd's back; and ``r[:, 0] = 0``
# writes it once more. That last write is not safe either: ``r`` is still the
# output ``tanh`` saved, so it breaks backward on its own (checked below).

import inspect
import warnings
from pathlib import Path

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
# Each of the three writes that break backward breaks it by itself, not just
# the first one: the two lines ``r = torch.tanh(...)`` and ``r[:, 0] = 0.0``
# alone fail, naming ``Tanh``.

from inplace_recipes.claims import claim, expect, verify


@claim(
    "setitem_on_saved_tanh_output_fails",
    "r[:, 0] = 0 on the output tanh saved makes backward fail, with no other write",
)
def _setitem_on_saved_output() -> str:
    r = torch.tanh(torch.randn(5, 6, requires_grad=True))
    r[:, 0] = 0.0
    try:
        r.sum().backward()
    except RuntimeError as exc:
        message = str(exc)
        return expect("output 0 of Tanh, is at version 1" in message, message.split(";")[0])
    return expect(False, "backward ran")


print(verify("setitem_on_saved_tanh_output_fails"))

# %%
# Audit one step
# --------------
#
# ``audit(fn, *args)`` calls ``fn`` and returns the report; the error ``fn``
# raised is kept in ``report.error`` so that the report can be read. The table
# has one row per source line, worst first (wrong gradients, then writes that
# break backward), each with the line, which node saved the tensor, and a fix
# written with the line's own names. Writes that need no fix are summed up
# in one line under the table, without a fix.

report = ir.audit(lambda: net(x).sum().backward())
print(report)

# sphinx_gallery_start_ignore
assert [f.consequence for f in report] == [
    "backward fails",
    "backward fails",
    "wrong gradients",
    "backward fails",
], report
assert report.worst_first()[0].consequence == "wrong gradients"
assert all(
    f.file == "plot_audit_model.py" or f.file.endswith("/plot_audit_model.py") for f in report
)
assert all(f.fix for f in report)
# sphinx_gallery_end_ignore

# %%
# Run the same forward without a backward, as an evaluation that forgot
# ``torch.no_grad()`` does, and nothing fails: the writes that broke backward
# above are now ``fails if backpropagated``, and the ``.data`` write is
# ``wrong gradients if backpropagated``: no gradient was computed, but a
# backward through it would run and be wrong. Both are classes of their own,
# which ``--fail-on backward-fails`` and ``wrong-gradients`` do not fail on
# (``unused-graph`` and ``any`` do).

evaluation = ir.audit(net, x)
print(evaluation)

# sphinx_gallery_start_ignore
assert evaluation.error is None
assert [f.consequence for f in evaluation] == [
    "fails if backpropagated",
    "fails if backpropagated",
    "wrong gradients if backpropagated",
    "fails if backpropagated",
], evaluation
from inplace_recipes.auditing import FAIL_ON

assert not {"fails if backpropagated", "wrong gradients if backpropagated"} & set(
    FAIL_ON["backward-fails"] + FAIL_ON["wrong-gradients"]
)
assert {"fails if backpropagated", "wrong gradients if backpropagated"} <= set(
    FAIL_ON["unused-graph"]
) & set(FAIL_ON["any"])
# sphinx_gallery_end_ignore

# %%
# ``report.to_records()`` gives the same rows as plain, JSON-ready dicts, for
# tests and tools. Their keys are fixed (``inplace_recipes.auditing.RECORD_FIELDS``):
# ``file`` (relative to the working directory), ``line``, ``code``,
# ``consequence``, ``op``, ``kind``, ``count`` (calls of that line), ``fix``
# (``None`` when harmless), ``detail``, ``slug`` (the error reference section),
# ``tensor``, ``after`` (the op that made the tensor) and ``inside`` (torch's
# file that made the write, when the line called torch).

print(report.to_records()[0])

# %%
# Apply the recipes
# -----------------
#
# Each fix is the line the report suggests: ``inplace=False``, ``r = r + h``, an
# out-of-place ``clamp``, and a recipe for ``r[:, 0] = 0`` (here ``select_scatter``;
# the report's ``at(r)[:, 0].set(0.0)`` picks one for you).


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
# A graph kept with ``retain_graph=True``
# ----------------------------------------
#
# Two heads on one trunk, ``loss1.backward(retain_graph=True)``, then
# ``loss2.backward()`` and an optimizer step. The step writes weights that the
# first head's graph saved, but that graph is never backpropagated through
# again: the audit judges each write by the backwards that really ran after
# it, so the step is not an error. It is summed up as "harmless unless you
# backward through them again".

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
head1, head2 = nn.Linear(8, 3), nn.Linear(8, 1)
heads = [*trunk.parameters(), *head1.parameters(), *head2.parameters()]
opt = torch.optim.AdamW(heads, lr=0.1)
xb, y1, y2 = torch.randn(16, 4), torch.randint(0, 3, (16,)), torch.randn(16)


def two_heads():
    opt.zero_grad()
    features = trunk(xb)
    loss1 = nn.functional.cross_entropy(head1(features), y1)
    loss2 = nn.functional.mse_loss(head2(features).squeeze(1), y2)
    loss1.backward(retain_graph=True)
    loss2.backward()
    opt.step()


before = [p.detach().clone() for p in heads]
report = ir.audit(two_heads)
print(report)

# %%
# The gradients were right: one backward of ``loss1 + loss2`` on a copy, with no
# graph kept, gives the same step.

after = [p.detach().clone() for p in heads]
with torch.no_grad():
    for p, b in zip(heads, before, strict=True):
        p.copy_(b)
opt = torch.optim.AdamW(heads, lr=0.1)
opt.zero_grad()
features = trunk(xb)
(
    nn.functional.cross_entropy(head1(features), y1)
    + nn.functional.mse_loss(head2(features).squeeze(1), y2)
).backward()
opt.step()
print(all(torch.allclose(p, a) for p, a in zip(heads, after, strict=True)))

# sphinx_gallery_start_ignore
assert report.ok, report
assert report.error is None
assert all(torch.allclose(p, a) for p, a in zip(heads, after, strict=True))
# sphinx_gallery_end_ignore

# %%
# Step between the two backwards instead, and the second backward does need the
# old weights (the trunk is shared). The audit blames ``opt.step()``, the line
# you wrote, not the ``addcdiv_`` inside torch, and says where the step belongs:


def step_too_early():
    opt.zero_grad()
    features = trunk(xb)
    loss1 = nn.functional.cross_entropy(head1(features), y1)
    loss2 = nn.functional.mse_loss(head2(features).squeeze(1), y2)
    loss1.backward(retain_graph=True)
    opt.step()
    loss2.backward()


report = ir.audit(step_too_early)
print(report)

# sphinx_gallery_start_ignore
assert not report.ok
assert isinstance(report.error, RuntimeError)
assert {r["code"] for r in report.to_records() if r["fix"]} == {"opt.step()"}, report
# sphinx_gallery_end_ignore

# %%
# A ``.data`` write into a buffer that backward saved
# -----------------------------------------------------
#
# A vector quantizer updates its codebook, a buffer that does not require
# grad, with ``embed.data.copy_(...)`` after the forward that used it. Nothing
# raises: ``.data`` gives a tensor with a version counter of its own, so
# autograd's check does not see the write, and the backward computes ``x``'s
# gradient from the new codebook. The audit says ``wrong gradients``, and that
# the tensor written has its own version counter; the same write without
# ``.data`` (or through ``detach()``) moves the saved tensor's counter, and is
# ``backward fails``.

xq = torch.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()


class Quantizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("embed", torch.linspace(-0.5, 0.5, 20).reshape(5, 4))

    def forward(self, x):
        dist = torch.einsum("bd,kd->bk", x, self.embed)  # saves embed for x's gradient
        self.embed.data.copy_(torch.zeros(5, 4))  # the EMA update
        return dist


report = ir.audit(lambda: Quantizer()(xq).sum().backward())
print(report)
codebook = Quantizer().embed
right = torch.autograd.grad(torch.einsum("bd,kd->bk", xq, codebook).sum(), xq)[0]
print("x.grad is the gradient through the old codebook:", torch.allclose(xq.grad, right))

# %%
# The fix rebinds the buffer to a new tensor, so that the backward keeps the
# codebook it saved:


class FixedQuantizer(Quantizer):
    def forward(self, x):
        dist = torch.einsum("bd,kd->bk", x, self.embed)
        self.embed = torch.empty_like(self.embed).copy_(torch.zeros(5, 4))
        return dist


xq.grad = None
quantizer = FixedQuantizer()
quantizer(xq).sum().backward()
print(
    "after the fix:",
    torch.allclose(xq.grad, right),
    "and the codebook is updated:",
    bool((quantizer.embed == 0).all()),
)

# sphinx_gallery_start_ignore
(row,) = report.to_records()
assert row["consequence"] == "wrong gradients", row
assert row["kind"] == ".data alias of a saved tensor"
assert "version counter of its own" in row["detail"]
assert row["fix"] == "self.embed = torch.empty_like(self.embed).copy_(torch.zeros(5, 4))", row
assert report.error is None
assert torch.allclose(xq.grad, right)  # the fixed step
assert ir.audit(lambda: FixedQuantizer()(xq).sum().backward()).ok
xq.grad = None
Quantizer()(xq).sum().backward()
assert not torch.allclose(xq.grad, right)
assert torch.equal(xq.grad, torch.zeros_like(xq.grad))  # from the zeroed codebook


def in_place(embed):
    dist = torch.einsum("bd,kd->bk", xq, embed)
    embed.copy_(torch.zeros(5, 4))
    dist.sum().backward()


def through_detach(embed):
    dist = torch.einsum("bd,kd->bk", xq, embed)
    embed.detach().copy_(torch.zeros(5, 4))
    dist.sum().backward()


for other in (in_place, through_detach):
    broke = None
    try:
        other(codebook.clone())
    except RuntimeError as exc:
        broke = exc
    assert "modified by an inplace operation" in str(broke), other
    found = ir.audit(other, codebook.clone())
    assert [f.consequence for f in found] == ["backward fails"], found
xq.grad = None
# sphinx_gallery_end_ignore

# %%
# Checkpointed code
# -----------------
#
# ``torch.utils.checkpoint.checkpoint`` runs the forward again inside the
# backward, and the audit watches that recomputation too: a write in it is
# reported at your line, with what autograd then does. The reentrant
# checkpoint (``use_reentrant=True``) backpropagates through its recomputed
# forward with the usual version check, and fails. The non-reentrant one
# checks no version of what it recomputed: the backward runs on the written
# values, and its gradients are wrong. (It stops recomputing once it has what
# the backward needs, so a write after the last saved tensor is never run
# again, and is safe.) ``checkpoint_sequential`` is either kind.

from torch.utils.checkpoint import checkpoint


def doubled_then_exp(h):
    s = torch.sigmoid(h)
    s.mul_(2)  # sigmoid saved s for its backward
    return s.exp().sum()


xc = torch.linspace(-1, 1, 4).requires_grad_()
for reentrant in (True, False):
    xc.grad = None
    report = ir.audit(
        lambda r=reentrant: checkpoint(doubled_then_exp, xc, use_reentrant=r).backward()
    )
    print(f"use_reentrant={reentrant}:")
    print(report)

true_grad = torch.autograd.grad((torch.sigmoid(xc) * 2).exp().sum(), xc)[0]
print("non-reentrant: x.grad is the true gradient:", torch.allclose(xc.grad, true_grad))

# sphinx_gallery_start_ignore
SOURCE_LINES = Path(inspect.currentframe().f_code.co_filename).read_text().splitlines()
write_line = SOURCE_LINES.index("    s.mul_(2)  # sigmoid saved s for its backward") + 1
for reentrant, consequence in ((True, "backward fails"), (False, "wrong gradients")):
    xc.grad = None
    found = ir.audit(
        lambda r=reentrant: checkpoint(doubled_then_exp, xc, use_reentrant=r).backward()
    )
    harmful = [(f.line, f.consequence) for f in found if f.harmful]
    assert harmful == [(write_line, consequence)], found
    xc.grad = None
    broke = None
    try:
        checkpoint(doubled_then_exp, xc, use_reentrant=reentrant).backward()
    except RuntimeError as exc:
        broke = exc
    if reentrant:
        assert "modified by an inplace operation" in str(broke), broke
    else:
        assert broke is None, broke
        assert not torch.allclose(xc.grad, true_grad)


def doubled_last(h):
    return torch.sigmoid(h).mul_(2).sum()


xc.grad = None
late = ir.audit(lambda: checkpoint(doubled_last, xc, use_reentrant=False).backward())
assert late.ok, late
assert torch.allclose(xc.grad, torch.autograd.grad((torch.sigmoid(xc) * 2).sum(), xc)[0])
# sphinx_gallery_end_ignore

# %%
# The audit does not change the program
# -------------------------------------
#
# A tool that watches must not change what it watches. Initialisers write a
# Parameter through a view made under ``no_grad`` (``nn.init.orthogonal_``
# copies into ``tensor.view_as(q)``), and torch refuses, afterwards, to read
# that view's ``grad_fn`` or ``is_leaf``. The audit never makes a read that
# torch can refuse, so the initialiser runs under it as it does without it:

w = nn.Parameter(torch.empty(6, 4))
with torch.no_grad():
    view = w.view(-1)
    view.copy_(torch.ones(24))
try:
    view.is_leaf
except RuntimeError as exc:
    print("torch refuses:", str(exc)[:71], "...")

torch.manual_seed(0)
plain = nn.init.orthogonal_(nn.Parameter(torch.empty(6, 4))).detach().clone()
torch.manual_seed(0)
init_report = ir.audit(nn.init.orthogonal_, nn.Parameter(torch.empty(6, 4)))
print(
    "under the audit:",
    init_report.error,
    "and the same values:",
    torch.equal(init_report.result, plain),
)

# %%
# Torch also picks its code path by what is active: with any torch function
# mode, the audit's included, ``nn.TransformerEncoder`` leaves its inference
# fast path, which returns zeros where a padding mask masks. The audit keeps
# torch's choice, so an evaluation gives the same values under it:

torch.manual_seed(0)
encoder = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), num_layers=1, enable_nested_tensor=True
).eval()
padded = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
tokens = torch.randn(2, 5, 8)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the nested tensors' prototype notice
    with torch.no_grad():
        without_audit = encoder(tokens, src_key_padding_mask=padded)
        with ir.audit():
            with_audit = encoder(tokens, src_key_padding_mask=padded)
print(
    "padded positions:",
    without_audit[1, 3:].abs().sum().item(),
    with_audit[1, 3:].abs().sum().item(),
)
print("the same values:", torch.equal(with_audit, without_audit))

# sphinx_gallery_start_ignore
assert init_report.error is None
assert torch.equal(init_report.result, plain)
assert init_report.problems == {}
assert without_audit[1, 3:].abs().sum() == 0
assert torch.equal(with_audit, without_audit)
# sphinx_gallery_end_ignore

# %%
# The tests hold the audit to this on every model of the test suite, training
# steps in the shape of pytorch/examples, every ``torch.nn.init`` function,
# the parametrizations, GRU and LSTM initialised through slices, writes into
# views made by torch's common view functions, and the scripts of this gallery
# that do not show ``torch.compile`` (five of them by default, all under
# ``HYPOTHESIS_PROFILE=thorough``): with and without it, the same outputs,
# gradients, version counters, ``requires_grad``, warnings, exceptions and
# random state. One exception, by design:
# ``torch.compile``'d code runs as eager code while an audit is active, so that
# the audit sees its writes (:doc:`/auto_recipes/situations/plot_torch_compile`).

compiled_mul = torch.compile(lambda t: t * 2, backend="aot_eager")
probe = torch.ones(2, requires_grad=True)
with ir.audit():
    under_audit = compiled_mul(probe).grad_fn.name()
print("under the audit, the compiled function's node is", under_audit)

# sphinx_gallery_start_ignore
assert under_audit == "MulBackward0", under_audit
assert compiled_mul(probe).grad_fn.name() == "CompiledFunctionBackward"
torch._dynamo.reset()
# sphinx_gallery_end_ignore

# %%
# In a notebook
# -------------
#
# ``%load_ext inplace_recipes`` gives IPython and Jupyter the cell magic
# ``%%inplace_audit``: the cell runs as IPython runs it, then the report is
# printed, its rows naming the cell and line as IPython's traceback does.
# ``%%inplace_audit report`` also keeps the report in ``report``, and
# ``--fail-on CLASS`` makes the cell raise, for notebooks run as tests. Here
# an IPython shell runs such a cell (in a process of its own):
#
# .. code-block:: ipython
#
#    %load_ext inplace_recipes
#
#    %%inplace_audit report
#    h = torch.sigmoid(x)
#    h.mul_(2)
#    h.sum().backward()

import os
import subprocess
import sys
import tempfile
import textwrap

NOTEBOOK = textwrap.dedent(
    """\
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    shell.InteractiveTB.set_mode("Minimal")  # the error's last line, as xmode Minimal prints it
    shell.run_line_magic("load_ext", "inplace_recipes")
    shell.run_cell("import torch\\nx = torch.ones(3, requires_grad=True)", store_history=True)
    shell.run_cell(
        "%%inplace_audit report\\nh = torch.sigmoid(x)\\nh.mul_(2)\\nh.sum().backward()",
        store_history=True,
    )
    report = shell.user_ns["report"]
    print("kept in report:", [(f.file, f.line, f.consequence) for f in report if f.harmful])
    """
)
with tempfile.TemporaryDirectory() as ipython_dir:
    shell_run = subprocess.run(
        [sys.executable, "-c", NOTEBOOK],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "IPYTHONDIR": ipython_dir},
    )
print(shell_run.stdout + shell_run.stderr, end="")

# sphinx_gallery_start_ignore
import re

assert shell_run.returncode == 0, shell_run.stderr
cell = re.search(r"backward fails  (In\[\d+\]):2 ", shell_run.stdout)
assert cell, shell_run.stdout
assert f"kept in report: [('{cell[1]}', 2, 'backward fails')]" in shell_run.stdout
assert f"saved by SigmoidBackward0 ({cell[1]}:1)" in shell_run.stdout
# sphinx_gallery_end_ignore

# %%
# What an audit costs
# -------------------
#
# The audit's torch function mode runs Python at each torch call, so audit a
# few steps, not a training run. Measured here, when this page was built, next to
# :func:`torch.autograd.detect_anomaly` (the tool torch's own error message
# suggests): one SGD step of a 3-layer MLP (64 → 256 → 256 → 10, batch 32, one
# thread), bare, under ``ir.audit()`` and under anomaly mode, in interleaved
# rounds, after checking that neither changes the gradients. Outside
# ``with ir.audit()`` nothing is installed and nothing runs.

from inplace_recipes.auditing._overhead import count_overhead_instructions, measure_overhead

times = measure_overhead()
counts = count_overhead_instructions()
for name, label in [("bare", "no tool"), ("audit", "ir.audit()"), ("anomaly", "detect_anomaly")]:
    ratio = times[name] / times["bare"]
    line = f"{label:15} {times[name] * 1e3:6.2f} ms per step   {ratio:4.1f}x"
    if counts["available"]:
        instructions = counts["instructions"]
        share = instructions[name] / instructions["bare"]
        line += f"   {instructions[name] / 1e6:6.2f} M instructions   {share:4.1f}x"
    print(line)
if not counts["available"]:
    print("instruction counts:", counts["reason"])

# %%
# Wall time on a shared machine moves by tens of percent from run to run; the
# instruction counts (Valgrind's callgrind, one process, the same steps after a
# warm-up) do not.

# %%
# Audit a script without changing it
# -----------------------------------
#
# ``python -m inplace_recipes audit train.py [args...]`` runs a script under the
# audit, with the worker processes it starts, and prints this report when it
# ends, also when it raises or is interrupted; ``--json`` and ``--fail-on`` make
# it a CI check. See :doc:`plot_audit_command`.

# %%
# What the audit does not see
# ---------------------------
#
# Each of these harms backward, and the audit reports nothing harmful
# (``tests/test_audit_limits.py`` checks each one, against the list in
# :mod:`inplace_recipes.auditing`):
#
# - graphs built before the audit started: a write that breaks their backward
#   is reported ``"safe"``;
# - writes from another thread;
# - writes through the NumPy bridge (``t.numpy()[...] = v``);
# - ``set_`` on a ``detach()`` alias, and writes into ``untyped_storage()``.

# sphinx_gallery_start_ignore
from inplace_recipes import auditing

for limit in (
    "graphs built before the audit started",
    "another thread",
    "NumPy bridge",
    "``set_`` on a ``detach()`` alias",
    "``untyped_storage()``",
):
    assert limit in (auditing.__doc__ or ""), limit
early = torch.linspace(-1, 1, 3).requires_grad_()
saved = early.sigmoid()  # saved for backward before the audit starts
with ir.audit() as before:
    saved.mul_(2)
assert [r["consequence"] for r in before.to_records()] == ["safe"], before
with ir.audit() as bridge:
    seen = early.sigmoid()
    seen.detach().numpy()[:] = 0.0
    seen.sum().backward()
assert early.grad is not None
assert early.grad.abs().sum() == 0, early.grad  # the true gradient is sigmoid', not 0
assert not [r for r in bridge.to_records() if r["fix"]], bridge
# "any such hook turns the version check off" (Learn more, below): identity hooks
hooked_x = torch.linspace(-1, 1, 3).requires_grad_()
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    hooked = hooked_x.sigmoid()
hooked.mul_(2)  # breaks backward without the hooks
hooked.sum().backward()  # runs: no version check
true_grad = torch.sigmoid(hooked_x.detach()) * (1 - torch.sigmoid(hooked_x.detach()))
assert not torch.allclose(hooked_x.grad, true_grad), hooked_x.grad
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - :doc:`The error reference </errors>`: torch 2.13's in-place errors, with their fixes.
# - `Autograd mechanics: in-place operations
#   <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`_
# - `torch.autograd.graph.saved_tensors_hooks
#   <https://pytorch.org/docs/stable/autograd.html#saved-tensors-default-hooks>`_, and why
#   the audit does not use them: any such hook turns the version check off.
# - `torch.utils.checkpoint <https://pytorch.org/docs/stable/checkpoint.html>`_: the
#   reentrant and non-reentrant checkpoints, and what each recomputes.
