"""graph_nodes lists the backward graph; draw_graph draws it."""

from __future__ import annotations

import pytest
import torch

from inplace_recipes.graph import GraphNode, draw_graph, graph_nodes


def test_copyslices_after_setitem_on_a_non_leaf() -> None:
    a = torch.rand(3, requires_grad=True)
    c = a * 1
    c[0] = 0
    nodes = graph_nodes(c)
    assert [n.name for n in nodes] == ["CopySlices", "MulBackward0", "AccumulateGrad"]
    assert nodes[0].inputs == (1,)
    assert nodes[2].leaf == (3,)


def test_shared_nodes_appear_once_with_both_edges() -> None:
    a = torch.rand(2, requires_grad=True)
    nodes = graph_nodes(a * 2 + a)
    names = [n.name for n in nodes]
    assert names.count("AccumulateGrad") == 1
    add = nodes[0]
    assert add.name == "AddBackward0"
    assert len(add.inputs) == 2


def test_saved_tensors_are_reported() -> None:
    a = torch.rand(2, requires_grad=True) * 1
    assert graph_nodes(a**2)[0].saved == ("self",)
    assert graph_nodes(a.exp())[0].saved == ("result",)
    y = a.exp()
    y.sum().backward()
    assert graph_nodes(y)[0].saved == ()  # freed by backward: not an error


def test_no_grad_fn_gives_an_empty_graph() -> None:
    assert graph_nodes(torch.rand(2, requires_grad=True)) == []
    assert graph_nodes(torch.rand(2)) == []


def test_nodes_are_plain_data() -> None:
    a = torch.rand(2, requires_grad=True)
    node = graph_nodes(a.sin())[0]
    assert isinstance(node, GraphNode)
    assert node._asdict() == {
        "name": "SinBackward0",
        "inputs": (1,),
        "saved": ("self",),
        "leaf": None,
    }


def test_draw_graph_returns_a_figure_with_one_label_per_node() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = torch.rand(3, requires_grad=True)
    y = torch.where(torch.tensor([True, False, True]), 0.0, x)
    fig = draw_graph(y, title="where")
    try:
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert any(t.startswith("WhereBackward0") for t in texts)
        assert len(texts) == len(graph_nodes(y))
    finally:
        plt.close(fig)


def test_draw_graph_into_given_axes() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        assert draw_graph(torch.rand(2), ax=ax) is fig
        assert "no grad_fn" in ax.texts[0].get_text()
    finally:
        plt.close(fig)
