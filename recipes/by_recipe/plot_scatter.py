"""
``scatter``: write a source tensor at positions, or through a mask
==================================================================

``torch.scatter`` writes ``src`` into ``x`` at the positions of an index
tensor along one dimension; ``masked_scatter`` writes the values of ``src``,
in order, where a mask is True. The package's ``scatter`` recipe uses
``scatter`` for every index but a lone ``False`` (which writes nothing, as
setitem): along one dimension where it can, else on the flat positions (a
mask's from ``nonzero``). With duplicate positions
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
# Memory: positions without a grid of ``x``'s size
# -------------------------------------------------
#
# Where index tensors do not write along one dimension (two of them, as
# above, a 2-D one, or one beside a slice), the recipe builds the flat
# positions from the index alone: each index tensor's rows (its smallest and
# largest entries read once, to wrap negative ones and raise setitem's
# ``IndexError``) times its dimension's stride, summed; beside a slice,
# torch indexes one expanded ``arange`` per dimension, which allocates
# nothing of ``x``'s size. Before 0.4.0 it indexed an int64 ``arange`` of
# ``x``'s size while ``x`` had at most 2^20 elements, 8 bytes an element,
# which made the step peak at 1.50 times ``clone``'s on 1e6 float32
# elements. Each allocation of torch's CPU allocator counted (the
# benchmark's counter), for ``x[rows, cols] = 0`` on float32 tensors:

from inplace_recipes.bench import peak_bytes
from inplace_recipes.bench._measure import held_step, temporary_step
from inplace_recipes.bench._memory import allocations

rows, cols = torch.tensor([1, 5, 7]), torch.tensor([2, 3, 4])


def has_grid(shape, index):
    """Whether the recipe's forward allocates an int64 buffer of x's size."""
    big = torch.rand(shape)
    return big.numel() * 8 in allocations(lambda: ir.scatter(big, index, 0.0))


for shape in [(1000, 1000), (1024, 1024), (1025, 1024)]:
    print(f"{shape}: {shape[0] * shape[1]:>9,} elements, grid: {has_grid(shape, (rows, cols))}")
print("one index tensor, x[rows] = 0, along dimension 0: grid:", has_grid((1000, 1000), rows))

a = torch.rand(1000, 1000, requires_grad=True)
b = torch.rand(1000, 1000, requires_grad=True)


def peaks(name):
    """Peak bytes of forward + backward: the tensor written from a temporary, and kept alive."""

    def write(c):
        return ir.RECIPES[name](c, (rows, cols), 0.0)

    cpu = torch.device("cpu")  # the benchmark's two steps
    return peak_bytes(temporary_step(write, a, b, 0.0), cpu), peak_bytes(
        held_step(write, a, b, 0.0), cpu
    )


peak = {name: peaks(name) for name in ("scatter", "clone")}
ratios = [s / c for s, c in zip(peak["scatter"], peak["clone"], strict=True)]
print(f"scatter over clone, peak of the step: {ratios[0]:.2f}x with c a temporary, ", end="")
print(f"{ratios[1]:.2f}x with c kept alive")
# sphinx_gallery_start_ignore
for shape in [(1000, 1000), (1024, 1024), (1025, 1024)]:
    assert not has_grid(shape, (rows, cols))
assert not has_grid((1000, 1000), rows)
assert not has_grid((1000, 1000), torch.tensor([[1, 2], [3, 4]]))  # one of two dimensions, 2-D
assert not has_grid((1000, 1000), (rows, slice(None, 5)))  # a tensor and a slice
assert not has_grid((1000, 1000), (slice(None, 5), rows))
assert [f"{r:.2f}" for r in ratios] == ["1.00", "1.00"], peak
# sphinx_gallery_end_ignore

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
