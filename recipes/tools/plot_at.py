"""
``at[]``: JAX-style functional index updates for PyTorch
========================================================

``at(x)[index].set(value)`` returns a new tensor with ``x[index]`` replaced
and never changes ``x``, like JAX's ``x.at[index].set(value)``. It also adds,
multiplies, takes minima and applies functions at an index; at a repeated
position, each update but ``set`` and ``apply`` applies every value; and it works, with correct gradients, under
autograd, ``torch.func.grad``, forward mode (``jvp``, ``jacfwd``,
``hessian``), ``vmap`` (where ``clone()`` + setitem fails for a batched
value), ``functionalize`` and ``torch.compile(fullgraph=True)``.

The rule is **exact, or a clear error**: every method gives what plain
torch gives for ``y = x.clone()`` followed by the in-place statement (value,
dtype, gradients in reverse and forward mode; at duplicate positions, the
statement applied once per occurrence, where torch's own ``y[i] += v``
applies it once), or raises torch's error or one that names the problem,
with one exception: ``set(v, method="mask")`` writes with the mask blend
and keeps its documented pitfall, a value that is not finite in x's dtype
(an infinity, a nan, or a number past that dtype's range) makes every
unwritten element it is laid over nan (in a complex x, the written ones
too), a non-finite element of x at a written position becomes nan, and a
written -0.0 comes out as 0.0.
What changed to make that hold: every index goes through the package's one
index model (or, where ``set`` picks the ``clone`` recipe, torch's own
setitem); what ``set``, ``min`` and ``max`` write goes through setitem's
one rule for casting a value; the other ops call torch's own in-place op
on ``x[index]``, so that integer tensors,
low precision and complex numbers follow torch's type promotion;
``multiply``, ``divide`` and ``power`` no longer go through
``scatter_reduce(reduce="prod")``, whose forward-mode tangent torch drops;
and ``apply`` has one meaning for every kind of index.
"""

# %%
# Every method
# ------------
#
# Each method is the out-of-place twin of an in-place expression:

import numpy as np
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
# Index forms
# -----------
#
# Every index that setitem takes works, with setitem's meaning: ints,
# slices, ``...``, ``None``, boolean masks, index tensors, lists, and all of
# them mixed, including torch's own layout of a mixed index. ``at()`` does
# not read the index itself: it hands it to the package's index model
# (:class:`inplace_recipes._indexing.IndexPlan`), which every recipe but
# ``clone`` uses, or, where ``set`` picks ``clone``, to torch's own setitem.
# The cell checks each form against ``clone()`` + setitem:

m = torch.arange(24.0).view(2, 3, 4)
forms = {
    "int and slice": (1, slice(None, None, 2)),
    "mask": m > 20,
    "index tensor": torch.tensor([1, 0]),
    "list in a tuple": (slice(None), [0, 2]),
    "int, slice, tensor": (0, slice(None), torch.tensor([3, 1, 0])),
    "empty index tensor": torch.tensor([], dtype=torch.long),
    "empty list": [],
    "NumPy array": np.array([1, 0]),
    "Python bool": True,
}
for label, form in forms.items():
    expected = m.clone()
    expected[form] = -1.0
    got = at(m)[form].set(-1.0)
    assert torch.equal(got, expected), label
    print(f"{label:20} writes {int((got == -1).sum())} elements, as setitem does")
    # sphinx_gallery_start_ignore
    added = m.clone()
    added[form] += 1.0
    assert torch.equal(at(m)[form].add(1.0), added), label
    assert torch.equal(at(m)[form].get(), m[form]), label
    # sphinx_gallery_end_ignore

# %%
# ``at(x, index)`` is the same as ``at(x)[index]``.
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
# ``subtract``, ``multiply``, ``divide``, ``power``, ``min`` and ``max`` apply
# every value too, in index order, which is what NumPy's ``ufunc.at`` does
# (the cell checks it against NumPy):

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

start = torch.tensor([2.0, 3.0, 5.0], dtype=torch.float64)
repeated = torch.tensor([1, 2, 1, 1])
updates = torch.tensor([1.5, 0.5, 2.0, 4.0], dtype=torch.float64)
for name, ufunc in [("subtract", np.subtract), ("divide", np.divide), ("power", np.power)]:
    numpy_answer = start.numpy().copy()
    ufunc.at(numpy_answer, repeated.numpy(), updates.numpy())
    ours = getattr(at(start)[repeated], name)(updates)
    print(f"at[].{name:9}", ours.tolist(), " NumPy ufunc.at:", numpy_answer.tolist())
    assert np.allclose(ours.numpy(), numpy_answer, rtol=1e-15)
# sphinx_gallery_start_ignore
threads = torch.get_num_threads()
torch.set_num_threads(1)
last = at(torch.zeros(3))[torch.tensor([1] * 1000)].set(torch.arange(1000.0))
torch.set_num_threads(threads)
assert last[1].item() == 999.0, last  # "on CPU with one thread, the last" (next cell)
# sphinx_gallery_end_ignore

# %%
# ``set`` with duplicates writes one of the values, and, as JAX documents
# for its ``at[].set``, which one is unspecified (on CPU with one thread,
# the last; with several threads, or on CUDA, it can vary). Write each position once if it matters.
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
# Integer tensors follow torch's type promotion
# ---------------------------------------------
#
# ``y[0] *= 2.5`` on an integer tensor raises in torch, since the product is
# a float that cannot be written back into integers. ``at[]`` raises the same
# error instead of truncating, for ``add``, ``subtract``, ``multiply``,
# ``divide`` and ``power``. ``set`` casts the value where setitem casts it
# and raises where it raises: a Python number is cast, and so is a tensor
# written through ints and slices, but a tensor of another dtype written
# through an index tensor raises torch's "Index put requires the source and
# destination dtypes match". ``min`` and ``max`` compare first, in torch's
# promoted dtype, then setitem casts (or refuses) the result, as
# ``y[i] = torch.minimum(y[i], v)`` does.

ints = torch.arange(1, 5)
try:
    y = ints.clone()
    y[0] *= 2.5
except RuntimeError as error:
    torch_message = str(error)
try:
    at(ints)[0].multiply(2.5)
except RuntimeError as error:
    at_message = str(error)
print("torch:", torch_message)
print("at[]: ", at_message)
print("set casts, as setitem does:", at(ints)[0].set(2.5).tolist())
print("a tensor through ints casts:", at(ints)[0].set(torch.tensor(2.5)).tolist())
rows = torch.tensor([0])
try:
    at(ints)[rows].set(torch.tensor(2.5))
except RuntimeError as error:
    at_dtype_message = str(error)
print("through an index tensor, at[]:", at_dtype_message.splitlines()[0])
small = torch.tensor([1, 2, 3], dtype=torch.uint8)
print("min compares, then casts:", at(small)[1].min(-3.0).tolist())
# sphinx_gallery_start_ignore
y = small.clone()
y[1] = torch.minimum(y[1], torch.tensor(-3.0))
assert at(small)[1].min(-3.0).tolist() == y.tolist() == [1, 253, 3]
assert torch_message == at_message
y = ints.clone()
y[0] = torch.tensor(2.5)  # setitem casts here too
assert y.tolist() == at(ints)[0].set(torch.tensor(2.5)).tolist() == [2, 2, 3, 4]
try:
    y = ints.clone()
    y[rows] = torch.tensor(2.5)
except RuntimeError as error:
    setitem_dtype_message = str(error)
assert at_dtype_message.startswith(setitem_dtype_message), (at_dtype_message, setitem_dtype_message)
assert "Index put requires the source and destination dtypes match" in setitem_dtype_message
# sphinx_gallery_end_ignore

# %%
# Forward mode
# ------------
#
# Torch's ``scatter_reduce(reduce="prod")`` drops the forward-mode tangent
# (this check runs on the installed torch):

from inplace_recipes.claims import verify

print(verify("scatter_reduce_prod_drops_tangent"))

# %%
# so ``at[]`` does not use it. ``multiply``, ``divide`` and ``power`` with
# index tensors run in rounds of gather, combine and ``index_put``, one
# round per occurrence of a position, which is exact in every mode. The
# Jacobian from ``jacfwd`` equals the one of plain torch that applies the
# updates one by one:

from torch.func import hessian, jacfwd

xs = torch.tensor([2.0, 3.0, 5.0, 7.0], dtype=torch.float64)
idx = torch.tensor([2, 0, 2])


def one_by_one(a, combine=torch.mul, by=3.0):
    out = list(a.unbind())
    for p in idx.tolist():
        out[p] = combine(out[p], by)
    return torch.stack(out)


forward = jacfwd(lambda a: at(a)[idx].multiply(3.0))(xs)
print(forward)
# sphinx_gallery_start_ignore
assert torch.equal(forward, jacfwd(one_by_one)(xs))


def squared_norm(f):
    return lambda a: (f(a) ** 2).sum()


assert torch.allclose(
    hessian(squared_norm(lambda a: at(a)[idx].power(2.0)))(xs),
    hessian(squared_norm(lambda a: one_by_one(a, torch.pow, 2.0)))(xs),
)
# sphinx_gallery_end_ignore

# %%
# ``apply``
# ---------
#
# ``at(x)[i].apply(fn)`` is ``y[i] = fn(x[i])`` for every kind of index:
# ``fn`` receives a copy of the selected elements, so an in-place ``fn``
# cannot change ``x``, and a function that is not elementwise sees the same
# elements whatever form the index takes. A position named twice is
# written once.

row = torch.tensor([1.0, 6.0, 7.0, 16.0])
for form in (slice(1, 3), torch.tensor([1, 2]), torch.tensor([False, True, True, False])):
    print(at(row)[form].apply(torch.sum).tolist())
print("apply(torch.relu_) to (row - 5)[0:3]:", at(row - 5)[0:3].apply(torch.relu_).tolist())
# sphinx_gallery_start_ignore
for form in (slice(1, 3), torch.tensor([1, 2]), torch.tensor([False, True, True, False])):
    assert at(row)[form].apply(torch.sum).tolist() == [1.0, 13.0, 13.0, 16.0]
shifted = row - 5
at(shifted)[0:3].apply(torch.relu_)
assert shifted.tolist() == [-4.0, 1.0, 2.0, 11.0]
# sphinx_gallery_end_ignore

# %%
# Choosing the recipe
# -------------------
#
# ``set`` writes with one of the recipes in :data:`inplace_recipes.RECIPES`:
# by default the one ``inplace_recipes._pick.best_recipe`` picks for the
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
# Replace the ``.at`` property by a call. The method names (JAX's ``mul``
# alias is spelled ``multiply``) and ``mode`` are JAX's. Remove
# ``indices_are_sorted`` and ``unique_indices``: ``at()`` does not accept them
# (passing them raises ``TypeError``).
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
# ``x.at[i].get()`` (default mode)    out-of-range ``i`` raises ``IndexError``:
#                                     pass ``mode="clip"`` for JAX's behaviour
# ``x.at[i].mul(v)``                  ``at(x)[i].multiply(v)``
# ==================================  ==========================================
#
# Differences: the value is cast to ``x``'s dtype only where PyTorch's
# in-place op would cast it (``at(int_x)[i].add(0.5)`` raises, as
# ``int_x[i] += 0.5`` does); ``apply`` writes a repeated position once;
# forward mode through ``multiply`` with repeated indices is computed
# exactly, also with respect to the values, where JAX refuses ("scatter_mul
# gradients are only implemented if ``unique_indices=True``"); ``min`` and
# ``max`` at a repeated position whose values tie apply ``torch.minimum`` or
# ``torch.maximum`` once per occurrence, each halving the gradient between the
# two tied sides, where JAX shares it equally among the tied entries; and
# torch has no negative slice steps (``x[::-1]`` raises ``ValueError``, in
# setitem and in ``at[]``).

# sphinx_gallery_start_ignore
import inspect

for method in ("set", "add", "multiply", "max", "get"):
    for keyword in ("indices_are_sorted", "unique_indices"):
        assert keyword not in inspect.signature(getattr(at, method)).parameters
try:
    at(torch.zeros(3))[0].set(1.0, indices_are_sorted=True)
except TypeError:
    pass
else:
    raise AssertionError("at().set now accepts indices_are_sorted")
assert not hasattr(at(torch.zeros(3))[0], "mul")
try:
    at(torch.arange(4.0))[torch.tensor([9])].get()
except IndexError:
    pass
else:
    raise AssertionError("at().get now reads out of range by default")
assert at(torch.arange(4.0))[torch.tensor([9])].get(mode="clip").tolist() == [3.0]
tied_x = torch.tensor([1.0, 0.0], requires_grad=True)
tied_v = torch.tensor([1.0, 1.0], requires_grad=True)
at(tied_x)[torch.tensor([0, 0])].max(tied_v).sum().backward()
assert tied_x.grad.tolist() == [0.25, 1.0]
assert tied_v.grad.tolist() == [0.25, 0.5]
# sphinx_gallery_end_ignore

# %%
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
# committed in ``docs/measurements/peers.json``; what differs, and what the run
# observed about it, comes from that file:

import peers

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
print(
    f"array-api-extra changed its input x in {summary['array_api_extra changed its input']} cases "
    f"(its default copy=None writes into x); it has no get or mode= "
    f"({summary['array_api_extra n/a']} cases not applicable)"
)
print(
    "matching the NumPy answer (or the error) each case expects: "
    + ", ".join(f"{name} {summary[f'{name} matches the expected']}" for name in peers.LIBRARIES)
    + f" of {summary['cases with an expected result or error']}"
)
# %%
# Where the cases come from (the peer test each was ported from), how many of
# each all three agree on, and how many each library gets right against the
# case's own expected answer (NumPy's result, or the error the case expects),
# which none of the three computed:

from inplace_recipes._table import text_table

sources = peers.by_source(run)
columns = ["cases", "all agree", *(f"{name} matches the expected" for name in peers.LIBRARIES)]
labels = ["cases", "all agree", "at() right", "JAX right", "array-api-extra right"]
print(
    text_table(
        ["ported from (at the commit above)", *labels],
        [
            [source.split("@")[0], *(str(counts.get(c, 0)) for c in columns)]
            for source, counts in sources.items()
        ],
    )
)
# sphinx_gallery_start_ignore
assert sum(counts["cases"] for counts in sources.values()) == summary["cases"]
for name in peers.LIBRARIES:
    assert (
        sum(c[f"{name} matches the expected"] for c in sources.values())
        == (summary[f"{name} matches the expected"])
    )
# sphinx_gallery_end_ignore

# %%
# Where ``at()`` does not give the expected answer, and why. Each is torch's
# own rule, which ``at()`` keeps, against NumPy's:
#
# - ``step must be greater than zero``: torch has no negative slice steps;
#   setitem raises the same error.
# - ``shape mismatch`` and "another result": an index of an int and an index
#   tensor separated by a slice. NumPy puts the indexed dimension first
#   (``a[0, :, [0, 1, 2]]`` has shape (3, 2) for a of shape (4, 2, 3)); torch
#   keeps it in place, (2, 3). A value shaped for NumPy's layout does not
#   broadcast to torch's, and ``get`` returns torch's layout.
# - ``can't be cast``: ``add`` of a float to an integer tensor; torch's
#   ``y[i] += 1.5`` raises the same error, NumPy's case expects a cast.

missed = peers.misses(run)
for kind, count in missed.items():
    print(f"{count:4}  {kind}")
# sphinx_gallery_start_ignore
assert (
    sum(missed.values())
    == summary["cases with an expected result or error"]
    - summary["inplace_recipes matches the expected"]
)
explained = ("step must be greater than zero", "shape mismatch", "can't be cast", "another result")
assert all(any(e in kind for e in explained) for kind in missed), missed
message = "torch took a negative slice step"
try:
    torch.zeros(4)[::-1] = 1.0
except ValueError as error:
    message = str(error)
assert "step must be greater than zero" in message, message
assert np.zeros((4, 2, 3))[0, :, [0, 1, 2]].shape == (3, 2)
assert torch.zeros(4, 2, 3)[0, :, torch.tensor([0, 1, 2])].shape == (2, 3)
message = "torch cast y[i] += 1.5 on integers"
try:
    y = torch.arange(3)
    y[torch.tensor([0])] += 1.5
except RuntimeError as error:
    message = str(error)
assert "can't be cast" in message, message
# sphinx_gallery_end_ignore

# %%
# Where they differ: each kind of difference, how many cases show it, and
# everything the run observed on one of them (each library's result, error
# or gradient, what NumPy says about the index, the case's own note):

peers.table(run)
