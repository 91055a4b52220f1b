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
# With ints and slices, and for one element written through a mask, setitem
# casts the value to ``x``'s dtype; the recipes do too, and the gradient
# flows back through the cast to the float64 value:

v64 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
y = ir.where(torch.zeros(3), 0, v64)
y.sum().backward()
print(y.dtype, v64.grad)
# sphinx_gallery_start_ignore
assert y.dtype == torch.float32
assert v64.grad.dtype == torch.float64
assert v64.grad == 1
for index in (0, slice(0, 2), torch.tensor([True, False, True])):
    by_torch = torch.zeros(3)
    by_torch[index] = v64.detach()  # casts
    for name, recipe in ir.RECIPES.items():
        if name != "select_scatter" or not isinstance(index, torch.Tensor):  # it takes no mask
            assert torch.equal(recipe(torch.zeros(3), index, v64.detach()), by_torch)
# sphinx_gallery_end_ignore

# %%
# With index tensors (or several values through a mask) setitem does not
# cast: it raises, and so does every recipe. Cast the value yourself,
# ``v64.to(x.dtype)``; the gradient still reaches it.

z = torch.zeros(3)
try:
    z[torch.tensor([0, 2])] = v64.detach()
except RuntimeError as exc:
    print("setitem:", exc)
try:
    ir.where(torch.zeros(3), torch.tensor([0, 2]), v64)
except RuntimeError as exc:
    print("ir.where:", exc)
print(ir.where(torch.zeros(3), torch.tensor([0, 2]), v64.to(torch.float32)))
# sphinx_gallery_start_ignore


def _refuses_dtype(write, *args):
    """Whether ``write(*args)`` raises torch's error for a value of another dtype."""
    try:
        write(*args)
    except RuntimeError as error:
        return "dtypes match" in str(error)
    return False


for index, value in [
    (torch.tensor([0, 2]), v64),
    ([0, 2], v64),
    ((torch.tensor([0]),), v64),
    (torch.tensor([True, False, True]), torch.tensor([1.0, 2.0], dtype=torch.float64)),
]:
    assert _refuses_dtype(torch.zeros(3).__setitem__, index, value.detach())
    for recipe in ir.RECIPES.values():
        assert _refuses_dtype(recipe, torch.zeros(3), index, value), recipe
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `Autograd mechanics <https://pytorch.org/docs/stable/notes/autograd.html>`_
