"""Training loops that keep a graph with ``retain_graph=True``, as people write them.

- ``two_heads``: a shared trunk, two heads, ``loss1.backward(retain_graph=True);
  loss2.backward(); opt.step()`` with AdamW.
- ``dcgan``: the step of pytorch/tutorials ``beginner_source/dcgan_faces_tutorial.py``
  (Generator/Discriminator layers of the same kinds, for 16x16 images), in the
  common variant where D's fake pass is not detached and its backward keeps the
  graph (``errD_fake.backward(retain_graph=True)``); G's loss is computed on a
  fresh ``netD(fake)``, after ``label.fill_(real_label)`` and ``optimizerD.step()``.

Both run and give the right gradients: the writes they make touch only graphs
that no later backward uses. ``gan_step_before_g_backward`` is the broken form
of pytorch/pytorch#39141: G's loss reuses D's output, so ``optimizerD.step()``
changes weights that G's backward still needs. ``wgan_clip_after_forward`` clips
with ``.data`` between the forward and the backward that uses the weights.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

nz, ngf, ndf, nc = 8, 4, 4, 3
real_label, fake_label = 1.0, 0.0


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU(inplace=True), nn.Linear(16, 16))
        self.head1 = nn.Linear(16, 3)
        self.head2 = nn.Linear(16, 1)


def two_heads(
    model: TwoHeads, opt: torch.optim.Optimizer, x: Tensor, y1: Tensor, y2: Tensor
) -> None:
    opt.zero_grad()
    features = model.trunk(x)
    loss1 = nn.functional.cross_entropy(model.head1(features), y1)
    loss2 = nn.functional.mse_loss(model.head2(features).squeeze(1), y2)
    loss1.backward(retain_graph=True)
    loss2.backward()
    opt.step()  # W:two_heads_step


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z: Tensor) -> Tensor:
        return self.main(z)  # type: ignore[no-any-return]


class Discriminator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.main(x)  # type: ignore[no-any-return]


def dcgan(
    netG: Generator,
    netD: Discriminator,
    optimizerG: torch.optim.Optimizer,
    optimizerD: torch.optim.Optimizer,
    real: Tensor,
    noise: Tensor,
) -> None:
    criterion = nn.BCELoss()
    b_size = real.size(0)
    netD.zero_grad()
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward(retain_graph=True)
    optimizerD.step()  # W:dcgan_d_step
    netG.zero_grad()
    label.fill_(real_label)  # W:dcgan_fill
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()  # W:dcgan_g_step


def gan_step_before_g_backward(
    netG: Generator,
    netD: Discriminator,
    optimizerG: torch.optim.Optimizer,
    optimizerD: torch.optim.Optimizer,
    noise: Tensor,
) -> None:
    criterion = nn.BCELoss()
    output = netD(netG(noise)).view(-1)
    errD = criterion(output, torch.zeros_like(output))
    errG = criterion(output, torch.ones_like(output))
    netD.zero_grad()
    errD.backward(retain_graph=True)
    optimizerD.step()  # W:gan_d_step_bug
    netG.zero_grad()
    errG.backward()
    optimizerG.step()


def wgan_clip_after_forward(
    netD: Discriminator, optimizerD: torch.optim.Optimizer, real: Tensor
) -> None:
    netD.zero_grad()
    err = -netD(real).mean()
    for p in netD.parameters():
        p.data.clamp_(-0.01, 0.01)  # W:wgan_clip_bug
    err.backward()
    optimizerD.step()
