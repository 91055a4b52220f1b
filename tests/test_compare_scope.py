"""What ``compare_gradients`` checks, as the README says it: the result and
reverse-mode gradients on the inputs given, not forward mode."""

from __future__ import annotations

from pathlib import Path

import torch

from inplace_recipes import compare_gradients

README = Path(__file__).resolve().parents[1] / "README.md"


def _prod(x: torch.Tensor, index: int, value: torch.Tensor) -> torch.Tensor:
    """``x[index] *= value`` through scatter_reduce(prod), whose tangent torch 2.13 drops."""
    positions = torch.tensor([index])
    return x.scatter_reduce(0, positions, value.reshape(1), "prod")


def _reference(x: torch.Tensor, index: int, value: torch.Tensor) -> torch.Tensor:
    positions = torch.tensor([index])
    return x.index_put((positions,), x[positions] * value)


def test_compare_gradients_does_not_check_forward_mode() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    v = torch.tensor(4.0, dtype=torch.float64)
    report = compare_gradients(x, 1, v, {"prod": _prod}, reference=_reference, second_order=True)
    assert report.ok
    tangent = torch.ones_like(x)
    _, got = torch.func.jvp(lambda a: _prod(a, 1, v), (x,), (tangent,))
    _, want = torch.func.jvp(lambda a: _reference(a, 1, v), (x,), (tangent,))
    assert not torch.equal(got, want)  # the forward-mode tangent is wrong, and ok is True
    text = " ".join(README.read_text().split())
    assert "reverse-mode gradients" in text
    assert "agree with the reference forward and backward" not in text
