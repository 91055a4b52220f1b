"""
A batch: a different position in each example
=============================================

In a batch, each example often writes at its own position: the last token,
a label's column. Build the index from ``torch.arange(batch)`` and the
per-example positions, and write the whole batch in one call.
"""

# %%
# One position per row
# --------------------
#
# >>> x = torch.zeros(2, 4)
# >>> ir.index_put(x, (torch.arange(2), torch.tensor([3, 1])), 1.0)
# tensor([[0., 0., 0., 1.],
#         [0., 1., 0., 0.]])

import torch

import inplace_recipes as ir

torch.manual_seed(0)
logits = torch.randn(4, 6, requires_grad=True)
labels = torch.tensor([2, 0, 5, 1])
batch = torch.arange(len(labels))

# logits[batch, labels] = -inf, out of place (mask the true class)
masked = ir.index_put(logits, (batch, labels), float("-inf"))
print(masked)

# %%
# ``scatter`` along dimension 1 reads naturally here too:

also = logits.scatter(1, labels[:, None], float("-inf"))
print(torch.equal(also, masked))
# sphinx_gallery_start_ignore
assert torch.equal(also, masked)
# sphinx_gallery_end_ignore

# %%
# The gradient check, with the page's own ``-inf``: ``mask`` is wrong for it
# (``inf * 0`` is ``nan``, at every position it does not write); use
# ``index_put``, ``where``, ``scatter`` or ``masked_fill``:

report = ir.compare_gradients(logits, (batch, labels), float("-inf"))
print(report)
# sphinx_gallery_start_ignore
by_name = {result.name: result for result in report}
assert not by_name["mask"].ok
for name in ("index_put", "where", "scatter", "masked_fill", "clone"):
    assert by_name[name].ok, by_name[name]
    assert by_name[name].not_applicable is None, by_name[name]
ir.compare_gradients(logits, (batch, labels), -100.0).assert_ok()  # finite: every recipe
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `torch.Tensor.scatter <https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_.html>`_
