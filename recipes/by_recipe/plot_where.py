"""
``where``: pick the value or ``x`` with a mask
==============================================

``torch.where(mask, value, x)`` builds a new tensor that holds ``value``
where the mask is True and ``x`` elsewhere. It takes every kind of index
(through the mask the index selects), any value that broadcasts, and works
under ``vmap``. It saves only the boolean mask for backward, one byte per
element.
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
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------
#
# One ``WhereBackward0`` node, which saved the mask (``condition``); the
# value's branch goes through the broadcast.

fig = ir.draw_graph(y, title="torch.where(mask, v[:, None], x)", highlight=("WhereBackward0",))

# %%
# Pitfall: ``nan`` gradients from the branch that was not selected
# ----------------------------------------------------------------
#
# ``where`` sends a zero gradient to the branch it did not pick, but
# ``0 * inf`` is ``nan``. If that branch was computed by an operation whose
# derivative is infinite there (``sqrt`` at or below 0, ``log`` of 0), the
# gradient is ``nan`` even though the value was never used:

z = torch.tensor([-1.0, 4.0], requires_grad=True)
out = torch.where(z > 0, z.sqrt(), 0.0)
out.sum().backward()
print(z.grad)
# sphinx_gallery_start_ignore
assert torch.isnan(z.grad[0])
# sphinx_gallery_end_ignore

# %%
# The fix is a second ``where`` that makes the *input* of the dangerous
# operation safe, so it is never evaluated where it would blow up:

z.grad = None
safe = torch.where(z > 0, z, 1.0)
out = torch.where(z > 0, safe.sqrt(), 0.0)
out.sum().backward()
print(z.grad)
# sphinx_gallery_start_ignore
assert torch.equal(z.grad, torch.tensor([0.0, 0.25]))
# sphinx_gallery_end_ignore

# %%
# The recipe itself never meets this: both of its branches are inputs (``x``
# and the value), whose derivatives are 1.
#
# Learn more
# ----------
#
# - `torch.where <https://pytorch.org/docs/stable/generated/torch.where.html>`_
# - `Autograd mechanics: in-place operations <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`_
# - The ``masked_fill`` recipe, for a single value.
