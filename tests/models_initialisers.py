"""Programs that initialise or constrain weights in place, as models do, for the audit's no-change test.

Each program is a function of no arguments that builds its tensors from a
fixed seed, runs, and returns what it made; ``tests/test_audit_unchanged.py``
runs each with and without the audit and compares everything it returns.

- ``INITIALISERS``: every ``torch.nn.init`` function (the deprecated names
  without ``_`` too), on a Parameter, on views of one (made under ``no_grad``
  or not) and on a plain tensor, then a forward and a backward through the
  Parameter.
- ``PARAMETRIZATIONS``: ``torch.nn.utils.parametrizations.orthogonal``,
  ``spectral_norm`` and ``weight_norm``, the older ``torch.nn.utils.weight_norm``
  and ``spectral_norm``, and a custom ``register_parametrization``, each
  through two training steps.
- ``RECURRENT``: GRU and LSTM initialised as people do (``orthogonal_`` on
  the ``weight_hh`` blocks, through ``.data`` or a slice under ``no_grad``).
- ``VIEW_WRITES``: a write (``copy_``, setitem, ``mul_``) into a view of a
  Parameter, a non-leaf, a buffer, or a ``.data``/``detach()`` alias, with the
  view made and written with grad on or off, then the view or its base used
  in a backward. Many of these raise; the audit must raise the same.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils import parametrizations, parametrize

Program = Callable[[], Any]

# -- nn.init --------------------------------------------------------------------------------


def _init_arguments(name: str) -> tuple[tuple[int, ...], dict[str, Any]]:
    """A shape the initialiser takes, and its required arguments."""
    if name.startswith("dirac"):
        return (4, 2, 3, 3), {}
    if name.startswith("sparse"):
        return (6, 5), {"sparsity": 0.3}
    if name.startswith("constant"):
        return (6, 5), {"val": 0.25}
    return (6, 5), {}


#: Every initialiser of torch.nn.init: the public names ending in ``_`` and their deprecated twins.
INIT_NAMES = sorted(
    name
    for name in dir(nn.init)
    if not name.startswith("_")
    and callable(getattr(nn.init, name))
    and (name.endswith("_") or hasattr(nn.init, f"{name}_"))
)

#: How an initialiser is pointed at a Parameter ``w`` of the shape it takes.
INIT_TARGETS: dict[str, Callable[[Tensor], Tensor]] = {
    "parameter": lambda w: w,
    "no_grad view": lambda w: w.view(w.shape),  # made under no_grad below
    "grad-mode view": lambda w: w.view(w.shape),  # made with grad on
    "data": lambda w: w.data,
    "detach": lambda w: w.detach(),
    "slice": lambda w: w[: w.shape[0] // 2],  # half of the rows, under no_grad
}


def initialiser(name: str, target: str) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        shape, kwargs = _init_arguments(name)
        w = nn.Parameter(torch.zeros(shape))
        if target == "grad-mode view":
            tensor = INIT_TARGETS[target](w)
        else:
            with torch.no_grad():
                tensor = INIT_TARGETS[target](w)
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # the deprecated names warn: both runs see it
            getattr(nn.init, name)(tensor, **kwargs)
        x = torch.randn(3, *shape[1:])
        loss = (x.flatten(1) @ w.flatten(1).t()).tanh().sum()
        loss.backward()
        return {"w": w, "loss": loss, "x": x}

    return program


def plain_initialiser(name: str) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        shape, kwargs = _init_arguments(name)
        t = torch.zeros(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            getattr(nn.init, name)(t, **kwargs)
        return t

    return program


INITIALISERS: dict[str, Program] = {
    **{
        f"{name} on {target}": initialiser(name, target)
        for name, target in itertools.product(INIT_NAMES, INIT_TARGETS)
    },
    **{f"{name} on a plain tensor": plain_initialiser(name) for name in INIT_NAMES},
}


# -- parametrizations -----------------------------------------------------------------------


class _Symmetric(nn.Module):
    def forward(self, X: Tensor) -> Tensor:
        return X.triu() + X.triu(1).transpose(-1, -2)


def _deprecated(make: Callable[[], nn.Module]) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.nn.utils.weight_norm's notice
        return make()


PARAMETRIZED: dict[str, Callable[[], nn.Module]] = {
    "parametrizations.orthogonal": lambda: parametrizations.orthogonal(nn.Linear(4, 4)),
    "parametrizations.orthogonal, householder": lambda: parametrizations.orthogonal(
        nn.Linear(5, 3), orthogonal_map="householder"
    ),
    "parametrizations.orthogonal, cayley": lambda: parametrizations.orthogonal(
        nn.Linear(4, 4), orthogonal_map="cayley"
    ),
    "parametrizations.spectral_norm": lambda: parametrizations.spectral_norm(nn.Linear(5, 3)),
    "parametrizations.weight_norm": lambda: parametrizations.weight_norm(nn.Linear(4, 3)),
    "utils.weight_norm": lambda: _deprecated(lambda: nn.utils.weight_norm(nn.Linear(4, 3))),
    "utils.spectral_norm": lambda: nn.utils.spectral_norm(nn.Linear(5, 3)),
    "utils.spectral_norm, conv": lambda: nn.utils.spectral_norm(nn.Conv2d(2, 3, 3)),
    "register_parametrization": lambda: _symmetric(),
}


def _symmetric() -> nn.Module:
    layer = nn.Linear(4, 4)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    return layer


def parametrized(name: str, cached: bool) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        layer = PARAMETRIZED[name]()
        opt = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
        shape = (2, 2, 5, 5) if isinstance(layer, nn.Conv2d) else (3, layer.in_features)
        losses = []
        for _ in range(2):
            x = torch.randn(shape)
            opt.zero_grad()
            if cached and parametrize.is_parametrized(layer):
                with parametrize.cached():
                    loss = layer(x).pow(2).sum() + layer(x).sum()
            else:
                loss = layer(x).pow(2).sum()
            loss.backward()
            opt.step()
            losses.append(loss)
        layer.eval()
        with torch.no_grad():
            evaluated = layer(torch.randn(shape))
        return {"layer": layer, "opt": opt, "losses": losses, "evaluated": evaluated}

    return program


PARAMETRIZATIONS: dict[str, Program] = {
    **{name: parametrized(name, False) for name in PARAMETRIZED},
    **{
        f"{name}, cached": parametrized(name, True)
        for name in PARAMETRIZED
        if not name.startswith("utils.")
    },
}


# -- GRU and LSTM, initialised as people do ----------------------------------------------


def recurrent(kind: str, how: str) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        rnn = getattr(nn, kind)(4, 6, num_layers=2, batch_first=True)
        gates = 3 if kind == "GRU" else 4
        for name, param in rnn.named_parameters():
            if "weight_ih" in name:
                nn.init.xavier_uniform_(param.data if how == "data" else param)
            elif "weight_hh" in name:
                for i in range(gates):
                    rows = slice(i * 6, (i + 1) * 6)
                    if how == "data":
                        nn.init.orthogonal_(param.data[rows])
                    else:
                        with torch.no_grad():
                            nn.init.orthogonal_(param[rows])
            elif "bias" in name:
                nn.init.zeros_(param)
                if kind == "LSTM":  # the forget gate's bias at 1
                    with torch.no_grad():
                        param[6:12].fill_(1.0)
        opt = torch.optim.Adam(rnn.parameters(), lr=0.01)
        x = torch.randn(2, 5, 4)
        out, _ = rnn(x)
        loss = out.pow(2).mean()
        loss.backward()
        nn.utils.clip_grad_norm_(rnn.parameters(), 0.5)
        opt.step()
        return {"rnn": rnn, "opt": opt, "loss": loss, "out": out}

    return program


def reset_parameters(kind: str) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        rnn = getattr(nn, kind)(3, 5)
        rnn.reset_parameters()
        out, _ = rnn(torch.randn(4, 2, 3))
        out.sum().backward()
        return rnn

    return program


RECURRENT: dict[str, Program] = {
    **{
        f"{kind} init through {how}": recurrent(kind, how)
        for kind, how in itertools.product(("GRU", "LSTM"), ("data", "no_grad slice"))
    },
    **{f"{kind}.reset_parameters": reset_parameters(kind) for kind in ("GRU", "LSTM", "RNN")},
}


# -- writes into views ----------------------------------------------------------------------

#: Views people write into, of a (6, 4) tensor.
VIEWS: dict[str, Callable[[Tensor], Tensor]] = {
    "view(-1)": lambda t: t.view(-1),
    "view_as": lambda t: t.view_as(t),
    "row [0]": lambda t: t[0],
    "column [:, 1]": lambda t: t[:, 1],
    "slice [1:3]": lambda t: t[1:3],
    "t()": lambda t: t.t(),
    "narrow": lambda t: t.narrow(0, 2, 3),
    "diagonal": lambda t: t.diagonal(),
    "unbind()[1]": lambda t: t.unbind()[1],
    "split()[0]": lambda t: t.split(2)[0],
    "chunk()[1]": lambda t: t.chunk(2, dim=1)[1],
    "unfold": lambda t: t.unfold(0, 2, 2),
    "as_strided": lambda t: t.as_strided((3, 2), (4, 1)),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t[:1].expand(3, 4),
}

#: What a view is taken of.
BASES: dict[str, Callable[[], Tensor]] = {
    "Parameter": lambda: nn.Parameter(torch.randn(6, 4)),
    "non-leaf": lambda: torch.randn(6, 4, requires_grad=True) * 1.0,
    "buffer": lambda: torch.randn(6, 4),
}

WRITES: dict[str, Callable[[Tensor], object]] = {
    "copy_": lambda v: v.copy_(torch.full(v.shape, 0.5)),
    "setitem": lambda v: v.__setitem__(..., 0.25),
    "mul_": lambda v: v.mul_(2.0),
}


def view_write(base: str, alias: str, view: str, made: str, written: str, write: str) -> Program:
    def program() -> Any:
        torch.manual_seed(0)
        t = BASES[base]()
        root = t.data if alias == ".data" else t.detach() if alias == "detach()" else t
        with torch.set_grad_enabled(made == "grad"):
            v = VIEWS[view](root)
        with torch.set_grad_enabled(written == "grad"):
            WRITES[write](v)
        x = torch.randn(4)
        through_view = (v.flatten()[:4] * x[: v.flatten()[:4].numel()]).sum()
        through_base = (t @ x).sigmoid().sum()
        if through_view.requires_grad:
            through_view.backward(retain_graph=True)
        if through_base.requires_grad:
            through_base.backward()
        return {"t": t, "v": v, "through_view": through_view, "through_base": through_base}

    return program


VIEW_WRITES: dict[str, Program] = {
    f"{write} into {view} of {alias or 'a'} {base}, made {made}, written {written}": view_write(
        base, alias, view, made, written, write
    )
    for base, alias, view, made, written, write in itertools.product(
        BASES, ("", ".data", "detach()"), VIEWS, ("grad", "no_grad"), ("grad", "no_grad"), WRITES
    )
    if not (alias and base == "buffer")  # a buffer's alias is the buffer
}
