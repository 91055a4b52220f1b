"""Keep an audit's mode active in the backwards it sees start.

A :class:`~torch.overrides.TorchFunctionMode` is taken off the stack while
its own ``__torch_function__`` runs, and torch 2.13's autograd engine runs a
backward with the mode stack of the call that started it. So an audit that
intercepts ``loss.backward()`` would run that backward without its mode, and
what the backward runs in Python (a reentrant checkpoint's recomputed
forward, hooks, a custom Function's backward) would go unseen. While
:func:`engine_sees` is active, ``torch.autograd``'s call into the engine
(``_engine_run_backward``, through which ``backward`` and ``grad`` go) puts
back the modes of the audits whose ``__torch_function__`` is running that
backward (:func:`backward_of`), for as long as the engine runs.

>>> import torch
>>> class Mode(torch.overrides.TorchFunctionMode):
...     seen = []
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         self.seen.append(getattr(func, "__name__", ""))
...         if func is torch.Tensor.backward:
...             with backward_of(self):
...                 return func(*args, **(kwargs or {}))
...         return func(*args, **(kwargs or {}))
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.exp()
>>> _ = y.register_hook(lambda g: g.mul(2))  # runs inside the backward
>>> with engine_sees(), Mode() as mode:
...     y.sum().backward()
>>> "mul" in mode.seen
True
"""

# torch.overrides' helpers are untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.autograd

__all__ = ["backward_of", "engine_sees"]

_lock = threading.Lock()
_users = 0
_original: Callable[..., Any] | None = None
_local = threading.local()
#: The name torch.autograd's backward and grad call the engine through (torch 2.13).
_NAME = "_engine_run_backward"


def _pending() -> list[Any]:
    """The modes of this thread whose ``__torch_function__`` is starting a backward."""
    pending: list[Any] | None = getattr(_local, "pending", None)
    if pending is None:
        pending = _local.pending = []
    return pending


@contextlib.contextmanager
def backward_of(mode: Any) -> Iterator[None]:
    """The backward ``mode``'s ``__torch_function__`` starts in this block runs with ``mode`` active."""
    pending = _pending()
    pending.append(mode)
    try:
        yield
    finally:
        for n in range(len(pending) - 1, -1, -1):  # not consumed: no backward started
            if pending[n] is mode:
                del pending[n]
                break


def _engine_run_backward(*args: Any, **kwargs: Any) -> Any:
    """``torch.autograd.graph._engine_run_backward`` with the pending modes back on the stack."""
    __tracebackhide__ = True  # pytest and IPython leave this frame out
    assert _original is not None
    pending = _pending()
    modes = list(reversed(pending))  # the outermost audit's mode first, at the bottom
    pending.clear()
    for mode in modes:
        torch.overrides._push_mode(mode)
    try:
        return _original(*args, **kwargs)
    finally:
        for _ in modes:
            torch.overrides._pop_mode()


@contextlib.contextmanager
def engine_sees() -> Iterator[None]:
    """While active, the backwards started under :func:`backward_of` run with its mode."""
    global _users, _original
    with _lock:
        if not _users:
            _original = getattr(torch.autograd, _NAME)
            setattr(torch.autograd, _NAME, _engine_run_backward)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if not _users:
                setattr(torch.autograd, _NAME, _original)
                _original = None
