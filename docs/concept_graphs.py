"""Write ``_generated/graphs/*.png``: the backward graphs the concept pages show.

Each graph is drawn by :func:`inplace_recipes.graph.draw_graph` from the code
next to it here, at build time, so a picture cannot drift from torch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch


def _copyslices() -> torch.Tensor:
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = a * 1
    c[0] = 0
    return c


GRAPHS: dict[str, tuple[str, Callable[[], torch.Tensor]]] = {
    "copyslices": ("c = a * 1; c[0] = 0", _copyslices),
}


def write(outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from inplace_recipes.graph import draw_graph

    target = outdir / "graphs"
    target.mkdir(parents=True, exist_ok=True)
    for name, (title, make) in GRAPHS.items():
        path = target / f"{name}.png"
        if path.exists():
            continue
        fig = draw_graph(make(), title=title)
        fig.savefig(path, dpi=96, bbox_inches="tight")
        plt.close(fig)
