"""
``mask``: blend ``x`` and the value with an arithmetic mask
===========================================================

The classic answer: ``x * (1 - m) + value * m`` with ``m`` one where you
would write and zero elsewhere. It is additions and multiplications (after
scattering the value, where it needs to), so it passes every check of the
compatibility matrix, but it saves a full-size mask of
``x``'s dtype for backward (two when the value requires grad; for a mask
index, and for index tensors with a tensor value, ``ir.mask_blend`` saves
boolean masks instead, one byte an element, with index tensors the written
positions too), a non-finite value turns elements it does not write into
``nan`` (which ones: see below), a non-finite entry at a written position
becomes ``nan``, and the old NumPy-mask version silently promotes float32
to float64. Averaged over 1e5 to 1e7 elements and both dtypes, the
benchmark finds it the slowest recipe for every kind of write (measured
below); size by size, at float32, ``masked_fill`` or ``where`` is
sometimes slower.
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
# Two multiplications and an addition: each multiplication saves the
# operand that its other input's gradient needs. ``x * (1 - m)`` keeps the
# full-size ``1 - m`` for ``x``'s gradient, and when the value requires grad,
# ``v * m`` keeps ``m`` as well: two full-size masks.

fig = ir.draw_graph(y, title="x * (1 - m) + v * m", highlight=("AddBackward0",))

# %%
# Pitfall: memory
# ---------------
#
# Bytes autograd saves for backward, measured now on a float32 ``x`` of 1e6
# elements (a non-leaf), one element written:

from inplace_recipes import bench
from inplace_recipes.claims import verify

big = torch.rand(1000, 1000, requires_grad=True) * 1
for label, value in [
    ("value 42.0", 42.0),
    ("value requires grad", torch.tensor(42.0, requires_grad=True)),
]:
    saved, _ = bench.saved_bytes(ir.mask_blend, big, (0, 1), value)
    print(
        f"{label:>20}: {saved / 2**20:.1f} MiB saved = {saved / (4 * big.numel()):.0f} full-size mask(s)"
    )
# sphinx_gallery_start_ignore
assert bench.saved_bytes(ir.mask_blend, big, (0, 1), 42.0)[0] == 4 * big.numel()
assert (
    bench.saved_bytes(ir.mask_blend, big, (0, 1), torch.tensor(42.0, requires_grad=True))[0]
    == 8 * big.numel()
)
# The introduction's other indices, on a (100, 10) float32 x: a mask index saves
# boolean masks (1000 bytes each; with the value's gradient, the second is the mask
# index itself), index tensors with a tensor value two boolean masks and 8 bytes a
# written position (two rows of 10), and with a Python number float32 weights.
small = torch.rand(100, 10, requires_grad=True) * 1
some, rows = small.detach() > 0.5, torch.tensor([0, 2])
assert bench.saved_bytes(ir.mask_blend, small, some, 42.0) == (1000, 0)
assert bench.saved_bytes(ir.mask_blend, small, some, torch.tensor(4.0, requires_grad=True)) == (
    2000,
    1000,
)
assert bench.saved_bytes(ir.mask_blend, small, rows, torch.tensor(4.0, requires_grad=True)) == (
    2000 + 20 * 8,
    0,
)
assert bench.saved_bytes(ir.mask_blend, small, rows, 42.0)[0] == 4000
# sphinx_gallery_end_ignore
print(verify("mask_blend_saves_two_masks_with_value_grad"))

# %%
# And time: its rank among the recipes for each kind of write in the
# committed benchmark (forward + backward over in-place, the geometric mean
# over 1e5, 1e6 and 1e7 elements and over float32 and float64):

import committed

results = committed.bench_results()
band = bench.noise_band(results, sizes=bench.RANKED_SIZES)
print(
    f"recipes closer than {(band - 1) * 100:.0f}% (the run's noise band), or whose "
    "bootstrap interval holds 1, tie"
)
slowest = {}
for write, ranked in bench.ranking(results).items():
    slowest[write] = bench.tied_with_slowest(ranked, band, results, write)
    word = (
        "slowest"
        if slowest[write] == ["mask"]
        else "tied for slowest with " + ", ".join(name for name in slowest[write] if name != "mask")
    )
    print(f"{write:>10}: {dict(ranked)['mask']:.2f}x in-place, {word}")
# sphinx_gallery_start_ignore
assert all("mask" in names for names in slowest.values())  # the summary's sentence
# sphinx_gallery_end_ignore

# %%
# Pitfall: a non-finite value spoils the other elements
# -----------------------------------------------------
#
# The blend multiplies the value by the mask everywhere, and ``inf * 0`` is
# ``nan``. Writing one ``inf`` (a number or a one-element tensor, or a
# float16 value that overflows) with ints, slices or a mask turns every
# element it does not write into ``nan``; writing ``nan`` makes every
# element ``nan``:

print(ir.mask_blend(torch.zeros(4), 0, float("inf")))
print(ir.mask_blend(torch.zeros(4), 0, float("nan")))
print(ir.mask_blend(torch.zeros(4, dtype=torch.float16), 0, 70000.0))
print(verify("mask_blend_nonfinite_value_spreads_nan"))

# %%
# With index tensors, ``ir.mask_blend`` first scatters a tensor value (or a
# number cast for float16) into zeros, so only a Python float written into
# float32 or float64 spreads ``nan``. A tensor of several values is
# scattered for slices and masks too, and spreads nothing, unless the index
# is ints and whole slices only (a row, a column): the blend then lays the
# value over every other row or column, and ``nan`` goes wherever it lays a
# non-finite entry:

inf = float("inf")
first = torch.tensor([True, False, False, False])
print("index tensor, 0-d inf:", ir.mask_blend(torch.zeros(4), torch.tensor([0]), torch.tensor(inf)))
print("index tensor, inf:    ", ir.mask_blend(torch.zeros(4), torch.tensor([0]), inf))
print("mask, 0-d inf:        ", ir.mask_blend(torch.zeros(4), first, torch.tensor(inf)))
pair = torch.tensor([inf, 1.0])
print("slice, [inf, 1]:      ", ir.mask_blend(torch.zeros(4), slice(0, 2), pair))
print("row, [inf, 1]:        ", ir.mask_blend(torch.zeros(2, 2), 0, pair))


# sphinx_gallery_start_ignore
def _nan_elsewhere(index, value, dtype=torch.float32):
    """Whether the blend turned an element it does not write into nan."""
    out = ir.mask_blend(torch.zeros(4, dtype=dtype), index, value)
    written = torch.zeros(4, dtype=torch.bool)
    written[index] = True
    return bool(out[~written].isnan().any())


for index in (0, slice(0, 2), first):  # ints, slices, a mask: every one-element value
    for value in (inf, torch.tensor(inf), torch.tensor([inf])):
        assert _nan_elsewhere(index, value)
    assert _nan_elsewhere(index, 70000.0, torch.float16)
one = torch.tensor([0])
assert _nan_elsewhere(one, inf)  # a Python float into float32 is not scattered
assert not _nan_elsewhere(one, torch.tensor(inf))
assert not _nan_elsewhere(one, 70000.0, torch.float16)
for index in (slice(0, 2), torch.tensor([True, True, False, False]), torch.tensor([0, 1])):
    assert not _nan_elsewhere(index, torch.tensor([inf, 1.0]))  # several values: scattered
assert ir.mask_blend(torch.zeros(2, 2), 0, torch.tensor([inf, 1.0]))[1].isnan().tolist() == [
    True,
    False,
]  # a row: every other row, under the inf
assert ir.mask_blend(torch.zeros(4), first, float("nan")).isnan().all()
# sphinx_gallery_end_ignore

# %%
# Pitfall: ``inf`` and ``nan`` at a written position become ``nan``
# -----------------------------------------------------------------
#
# ``inf * 0`` is ``nan``, so a non-finite entry at a written position is not
# erased, unlike with setitem:

print(verify("mask_blend_nonfinite_x_at_written_position_is_nan"))

bad = torch.tensor([1.0, float("inf"), 3.0])
print("blend:     ", ir.mask_blend(bad, 1, 5.0))
print("where:     ", ir.where(bad, 1, 5.0))
# sphinx_gallery_start_ignore
assert torch.isnan(ir.mask_blend(bad, 1, 5.0)[1])  # inf becomes nan, as the introduction says
assert torch.isnan(ir.mask_blend(torch.tensor([1.0, float("nan"), 3.0]), 1, 5.0)[1])
assert ir.where(bad, 1, 5.0)[1] == 5.0
# sphinx_gallery_end_ignore

# %%
# Pitfall: a NumPy mask promotes to float64
# -----------------------------------------
#
# Many old answers build the mask with NumPy. ``np.array([0., 1., 0.])`` is
# float64, and a float32 tensor times a float64 tensor is float64: later
# operations on the result run in double precision.

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
