"""
``clone``: copy, then write into the copy
=========================================

``y = x.clone(); y[index] = value`` is the smallest change to code that
fails on a leaf: the write now goes into a new tensor that is part of the
graph. For ints and slices that pick part of the tensor, autograd records
the write as ``CopySlices`` and saves nothing for backward; a write of the
whole tensor (``y[:]``, ``y[...]``) is recorded as the copy or fill itself
(``CopyBackwards``, ``FillBackward3``), and a write with index tensors or a
mask as ``IndexPutBackward0``, which saves the index tensors (or the mask).
It is the reference every other recipe on this site is checked against. Its
one pitfall: under ``torch.func.vmap`` with a batched value it fails.
"""

# %%
# When to use it
# --------------
#
# Whenever the code reads best as a write, outside ``vmap``:
#
# >>> x = torch.zeros(2, 2, requires_grad=True)
# >>> y = x.clone()
# >>> y[0, 1] = 3.0
# >>> y
# tensor([[0., 3.],
#         [0., 0.]], grad_fn=<CopySlices>)

import torch

import inplace_recipes as ir

# %%
# The code
# --------

x = torch.rand(3, 4, requires_grad=True)
v = torch.rand(4, requires_grad=True)

y = x.clone()
y[1] = v
print(y)
# sphinx_gallery_start_ignore
# The sentences of the introduction: the node each write records, and what it saves.


def _recorded(index, value):
    written = x.clone()
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        written[index] = value
    return type(written.grad_fn).__name__, [(t.dtype, t.numel()) for t in saved]


rows, mask = torch.tensor([0, 2]), x.detach() > 0.5
assert _recorded(1, v) == _recorded((1, slice(0, 2)), 1.0) == ("CopySlices", [])
assert _recorded(slice(None), v) == _recorded(..., v) == ("CopyBackwards", [])
assert _recorded(slice(None), 1.0) == ("FillBackward3", [])
assert _recorded(rows, v) == ("IndexPutBackward0", [(torch.int64, 2)])
assert _recorded((rows, rows), 1.0) == ("IndexPutBackward0", [(torch.int64, 2)] * 2)
assert _recorded(mask, 1.0) == ("IndexPutBackward0", [(torch.bool, 12)])
# sphinx_gallery_end_ignore

# %%
# The gradient check
# ------------------
#
# ``clone`` is the reference itself; here every other recipe is compared
# with it on the same write. ``select_scatter`` and ``masked_fill`` are not
# applicable to some indices or values, and say so.

report = ir.compare_gradients(x, 1, v)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------
#
# ``CopySlices`` wraps the write: it sends the gradient of row 1 to ``v``
# and the rest, through ``CloneBackward0``, to ``x``.

fig = ir.draw_graph(y, title="y = x.clone(); y[1] = v")

# %%
# Pitfall: ``vmap`` with a batched value
# --------------------------------------
#
# Under ``torch.func.vmap``, ``x.clone()`` of an unbatched ``x`` has no batch
# dimension, so a batched value cannot be written into it:

base = torch.zeros(3)
values = torch.arange(4.0)


def write_first(v):
    y = base.clone()
    y[0] = v
    return y


try:
    torch.func.vmap(write_first)(values)
except RuntimeError as exc:
    print(f"RuntimeError: {exc}")

# %%
# An out-of-place recipe has no such problem: ``where`` (or ``index_put``)
# builds a new, batched tensor. Not torch's own ``select_scatter``, whose
# gradient torch 2.13 gets wrong under ``vmap`` (the package's
# ``select_scatter`` recipe avoids it; see its page).

print(torch.func.vmap(lambda v: ir.where(base, 0, v))(values))
# sphinx_gallery_start_ignore
assert torch.equal(torch.func.vmap(lambda v: ir.where(base, 0, v))(values)[:, 0], values)
from inplace_recipes.claims import verify

verify("select_scatter_vmap_grad_scaled")  # the sentence above about select_scatter
src = values.clone().requires_grad_(True)  # and the recipe: the right gradient, 1 each
(recipe_grad,) = torch.autograd.grad(
    torch.func.vmap(lambda v: ir.select_scatter(base, 0, v))(src).sum(), src
)
assert torch.equal(recipe_grad, torch.ones(4)), recipe_grad
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `torch.Tensor.clone <https://pytorch.org/docs/stable/generated/torch.Tensor.clone.html>`_
# - `torch.func.vmap <https://pytorch.org/docs/stable/generated/torch.func.vmap.html>`_
# - The concept page on ``CopySlices``.
