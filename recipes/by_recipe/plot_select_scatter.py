"""
``select_scatter``: write a row, a column or a slice
====================================================

``x.select_scatter(src, dim, i)`` returns ``x`` with ``x.select(dim, i)``
replaced by ``src``; ``slice_scatter`` does the same for a slice. Chained,
they cover every index of ints and slices. They save nothing for backward,
which makes them the best choice for basic indices. They take no index
tensors.
"""

# %%
# When to use it
# --------------
#
# ``x[1] = v``, ``x[:, 2] = v``, ``x[1, ::2] = v``:
#
# >>> torch.zeros(2, 3).select_scatter(torch.ones(3), 0, 1)
# tensor([[0., 0., 0.],
#         [1., 1., 1.]])
# >>> ir.select_scatter(torch.zeros(2, 3), (1, slice(None, None, 2)), 1.0)
# tensor([[0., 0., 0.],
#         [1., 0., 1.]])

import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# ``x[:, 2] = v`` becomes:

x = torch.rand(3, 4, requires_grad=True)
v = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)

y = x.select_scatter(v, 1, 2)
print(y)

# %%
# The gradient check
# ------------------

report = ir.compare_gradients(
    x, (slice(None), 2), v, ["select_scatter"], second_order=True, gradcheck=True
)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.select_scatter(x, (slice(None), 2), v))
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------
#
# ``SelectScatterBackward0`` saved nothing: its backward only needs the
# dimension and the position.

fig = ir.draw_graph(y, title="x.select_scatter(v, 1, 2)", highlight=("SelectScatterBackward0",))

# %%
# Pitfall: no index tensors
# -------------------------
#
# An index tensor is not a position ``select`` can take. The recipe says so,
# and names the ones that can:

try:
    ir.select_scatter(x, torch.tensor([0, 2]), 0.0)
except ir.UnsupportedIndexError as exc:
    print(f"UnsupportedIndexError: {exc}")

# %%
# Learn more
# ----------
#
# - `torch.select_scatter <https://pytorch.org/docs/stable/generated/torch.select_scatter.html>`_
# - `torch.slice_scatter <https://pytorch.org/docs/stable/generated/torch.slice_scatter.html>`_
