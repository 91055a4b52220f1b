"""Training steps in the shape of pytorch/examples, tiny, for the audit's no-change test.

Each is the part of an upstream script that matters for in-place writes and
initialisation, at sizes that run in well under a second; each program
returns its model, optimizer and losses. Upstream files (pytorch/examples):

- ``super_resolution/model.py``: ``init.orthogonal_`` with ``calculate_gain``
  (a write through a ``no_grad`` view of the Parameter), ``PixelShuffle``;
- ``mnist/main.py``: dropout, ``log_softmax``, ``Adadelta`` and ``StepLR``;
- ``vae/main.py``: the reparameterization with ``randn_like``, BCE + KLD;
- ``dcgan/main.py``: ``weights_init`` through ``.data`` (``normal_``,
  ``fill_``), ``label.fill_``, D on ``fake.detach()`` then G on a fresh ``netD(fake)``;
- ``word_language_model``: ``nn.init.uniform_``, an LSTM, ``repackage_hidden``,
  ``clip_grad_norm_`` and the manual update ``p.data.add_(p.grad, alpha=-lr)``;
- ``siamese_network/main.py``: ``xavier_uniform_`` and ``m.bias.data.fill_(0.01)``;
- ``time_sequence_prediction/train.py``: ``LSTMCell`` steps and ``LBFGS`` with a closure;
- ``reinforcement_learning/reinforce.py``: ``Categorical`` sampling and returns
  normalised in place;
- a ``TransformerEncoder`` trained, then evaluated under ``no_grad`` (torch's
  fast path), and evaluated with a padding mask (the fast path on nested tensors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.nn import init

Program = Callable[[], Any]


class SuperResolution(nn.Module):
    def __init__(self, upscale_factor: int = 2) -> None:
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(8, 8, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(8, upscale_factor**2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x: Tensor) -> Tensor:
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))

    def _initialize_weights(self) -> None:
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)


def super_resolution() -> Any:
    torch.manual_seed(0)
    model = SuperResolution()  # built inside the program: its initialisation is audited
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    low, high = torch.rand(2, 1, 6, 6), torch.rand(2, 1, 12, 12)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = F.mse_loss(model(low), high)
        loss.backward()
        opt.step()
        losses.append(loss)
    return {"model": model, "opt": opt, "losses": losses}


class MnistNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def mnist() -> Any:
    torch.manual_seed(0)
    model = MnistNet()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    data, target = torch.randn(4, 1, 12, 12), torch.randint(0, 10, (4,))
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        scheduler.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        test_loss = F.nll_loss(model(data), target, reduction="sum")
        correct = model(data).argmax(dim=1, keepdim=True).eq(target.view(-1, 1)).sum()
    return {"model": model, "opt": opt, "losses": losses, "test": (test_loss, correct)}


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc21, self.fc22 = nn.Linear(8, 2), nn.Linear(8, 2)
        self.fc3, self.fc4 = nn.Linear(2, 8), nn.Linear(8, 16)

    def encode(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z: Tensor) -> Tensor:
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        mu, logvar = self.encode(x.view(-1, 16))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def vae() -> Any:
    torch.manual_seed(0)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.rand(4, 16)
    opt.zero_grad()
    recon, mu, logvar = model(data)
    bce = F.binary_cross_entropy(recon, data.view(-1, 16), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = bce + kld
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}


def weights_init(m: nn.Module) -> None:
    """dcgan/main.py's initialiser, through ``.data`` as upstream writes it."""
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)  # type: ignore[operator]
    elif classname.find("BatchNorm") != -1:
        m.weight.data.normal_(1.0, 0.02)  # type: ignore[operator]
        m.bias.data.fill_(0)  # type: ignore[operator]


def dcgan() -> Any:
    torch.manual_seed(0)
    nz, ngf, ndf = 4, 4, 4
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
        nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False),
        nn.Tanh(),
    )
    netD = nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, 1, 4, 1, 0, bias=False),
        nn.Sigmoid(),
    )
    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.randn(2, 3, 8, 8)
    netD.zero_grad()
    label = torch.full((2,), 1.0)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    fake = netG(torch.randn(2, nz, 1, 1))
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()).view(-1), label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake).view(-1), label)
    errG.backward()
    optimizerG.step()
    return {"netG": netG, "netD": netD, "opts": [optimizerD, optimizerG], "errG": errG}


class RNNModel(nn.Module):
    def __init__(self, ntoken: int = 20, ninp: int = 8, nhid: int = 8) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, 2, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntoken)
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, x: Tensor, hidden: tuple[Tensor, Tensor]) -> Any:
        output, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return F.log_softmax(self.decoder(self.drop(output)), dim=-1), hidden


def repackage_hidden(h: Any) -> Any:
    if isinstance(h, Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def word_language_model() -> Any:
    torch.manual_seed(0)
    model = RNNModel()
    data = torch.randint(0, 20, (6, 2))
    hidden = (torch.zeros(2, 2, 8), torch.zeros(2, 2, 8))
    lr, losses = 1.0, []
    for start in (0, 3):
        x, y = data[start : start + 2], data[start + 1 : start + 3]
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(x, hidden)
        loss = F.nll_loss(output.view(-1, 20), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss)
    return {"model": model, "losses": losses, "hidden": hidden}


class Siamese(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(inplace=True), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(2 * 4 * 6 * 6, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
        self.sigmoid = nn.Sigmoid()
        self.fc.apply(self.init_weights)

    def init_weights(self, m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        both = torch.cat((self.features(a), self.features(b)), 1)
        return self.sigmoid(self.fc(both))


def siamese_network() -> Any:
    torch.manual_seed(0)
    model = Siamese()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    a, b, target = torch.randn(3, 1, 8, 8), torch.randn(3, 1, 8, 8), torch.rand(3, 1)
    opt.zero_grad()
    loss = nn.BCELoss()(model(a, b), target)
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}


class Sequence(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 6)
        self.lstm2 = nn.LSTMCell(6, 6)
        self.linear = nn.Linear(6, 1)

    def forward(self, x: Tensor, future: int = 0) -> Tensor:
        outputs = []
        h_t = torch.zeros(x.size(0), 6, dtype=x.dtype)
        c_t = torch.zeros(x.size(0), 6, dtype=x.dtype)
        h_t2 = torch.zeros(x.size(0), 6, dtype=x.dtype)
        c_t2 = torch.zeros(x.size(0), 6, dtype=x.dtype)
        output = x[:, :1]
        for input_t in x.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def time_sequence_prediction() -> Any:
    torch.manual_seed(0)
    seq = Sequence().double()
    data = torch.sin(torch.linspace(0, 6, 24, dtype=torch.float64)).reshape(2, 12)
    x, y = data[:, :-1], data[:, 1:]
    opt = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=3)
    losses = []

    def closure() -> Tensor:
        opt.zero_grad()
        loss = F.mse_loss(seq(x), y)
        loss.backward()
        losses.append(loss)
        return loss

    opt.step(closure)
    with torch.no_grad():
        future = seq(x[:1], future=3)
    return {"seq": seq, "opt": opt, "losses": losses, "future": future}


def reinforce() -> Any:
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.6), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    log_probs, rewards = [], []
    state = torch.randn(4)
    for step in range(5):
        probs = F.softmax(policy(state), dim=-1)
        m = torch.distributions.Categorical(probs)
        action = m.sample()
        log_probs.append(m.log_prob(action))
        rewards.append(float(action) + 0.1 * step)
        state = torch.randn(4)
    R, returns = 0.0, []
    for r in rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns_t = torch.tensor(returns)
    returns_t = (returns_t - returns_t.mean()) / (returns_t.std() + 1e-6)
    loss = torch.stack([-lp * R for lp, R in zip(log_probs, returns_t, strict=True)]).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "opt": opt, "loss": loss}


def transformer() -> Any:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    opt = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
    x = torch.randn(2, 5, 8)
    loss = encoder(x).pow(2).mean()
    loss.backward()
    opt.step()
    encoder.eval()
    with torch.no_grad():
        evaluated = encoder(x)
    return {"encoder": encoder, "opt": opt, "loss": loss}, evaluated


def transformer_padded() -> Any:
    """Evaluated with a padding mask: torch 2.13's fast path runs on nested tensors (zeros where padded)."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2).eval()
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        return encoder, encoder(torch.randn(2, 5, 8), src_key_padding_mask=padding)


EXAMPLES: dict[str, Program] = {
    "super_resolution": super_resolution,
    "mnist": mnist,
    "vae": vae,
    "dcgan": dcgan,
    "word_language_model": word_language_model,
    "siamese_network": siamese_network,
    "time_sequence_prediction": time_sequence_prediction,
    "reinforce": reinforce,
    "transformer": transformer,
    "transformer, padded": transformer_padded,
}
