"""Write ``_generated/graphs/*.png``: the backward graphs the concept pages show.

Each graph is drawn by :func:`inplace_recipes.graph.draw_graph` from the code
next to it here, at build time, so a picture cannot drift from torch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch


def _leaf() -> torch.Tensor:
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _copyslices() -> torch.Tensor:
    c = _leaf() * 1
    c[0] = 0
    return c


def _pow() -> torch.Tensor:
    return (_leaf() * 1) ** 2


def _sigmoid() -> torch.Tensor:
    return _leaf().sigmoid()


def _clone() -> torch.Tensor:
    y = _leaf().clone()
    y[1] = 0.0
    return y


def _exp() -> torch.Tensor:
    return _leaf().exp()


def _pow_leaf() -> torch.Tensor:
    return (torch.nn.Parameter(torch.ones(3)) ** 2).sum()


#: name -> (title, the code drawn). Pages show ``/_generated/graphs/<name>.png``.
GRAPHS: dict[str, tuple[str, Callable[[], torch.Tensor]]] = {
    "leaf": ("b = a * 2", lambda: _leaf() * 2),
    "copyslices": ("c = a * 1; c[0] = 0", _copyslices),
    "pow": ("y = a ** 2: saves its input a", _pow),
    "sigmoid": ("y = w.sigmoid(): saves its output y", _sigmoid),
    "clone": ("y = a.clone(); y[1] = 0.0", _clone),
    "exp": ("y = w.exp(): saves its output y", _exp),
    "no-grad": ("(w ** 2).sum(), w a Parameter", _pow_leaf),
}


def write(outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from inplace_recipes.graph import draw_graph

    target = outdir / "graphs"
    target.mkdir(parents=True, exist_ok=True)
    for name, (title, make) in GRAPHS.items():
        path = target / f"{name}.png"  # redrawn at every build: it cannot go stale
        fig = draw_graph(make(), title=title)
        fig.savefig(path, dpi=96, bbox_inches="tight")
        plt.close(fig)
