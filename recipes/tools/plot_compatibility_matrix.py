"""
Compatibility matrix: every recipe under every transform
========================================================

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
# ``x[index] = value`` on the input itself. Each column checks:

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
# sphinx_gallery_end_ignore

# %%
# Reading it
# ----------
#
# - ``inplace``: writing into a leaf that requires grad is refused everywhere;
#   on an integer tensor it "works" by changing your input.
# - ``clone``: setitem on a clone cannot take a batched value under ``vmap``,
#   and ``functionalize`` turns it into ``aten::copy``, whose derivative
#   torch 2.13 does not implement.
# - ``select_scatter``: the chain of ``select_scatter``/``slice_scatter``
#   runs under ``vmap``, but torch 2.13's autograd through ``vmap``
#   multiplies the gradient to ``select_scatter``'s source by
#   ``x.shape[dim]``, even for a single write (``vmap`` of ``grad`` is right;
#   the ``select_scatter`` page shows why). Here the index ``(1, ::2)``
#   writes a source built from row 1 of ``x``, so the gradient to ``x`` is
#   the first that differs; the value's is wrong too. ``at[]`` avoids it by
#   choosing ``index_put`` inside ``torch.func`` transforms.
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
