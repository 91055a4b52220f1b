"""What the audit does not see, checked: each write below harms backward (it
raises, or the gradient is wrong) and the audit reports nothing harmful.

When the audit learns to see one of them, its test fails: then take it off
the list in ``inplace_recipes.auditing``'s docstring, the audit page and the
README.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import torch
from torch import Tensor

from inplace_recipes import audit, auditing
from inplace_recipes.auditing._records import HARMFUL


def _in_thread(h: Tensor) -> None:
    worker = threading.Thread(target=lambda: h.detach().mul_(2))
    worker.start()
    worker.join()


def _numpy(h: Tensor) -> None:
    h.detach().numpy()[:] = 0.0


#: (what the docstring names, the write on sigmoid's saved output h)
UNSEEN: dict[str, Callable[[Tensor], object]] = {
    "another thread": _in_thread,
    "NumPy bridge": _numpy,
    "set_`` on a ``detach()`` alias": lambda h: h.detach().set_(torch.zeros(3)),
    "untyped_storage()": lambda h: h.untyped_storage().copy_(torch.zeros(3).untyped_storage()),
}


def _harm(x: Tensor, h: Tensor) -> bool:
    """Whether backward through h raises or gives x a gradient other than sigmoid's."""
    try:
        h.sum().backward()
    except RuntimeError:
        return True
    assert x.grad is not None
    s = torch.sigmoid(x.detach())
    return not torch.allclose(x.grad, s * (1 - s))


@pytest.mark.parametrize("name", list(UNSEEN))
def test_write_the_audit_does_not_see(name: str) -> None:
    x = torch.linspace(-1, 1, 3).requires_grad_()
    with audit() as report:
        h = x.sigmoid()
        UNSEEN[name](h)
        harmed = _harm(x, h)
    assert harmed, name
    assert [r for r in report.to_records() if r["consequence"] in HARMFUL] == [], report
    assert name in (auditing.__doc__ or ""), name


def test_graph_built_before_the_audit_is_called_safe() -> None:
    x = torch.linspace(-1, 1, 3).requires_grad_()
    h = x.sigmoid()  # saved for backward before the audit starts
    with audit() as report:
        h.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            h.sum().backward()
    assert [r["consequence"] for r in report.to_records()] == ["safe"], report
    assert "graphs built before the audit started" in (auditing.__doc__ or "")
