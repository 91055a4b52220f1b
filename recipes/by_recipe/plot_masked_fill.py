"""
``masked_fill``: one value wherever a mask is True
==================================================

``x.masked_fill(mask, value)`` writes one value at every True position of
the mask (``index_fill`` does it along one dimension). The value may be a
0-d tensor that requires grad (torch refuses a tensor of shape ``[1]``;
``ir.masked_fill`` also takes any one-element tensor): it receives the sum
of the gradients of the positions it filled. It writes one value only.
"""

# %%
# When to use it
# --------------
#
# ``x[x > 3] = 0``, padding, clipping to a constant:
#
# >>> x = torch.tensor([1.0, 5.0, 2.0, 7.0])
# >>> x.masked_fill(x > 3, 0.0)
# tensor([1., 0., 2., 0.])

import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# A mask computed from the values themselves: ``x > 3`` carries no gradient
# (a comparison is never recorded), so ``detach()`` only makes that explicit.

x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.5, 4.0]], requires_grad=True)
v = torch.tensor(3.0, requires_grad=True)

mask = x.detach() > 3
y = x.masked_fill(mask, v)
print(y)
# sphinx_gallery_start_ignore
assert not (x > 3).requires_grad  # the comparison: no gradient
assert (x > 3).grad_fn is None
one = torch.tensor([3.0], requires_grad=True)
refusal = None
try:  # the introduction: torch takes a 0-d value, not one of shape [1] ...
    x.masked_fill(mask, one)
except RuntimeError as exc:
    refusal = str(exc)
assert refusal is not None, "masked_fill now takes a value of shape [1]: update the introduction"
assert "0-dimensional" in refusal
assert torch.equal(ir.masked_fill(x, mask, one), y)  # ... the recipe takes both
(one_grad,) = torch.autograd.grad(ir.masked_fill(x, mask, one).sum(), one)
assert one_grad.shape == (1,)
assert one_grad == 3.0
# sphinx_gallery_end_ignore

# %%
# The gradient check
# ------------------

report = ir.compare_gradients(x, mask, v, ["masked_fill"], second_order=True, gradcheck=True)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.masked_fill(x, mask, v))
# sphinx_gallery_end_ignore

# %%
# The value's gradient adds up over the filled positions (three of them
# here):

y.sum().backward()
print(v.grad)
# sphinx_gallery_start_ignore
assert v.grad == 3.0
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------

fig = ir.draw_graph(
    x.masked_fill(mask, v), title="x.masked_fill(mask, v)", highlight=("MaskedFillBackward1",)
)

# %%
# Pitfall: one value only
# -----------------------
#
# A tensor of values is not something ``masked_fill`` can write; use
# ``where`` or ``index_put``:

try:
    ir.masked_fill(x, mask, torch.tensor([1.0, 2.0, 3.0]))
except ir.UnsupportedValueError as exc:
    print(f"UnsupportedValueError: {exc}")

# %%
# Learn more
# ----------
#
# - `torch.Tensor.masked_fill <https://pytorch.org/docs/stable/generated/torch.Tensor.masked_fill.html>`_
# - `torch.Tensor.index_fill <https://pytorch.org/docs/stable/generated/torch.Tensor.index_fill.html>`_
