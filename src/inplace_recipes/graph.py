"""Draw the backward graph of a tensor by walking ``grad_fn.next_functions``.

:func:`graph_nodes` returns the graph as plain data; :func:`draw_graph` draws
it with matplotlib (no graphviz needed), the output at the top and the leaves
(``AccumulateGrad``) at the bottom.

>>> import torch
>>> a = torch.rand(3, requires_grad=True)
>>> c = a * 1
>>> c[0] = 0
>>> [node.name for node in graph_nodes(c)]
['CopySlices', 'MulBackward0', 'AccumulateGrad']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, cast

from torch import Tensor

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["GraphNode", "draw_graph", "graph_nodes"]


class GraphNode(NamedTuple):
    """One node of a backward graph.

    ``inputs`` are positions in the list :func:`graph_nodes` returns: the
    nodes this one sends gradients to. ``saved`` names the tensors the node
    saved for backward (``self``, ``other``, ``result``, ...); ``leaf`` is
    the shape of the leaf tensor an ``AccumulateGrad`` node writes ``.grad``
    to, and ``None`` for other nodes.
    """

    name: str
    inputs: tuple[int, ...]
    saved: tuple[str, ...]
    leaf: tuple[int, ...] | None


def _saved_tensors(fn: Any) -> tuple[str, ...]:
    """Names of the tensors ``fn`` saved for backward (empty once freed)."""
    names = []
    for attr in dir(fn):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed by an earlier backward
            continue
        if isinstance(value, Tensor) or (
            isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value)
        ):
            names.append(attr.removeprefix("_saved_"))
    return tuple(names)


def graph_nodes(tensor: Tensor) -> list[GraphNode]:
    """The backward graph of ``tensor``, breadth first from its ``grad_fn``.

    A tensor without ``grad_fn`` (a leaf, or one made without grad) has an
    empty graph.

    >>> import torch
    >>> x = torch.rand(2, requires_grad=True)
    >>> graph_nodes(x.exp())
    [GraphNode(name='ExpBackward0', inputs=(1,), saved=('result',), leaf=None), GraphNode(name='AccumulateGrad', inputs=(), saved=(), leaf=(2,))]
    """
    root = tensor.grad_fn
    if root is None:
        return []
    order: list[Any] = [root]
    position = {root: 0}
    edges: list[tuple[int, ...]] = []
    i = 0
    while i < len(order):
        fn = order[i]
        inputs = []
        for child, _ in fn.next_functions:
            if child is None:
                continue
            if child not in position:
                position[child] = len(order)
                order.append(child)
            inputs.append(position[child])
        edges.append(tuple(inputs))
        i += 1
    nodes = []
    for fn, edge in zip(order, edges, strict=True):
        variable = getattr(fn, "variable", None)
        leaf = tuple(variable.shape) if isinstance(variable, Tensor) else None
        nodes.append(GraphNode(type(fn).__name__, edge, _saved_tensors(fn), leaf))
    return nodes


def _layers(nodes: list[GraphNode]) -> list[int]:
    """Depth of each node: its longest path from the root."""
    depth = [0] * len(nodes)
    for _ in range(len(nodes)):  # relax until stable (the graph is acyclic)
        changed = False
        for i, node in enumerate(nodes):
            for j in node.inputs:
                if depth[j] < depth[i] + 1:
                    depth[j] = depth[i] + 1
                    changed = True
        if not changed:
            break
    return depth


def _label(node: GraphNode) -> str:
    text = node.name
    if node.leaf is not None:
        text += f"\nleaf {list(node.leaf)}"
    if node.saved:
        text += "\nsaved: " + ", ".join(node.saved)
    return text


def draw_graph(
    tensor: Tensor,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    highlight: tuple[str, ...] = ("CopySlices",),
) -> Figure:
    """Draw the backward graph of ``tensor`` with matplotlib; return the figure.

    Arrows point the way gradients flow, from the output down to the leaves.
    Nodes named in ``highlight`` are drawn in orange, leaves in blue. Pass
    ``ax`` to draw into an existing axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    nodes = graph_nodes(tensor)
    depth = _layers(nodes)
    n_layers = max(depth, default=0) + 1
    rows: list[list[int]] = [[] for _ in range(n_layers)]
    for i, d in enumerate(depth):
        rows[d].append(i)
    width = max((len(r) for r in rows), default=1)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 2.6 * width), 0.5 + 1.1 * n_layers))
    fig = cast("Figure", ax.get_figure(root=True))
    xy: dict[int, tuple[float, float]] = {}
    for d, row in enumerate(rows):
        for k, i in enumerate(row):
            xy[i] = ((k + 0.5) * width / len(row), float(n_layers - 1 - d))
    for i, node in enumerate(nodes):
        for j in node.inputs:
            ax.add_patch(
                FancyArrowPatch(
                    xy[i],
                    xy[j],
                    arrowstyle="-|>",
                    mutation_scale=12,
                    shrinkA=16,
                    shrinkB=16,
                    color="0.4",
                )
            )
    for i, node in enumerate(nodes):
        if node.name in highlight:
            color = "#fdd0a2"
        elif node.leaf is not None:
            color = "#c6dbef"
        else:
            color = "#f0f0f0"
        ax.text(
            *xy[i],
            _label(node),
            ha="center",
            va="center",
            fontsize=9,
            family="monospace",
            bbox={"boxstyle": "round,pad=0.4", "facecolor": color, "edgecolor": "0.3"},
        )
    if not nodes:
        ax.text(0.5, 0.5, "no grad_fn: nothing to draw", ha="center", va="center")
    ax.set_xlim(-0.1, width + 0.1)
    ax.set_ylim(-0.6, n_layers - 0.4)
    ax.set_axis_off()
    if title is not None:
        ax.set_title(title, fontsize=10)
    return fig
