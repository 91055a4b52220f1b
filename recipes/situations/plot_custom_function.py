"""
A custom ``autograd.Function`` that writes into its input
=========================================================

A custom Function that changes its input in place (to save memory, or
because it wraps a kernel that does) must say so with ``ctx.mark_dirty``.
With it, autograd moves the input's history onto the Function and checks
later uses; without it, autograd believes the input unchanged: a later use of
that tensor gets silently wrong gradients, unless an op saved it for
backward, whose version check then fails. Users
report it in `pytorch/pytorch#30454
<https://github.com/pytorch/pytorch/issues/30454>`_ (a Function doing
``x *= 2.0`` in ``forward``); the checks autograd added for it are listed in
`pytorch/pytorch#31258 <https://github.com/pytorch/pytorch/issues/31258>`_.
"""

# %%
# Doubling in place, with and without ``mark_dirty``
# --------------------------------------------------
#
# A built-in in-place op moves the tensor's history onto itself: after
# ``h.add_(1)``, ``h``'s ``grad_fn`` is the addition. ``mark_dirty`` asks
# autograd to do the same for a custom Function.
#
# >>> h = torch.ones(2, requires_grad=True) * 1
# >>> h.grad_fn.name()
# 'MulBackward0'
# >>> _ = h.add_(1)
# >>> h.grad_fn.name()
# 'AddBackward0'

import inspect
from pathlib import Path

import torch

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# sphinx_gallery_end_ignore


class DoubleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


class DoubleInPlaceUnmarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


# %%
# Marked: the write is part of the graph
# ---------------------------------------
#
# The input ``h`` is used twice: by the Function and afterwards by ``h * 3``.
# With ``mark_dirty``, ``h`` itself now has the Function as its ``grad_fn``,
# so the later use differentiates through the doubling:

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = a * 1
y = DoubleInPlace.apply(h)
print(h.grad_fn, y is h)
(y + h * 3).sum().backward()
print("gradient:", a.grad)
# sphinx_gallery_start_ignore
assert type(h.grad_fn).__name__ == "DoubleInPlaceBackward"
assert y is h
# y + 3 h = 2a + 3 (2a) = 8a
assert torch.equal(a.grad, torch.full((3,), 8.0))
# sphinx_gallery_end_ignore

# %%
# ``y + 3 h`` is ``2a + 6a``: the gradient is 8 everywhere.
#
# Unmarked: no error, wrong gradients
# -----------------------------------
#
# Without ``mark_dirty`` the same code runs without a word. ``h`` holds
# ``2a`` but autograd still differentiates ``h * 3`` as ``3 (a * 1)``:

a.grad = None
h = a * 1
y = DoubleInPlaceUnmarked.apply(h)
print(h.grad_fn, torch.equal(h, 2 * a.detach()))
(y + h * 3).sum().backward()
print("gradient:", a.grad)
# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.full((3,), 5.0)), a.grad
# sphinx_gallery_end_ignore

# %%
# 5 instead of 8, and no error. It is worse on a leaf: the unmarked Function
# writes into a leaf that requires grad, which autograd refuses outside
# ``torch.no_grad()``, while the marked one is refused:

leaf = torch.tensor([1.0, 2.0], requires_grad=True)
DoubleInPlaceUnmarked.apply(leaf)
print("leaf after the unmarked Function:", leaf)
# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    DoubleInPlace.apply(torch.tensor([1.0, 2.0], requires_grad=True))
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "mark_dirty on a leaf did not fail"
assert str(error) == "a leaf Variable that requires grad has been used in an in-place operation."
assert torch.equal(leaf.detach(), torch.tensor([2.0, 4.0]))
# sphinx_gallery_end_ignore

# %%
# What the audit sees
# -------------------
#
# The audit records the ``mul_`` inside ``forward``, at its line. When
# another op saved the input (here ``exp``, which saves its output), the
# unmarked write breaks backward and the audit says so:


def unmarked_after_exp(a):
    h = a.exp()
    y = DoubleInPlaceUnmarked.apply(h)
    (y + h).sum().backward()


report = ir.audit(unmarked_after_exp, torch.ones(3, requires_grad=True))
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == ["x.mul_(2)"], report.to_records()
assert fails[0]["file"].endswith(PAGE)
assert "ExpBackward0" in fails[0]["detail"], fails[0]
# sphinx_gallery_end_ignore

# %%
# In the silent case, where nothing saved ``h``, the audit sees a write under
# ``no_grad`` (a custom Function's ``forward`` runs without grad) to a
# non-leaf. When the Function returns without having marked it dirty (``h``
# keeps its old ``grad_fn``) and a later op uses ``h`` again, the audit
# reports it as ``wrong gradients``, at the line, with the fix that marks it:

a.grad = None


def unmarked_then_reuse(a, double=DoubleInPlaceUnmarked.apply):
    h = a * 1
    y = double(h)
    (y + h * 3).sum().backward()


report = ir.audit(unmarked_then_reuse, a)
print(report)
# sphinx_gallery_start_ignore
seen_modes = []


class GradModeProbe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        seen_modes.append(torch.is_grad_enabled())
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad


GradModeProbe.apply(torch.ones(1, requires_grad=True))
assert seen_modes == [False], seen_modes
records = report.to_records()
assert [(r["code"], r["consequence"]) for r in records] == [("x.mul_(2)", "wrong gradients")]
assert records[0]["file"].endswith(PAGE)
assert records[0]["fix"].startswith("x.mul_(2); ctx.mark_dirty(x)"), records[0]
# sphinx_gallery_end_ignore

# %%
# Where nothing uses ``h`` again (the name is rebound, ``h = f(h)``), the
# gradients are right, and the audit says so: ``wrong gradients if reused``,
# with the out-of-place rewrite as its fix.


def unmarked_then_rebind(a):
    h = a * 1
    h = DoubleInPlaceUnmarked.apply(h)
    (h * h).sum().backward()


b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
rebind_report = ir.audit(unmarked_then_rebind, b)
print(rebind_report)
print("gradient:", b.grad)
# sphinx_gallery_start_ignore
rebind_records = rebind_report.to_records()
assert [(r["code"], r["consequence"]) for r in rebind_records] == [
    ("x.mul_(2)", "wrong gradients if reused")
], rebind_records
assert rebind_records[0]["fix"].startswith("x = x.mul(2)"), rebind_records[0]
# (2a)^2 = 4a^2: the gradient 8a is right
assert torch.equal(b.grad, 8 * b.detach())
# sphinx_gallery_end_ignore

# %%
# The marked Function's write is the same ``mul_``, but after the call the
# tensor's ``grad_fn`` is the Function's node: autograd sees the write, and
# the audit counts it as safe (its gradients are right: 8, above). The
# unmarked Function writing into a leaf that requires grad, which autograd
# refuses from other code outside ``torch.no_grad()``, changes the leaf's value
# unseen: here nothing uses the leaf again, so it is ``wrong gradients if
# reused``.

marked_report = ir.audit(
    unmarked_then_reuse, torch.ones(3, requires_grad=True), DoubleInPlace.apply
)
print(marked_report)
leaf_report = ir.audit(DoubleInPlaceUnmarked.apply, torch.ones(3, requires_grad=True))
print(leaf_report)
# sphinx_gallery_start_ignore
marked_records = marked_report.to_records()
assert [(r["code"], r["consequence"]) for r in marked_records] == [("x.mul_(2)", "safe")]
assert marked_records[0]["kind"] == "marked dirty in a custom Function", marked_records
assert marked_report.error is None, marked_report.error
leaf_records = leaf_report.to_records()
assert [(r["code"], r["consequence"], r["kind"]) for r in leaf_records] == [
    ("x.mul_(2)", "wrong gradients if reused", "leaf written in a custom Function")
], leaf_records
assert leaf_records[0]["file"].endswith(PAGE)
# sphinx_gallery_end_ignore

# %%
# Marking an input dirty and not returning it
# -------------------------------------------
#
# ``mark_dirty`` only works on tensors the Function returns: the returned
# tensor is the input with its new history. Return a copy instead and
# autograd refuses:


class MarkedButNotReturned(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    MarkedButNotReturned.apply(a * 1)
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "an unreturned dirty input did not fail"
assert str(error).startswith(
    "Some elements marked as dirty during the forward method were not returned as output."
), str(error)
# sphinx_gallery_end_ignore

# %%
# The fix, checked
# ----------------
#
# Mark every input you write, and return it: this fixes the silent case (if
# an earlier op saved the input, as ``exp`` above, backward still fails). Or
# write out of place and rebind the name: ``h = DoubleOutOfPlace.apply(h)``.
# Both give the gradients of the program written out of place by hand,
# ``h = 2 * h``, the known-good version; the unmarked Function does not:


class DoubleOutOfPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


def by_hand(h):
    h = 2 * h
    return h * h + h


def marked(h):
    y = DoubleInPlace.apply(h)
    return y * y + h


def out_of_place(h):
    h = DoubleOutOfPlace.apply(h)
    return h * h + h


def unmarked(h):
    y = DoubleInPlaceUnmarked.apply(h)
    return y * y + h


def gradient(program):
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    program(torch.sin(a)).sum().backward()
    return a.grad


reference = gradient(by_hand)
for program in (by_hand, marked, out_of_place, unmarked):
    grad = gradient(program)
    print(f"{program.__name__:12}", grad, torch.allclose(grad, reference))
# sphinx_gallery_start_ignore
assert torch.allclose(gradient(marked), reference)
assert torch.allclose(gradient(out_of_place), reference)
assert not torch.allclose(gradient(unmarked), reference)
# marking does not rescue an input an earlier op saved: backward still fails
c = torch.ones(3, requires_grad=True)
h = c.exp()
error = None
try:
    (DoubleInPlace.apply(h) + h).sum().backward()
except RuntimeError as exc:
    error = exc
assert error is not None, "mark_dirty after exp ran"
assert "modified by an inplace operation" in str(error), error
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `Extending torch.autograd
#   <https://pytorch.org/docs/stable/notes/extending.html#how-to-use>`_:
#   ``mark_dirty``, ``save_for_backward`` and what each promises.
# - `pytorch/pytorch#30454 <https://github.com/pytorch/pytorch/issues/30454>`_ and
#   `pytorch/pytorch#31258 <https://github.com/pytorch/pytorch/issues/31258>`_.
# - `torch.autograd.function.FunctionCtx.mark_dirty
#   <https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_dirty.html>`_
# - :doc:`The error reference </errors>`.
