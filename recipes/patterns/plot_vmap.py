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
# ``base`` is shared by every example of the batch; ``values`` is batched:

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
# ``where``, ``index_put`` and ``select_scatter`` all return a batched result:

for name in ["where", "index_put", "select_scatter"]:
    out = vmap(lambda v, name=name: ir.RECIPES[name](base, 1, v))(values)
    print(name, out.tolist())
    # sphinx_gallery_start_ignore
    assert torch.equal(out[:, 1], values)
    # sphinx_gallery_end_ignore

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
