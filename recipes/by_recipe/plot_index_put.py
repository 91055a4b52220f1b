"""
``index_put``: write at positions given by index tensors
========================================================

``x.index_put(indices, values)`` is the out-of-place twin of
``x[indices] = values``. It takes index tensors, one per indexed dimension
(fewer than ``x.ndim`` leave the other dimensions whole; a boolean mask
covers as many dimensions as it has), and saves only them for backward:
8 bytes per element of each int64 index tensor (4 for int32; a mask, one
byte per element), however many positions they write. The package's recipe
passes index tensors alone, or one mask, as they are, so it saves the same;
a mask beside index tensors, or an index tensor beside an int or a slice,
it writes as flat positions and saves 8 bytes per written position. With
duplicate positions, which write wins is undefined; ``accumulate=True``
adds them.
"""

# %%
# When to use it
# --------------
#
# Index tensors, scattered positions, rows chosen at run time:
#
# >>> x = torch.zeros(4)
# >>> x.index_put((torch.tensor([3, 0]),), torch.tensor([1.0, 2.0]))
# tensor([2., 0., 0., 1.])

import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# ``x[rows, cols] = v`` becomes:

x = torch.rand(3, 4, requires_grad=True)
v = torch.tensor([10.0, 20.0], requires_grad=True)
rows, cols = torch.tensor([0, 2]), torch.tensor([1, 3])

y = x.index_put((rows, cols), v)
print(y)

# %%
# The gradient check
# ------------------

report = ir.compare_gradients(x, (rows, cols), v, ["index_put"], second_order=True, gradcheck=True)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.index_put(x, (rows, cols), v))
from inplace_recipes import bench  # the summary's bytes, for torch's op and the recipe

nonleaf = x * 1


def _saved(index, value):
    """Bytes saved for backward by x.index_put and by the recipe (they must agree)."""
    indices = index if isinstance(index, tuple) else (index,)
    torch_op = bench.saved_bytes(lambda t, i, u: t.index_put(i, u), nonleaf, indices, value)[0]
    recipe = bench.saved_bytes(ir.RECIPES["index_put"], nonleaf, index, value)[0]
    assert torch_op == recipe, (torch_op, recipe)
    return torch_op


assert _saved((rows, cols), v) == 2 * 2 * 8  # 2 positions, 2 int64 tensors of 2 elements
assert _saved((rows,), torch.ones(2, 4)) == 2 * 8  # 8 positions, one tensor of 2 elements
assert _saved((rows[:, None], torch.tensor([1, 3, 0])), torch.ones(2, 3)) == (2 + 3) * 8
assert _saved((rows.int(), cols.int()), v) == 2 * 2 * 4  # int32: 4 bytes an element
assert _saved(x.detach() > 0.5, torch.tensor(1.0)) == 12  # a (3, 4) mask: 1 byte an element
# fewer index tensors than dimensions write whole rows; a mask covers its dimensions
one_row = torch.zeros(3, 4).index_put((torch.tensor([0]),), torch.tensor(1.0))
assert one_row.sum() == 4
assert one_row[0].eq(1).all()
every = torch.ones(3, 4, dtype=torch.bool)
assert torch.zeros(3, 4).index_put((every,), torch.tensor(1.0)).eq(1).all()
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------

fig = ir.draw_graph(y, title="x.index_put((rows, cols), v)", highlight=("IndexPutBackward0",))

# %%
# Pitfall: duplicate positions
# ----------------------------
#
# With a position listed twice, setitem and ``index_put`` keep one of the
# writes, and which one torch's documentation leaves undefined.
# ``accumulate=True`` adds every write to ``x`` instead, which is
# defined, and usually what a gradient-style update means. Without it,
# autograd still gives every value the gradient of the position, as if each
# had been written:

from inplace_recipes.claims import verify

print(verify("index_put_duplicate_positions_value_grad"))

# %%
# With ``accumulate=True``:

z = torch.zeros(3)
dup = torch.tensor([0, 0, 2])
vals = torch.tensor([1.0, 2.0, 5.0])
print("accumulate=True:", z.index_put((dup,), vals, accumulate=True))
# sphinx_gallery_start_ignore
assert torch.equal(z.index_put((dup,), vals, accumulate=True), torch.tensor([3.0, 0.0, 5.0]))
# sphinx_gallery_end_ignore

# %%
# One index tensor names a position twice when its unique values are fewer
# than its entries; check before you write:

print("duplicates:", dup.unique().numel() < dup.numel())
# sphinx_gallery_start_ignore
from inplace_recipes._indexing import IndexPlan

assert IndexPlan.of(z, dup).has_duplicates()  # the check the recipes run agrees
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `torch.Tensor.index_put <https://pytorch.org/docs/stable/generated/torch.Tensor.index_put.html>`_
# - `torch.Tensor.index_put_ <https://pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html>`_ (the in-place form and its ``accumulate``)
