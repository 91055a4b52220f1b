"""
Changing a tensor after a layer has used it
===========================================

``nn.Linear`` keeps a reference to its input: the weight's gradient is
``grad_output.T @ input``. Change that input in place before ``backward()``
(reuse a preallocated batch buffer, normalise the batch in place, clamp an
adversarial example) and backward fails, or, on a leaf that requires grad
(an input you want the gradient to), the write itself fails. Under
``torch.compile`` with inductor, the first may not happen and the gradient
is silently wrong (pytorch/pytorch#197887); the second still does. For the
leaf error, see the PyTorch forum thread
`Leaf variable was used in an inplace operation
<https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308>`_.
"""

# %%
# A batch buffer reused before backward
# -------------------------------------
#
# Gradient accumulation with a preallocated input buffer: copy micro-batch
# one in, forward, copy micro-batch two into the same buffer, forward, then
# one backward for both. An in-place op on the tensor bumps its version
# counter, which is what backward checks (a write through ``.data``, or
# inside some kernels, such as BatchNorm's update of its running statistics,
# does not):
#
# >>> buffer = torch.zeros(2)
# >>> buffer._version
# 0
# >>> _ = buffer.copy_(torch.ones(2))
# >>> buffer._version
# 1

import inspect
from pathlib import Path

import torch
from torch import nn

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# writes that bump no version counter: through .data, and BatchNorm's running mean
probe = torch.zeros(3, requires_grad=True)
probe.data.add_(1)
assert probe._version == 0, probe._version
probe_bn = nn.BatchNorm1d(3)
probe_version = probe_bn.running_mean._version
probe_bn(torch.randn(4, 3))
assert probe_bn.running_mean._version == probe_version, probe_bn.running_mean._version
assert not torch.equal(probe_bn.running_mean, torch.zeros(3))


# the leaf write still fails under torch.compile with inductor (Dynamo raises while tracing)
def probe_leaf_write(x):
    x[:, 0] = 0
    return x.sum()


torch._dynamo.reset()
probe_error = None
try:
    torch.compile(probe_leaf_write, backend="inductor")(torch.rand(2, 3, requires_grad=True))
except Exception as exc:  # noqa: BLE001 - Dynamo's TorchRuntimeError wraps autograd's
    probe_error = exc
assert probe_error is not None, "the leaf write ran under inductor"
assert "leaf Variable that requires grad" in str(probe_error), probe_error
torch._dynamo.reset()
# sphinx_gallery_end_ignore

torch.manual_seed(0)
model = nn.Linear(3, 2)
micro_batches = [torch.randn(4, 3), torch.randn(4, 3)]


def accumulate_with_buffer(model, micro_batches):
    buffer = torch.empty(4, 3)
    loss = 0
    for batch in micro_batches:
        buffer.copy_(batch)
        loss = loss + model(buffer).pow(2).sum()
    loss.backward()


# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    accumulate_with_buffer(model, micro_batches)
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "the reused buffer did not fail"
assert "[torch.FloatTensor [4, 3]] is at version 2; expected version 1 instead" in str(error)
# sphinx_gallery_end_ignore

# %%
# The message names a ``[4, 3]`` tensor, the buffer, and no line. The audit
# names the ``copy_``, the ``nn.Linear`` call that saved the buffer, and a
# fix line for the ``copy_``:

model.zero_grad()
report = ir.audit(accumulate_with_buffer, model, micro_batches)
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == ["buffer.copy_(batch)"], report.to_records()
assert fails[0]["file"].endswith(PAGE)
saved_by = SOURCE.read_text().splitlines().index("        loss = loss + model(buffer).pow(2).sum()")
assert f"{PAGE}:{saved_by + 1})" in fails[0]["detail"], fails[0]
audit_fix = fails[0]["fix"]
assert audit_fix == "buffer = batch.clone()", fails[0]
# sphinx_gallery_end_ignore

# %%
# The fix is the audit's line: a new tensor per micro-batch (or
# ``backward()`` once per micro-batch, before the buffer is refilled). Its
# gradient is the sum of the micro-batches' gradients, each computed on its
# own:


def accumulate(model, micro_batches):
    loss = 0
    for batch in micro_batches:
        buffer = batch.clone()
        loss = loss + model(buffer).pow(2).sum()
    loss.backward()


model.zero_grad()
accumulate(model, micro_batches)
expected = [torch.zeros_like(p) for p in model.parameters()]
for batch in micro_batches:
    grads = torch.autograd.grad(model(batch).pow(2).sum(), list(model.parameters()))
    expected = [e + g for e, g in zip(expected, grads, strict=True)]
match = all(torch.allclose(p.grad, e) for p, e in zip(model.parameters(), expected, strict=True))
print("gradients equal the sum over micro-batches:", match)
# sphinx_gallery_start_ignore
assert match
assert f"        {audit_fix}" in SOURCE.read_text().splitlines()
assert ir.audit(accumulate, model, micro_batches).ok
# sphinx_gallery_end_ignore

# %%
# Compiled with inductor: no error, a wrong gradient
# --------------------------------------------------
#
# Compile the step and autograd's check can be lost. With a compiled
# ``buffer @ w``, eager and ``aot_eager`` refuse the reused buffer as above;
# inductor (the default backend, torch 2.13) raises nothing, and ``w.grad``
# is computed from the buffer as it was at ``backward()``, the last
# micro-batch, for both micro-batches:

w = torch.randn(3, 2, requires_grad=True)


def step(buffer, w):
    return (buffer @ w).pow(2).sum()


def accumulate_compiled(backend):
    torch._dynamo.reset()
    w.grad = None
    compiled = step if backend is None else torch.compile(step, backend=backend)
    buffer = torch.empty(4, 3)
    loss = 0
    for batch in micro_batches:
        buffer.copy_(batch)
        loss = loss + compiled(buffer, w)
    try:
        loss.backward()
    except RuntimeError as exc:
        return f"RuntimeError: {str(exc)[:60]}..."
    return w.grad.clone()


right = sum(torch.autograd.grad(step(batch, w), w)[0] for batch in micro_batches)
first, last = micro_batches
from_the_last = (2 * last.T @ (first @ w) + 2 * last.T @ (last @ w)).detach()
outcomes = {b or "eager": accumulate_compiled(b) for b in (None, "aot_eager", "inductor")}
for backend, got in outcomes.items():
    if isinstance(got, str):
        print(f"{backend:9} {got}")
    else:
        print(
            f"{backend:9} no error; w.grad right: {torch.allclose(got, right)}, "
            f"computed from the last micro-batch: {torch.allclose(got, from_the_last)}"
        )
# sphinx_gallery_start_ignore
assert outcomes["eager"].startswith("RuntimeError: one of the variables needed")
assert outcomes["aot_eager"].startswith("RuntimeError: one of the variables needed")
assert not isinstance(outcomes["inductor"], str), outcomes["inductor"]  # pytorch/pytorch#197887
assert not torch.allclose(outcomes["inductor"], right)
assert torch.allclose(outcomes["inductor"], from_the_last)
# sphinx_gallery_end_ignore

# %%
# The fix above (a new tensor per micro-batch) is right in eager code and under
# both backends:


def accumulate_fixed(backend):
    torch._dynamo.reset()
    w.grad = None
    compiled = step if backend is None else torch.compile(step, backend=backend)
    loss = 0
    for batch in micro_batches:
        loss = loss + compiled(batch.clone(), w)
    loss.backward()
    return w.grad.clone()


fixed = {b or "eager": accumulate_fixed(b) for b in (None, "aot_eager", "inductor")}
for backend, got in fixed.items():
    print(f"{backend:9} w.grad right: {torch.allclose(got, right)}")
# sphinx_gallery_start_ignore
assert all(torch.allclose(got, right) for got in fixed.values())
# sphinx_gallery_end_ignore

# %%
# An input that requires grad
# ---------------------------
#
# Saliency maps and adversarial examples need the gradient to the input, so
# the input is a leaf that requires grad. Masking a feature in place then
# fails at the write, before any layer runs:

image = torch.rand(4, 3, requires_grad=True)


def masked_loss(model, image):
    image[:, 0] = 0.0  # hide the first feature
    return model(image).pow(2).sum()


# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    masked_loss(model, image)
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "writing into the leaf did not fail"
assert (
    str(error)
    == "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
# sphinx_gallery_end_ignore

# %%
# A leaf, or a view of one, refuses the write (as do some other views: one
# from a multi-output op such as ``unbind``, one made under ``no_grad``, or
# a custom Function's output). An input that requires grad but was computed
# (a normalised image, ``raw * 1``) is a non-leaf: the write succeeds,
# autograd records it, and the gradient to the raw input is zero at the
# hidden feature, as for the recipes below:

raw = torch.rand(4, 3, requires_grad=True)
normalised = raw * 1
masked_loss(model, normalised).backward()
print("non-leaf: the write worked; gradient to the hidden feature:", raw.grad[:, 0])
# sphinx_gallery_start_ignore
assert not normalised.is_leaf
assert torch.all(raw.grad[:, 0] == 0)
refused = []
for make in (
    lambda n: n.unbind(1)[0],
    lambda n: torch.no_grad()(lambda: n[:, 0])(),
):
    try:
        make(raw * 1).zero_()
    except RuntimeError as exc:
        refused.append(str(exc).split(" is ")[0])
assert refused == [
    "Output 0 of Unbind",
    "A view was created in no_grad mode and",
], refused
keep = torch.ones(4, 3)
keep[:, 0] = 0
assert torch.allclose(raw.grad, torch.autograd.grad(model(raw * keep).pow(2).sum(), raw)[0])
# sphinx_gallery_end_ignore

# %%
# Here the audit reports the write into the leaf as ``raises``, at its line:

report = ir.audit(masked_loss, model, image)
print(report)
# sphinx_gallery_start_ignore
raised = [r for r in report.to_records() if r["consequence"] == "raises"]
assert [r["code"] for r in raised] == ["image[:, 0] = 0.0  # hide the first feature"], raised
assert raised[0]["file"].endswith(PAGE)
# sphinx_gallery_end_ignore

# %%
# The fix is a recipe: write into a new tensor. :func:`~inplace_recipes.compare.compare_gradients`
# checks every recipe for this index against ``clone()`` then setitem, forward
# and backward, including the gradient to the image:

index = (slice(None), 0)
print(ir.compare_gradients(image, index, 0.0))
# sphinx_gallery_start_ignore
assert ir.compare_gradients(image, index, 0.0).ok
# sphinx_gallery_end_ignore


def fixed_masked_loss(model, image):
    return model(ir.RECIPES["where"](image, index, 0.0)).pow(2).sum()


grad = torch.autograd.grad(fixed_masked_loss(model, image), image)[0]
print("gradient to the hidden feature:", grad[:, 0])
# sphinx_gallery_start_ignore
mask = torch.ones(4, 3)
mask[:, 0] = 0
assert torch.equal(grad, torch.autograd.grad(model(image * mask).pow(2).sum(), image)[0])
assert torch.all(grad[:, 0] == 0)
# sphinx_gallery_end_ignore

# %%
# Updating the input itself, as an adversarial attack does between steps, is
# not part of the graph: do it under ``torch.no_grad()``, where a leaf may be
# written, after ``backward()`` has used it.

loss = model(image).pow(2).sum()
loss.backward()
with torch.no_grad():
    image += 0.01 * image.grad.sign()
    image.clamp_(0, 1)
print(image.requires_grad, image.is_leaf)
# sphinx_gallery_start_ignore
assert image.requires_grad
assert image.is_leaf
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `Leaf variable was used in an inplace operation
#   <https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308>`_,
#   the PyTorch forum thread.
# - :doc:`/auto_recipes/by_recipe/plot_where` and the other recipes for ``x[index] = value``.
# - :doc:`The error reference </errors>`: both messages, with their fixes.
