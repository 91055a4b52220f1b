"""
A value that needs its own gradient
===================================

When the value you write is itself computed from parameters (a learned
token, a predicted correction), its gradient must arrive too. Every recipe
sends it: the value receives the gradient of the positions it was written
to, summed where one value was broadcast to several positions.
"""

# %%
# A learned value written into a row
# ----------------------------------
#
# The value's gradient is the sum of the gradients of the positions it
# filled:
#
# >>> x = torch.zeros(2, 3, requires_grad=True)
# >>> v = torch.tensor(1.0, requires_grad=True)
# >>> ir.where(x, 1, v).sum().backward()
# >>> v.grad
# tensor(3.)

import torch

import inplace_recipes as ir

torch.manual_seed(0)
hidden = torch.rand(4, 5, requires_grad=True)
token = torch.nn.Parameter(torch.zeros(5))  # a learned row

out = ir.select_scatter(hidden, 2, token)  # hidden[2] = token, out of place
loss = (out * torch.arange(5.0)).sum()
loss.backward()
print("grad to token: ", token.grad)
print("grad to hidden:", hidden.grad)
# sphinx_gallery_start_ignore
assert torch.equal(token.grad, torch.arange(5.0))
assert torch.equal(hidden.grad[2], torch.zeros(5))
# sphinx_gallery_end_ignore

# %%
# Every recipe agrees
# -------------------
#
# ``compare_gradients`` checks the gradient to the value for every recipe
# that can write a row:

print(ir.compare_gradients(hidden, 2, token.detach()))
# sphinx_gallery_start_ignore
ir.compare_gradients(hidden, 2, token.detach()).assert_ok()
# sphinx_gallery_end_ignore

# %%
# A value of another dtype
# ------------------------
#
# setitem casts the value to ``x``'s dtype; the recipes do too, and the
# gradient flows back through the cast to the float64 value:

v64 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
y = ir.where(torch.zeros(3), 0, v64)
y.sum().backward()
print(y.dtype, v64.grad)

# %%
# Learn more
# ----------
#
# - `Autograd mechanics <https://pytorch.org/docs/stable/notes/autograd.html>`_
