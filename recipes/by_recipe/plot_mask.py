"""
``mask``: blend ``x`` and the value with an arithmetic mask
===========================================================

The classic answer: ``x * (1 - m) + value * m`` with ``m`` one where you
would write and zero elsewhere. It is only additions and multiplications,
so it works everywhere autograd does, but it saves a full-size mask of
``x``'s dtype for backward, turns ``inf`` and ``nan`` into ``nan``, and the
old NumPy-mask version silently promotes float32 to float64.
"""

# %%
# When to use it
# --------------
#
# Rarely: when the mask is already a float tensor you computed (a soft mask,
# say). For a hard index, prefer ``where`` or ``masked_fill``.
#
# >>> ir.mask_blend(torch.ones(3), 1, 5.0)
# tensor([1., 5., 1.])

import numpy as np
import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# Build the mask in torch, with ``x``'s dtype and device:

x = torch.rand(2, 3, requires_grad=True)
v = torch.tensor(42.0, requires_grad=True)

m = torch.zeros_like(x)
m[0, 1] = 1.0
y = x * (1 - m) + v * m
print(y)

# %%
# The gradient check
# ------------------

report = ir.compare_gradients(x, (0, 1), v, ["mask"], second_order=True, gradcheck=True)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.mask_blend(x, (0, 1), v))
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------
#
# Two multiplications and an addition: each multiplication saved the
# operand it needs, so the mask ``m`` is kept alive for backward.

fig = ir.draw_graph(y, title="x * (1 - m) + v * m", highlight=("AddBackward0",))

# %%
# Pitfall: ``inf`` and ``nan`` become ``nan``
# -------------------------------------------
#
# ``inf * 0`` is ``nan``, so a non-finite entry at a written position is not
# erased, unlike with setitem:

bad = torch.tensor([1.0, float("inf"), 3.0])
print("blend:     ", ir.mask_blend(bad, 1, 5.0))
print("where:     ", ir.where(bad, 1, 5.0))
# sphinx_gallery_start_ignore
assert torch.isnan(ir.mask_blend(bad, 1, 5.0)[1])
assert ir.where(bad, 1, 5.0)[1] == 5.0
# sphinx_gallery_end_ignore

# %%
# Pitfall: a NumPy mask promotes to float64
# -----------------------------------------
#
# Many old answers build the mask with NumPy. ``np.array([0., 1., 0.])`` is
# float64, and a float32 tensor times a float64 tensor is float64: every
# later operation now runs in double precision.

x32 = torch.tensor([1.0, 2.0, 3.0])
np_mask = torch.from_numpy(np.array([0.0, 1.0, 0.0]))
print((x32 * (1 - np_mask) + 5 * np_mask).dtype)
print(ir.mask_blend(x32, 1, 5.0).dtype)
# sphinx_gallery_start_ignore
assert (x32 * (1 - np_mask) + 5 * np_mask).dtype == torch.float64
assert ir.mask_blend(x32, 1, 5.0).dtype == torch.float32
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `Type promotion <https://pytorch.org/docs/stable/tensor_attributes.html#type-promotion-doc>`_
# - The ``where`` recipe: the same result without the arithmetic.
