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
# Duplicate positions corrupt gradients as well as values
# -------------------------------------------------------
#
# When an index tensor names a position twice, torch keeps one of the
# written values (which one is undefined) but gives *every* value the
# gradient of that position, as if each had been written. This holds for
# torch's own ``y[i] = v`` on a clone, ``index_put`` and ``scatter`` alike
# (``IndexPutBackward0`` and ``ScatterBackward0`` cannot know which write
# won); PyTorch closed the report as documented undefined behaviour
# (`pytorch/pytorch#146299 <https://github.com/pytorch/pytorch/issues/146299>`_).
# Here ``y.sum()`` holds one of the two values, so the right gradient to
# ``v`` has a single 1:

from inplace_recipes.claims import verify

v = torch.tensor([1.0, 2.0], requires_grad=True)
twice = torch.tensor([0, 0])


def setitem_on_clone():
    y = torch.zeros(3).clone()
    y[twice] = v
    return y


for name, write in [
    ("clone + setitem", setitem_on_clone),
    ("torch index_put", lambda: torch.zeros(3).index_put((twice,), v)),
    ("torch scatter", lambda: torch.zeros(3).scatter(0, twice, v)),
]:
    y = write()
    (grad,) = torch.autograd.grad(y.sum(), v)
    print(f"{name:>16}: y = {y.tolist()}, gradient to v = {grad.tolist()}")
print(verify("duplicate_positions_value_grad"))

# %%
# Decide what a repeated position should mean. To add the values, say so:
# ``index_put(..., accumulate=True)`` or ``at(x)[i].add(v)`` give every value
# the gradient it really has:

y = torch.zeros(3).index_put((twice,), v, accumulate=True)
(grad,) = torch.autograd.grad(y.sum(), v)
print(f"accumulate=True: y = {y.tolist()}, gradient to v = {grad.tolist()}")
# sphinx_gallery_start_ignore
assert y.tolist() == [3.0, 0.0, 0.0]
assert grad.tolist() == [1.0, 1.0]
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `Indexing in PyTorch <https://pytorch.org/docs/stable/tensor_view.html>`_
# - `torch.Tensor.index_put_ <https://pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html>`_:
#   "the behavior is undefined if indices contain duplicate elements"
