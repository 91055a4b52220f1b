"""
``select_scatter``: write a row, a column or a slice
====================================================

``x.select_scatter(src, dim, i)`` returns ``x`` with ``x.select(dim, i)``
replaced by ``src``; ``slice_scatter`` does the same for a slice. Chained,
they cover every index of ints and slices and save nothing for backward
(the package's recipe writes the whole tensor, ``x[:]`` or ``x[...]``, with
``torch.where``, which saves one byte: a 0-d ``True``). They take no index
tensors, and under ``torch.func.vmap`` torch
2.13 gives ``select_scatter`` a wrong gradient: see the pitfalls below.
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
# Saving nothing is not allocating nothing
# ----------------------------------------
#
# Bytes saved for backward are what stays alive between forward and
# backward; what a step allocates on the way does not show there. Torch 2.13's
# ``select_scatter`` copies the whole storage under its input
# (``clone_preserve_strides`` in ``aten/src/ATen/native/TensorShape.cpp``), so on
# a row of ``x`` it allocates a buffer of ``x``'s size, not of the row's. For
# ``x[i, j] = v`` the recipe chains two calls, the inner one on a row: the
# forward makes one buffer of ``x``'s size besides the result, and the backward
# makes two where ``clone``'s makes one. Each allocation of torch's CPU
# allocator counted (the benchmark's counter), on 1e6 float32 elements:

from inplace_recipes.bench import peak_bytes
from inplace_recipes.bench._measure import held_step, temporary_step
from inplace_recipes.bench._memory import allocations

a = torch.rand(1000, 1000, requires_grad=True)
b = torch.rand(1000, 1000, requires_grad=True)
x_size = a.nbytes  # 4,000,000 bytes
zero = torch.tensor(0.0)
print(
    "a[1].select_scatter(zero, 0, 2) allocates",
    allocations(lambda: a[1].select_scatter(zero, 0, 2)),
)


def buffers_of_x_size(name):
    """How many buffers of x's size the forward and the backward of x[500, 500] = 0 allocate."""
    c = a + b
    forward = allocations(lambda: ir.RECIPES[name](c, (500, 500), 0.0))
    y = ir.RECIPES[name](c, (500, 500), 0.0)
    backward = allocations(lambda: torch.autograd.grad(y.sum(), [a, b]))
    return forward.count(x_size), backward.count(x_size)


def peaks(name):
    """Peak bytes of forward + backward: the tensor written from kept alive, and a temporary."""

    def write(c):
        return ir.RECIPES[name](c, (500, 500), 0.0)

    cpu = torch.device("cpu")  # the benchmark's two steps
    return peak_bytes(held_step(write, a, b, 0.0), cpu), peak_bytes(
        temporary_step(write, a, b, 0.0), cpu
    )


counted = {name: (buffers_of_x_size(name), peaks(name)) for name in ir.RECIPES}
least_held = min(held for _, (held, _) in counted.values())
least_temporary = min(temporary for _, (_, temporary) in counted.values())
print("recipe          x-size buffers     peak, c kept alive      peak, c a temporary")
print("                forward backward")
for name, ((fwd, bwd), (held, temporary)) in counted.items():
    print(
        f"{name:15} {fwd:7} {bwd:8}   {held / 2**20:5.2f} MiB {held / least_held:5.2f}x"
        f"       {temporary / 2**20:5.2f} MiB {temporary / least_temporary:5.2f}x"
    )
# sphinx_gallery_start_ignore
assert max(allocations(lambda: a[1].select_scatter(zero, 0, 2))) == x_size
assert counted["select_scatter"][0] == (2, 2), counted["select_scatter"]
assert counted["clone"][0] == (1, 1), counted["clone"]
(held, temporary) = counted["select_scatter"][1]
assert f"{held / least_held:.2f}" == "1.33", held / least_held
assert f"{temporary / least_temporary:.2f}" == "1.50", temporary / least_temporary
c = a + b  # a row: one select_scatter on x, its result the only buffer of x's size
assert allocations(lambda: ir.RECIPES["select_scatter"](c, 500, 0.0)).count(x_size) == 1
# sphinx_gallery_end_ignore

# %%
# With the tensor written from kept alive through backward (``y =
# select_scatter(c, ...)`` with ``c`` used again), the step peaks at 1.33 times
# the least any recipe needs for this write; with it a temporary (``c =
# select_scatter(c, ...)``), at 1.50 times. A row, ``x[i] = v``, is one call on
# ``x`` itself and allocates no such copy.

# %%
# Saving nothing does not make it faster
# --------------------------------------
#
# The committed benchmark times forward + backward of every recipe against
# the in-place write. Two recipes closer than the run's noise band (the
# largest disagreement between two timings of identical work, from 1e5
# elements up), or whose bootstrap interval of their ratio holds 1, are a
# tie.
# Where ``select_scatter`` stands for each kind of basic write, read from the
# results, not typed here (:func:`inplace_recipes.best_recipe` picks from the
# same ranking, ``clone`` on a tie):

import committed

from inplace_recipes import bench

results = committed.bench_results()
band = bench.noise_band(results, sizes=bench.RANKED_SIZES)
ranks = bench.ranking(results)
print(f"noise band: {(band - 1) * 100:.0f}%")
for write in ("element", "row", "slice", "value_grad"):
    ratio = dict(ranks[write])["select_scatter"]
    tied = bench.tied_with_fastest(ranks[write], band, results, write)
    where = (
        "ties for fastest with " + ", ".join(n for n in tied if n != "select_scatter")
        if "select_scatter" in tied
        else f"slower than {', '.join(tied)} beyond the noise"
    )
    print(f"{write:>10}: select_scatter {ratio:.2f}x in-place, {where}")
print("best_recipe for x[1] = 0:", ir.best_recipe(torch.zeros(3, 4), 1, 0.0))

# %%
# Pitfall: a wrong gradient under ``vmap`` (a torch 2.13 bug)
# -----------------------------------------------------------
#
# Batch one write with ``torch.func.vmap`` and take the gradient with
# autograd: the gradient to the written source comes out multiplied by
# ``x.shape[dim]``, for a single write. Here ``x`` has 7 rows:

from inplace_recipes.claims import CLAIMS, verify

x0 = torch.randn(7, 4)
src = torch.randn(5, 4, requires_grad=True)
out = torch.func.vmap(lambda s: x0.select_scatter(s, 0, 1))(src)
(grad_src,) = torch.autograd.grad(out.sum(), src)
print(grad_src[0])  # 1.0 is right: each element of src is written once
print(verify("select_scatter_vmap_grad_scaled"))
print(verify("select_scatter_vmap_vjp_scaled"))

# %%
# ``vmap`` of ``grad`` is right, and so is ``slice_scatter``:

print(verify("select_scatter_vmap_of_grad_right"))
print(verify("slice_scatter_vmap_grad_right"))

# %%
# Why: under ``vmap``, functorch does not batch ``select_scatter``; it
# registers a decomposition, ``select_scatter_decomp`` in
# ``aten/src/ATen/functorch/BatchRulesScatterOps.cpp``, that calls
# ``scatter(self, dim, index.expand_as(self), source.unsqueeze(dim).expand_as(self))``:
# every one of the ``x.shape[dim]`` positions along ``dim`` writes the same
# source element to position ``i``. The forward is right (the writes are
# equal), but ``scatter``'s backward gathers the gradient of position ``i``
# once per write, and the expand sums them: ``x.shape[dim]`` times the
# gradient. ``slice_scatter``'s decomposition uses an ``arange`` index, with no
# repeated position, and is right. The graph shows it:

print(CLAIMS["select_scatter_vmap_is_expanded_scatter"].statement)
print(verify("select_scatter_vmap_is_expanded_scatter"))

# %%
# Under ``vmap``, use ``where`` or ``index_put``
# (:func:`inplace_recipes.at` uses ``index_put`` inside ``torch.func``
# transforms):

out = torch.func.vmap(lambda s: ir.RECIPES["where"](x0, 1, s))(src)
(grad_where,) = torch.autograd.grad(out.sum(), src)
print(grad_where[0])
# sphinx_gallery_start_ignore
assert torch.equal(grad_where, torch.ones_like(src))
assert torch.equal(grad_src, torch.full_like(src, 7.0))
chosen = []
torch.func.vmap(lambda s: chosen.append(ir.best_recipe(x0, 1, s)) or s)(src)
assert chosen == ["index_put"], chosen  # what at() uses under vmap, as the sentence says
(grad_put,) = torch.autograd.grad(torch.func.vmap(lambda s: ir.at(x0)[1].set(s))(src).sum(), src)
assert torch.equal(grad_put, torch.ones_like(src))
# sphinx_gallery_end_ignore

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
# - The performance page: how the ranking above is measured.
# - ``Writing under vmap``: the recipes that are right there.
