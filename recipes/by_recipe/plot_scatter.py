"""
``scatter``: write a source tensor at positions, or through a mask
==================================================================

``torch.scatter`` writes ``src`` into ``x`` at the positions of an index
tensor along one dimension; ``masked_scatter`` writes the values of ``src``,
in order, where a mask is True. The package's ``scatter`` recipe uses
``scatter`` for every index: along one dimension where it can, else on the
flat positions (a mask's from ``nonzero``). With duplicate positions
one write is kept, undefined which; ``scatter_add`` and ``scatter_reduce``
combine them.
"""

# %%
# When to use it
# --------------
#
# When your values come as a flat source in index order, or you already
# think in ``gather``/``scatter`` terms:
#
# >>> ir.scatter(torch.zeros(3), torch.tensor([False, True, True]), torch.tensor([4.0, 5.0]))
# tensor([0., 4., 5.])

import torch

import inplace_recipes as ir

# %%
# The code
# --------
#
# Along dimension 1, write one value per row at column ``cols[row]``:

x = torch.rand(3, 4, requires_grad=True)
v = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
cols = torch.tensor([[0], [3], [1]])

y = x.scatter(1, cols, v)
print(y)

# %%
# The gradient check
# ------------------
#
# The same write as ``x[torch.arange(3), cols[:, 0]] = v[:, 0]``:

index = (torch.arange(3), cols[:, 0])
report = ir.compare_gradients(x, index, v[:, 0], ["scatter"], second_order=True, gradcheck=True)
print(report)
# sphinx_gallery_start_ignore
report.assert_ok()
assert torch.equal(y, ir.scatter(x, index, v[:, 0]))


def _nodes(out):
    """The names of every node in the graph behind ``out``."""
    seen, todo = [], [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and type(node).__name__ not in seen:
            seen.append(type(node).__name__)
            todo.extend(n for n, _ in node.next_functions)
    return seen


# the introduction: scatter for every index, never masked_scatter (a mask: flat, nonzero)
mask = x.detach() > 0.5
for write in [(1, 2.0), (slice(None), torch.ones(3, 4)), (index, v[:, 0]), (mask, 1.0)]:
    names = _nodes(ir.scatter(x, *write))
    assert any(n.startswith("ScatterBackward") for n in names), names
    assert not any("MaskedScatter" in n for n in names), names
flat = _nodes(ir.scatter(x, mask, torch.ones(int(mask.sum()))))
assert "ScatterBackward0" in flat, flat
assert "ViewBackward0" in flat, flat  # on the flat positions
# sphinx_gallery_end_ignore

# %%
# The autograd graph
# ------------------

fig = ir.draw_graph(y, title="x.scatter(1, cols, v)", highlight=("ScatterBackward0",))

# %%
# Pitfall: duplicate positions
# ----------------------------
#
# ``scatter`` keeps one of two writes to the same position, which one is
# not specified, yet autograd gives every value the position's gradient, as
# if each had been written:

from inplace_recipes.claims import verify

print(verify("scatter_duplicate_positions_value_grad"))

# %%
# ``scatter_add`` adds them instead, and ``scatter_reduce`` takes another
# reduction:

z = torch.zeros(3)
pos = torch.tensor([0, 0, 2])
src = torch.tensor([1.0, 2.0, 5.0])
print("scatter_add:   ", z.scatter_add(0, pos, src))
print("scatter_reduce:", z.scatter_reduce(0, pos, src, reduce="amax", include_self=False))

# %%
# Learn more
# ----------
#
# - `torch.scatter <https://pytorch.org/docs/stable/generated/torch.scatter.html>`_
# - `torch.Tensor.masked_scatter <https://pytorch.org/docs/stable/generated/torch.Tensor.masked_scatter.html>`_
# - `torch.Tensor.scatter_reduce <https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_reduce.html>`_
