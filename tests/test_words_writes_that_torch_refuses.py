"""What the error reference says torch refuses on inference tensors and expanded tensors,
checked over every way of writing the page names.

``docs/errors.md`` (sections "Inference tensors" and "In-place operation on an
expanded tensor") and ``explain()``'s texts for the same sections list which
writes raise and which go through; each list here is the whole set the
sentence speaks of, and the test fails when torch moves one write across.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
import torch

Write = Callable[[torch.Tensor], object]


def _under_no_grad(t: torch.Tensor) -> None:
    with torch.no_grad():
        t.add_(1)


#: An inference tensor, outside inference_mode: every in-place op on it or on a view raises,
#: even under no_grad; only aliases autograd does not track are written, unchecked.
INFERENCE_WRITES: dict[str, tuple[Write, bool]] = {
    "an in-place op": (lambda t: t.add_(1), False),
    "setitem": (lambda t: t.__setitem__(0, 1.0), False),
    "an in-place op on a view": (lambda t: t[1:].add_(1), False),
    "setitem into .detach()": (lambda t: t.detach().__setitem__(0, 1.0), False),
    "copy_": (lambda t: t.copy_(torch.ones(3)), False),
    "out=": (lambda t: torch.add(t, 1, out=t), False),
    "an in-place op under no_grad": (_under_no_grad, False),
    "an in-place op on .data": (lambda t: t.data.add_(1), True),
    "an in-place op on .detach()": (lambda t: t.detach().add_(1), True),
    "through .numpy()": (lambda t: t.numpy().__setitem__(0, 9.0), True),
    "through the storage": (lambda t: t.untyped_storage().fill_(0), True),
}


@pytest.mark.parametrize("name", list(INFERENCE_WRITES))
def test_an_inference_tensor_outside_inference_mode(name: str) -> None:
    write, goes_through = INFERENCE_WRITES[name]
    with torch.inference_mode():
        made = torch.zeros(3)
    if not goes_through:
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
            write(made)
        return
    write(made)


#: An expanded tensor (``zeros(1, 4).expand(3, 4)``): most in-place ops refuse; fill_,
#: zero_, a setitem that selects each memory location once, and one through a mask or an
#: index tensor go through (changing every element that shares the memory).
EXPANDED_WRITES: dict[str, tuple[Write, bool]] = {
    "add_": (lambda r: r.add_(1), False),
    "mul_": (lambda r: r.mul_(2), False),
    "clamp_": (lambda r: r.clamp_(0, 1), False),
    "relu_": (lambda r: r.relu_(), False),
    "copy_": (lambda r: r.copy_(torch.ones(3, 4)), False),
    "r[:] = 1": (lambda r: r.__setitem__(slice(None), 1.0), False),
    "r[...] = 1": (lambda r: r.__setitem__(Ellipsis, 1.0), False),
    "r[1:] = 3": (lambda r: r.__setitem__(slice(1, None), 3.0), False),
    "r[:, 0] = 1": (lambda r: r.__setitem__((slice(None), 0), 1.0), False),
    "fill_": (lambda r: r.fill_(1), True),
    "zero_": (lambda r: r.zero_(), True),
    "r[0] = 5": (lambda r: r.__setitem__(0, 5.0), True),
    "r[2] = 5": (lambda r: r.__setitem__(2, 5.0), True),
    "r[0, 1] = 5": (lambda r: r.__setitem__((0, 1), 5.0), True),
    "r[mask] = 1": (lambda r: r.__setitem__(torch.ones(3, 4, dtype=torch.bool), 1.0), True),
    "r[tensor([0])] = 1": (lambda r: r.__setitem__(torch.tensor([0]), 1.0), True),
}


@pytest.mark.parametrize("name", list(EXPANDED_WRITES))
def test_an_expanded_tensor(name: str) -> None:
    write, goes_through = EXPANDED_WRITES[name]
    base = torch.zeros(1, 4)
    expanded = base.expand(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates index_put_ on expanded tensors
        if not goes_through:
            with pytest.raises(RuntimeError, match="more than one element of the written-to"):
                write(expanded)
            return
        write(expanded)
    assert torch.equal(expanded, base.expand(3, 4))  # every row is the one memory
