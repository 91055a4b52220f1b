"""
Several positions and rows at once
==================================

One write can cover many positions: a list of rows, pairs of coordinates,
a mask. Write them in one out-of-place call instead of a loop of setitems,
each of which would add a ``CopySlices`` node to the graph.
"""

# %%
# Rows, pairs and masks
# ---------------------
#
# >>> x = torch.zeros(3, 3)
# >>> ir.index_put(x, torch.tensor([0, 2]), 1.0)
# tensor([[1., 1., 1.],
#         [0., 0., 0.],
#         [1., 1., 1.]])
# >>> ir.index_put(x, (torch.tensor([0, 1]), torch.tensor([2, 0])), torch.tensor([5.0, 6.0]))
# tensor([[0., 0., 5.],
#         [6., 0., 0.],
#         [0., 0., 0.]])

import torch

import inplace_recipes as ir

x = torch.rand(4, 3, requires_grad=True)
rows = torch.tensor([0, 3])
values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)

y = ir.index_put(x, rows, values)  # x[rows] = values
print(y)

# %%
# One write, not a loop
# ---------------------
#
# A loop of setitems on a clone gives the same numbers with one graph node
# per iteration:

looped = x.clone()
for r, row in zip(rows.tolist(), values, strict=True):
    looped[r] = row
print("nodes, looped:  ", len(ir.graph_nodes(looped)))
print("nodes, one call:", len(ir.graph_nodes(y)))
# sphinx_gallery_start_ignore
assert torch.equal(looped, y)
# sphinx_gallery_end_ignore

# %%
# The gradient check for rows, for pairs and for a mask:

for index, value in [
    (rows, values.detach()),
    ((torch.tensor([0, 1]), torch.tensor([2, 0])), torch.tensor([5.0, 6.0])),
    (x.detach() > 0.5, 0.0),
]:
    report = ir.compare_gradients(x, index, value, ["where", "index_put", "scatter"])
    print(report, end="\n\n")
    # sphinx_gallery_start_ignore
    report.assert_ok()
    # sphinx_gallery_end_ignore

fig = ir.draw_graph(looped, title="two setitems on a clone: two CopySlices")

# %%
# Learn more
# ----------
#
# - `Indexing in PyTorch <https://pytorch.org/docs/stable/tensor_view.html>`_
