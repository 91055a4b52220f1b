"""Keep the code paths torch picks what they are without the audit.

Torch 2.13 asks ``torch.overrides.has_torch_function(tensor_args)`` before
the inference fast paths of ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder`` (and
before a higher-order operator dispatches): any active
:class:`~torch.overrides.TorchFunctionMode` makes it say ``True``, so the
audit's mode alone would send an evaluation down the slow path, whose
values differ in the last bits. While :func:`unchanged_fast_paths` is
active, that name answers as it would without the audit's modes; the modes
of the program's own, and its tensor subclasses, still count.

>>> import torch
>>> x = torch.ones(2)
>>> class Mode(torch.overrides.TorchFunctionMode):
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         return func(*args, **(kwargs or {}))
>>> with Mode(), unchanged_fast_paths(Mode):
...     torch.overrides.has_torch_function((x,))
False
"""

# torch.overrides' helpers are untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

__all__ = ["unchanged_fast_paths"]

_lock = threading.Lock()
_active: list[type] = []  # the audit mode types of the audits running, one entry each
_original: Callable[[Iterable[Any]], bool] | None = None


def _without_audits(args: Iterable[Any]) -> bool:
    """``has_torch_function(args)`` with the audits' modes at the top of the stack set aside."""
    assert _original is not None
    if not _original(args):
        return False
    kinds = tuple(_active)
    stack = torch.overrides._get_current_function_mode_stack()
    audits = 0
    for mode in reversed(stack):
        if not isinstance(mode, kinds):
            break
        audits += 1
    if not audits:
        return True
    with contextlib.ExitStack() as popped:
        for _ in range(audits):
            popped.enter_context(torch.overrides._pop_mode_temporarily())
        return _original(args)


@contextlib.contextmanager
def unchanged_fast_paths(mode: type) -> Iterator[None]:
    """While active, modes of type ``mode`` do not count for ``torch.overrides.has_torch_function``."""
    global _original
    with _lock:
        if not _active:
            _original = torch.overrides.has_torch_function
            setattr(torch.overrides, "has_torch_function", _without_audits)  # noqa: B010
        _active.append(mode)
    try:
        yield
    finally:
        with _lock:
            _active.remove(mode)
            if not _active:
                assert _original is not None
                setattr(torch.overrides, "has_torch_function", _original)  # noqa: B010
                _original = None
