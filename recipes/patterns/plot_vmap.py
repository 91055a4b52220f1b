"""
Writing under ``vmap``: a batched value needs an out-of-place recipe
====================================================================

Under ``torch.func.vmap``, ``y = x.clone(); y[i] = v`` fails when ``v``
is batched and ``x`` is not: the clone has no batch dimension to receive
``v``. Out-of-place recipes build a new tensor, batched as needed.
"""

# %%
# The failure
# -----------
#
# ``base`` is not batched (the examples share it); ``values`` is:

import torch
from torch.func import vmap

import inplace_recipes as ir

base = torch.zeros(3)
values = torch.tensor([1.0, 2.0, 3.0, 4.0])


def with_setitem(v):
    y = base.clone()
    y[1] = v
    return y


try:
    vmap(with_setitem)(values)
except RuntimeError as exc:
    print(f"RuntimeError: {exc}")

# %%
# The recipes that work
# ---------------------
#
# ``where`` and ``index_put`` return a batched result, and their gradients
# through ``vmap`` are right:

for name in ["where", "index_put"]:
    batched = values.clone().requires_grad_(True)
    out = vmap(lambda v, name=name: ir.RECIPES[name](base, 1, v))(batched)
    (grad,) = torch.autograd.grad(out.sum(), batched)
    print(name, out.tolist(), "gradient to the values:", grad.tolist())
    # sphinx_gallery_start_ignore
    assert torch.equal(out[:, 1], values)
    assert torch.equal(grad, torch.ones(4))
    # sphinx_gallery_end_ignore

# %%
# Not ``select_scatter``
# ----------------------
#
# ``select_scatter`` runs under ``vmap`` and its values are right, but in
# torch 2.13 its gradient to the written value is wrong there: multiplied by
# ``x.shape[dim]`` (here ``base`` has 3 elements), through autograd and
# through ``torch.func.vjp`` alike; ``vmap(grad(f))`` is right. The
# ``select_scatter`` page shows why.

from inplace_recipes.claims import verify

batched = values.clone().requires_grad_(True)
out = vmap(lambda v: base.select_scatter(v, 0, 1))(batched)
(grad,) = torch.autograd.grad(out.sum(), batched)
print("base.select_scatter(v, 0, 1)", out.tolist(), "gradient to the values:", grad.tolist())
print(verify("select_scatter_vmap_grad_scaled"))
# sphinx_gallery_start_ignore
assert torch.equal(grad, torch.full((4,), 3.0))
# sphinx_gallery_end_ignore

# %%
# ``masked_fill`` with a tensor value avoids ``index_fill``: under ``vmap``,
# torch 2.13's ``index_fill`` writes the last example's value into every
# example when ``x`` is not batched and the value is (with ``x`` batched too,
# it is right):

print(verify("index_fill_vmap_unbatched_x_last_value"))
print(verify("index_fill_vmap_batched_x_right"))

# %%
# When ``x`` is batched too, setitem on the clone works again: both
# sides have the batch dimension.
#
# >>> xs = torch.zeros(4, 3)
# >>> def f(x, v):
# ...     y = x.clone()
# ...     y[1] = v
# ...     return y
# >>> torch.func.vmap(f)(xs, torch.arange(4.0))[:, 1]
# tensor([0., 1., 2., 3.])
#
# Learn more
# ----------
#
# - `torch.func.vmap <https://pytorch.org/docs/stable/generated/torch.func.vmap.html>`_
# - `UX limitations of torch.func <https://pytorch.org/docs/stable/func.ux_limitations.html>`_
# - The compatibility matrix: every recipe under ``vmap`` and the other transforms.
