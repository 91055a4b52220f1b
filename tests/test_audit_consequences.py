"""Each consequence the audit names is what autograd then does, decided per write.

Every case is a small program with one write, run three ways: under the
audit with its backward (the consequence it names), plainly with its
backward (what autograd does: raise, or run with gradients that differ from
the program written out of place, or run with the right ones), and under the
audit without the backward (the ``... if backpropagated`` class, which a
forward-only test may have). The cases cover the write through ``.data``
into a saved tensor that does not require grad (a vector quantizer's EMA
update), the same write without ``.data`` and through ``detach()``, and
writes inside the forward that a checkpoint recomputes in the backward
(reentrant, non-reentrant, ``checkpoint_sequential``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from inplace_recipes import audit, explain

SOURCE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    pattern = re.compile(rf"# W:{re.escape(marker)}(\s|$)")
    (line,) = [n for n, text in enumerate(SOURCE, 1) if pattern.search(text)]
    return line


def x_() -> Tensor:
    return torch.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()


def codebook() -> Tensor:
    return torch.linspace(-0.5, 0.5, 20).reshape(5, 4)


# -- the programs: each returns its loss; the reference is the same values, out of place ------


def ema_update_through_data(x: Tensor) -> Tensor:
    embed = codebook()  # a buffer: does not require grad
    dist = torch.einsum("bd,kd->bk", x, embed)  # saves embed
    embed.data.copy_(torch.zeros(5, 4))  # W:ema_data
    return dist.sum()


def ema_update(x: Tensor) -> Tensor:
    embed = codebook()
    dist = torch.einsum("bd,kd->bk", x, embed)
    embed.copy_(torch.zeros(5, 4))  # W:ema_plain
    return dist.sum()


def ema_update_through_detach(x: Tensor) -> Tensor:
    embed = codebook()
    dist = torch.einsum("bd,kd->bk", x, embed)
    embed.detach().copy_(torch.zeros(5, 4))  # W:ema_detach
    return dist.sum()


def ema_reference(x: Tensor) -> Tensor:
    return torch.einsum("bd,kd->bk", x, codebook()).sum()


def data_alias_saved(x: Tensor) -> Tensor:
    d = codebook().data
    y = torch.einsum("bd,kd->bk", x, d)  # saves d itself, the .data alias
    d.mul_(2)  # W:data_alias_saved
    return y.sum()


def no_grad_view_of_non_leaf(x: Tensor) -> Tensor:
    h = x * 2
    with torch.no_grad():
        h.view(-1).mul_(3)  # W:no_grad_view
    return (h * h).sum()


def no_grad_view_reference(x: Tensor) -> Tensor:
    h = x * 6
    return (h * h).sum()


def sigmoid_times_two(x: Tensor) -> Tensor:
    h = x.sigmoid()
    h.mul_(2)  # W:recomputed
    return h.exp().sum()


def sigmoid_times_two_reference(x: Tensor) -> Tensor:
    return (x.sigmoid() * 2).exp().sum()


def sigmoid_times_two_last(x: Tensor) -> Tensor:
    return x.sigmoid().mul_(2).sum()  # W:recomputed_last


def sigmoid_times_two_last_reference(x: Tensor) -> Tensor:
    return (x.sigmoid() * 2).sum()


def reentrant(x: Tensor) -> Tensor:
    return checkpoint(sigmoid_times_two, x, use_reentrant=True)  # type: ignore[no-any-return]


def non_reentrant(x: Tensor) -> Tensor:
    return checkpoint(sigmoid_times_two, x, use_reentrant=False)  # type: ignore[no-any-return]


def non_reentrant_last(x: Tensor) -> Tensor:
    """The recomputation stops once it has what the backward needs: before this write."""
    return checkpoint(sigmoid_times_two_last, x, use_reentrant=False)  # type: ignore[no-any-return]


class Double(nn.Module):
    """A module that doubles its input in place, as ``inplace=True`` activations do."""

    def forward(self, x: Tensor) -> Tensor:
        return x.mul_(2)  # W:double


def layers() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        *(nn.Linear(4, 4), nn.Sigmoid(), Double(), nn.Tanh()),  # checkpointed
        *(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2), nn.Identity()),  # run plainly
    )


def sequential(reentrant: bool) -> Callable[[Tensor], Tensor]:
    """Two segments: the first, with the write, is checkpointed (torch runs the last one plainly)."""

    def program(x: Tensor) -> Tensor:
        out = checkpoint_sequential(layers(), 2, x, use_reentrant=reentrant)
        return out.pow(2).sum()  # type: ignore[no-any-return]

    return program


def sequential_reference(x: Tensor) -> Tensor:
    model = layers()
    h = torch.tanh(torch.sigmoid(model[0](x)) * 2)
    return model[6](torch.tanh(model[4](h))).pow(2).sum()  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Case:
    name: str
    program: Callable[[Tensor], Tensor]
    reference: Callable[[Tensor], Tensor]
    marker: str
    consequence: str  # with the backward
    kind: str


CASES = [
    Case(
        "EMA update through .data, buffer not requiring grad",
        ema_update_through_data,
        ema_reference,
        "ema_data",
        "wrong gradients",
        ".data alias of a saved tensor",
    ),
    Case("EMA update in place", ema_update, ema_reference, "ema_plain", "backward fails", ""),
    Case(
        "EMA update through detach()",
        ema_update_through_detach,
        ema_reference,
        "ema_detach",
        "backward fails",
        "",
    ),
    Case(
        "write into a saved .data alias",
        data_alias_saved,
        ema_reference,
        "data_alias_saved",
        "backward fails",
        "",
    ),
    Case(
        "no_grad write through a view of a non-leaf",
        no_grad_view_of_non_leaf,
        no_grad_view_reference,
        "no_grad_view",
        "wrong gradients",
        "non-leaf under no_grad",
    ),
    Case(
        "reentrant checkpoint",
        reentrant,
        sigmoid_times_two_reference,
        "recomputed",
        "backward fails",
        "saved for backward",
    ),
    Case(
        "non-reentrant checkpoint",
        non_reentrant,
        sigmoid_times_two_reference,
        "recomputed",
        "wrong gradients",
        "saved in a checkpoint's recomputation",
    ),
    Case(
        "non-reentrant checkpoint, write after the last saved tensor",
        non_reentrant_last,
        sigmoid_times_two_last_reference,
        "recomputed_last",
        "safe",
        "",
    ),
    Case(
        "checkpoint_sequential, reentrant",
        sequential(True),
        sequential_reference,
        "double",
        "backward fails",
        "saved for backward",
    ),
    Case(
        "checkpoint_sequential, non-reentrant",
        sequential(False),
        sequential_reference,
        "double",
        "wrong gradients",
        "saved in a checkpoint's recomputation",
    ),
]

UNUSED = {
    "backward fails": "fails if backpropagated",
    "wrong gradients": "wrong gradients if backpropagated",
}


def harmful(report: object) -> list[tuple[int, str, str]]:
    return [(f.line, f.consequence, f.kind) for f in report if f.harmful]  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_audit_names_the_consequence_at_the_line(case: Case) -> None:
    report = audit(lambda: case.program(x_()).backward())
    assert report.problems == {}
    if case.consequence == "safe":
        assert harmful(report) == [], str(report)
        assert line_of(case.marker) in [f.line for f in report]
        return
    ((line, consequence, kind),) = harmful(report)
    assert (line, consequence) == (line_of(case.marker), case.consequence), str(report)
    if case.kind:
        assert kind == case.kind, str(report)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_autograd_does_what_the_consequence_says(case: Case) -> None:
    x = x_()
    loss = case.program(x)
    if case.consequence == "backward fails":
        with pytest.raises(RuntimeError) as info:
            loss.backward()
        assert explain(info.value).slug == "saved-tensor-modified"
        return
    loss.backward()  # runs: autograd did not see the write, or it was safe
    want = x_()
    case.reference(want).backward()
    assert x.grad is not None
    assert want.grad is not None
    assert torch.allclose(x.grad, want.grad) == (case.consequence == "safe")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_without_the_backward_it_is_the_class_that_needs_one(case: Case) -> None:
    report = audit(lambda: case.program(x_()))
    if "checkpoint" in case.name:
        # a checkpoint's forward is recomputed only by a backward: without one, nothing broke
        assert harmful(report) == [], str(report)
        return
    ((line, consequence, _),) = harmful(report)
    assert (line, consequence) == (line_of(case.marker), UNUSED[case.consequence]), str(report)
