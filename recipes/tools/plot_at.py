"""
``at[]``: JAX-style functional index updates for PyTorch
========================================================

``at(x)[index].set(value)`` returns a new tensor with ``x[index]`` replaced
and never changes ``x``, like JAX's ``x.at[index].set(value)``. It also adds,
multiplies, takes minima and applies functions at an index; duplicate
positions apply every update; and it works, with correct gradients, under
autograd, ``torch.func.grad``, ``vmap`` (where ``clone()`` + setitem fails for
a batched value), ``functionalize`` and ``torch.compile(fullgraph=True)``.
"""

# %%
# Every method
# ------------
#
# Each method is the out-of-place twin of an in-place expression:

import torch

import inplace_recipes as ir
from inplace_recipes import at

x = torch.arange(5.0)
index = torch.tensor([0, 3])
value = torch.tensor([10.0, 2.0])

for name, out in [
    ("set       x[i] = v", at(x)[index].set(value)),
    ("add       x[i] += v", at(x)[index].add(value)),
    ("subtract  x[i] -= v", at(x)[index].subtract(value)),
    ("multiply  x[i] *= v", at(x)[index].multiply(value)),
    ("divide    x[i] /= v", at(x)[index].divide(value)),
    ("power     x[i] **= v", at(x)[index].power(value)),
    ("min       minimum(x[i], v)", at(x)[index].min(value)),
    ("max       maximum(x[i], v)", at(x)[index].max(value)),
    ("apply     x[i] = fn(x[i])", at(x)[index].apply(torch.neg)),
]:
    print(f"{name:30} {out.tolist()}")
print("get       x[i]", at(x)[index].get().tolist())
print("x itself is unchanged:", x.tolist())
# sphinx_gallery_start_ignore
assert torch.equal(x, torch.arange(5.0))
for method in ["set", "add", "multiply", "max"]:
    report = ir.compare_gradients(
        x,
        index,
        value,
        {method: lambda a, i, v, m=method: getattr(at(a)[i], m)(v)},
        reference=lambda a, i, v, m=method: {
            "set": lambda y: y.index_put((i,), v),
            "add": lambda y: y.index_put((i,), v, accumulate=True),
            "multiply": lambda y: y.index_put((i,), y[i] * v),
            "max": lambda y: y.index_put((i,), torch.maximum(y[i], v)),
        }[m](a.clone()),
    )
    report.assert_ok()
# sphinx_gallery_end_ignore

# %%
# Every index that setitem takes works: ints, slices, ``...``, ``None``,
# boolean masks and index tensors, mixed. ``at(x, index)`` is the same as
# ``at(x)[index]``.
#
# >>> m = torch.zeros(2, 3)
# >>> at(m)[:, 1].add(1.0)
# tensor([[0., 1., 0.],
#         [0., 1., 0.]])
# >>> at(m)[m == 0].set(7.0)
# tensor([[7., 7., 7.],
#         [7., 7., 7.]])

# %%
# Duplicate positions
# -------------------
#
# ``y[i] += v`` with a repeated position adds only once (the writes race);
# ``at[].add`` adds every value, like ``index_put(accumulate=True)``.
# ``multiply``, ``min`` and ``max`` combine every value too:

i = torch.tensor([1, 1, 1])
v = torch.tensor([1.0, 2.0, 3.0])
y = torch.zeros(3)
y[i] += v
print("y[i] += v     ", y.tolist())
print("at[].add      ", at(torch.zeros(3))[i].add(v).tolist())
print("at[].multiply ", at(torch.ones(3))[i].multiply(v).tolist())
print("at[].max      ", at(torch.zeros(3))[i].max(v).tolist())
# sphinx_gallery_start_ignore
assert at(torch.zeros(3))[i].add(v).tolist() == [0.0, 6.0, 0.0]
assert at(torch.ones(3))[i].multiply(v).tolist() == [1.0, 6.0, 1.0]
# sphinx_gallery_end_ignore

# %%
# ``set`` with duplicates writes one of the values, and, as JAX documents
# for its ``at[].set``, which one is unspecified (on CPU today, the last;
# on CUDA it can vary between runs). Write each position once if it matters.
#
# Out-of-range positions
# ----------------------
#
# By default an out-of-range position raises ``IndexError``, as PyTorch does.
# ``mode="clip"`` clamps it into range and ``mode="drop"`` skips its update,
# as in JAX; ``get(mode="fill")`` reads ``fill_value`` there:
#
# >>> x = torch.arange(4.0)
# >>> at(x)[torch.tensor([1, 9])].set(-1.0, mode="drop")
# tensor([ 0., -1.,  2.,  3.])
# >>> at(x)[torch.tensor([1, 9])].set(-1.0, mode="clip")
# tensor([ 0., -1.,  2., -1.])
# >>> at(x)[torch.tensor([1, 9])].get(mode="fill", fill_value=0.0)
# tensor([1., 0.])
# >>> at(x)[9].set(-1.0)
# Traceback (most recent call last):
#     ...
# IndexError: index 9 is out of bounds for dimension 0 with size 4

# %%
# Choosing the recipe
# -------------------
#
# ``set`` writes with one of the recipes in :data:`inplace_recipes.RECIPES`:
# by default the one ``inplace_recipes.recommend.best_recipe`` picks for the
# index, or the one named by ``method=``:
#
# >>> at(torch.zeros(3))[0].set(1.0, method="where")
# tensor([1., 0., 0.])
# >>> at(torch.zeros(3))[0].set(1.0, method="fast")
# Traceback (most recent call last):
#     ...
# ValueError: unknown method 'fast'; choose from mask, where, clone, index_put, scatter, select_scatter, masked_fill

# %%
# Under ``vmap``, with a batched value
# ------------------------------------
#
# ``clone()`` + setitem cannot write a batched value into an unbatched clone;
# ``at[]`` can, and its gradients match a plain loop:

from torch.func import vmap

base = torch.zeros(3, requires_grad=True)
values = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)


def write(v):
    return at(base)[1].set(v)


out = vmap(write)(values)
print(out)
out.sum().backward()
print("grad to base:", base.grad.tolist(), "grad to values:", values.grad.tolist())
# sphinx_gallery_start_ignore
assert torch.equal(out[:, 1], values.detach())
assert base.grad.tolist() == [4.0, 0.0, 4.0]
assert values.grad.tolist() == [1.0, 1.0, 1.0, 1.0]
# sphinx_gallery_end_ignore

# %%
# ``torch.func.grad`` works the same way:

g = torch.func.grad(lambda v: (at(torch.ones(3))[1:].multiply(v) ** 2).sum())(torch.tensor(3.0))
print(g)  # d/dv of 2 * v**2 at v = 3
# sphinx_gallery_start_ignore
assert g.item() == 12.0
# sphinx_gallery_end_ignore

# %%
# Under ``torch.compile``
# -----------------------
#
# ``at[]`` compiles to one graph (``fullgraph=True`` raises on any graph
# break). Index tensors are inputs of the graph like any tensor:


@torch.compile(fullgraph=True)
def scatter_add(x, index, v):
    return at(x)[index].add(v)


compiled = scatter_add(torch.zeros(4), torch.tensor([0, 0, 2]), torch.ones(3))
print(compiled)
# sphinx_gallery_start_ignore
assert compiled.tolist() == [2.0, 0.0, 1.0, 0.0]
torch._dynamo.reset()
# sphinx_gallery_end_ignore

# %%
# Migrating JAX code
# ------------------
#
# Replace the ``.at`` property by a call. The methods, their arguments and
# ``mode`` are JAX's; ``indices_are_sorted`` and ``unique_indices`` are not
# needed.
#
# ==================================  ==========================================
# JAX                                 ``inplace_recipes``
# ==================================  ==========================================
# ``x.at[i].set(v)``                  ``at(x)[i].set(v)``
# ``x.at[i].add(v, mode="drop")``     ``at(x)[i].add(v, mode="drop")``
# ``x.at[i].apply(jnp.sin)``          ``at(x)[i].apply(torch.sin)``
# ``x.at[i].get(mode="fill")``        ``at(x)[i].get(mode="fill")``
# ``x.at[i].set(v)`` (default mode)   out-of-range ``i`` raises ``IndexError``:
#                                     pass ``mode="drop"`` for JAX's behaviour
# ==================================  ==========================================
#
# Two differences: the value is cast to ``x``'s dtype only where PyTorch's
# in-place op would cast it (``at(int_x)[i].add(0.5)`` raises, as
# ``int_x[i] += 0.5`` does), and ``apply`` calls ``fn`` once per position
# even when an index tensor repeats it.
#
# Learn more
# ----------
#
# - `jax.Array.at <https://docs.jax.dev/en/latest/_autosummary/jax.Array.at.html>`_
# - `array_api_extra.at <https://data-apis.org/array-api-extra/generated/array_api_extra.at.html>`_
# - `torch.func.vmap <https://docs.pytorch.org/docs/stable/generated/torch.func.vmap.html>`_
# - `Tensor.index_put_ <https://docs.pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html>`_
#   and `Tensor.scatter_reduce <https://docs.pytorch.org/docs/stable/generated/torch.Tensor.scatter_reduce.html>`_
# - The compatibility matrix of every recipe and ``at[]`` (next page).

# %%
# Next to JAX and array-api-extra
# -------------------------------
#
# ``nox -s peers`` runs the conformance cases of this page's tests through
# JAX's ``x.at[]`` (``jax.numpy`` on the CPU, 64-bit mode where the case is
# 64-bit), ``array_api_extra.at`` on torch tensors and ``at()``, comparing
# values, and gradients (``jax.grad`` against torch autograd). The run is
# committed in ``comparisons/peers.json``; what differs, and what the run
# observed about it, comes from that file:

from inplace_recipes import peers

run = peers.load_peers()
prov = run["provenance"]
print(
    f"torch {prov['torch']}, jax {prov['jax']}, array-api-extra {prov['array_api_extra']}; "
    f"run on {prov['date']}, commit {prov['git_commit'][:12]}"
)
summary = run["summary"]
print(
    f"{summary['cases']} cases: all three agree on {summary['all_agree']}; "
    f"JAX differs on {summary['jax differs']}, array-api-extra on {summary['array_api_extra differs']}"
)
for source, counts in peers.by_source(run).items():
    print(f"  {source}: {counts}")

# %%
# Where they differ: each kind of difference, how many cases show it, and
# everything the run observed on one of them (each library's result, error
# or gradient, what NumPy says about the index, the case's own note):

peers.table(run)
