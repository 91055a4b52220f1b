"""
GAN training: ``optimizer_D.step()`` before the generator's backward
====================================================================

A GAN step trains two networks, and the generator's loss backpropagates
through the discriminator.
Step the discriminator's optimizer before the generator's backward and that
backward fails with "... is at version 2; expected version 1": the optimizer
updated D's weights in place, and the generator's backward needs the old
ones. Users report it in
`pytorch/pytorch#39141 <https://github.com/pytorch/pytorch/issues/39141>`_.
"""

# %%
# The training step that fails
# ----------------------------
#
# D's forward on the fake batch gives the generator's loss (D's own loss
# sees the fake batch detached); the step calls
# ``opt_d.step()`` between the two backward passes. An optimizer step is an
# in-place write under ``no_grad``, and it bumps the version counter:
#
# >>> w = torch.nn.Parameter(torch.ones(2))
# >>> w.grad = torch.ones(2)
# >>> w._version
# 0
# >>> torch.optim.SGD([w], lr=0.1).step()
# >>> w._version
# 1

import inspect
from pathlib import Path

import torch
from torch import nn

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# sphinx_gallery_end_ignore


def make_gan():
    """The same generator and discriminator each time (same seed)."""
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    return G, D


bce = nn.BCEWithLogitsLoss()
real, noise = torch.randn(8, 2), torch.randn(8, 2)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)


def train_step(G, D, opt_g, opt_d):
    fake = G(noise)
    d_fake = D(fake)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = bce(d_fake, ones)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()


def optimizers(G, D):
    return torch.optim.Adam(G.parameters(), lr=1e-3), torch.optim.Adam(D.parameters(), lr=1e-3)


G, D = make_gan()
# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    train_step(G, D, *optimizers(G, D))
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "the GAN step did not fail"
assert "modified by an inplace operation" in str(error)
assert "is at version 2; expected version 1 instead" in str(error), str(error)
assert "[torch.FloatTensor [16, 1]], which is output 0 of AsStrided" in str(error)
assert make_gan()[1][2].weight.shape == (1, 16)  # transposed: [16, 1]
assert make_gan()[1][2].weight._version == 1  # initialised in place
assert "optim" not in str(error).lower()
assert "step" not in str(error).lower()
# sphinx_gallery_end_ignore

# %%
# The message names a tensor of shape ``[16, 1]``, "output 0 of AsStrided":
# the transposed weight of D's last layer, saved by the matrix product of
# ``d_fake = D(fake)``. Version 1 is the weight as initialised (``nn.Linear``
# initialises it in place), version 2 after the step. Nothing in the message
# names the optimizer, but
# :func:`~inplace_recipes.error_reference.explain` reads a saved view (or a
# leaf) as what it most often is, a weight that an optimizer step changed:

print(ir.explain(error))
# sphinx_gallery_start_ignore
explained = ir.explain(error)
assert explained.slug == "saved-tensor-modified"
assert explained.fix.startswith("loss.backward(); optimizer.step()"), explained.fix
assert "asstrided(" not in str(explained).lower()
# sphinx_gallery_end_ignore

# %%
# What the audit says
# -------------------
#
# The audit follows the saved tensors: it reports the optimizer's in-place
# updates at the ``opt_d.step()`` line, as writes to tensors saved for
# backward by D's layers at the ``d_fake = D(fake)`` line, and its ``fix``
# line says what to change: the order of the calls.

G, D = make_gan()
report = ir.audit(train_step, G, D, *optimizers(G, D))
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert fails, report.to_records()
assert {r["code"] for r in fails} == {"opt_d.step()"}, fails
assert all(r["file"].endswith(PAGE) for r in fails)
forward_line = SOURCE.read_text().splitlines().index("    d_fake = D(fake)") + 1
assert all(f"{PAGE}:{forward_line})" in r["detail"] for r in fails), fails
assert all("backward" in r["fix"] for r in fails), fails
assert isinstance(report.error, RuntimeError)
# sphinx_gallery_end_ignore

# %%
# The fix is the same whatever the order of the lines. Here the generator's
# loss is computed first, from its own ``D(fake)``, before D's backward and
# step; the audit still asks for that loss to be computed after the step
# (moving the step instead would give D the gradient of both losses):


def loss_first_step(G, D, opt_g, opt_d):
    fake = G(noise)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    loss_g = bce(D(fake), ones)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()


G, D = make_gan()
report = ir.audit(loss_first_step, G, D, *optimizers(G, D))
print(report.rows()[0].finding.fix)
# sphinx_gallery_start_ignore
loss_line = SOURCE.read_text().splitlines().index("    loss_g = bce(D(fake), ones)") + 1
fails = [r for r in report.to_records() if r["fix"]]
assert {r["code"] for r in fails} == {"opt_d.step()"}, fails
for row in fails:
    assert row["fix"].startswith(
        "compute loss_g after this step, from a new forward (not from the output made at "
    ), row["fix"]
    assert f"{PAGE}:{loss_line})" in row["fix"], row["fix"]
assert isinstance(report.error, RuntimeError)


def step_moved(G, D, opt_g, opt_d):  # loss_first_step with D's step moved below G's backward
    fake = G(noise)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    loss_g = bce(D(fake), ones)
    opt_d.zero_grad()
    loss_d.backward()
    opt_g.zero_grad()
    loss_g.backward()
    opt_d.step()
    opt_g.step()
    return loss_d, loss_g


G_m, D_m = make_gan()
opt_g_m, opt_d_m = optimizers(G_m, D_m)
step_moved(G_m, D_m, opt_g_m, opt_d_m)
G_r, D_r = make_gan()
loss_d_r = bce(D_r(real), ones) + bce(D_r(G_r(noise).detach()), zeros)
only_d = torch.autograd.grad(loss_d_r, list(D_r.parameters()), retain_graph=True)
both = torch.autograd.grad(loss_d_r + bce(D_r(G_r(noise)), ones), list(D_r.parameters()))
G_c, D_c = make_gan()
opt_g_c, opt_d_c = optimizers(G_c, D_c)
opt_d_c.zero_grad()
step_moved(G_c, D_c, opt_g_c, opt_d_c)  # D's gradient when it stepped: both losses'
assert all(torch.allclose(p.grad, g) for p, g in zip(D_c.parameters(), both, strict=True))
assert not all(torch.allclose(p.grad, g) for p, g in zip(D_c.parameters(), only_d, strict=True))
# sphinx_gallery_end_ignore

# %%
# The fix
# -------
#
# Either finish every backward before any step, or run D again on the fake
# batch after D's step. The PyTorch DCGAN tutorial does the second: the
# generator is trained against the discriminator it will next face. The
# audit's fix is the second, and ``python -m inplace_recipes audit --fix``
# applies it to a script (it moves the line of the generator's loss below the
# step): see :doc:`/auto_recipes/tools/plot_audit_command`.


def fixed_train_step(G, D, opt_g, opt_d):
    fake = G(noise)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = bce(D(fake), ones)  # D again, with its new weights
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()


G, D = make_gan()
opt_g, opt_d = optimizers(G, D)
report = ir.audit(fixed_train_step, G, D, opt_g, opt_d)
print(report)
# sphinx_gallery_start_ignore
assert report.error is None
assert report.findings == [], report.to_records()


def loss_first_fixed(G, D, opt_g, opt_d):  # loss_first_step with the audit's fix applied
    fake = G(noise)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = bce(D(fake), ones)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()


G_a, D_a = make_gan()
G_b, D_b = make_gan()
assert ir.audit(loss_first_fixed, G_a, D_a, *optimizers(G_a, D_a)).ok
fixed_train_step(G_b, D_b, *optimizers(G_b, D_b))
for a, b in zip(
    [*G_a.parameters(), *D_a.parameters()], [*G_b.parameters(), *D_b.parameters()], strict=True
):
    assert torch.equal(a, b)  # the same step as the tutorial's order
# sphinx_gallery_end_ignore

# %%
# The optimizer's writes are no longer listed: the audit leaves out writes
# under ``no_grad`` to weights that no pending backward saved.
#
# Check the gradients
# -------------------
#
# The generator's gradient from the fixed step, against an independent
# computation: the generator's loss through a copy of D that has taken the
# same discriminator step, differentiated with ``torch.autograd.grad``.

G_ref, D_ref = make_gan()
opt_g_ref, opt_d_ref = optimizers(G_ref, D_ref)
loss_d = bce(D_ref(real), ones) + bce(D_ref(G_ref(noise).detach()), zeros)
loss_d.backward()
opt_d_ref.step()
expected = torch.autograd.grad(bce(D_ref(G_ref(noise)), ones), list(G_ref.parameters()))

G, D = make_gan()
opt_g, opt_d = optimizers(G, D)
opt_g.step = lambda: None  # keep G's gradient to compare (skip only G's update)
fixed_train_step(G, D, opt_g, opt_d)
match = all(torch.allclose(p.grad, e) for p, e in zip(G.parameters(), expected, strict=True))
print("generator gradients match the independent computation:", match)
# sphinx_gallery_start_ignore
assert match
assert all(torch.equal(a, b) for a, b in zip(D.parameters(), D_ref.parameters(), strict=True))
# sphinx_gallery_end_ignore

# %%
# The other fix, every backward before any step, gives the generator the
# gradient through the *old* D, as the failing code meant. ``backward(inputs=...)``
# skips computing D's gradients for the generator's loss (here
# ``opt_d.zero_grad()`` would clear them anyway, before D's own backward):


def backward_first_step(G, D, opt_g, opt_d):
    fake = G(noise)
    loss_g = bce(D(fake), ones)
    opt_g.zero_grad()
    loss_g.backward(inputs=list(G.parameters()))
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    opt_g.step()


G, D = make_gan()
opt_g, opt_d = optimizers(G, D)
opt_g.step = lambda: None
backward_first_step(G, D, opt_g, opt_d)
G_old, D_old = make_gan()
expected_old = torch.autograd.grad(bce(D_old(G_old(noise)), ones), list(G_old.parameters()))
match = all(torch.allclose(p.grad, e) for p, e in zip(G.parameters(), expected_old, strict=True))
print("generator gradients through the old D match:", match)
# sphinx_gallery_start_ignore
assert match
# D took the same step as the reference D, which never saw the generator's loss
assert all(torch.allclose(a, b) for a, b in zip(D.parameters(), D_ref.parameters(), strict=True))
# inputs= computes no gradient for D ...
G_in, D_in = make_gan()
bce(D_in(G_in(noise)), ones).backward(inputs=list(G_in.parameters()))
assert all(p.grad is None for p in D_in.parameters())
assert all(p.grad is not None for p in G_in.parameters())
# ... and without it the step is the same: opt_d.zero_grad() clears what it would have added
G_all, D_all = make_gan()
opt_g_all, opt_d_all = optimizers(G_all, D_all)
fake_all = G_all(noise)
opt_g_all.zero_grad()
bce(D_all(fake_all), ones).backward()
assert all(p.grad is not None for p in D_all.parameters())
opt_d_all.zero_grad()
(bce(D_all(real), ones) + bce(D_all(fake_all.detach()), zeros)).backward()
opt_d_all.step()
assert all(torch.equal(a, b) for a, b in zip(D_all.parameters(), D.parameters(), strict=True))
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - `pytorch/pytorch#39141 <https://github.com/pytorch/pytorch/issues/39141>`_:
#   the report and the maintainers' explanation.
# - `DCGAN tutorial <https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html>`_:
#   the training loop that runs D again after its step.
# - :doc:`/auto_recipes/tools/plot_audit_model`: the audit on a whole model.
