"""
A whole function out-of-place with ``torch.func.functionalize``
===============================================================

``torch.func.functionalize`` rewrites a function's in-place operations
into out-of-place ones: each write of ints and slices (``y[i] = v``)
becomes a ``select_scatter`` or ``slice_scatter``, and a write with index
tensors or a mask an ``index_put``, exactly the recipes on this site. Trace it to read the
rewrite; then write those recipes into your code, which autograd can
differentiate.
"""

# %%
# A function whose backward fails
# --------------------------------
#
# ``exp`` saves its output, and the function writes into it:

import torch
from torch.func import functionalize
from torch.fx.experimental.proxy_tensor import make_fx

import inplace_recipes as ir


def f(x):
    y = x.exp()
    y[0] = 0
    y[1:] *= 2
    return y


x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
try:
    f(x).sum().backward()
except RuntimeError as exc:
    print(f"RuntimeError: {exc}")

# %%
# The rewrite
# -----------
#
# Tracing the functionalized function shows the operations it runs: no
# in-place op is left, the writes are ``select_scatter`` and
# ``slice_scatter``.

traced = make_fx(functionalize(f, remove="mutations_and_views"))(torch.rand(3))
ops = [str(n.target) for n in traced.graph.nodes if n.op == "call_function"]
print("\n".join(ops))
# sphinx_gallery_start_ignore
assert "aten.select_scatter.default" in ops


def _in_place(graph_module):
    """The ops of a traced graph that write into an argument (their schema says so)."""
    return [
        str(n.target)
        for n in graph_module.graph.nodes
        if n.op == "call_function"
        and getattr(n.target, "_schema", None) is not None
        and n.target._schema.is_mutable
    ]


assert _in_place(traced) == [], _in_place(traced)  # no in-place op is left
assert "aten.copy_.default" in _in_place(make_fx(f)(torch.rand(3)))  # the check can fail


def _advanced(x):  # the introduction: index tensors and masks become index_put
    y = x.exp()
    y[torch.tensor([0, 2])] = 0
    y[y > 2] = 1.0
    return y


advanced = make_fx(functionalize(_advanced, remove="mutations_and_views"))(torch.rand(3))
assert [str(n.target) for n in advanced.graph.nodes].count("aten.index_put.default") == 2
assert _in_place(advanced) == []
# sphinx_gallery_end_ignore

# %%
# It computes the same values. In eager autograd, though, the traced
# program keeps ``aten.copy``, which has no derivative in this release, so
# use the rewrite as a guide rather than as the function to differentiate:

print(traced(x.detach()), f(x.detach()))
try:
    traced(x).sum().backward()
except RuntimeError as exc:
    print(f"RuntimeError: {exc}")

# %%
# The same function, written with the recipes
# -------------------------------------------
#
# Following the rewrite, each write becomes one out-of-place call, and
# backward works:


def f_out_of_place(x):
    y = x.exp()
    y = ir.select_scatter(y, 0, 0.0)
    y = ir.select_scatter(y, slice(1, None), y[1:] * 2)
    return y


y = f_out_of_place(x)
y.sum().backward()
print(y, x.grad)
# sphinx_gallery_start_ignore
assert torch.equal(y.detach(), f(x.detach()))
assert torch.allclose(x.grad, torch.tensor([0.0, 2.0, 2.0]) * x.detach().exp())
# sphinx_gallery_end_ignore

fig = ir.draw_graph(y, title="f written with select_scatter")

# %%
# Learn more
# ----------
#
# - `torch.func.functionalize <https://pytorch.org/docs/stable/generated/torch.func.functionalize.html>`_
# - `torch.func <https://pytorch.org/docs/stable/func.html>`_
