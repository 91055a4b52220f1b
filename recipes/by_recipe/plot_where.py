"""
``where``: pick the value or ``x`` with a mask
==============================================

``torch.where(mask, value, x)`` builds a new tensor that holds ``value``
where the mask is True and ``x`` elsewhere. It takes every kind of index
(through the mask the index selects), any value that broadcasts, and works
under ``vmap``. ``torch.where`` saves only the boolean mask for backward,
one byte per element. So does ``ir.where``, unless it first spreads a value
that requires grad over ``x`` with ``index_put``: with index tensors, or
with a mask or slices and a tensor of several values; then it also saves
the written positions, 8 bytes each.
"""

# %%
# When to use it
# --------------
#
# A boolean mask and a tensor of values (for a single value, see
# ``masked_fill``), or any index when you want one recipe that always works.
# ``ir.where`` builds the mask from the index you would have written:
#
# >>> x = torch.zeros(4)
# >>> ir.where(x, slice(1, None, 2), 7.0)
# tensor([0., 7., 0., 7.])
# >>> ir.where(x, torch.tensor([True, False, False, True]), torch.tensor([1.0, 2.0]))
# tensor([1., 0., 0., 2.])

import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# Instead of ``x[:, 1] = v``, write the mask and let ``where`` broadcast the
# value over it. ``x`` stays as it was.

x = torch.rand(3, 4, requires_grad=True)
v = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)

mask = torch.zeros(3, 4, dtype=torch.bool)
mask[:, 1] = True
y = torch.where(mask, v[:, None], x)
print(y)

# %%
# The gradient check
# ------------------
#
# :func:`~inplace_recipes.compare.compare_gradients` runs the recipe and
# ``clone()`` then setitem on fresh copies and compares the result and both
# gradients, here also second-order gradients and ``gradcheck`` in float64.

report = ir.compare_gradients(x, (slice(None), 1), v, ["where"], second_order=True, gradcheck=True)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.where(x, (slice(None), 1), v))
# The introduction's bytes: the (3, 4) mask is 12; each written position spread is 8 more.
from inplace_recipes import bench

nonleaf, some = x * 1, x.detach() > 0.5
k = int(some.sum())


def _saved(index, value):
    return bench.saved_bytes(ir.RECIPES["where"], nonleaf, index, value)[0]


def _grad(*shape):
    return torch.ones(shape, requires_grad=True)


assert bench.saved_bytes(lambda t, i, u: torch.where(i, u, t), nonleaf, some, _grad(3, 4))[0] == 12
assert _saved((slice(None), 1), v) == _saved(1, _grad(4)) == _saved(some, _grad()) == 12
assert _saved(some, torch.ones(k)) == _saved(torch.tensor([0, 2]), torch.ones(2, 4)) == 12
assert _saved(some, _grad(k)) == 12 + 8 * k  # a mask, several values that require grad
assert _saved(torch.tensor([0, 2]), _grad()) == 12 + 8 * 8  # index tensors: 2 rows of 4
assert _saved(slice(0, 2), _grad(2, 4)) == 12 + 8 * 8  # a slice and several values
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------
#
# One ``WhereBackward0`` node, which saved the mask (``condition``); the
# value's branch goes through the broadcast.

fig = ir.draw_graph(y, title="torch.where(mask, v[:, None], x)", highlight=("WhereBackward0",))

# %%
# Pitfall: a zero gradient meets an infinite derivative
# -----------------------------------------------------
#
# ``where`` sends a zero gradient to the branch it did not pick. If that
# branch was computed by an operation whose derivative is infinite or
# undefined there (``sqrt`` at 0 or below, ``log`` at 0), the operation's
# backward computes ``0 / 0`` and the gradient is ``nan``, although
# ``where`` did not pick that value:

z = torch.tensor([-1.0, 4.0], requires_grad=True)
out = torch.where(z > 0, z.sqrt(), 0.0)
out.sum().backward()
print(z.grad)
# sphinx_gallery_start_ignore
assert torch.isnan(z.grad[0])
assert z.grad[1] == 0.25
# sphinx_gallery_end_ignore

# %%
# Two ``where``\ s fix it when the second one goes on the *input* of the
# dangerous operation, before it runs, so that the operation does not run
# where it would blow up:

z.grad = None
safe = torch.where(z > 0, z, 1.0)
out = torch.where(z > 0, safe.sqrt(), 0.0)
out.sum().backward()
print(z.grad)
# sphinx_gallery_start_ignore
assert torch.equal(z.grad, torch.tensor([0.0, 0.25]))
# sphinx_gallery_end_ignore

# %%
# This is not a pitfall of ``where`` alone. Overwrite an element of
# ``a.sqrt()`` where ``a`` is 0, and the written element's gradient is zero
# whichever way it is written: every recipe, and in-place setitem on a tensor
# computed from the square root, gives ``nan`` (in-place setitem on the
# square root's own output raises instead, since ``sqrt`` saved it). A second
# ``where`` after the square root, on its output, changes nothing:

m = torch.tensor([True, False])


def grad_after(write):
    """The gradient to ``a = [0, 4]`` of ``write(a.sqrt()).sum()``."""
    a = torch.tensor([0.0, 4.0], requires_grad=True)
    (grad,) = torch.autograd.grad(write(a.sqrt()).sum(), a)
    return grad


def setitem_on_a_copy(s):
    t = s + 0  # setitem on s itself raises: sqrt saved its output
    t[0] = 0.0
    return t


overwrites = {name: (lambda s, fn=fn: fn(s, 0, 0.0)) for name, fn in ir.RECIPES.items()}
overwrites["in-place setitem"] = setitem_on_a_copy
overwrites["where after where"] = lambda s: torch.where(m, 0.0, torch.where(m, 0.0, s))
for name, write in overwrites.items():
    print(f"{name:18} {grad_after(write)}")
# sphinx_gallery_start_ignore
for name, write in overwrites.items():
    grad = grad_after(write)
    assert torch.isnan(grad[0]), name
    assert grad[1] == 0.25, name
a = torch.tensor([0.0, 4.0], requires_grad=True)
s = a.sqrt()
s[0] = 0.0
message = ""
try:
    s.sum().backward()
except RuntimeError as error:
    message = str(error)
assert "output 0 of SqrtBackward0" in message or "output 0 of Sqrt," in message, message
# sphinx_gallery_end_ignore

# %%
# The same ``where`` before the square root fixes that case too, for every
# recipe: the square root then never sees the 0.

fixed = {}
for name, fn in ir.RECIPES.items():
    a = torch.tensor([0.0, 4.0], requires_grad=True)
    s = torch.where(m, 1.0, a).sqrt()  # a safe input where the write will land
    (fixed[name],) = torch.autograd.grad(fn(s, 0, 0.0).sum(), a)
    print(f"{name:18} {fixed[name]}")
# sphinx_gallery_start_ignore
assert all(torch.equal(g, torch.tensor([0.0, 0.25])) for g in fixed.values())
# sphinx_gallery_end_ignore

from inplace_recipes.claims import verify

print(verify("zero_gradient_into_sqrt_at_zero_is_nan"))

# %%
# So two ``where``\ s help exactly when the second one replaces the input of
# the operation with the infinite derivative, at the positions whose output
# gets no gradient, by a value where that derivative is finite. The recipe
# itself never causes this: both of its branches are inputs (``x`` and the
# value), whose derivatives are 1.
#
# Learn more
# ----------
#
# - `torch.where <https://pytorch.org/docs/stable/generated/torch.where.html>`_
# - `Autograd mechanics: in-place operations <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`_
# - The ``masked_fill`` recipe, for a single value.
