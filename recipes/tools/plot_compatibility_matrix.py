"""
Compatibility matrix: which recipe works under which transform
==============================================================

Which recipes work under ``torch.func.grad``, ``vmap``, ``torch.compile``,
``functionalize``, forward-mode AD (``jvp``, ``jacfwd``, ``hessian``), double
backward and other dtypes? The table below is not
written by hand: the docs build calls
:func:`inplace_recipes.matrix.compatibility_matrix`, which runs each check and
compares results and gradients with ``y = x.clone(); y[index] = value``. The
test suite asserts every cell, so a torch release that changes one fails CI
before the page can drift.
"""

# %%
# The matrix
# ----------
#
# "works" means the result and the derivatives to ``x`` and to the value
# match the reference; "error" quotes the exception; "wrong" means it ran and
# gave a different answer, or changed its input. The in-place baseline is
# ``x[index] = value`` on the input itself. A recipe that writes one value
# only (``masked_fill``) is run with a one-element value, as the setup line
# printed above the table says. Each column checks:

from inplace_recipes.matrix import DESCRIPTIONS, compatibility_matrix

for column, what in DESCRIPTIONS.items():
    print(f"{column:16} {what}")

# %%
# Forward-mode cells compare with references that use no forward mode:
# writing is linear in ``x`` and the value, so the reference tangent is the
# same write applied to the tangents, and the reference Jacobian and Hessian
# come from reverse mode.

matrix = compatibility_matrix()
print(matrix.setup)
print(f"(computed in {matrix.seconds:.0f} s)")
# sphinx_gallery_start_ignore
assert all(matrix["at[].set", c].status in ("works", "n/a") for c in matrix.cols)
assert matrix["clone", "vmap value"].status == "error"
assert {"jvp", "jacfwd", "hessian"} <= set(matrix.cols)
# the setup names the rows run with a one-element value (masked_fill raises for [2])
assert "(masked_fill: a one-element value" in matrix.setup, matrix.setup
# sphinx_gallery_end_ignore
matrix

# %%
# The forward-mode columns, read from the table above. The in-place
# baseline runs under ``jvp`` and ``jacfwd``, but writes into the caller's
# ``x``, so those cells are "wrong".

forward = ["jvp", "jacfwd", "hessian"]
for row in matrix.rows:
    statuses = [matrix[row, c].status for c in forward]
    print(f"{row:15} " + "  ".join(f"{c}: {s}" for c, s in zip(forward, statuses, strict=True)))
# sphinx_gallery_start_ignore
assert all(matrix["inplace", c].detail == "changed its input x" for c in ("jvp", "jacfwd"))
# the sentences under "Reading it"
runs = {"jvp", "jacfwd", "int64"}
for c in matrix.cols:
    cell = matrix["inplace", c]
    if c in runs:
        assert cell.status == "wrong", (c, cell.status)
        assert cell.detail.startswith("changed its input x"), (c, cell.detail)
    elif cell.status != "n/a":
        assert cell.status == "error", (c, cell.status)
assert matrix["clone", "vmap value"].status == "error"
assert "derivative for aten::copy is not implemented" in matrix["clone", "functionalize"].detail
assert all(matrix["select_scatter", c].status in ("works", "n/a") for c in matrix.cols)
# sphinx_gallery_end_ignore

# %%
# Reading it
# ----------
#
# - ``inplace``: writing into a leaf that requires grad is refused in every
#   column but two kinds: under ``jvp`` and ``jacfwd`` the leaf does not
#   require grad, so the write runs and changes your ``x``; on an integer
#   tensor (which cannot require grad) it runs and changes your input too.
# - ``clone``: setitem on a clone cannot take a batched value under ``vmap``,
#   and ``functionalize`` turns it into ``aten::copy``, whose derivative
#   torch 2.13 does not implement.
# - ``select_scatter``: torch 2.13's own ``select_scatter`` under ``vmap``
#   multiplies the gradient to its source by ``x.shape[dim]``, even for a
#   single write (``vmap`` of ``grad`` is right; the ``select_scatter`` page
#   shows why). The recipe writes each int step as ``slice_scatter`` inside
#   ``torch.func`` transforms, so its cells work:
#
#   >>> print(verify("select_scatter_vmap_grad_scaled"))
#   autograd.grad through vmap gives [7.0] for every element of the source where 1.0 is right: x.shape[0] = 7 times too large
#
# - ``at[].set`` works everywhere.
#
# Run it yourself, on your torch and device, with
# ``python -m inplace_recipes matrix`` (``--markdown``, ``--json``) or
# ``nox -s matrix``:
#
# >>> m = compatibility_matrix(["where", "clone"], columns=["vmap value"])
# >>> m["where", "vmap value"].status, m["clone", "vmap value"].status
# ('works', 'error')
#
# Learn more
# ----------
#
# - The ``at[]`` page (previous page).
# - `torch.func <https://docs.pytorch.org/docs/stable/func.html>`_
# - `torch.compile <https://docs.pytorch.org/docs/stable/generated/torch.compile.html>`_
