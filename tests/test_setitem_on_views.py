"""Which views setitem refuses: the landing page's list, checked over every kind of view.

``docs/index.md`` ("Why in-place fails, in one paragraph") says that on a
non-leaf setitem works and autograd records it, except on the views it
lists, and that a write over memory an expanded tensor shares fails too.
Here every way torch makes a view is written through three indices
(``v[0] = 5.0``, ``v[:] = 5.0``, ``v[tensor([0])] = 5.0``); the views that
refuse must be exactly the page's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        return grad


def _leaf() -> torch.Tensor:
    return torch.rand(4, 4, requires_grad=True)


def _under_no_grad() -> torch.Tensor:
    base = _leaf() * 1
    with torch.no_grad():
        return base[1]


def _under_inference_mode() -> torch.Tensor:
    base = _leaf() * 1
    with torch.inference_mode():
        return base[1]


def _of_an_inference_tensor() -> torch.Tensor:
    with torch.inference_mode():
        made = torch.rand(4, 4)
    return made[1]


#: Every kind of view, and whether the page says setitem refuses it (the page's words).
VIEWS: dict[str, tuple[Callable[[], torch.Tensor], str | None]] = {
    "select": (lambda: (_leaf() * 1)[1], None),
    "slice": (lambda: (_leaf() * 1)[1:], None),
    "view of a view": (lambda: (_leaf() * 1)[1][1:], None),
    "transpose": (lambda: (_leaf() * 1).t(), None),
    "view()": (lambda: (_leaf() * 1).view(16), None),
    "diagonal": (lambda: (_leaf() * 1).diagonal(), None),
    "unfold": (lambda: (_leaf() * 1).unfold(0, 2, 1), None),
    "as_strided": (lambda: (_leaf() * 1).as_strided((2,), (1,)), None),
    "narrow": (lambda: (_leaf() * 1).narrow(0, 0, 2), None),
    "tensor_split": (lambda: (_leaf() * 1).tensor_split(2)[0], None),
    "real": (lambda: (torch.rand(4, dtype=torch.complex64, requires_grad=True) * 1).real, None),
    "view_as_real": (
        lambda: torch.view_as_real(torch.rand(4, dtype=torch.complex64, requires_grad=True) * 1),
        None,
    ),
    "detach": (lambda: _leaf().detach(), None),
    ".data": (lambda: (_leaf() * 1).data, None),
    "of a leaf that requires grad": (lambda: _leaf()[1], "of a leaf that requires grad"),
    "split": (lambda: (_leaf() * 1).split(2)[0], "an output of split, chunk or unbind"),
    "chunk": (lambda: (_leaf() * 1).chunk(2)[0], "an output of split, chunk or unbind"),
    "unbind": (lambda: (_leaf() * 1).unbind()[0], "an output of split, chunk or unbind"),
    "under no_grad": (_under_no_grad, "taken under no_grad or inference mode"),
    "under inference_mode": (_under_inference_mode, "taken under no_grad or inference mode"),
    "of an inference tensor": (_of_an_inference_tensor, "of an inference tensor"),
    "a custom Function's output": (
        lambda: _Identity.apply(_leaf() * 1),
        "returned by a custom Function",
    ),
}
INDICES = {"v[0]": 0, "v[:]": slice(None), "v[tensor([0])]": torch.tensor([0])}


def _refuses(make: Callable[[], torch.Tensor], index: object) -> bool:
    view = make()
    try:
        view[index] = 5.0
    except RuntimeError:
        return True
    return False


@pytest.mark.parametrize("index", list(INDICES))
@pytest.mark.parametrize("name", list(VIEWS))
def test_setitem_refuses_exactly_the_views_the_page_lists(name: str, index: str) -> None:
    make, listed = VIEWS[name]
    assert _refuses(make, INDICES[index]) is (listed is not None), (name, index)


def test_on_a_non_leaf_autograd_records_the_write() -> None:
    """The page's examples of what it records: ``x[1] = v`` as CopySlices, index tensors
    and masks as IndexPutBackward0."""
    names = {}
    for label, index in {
        "int": 1,
        "tensor": torch.tensor([1]),
        "mask": torch.arange(4) < 2,
    }.items():
        x = _leaf() * 1
        x[index] = 5.0
        names[label] = type(x.grad_fn).__name__
    assert names == {
        "int": "CopySlices",
        "tensor": "IndexPutBackward0",
        "mask": "IndexPutBackward0",
    }


def test_a_write_over_memory_an_expanded_tensor_shares_fails_without_autograd_too() -> None:
    for grad in (True, False):
        r = torch.zeros(1, 4, requires_grad=grad) * 1
        expanded = r.expand(3, 4)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            expanded[:] = 1.0
        expanded[0] = 1.0  # the elements of one row are distinct: this works
