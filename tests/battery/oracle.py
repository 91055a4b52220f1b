"""Torch's own answers, and the package's writers, as functions of ``(x, index, value)``.

The expected answer of every case is torch itself: ``y = x.clone(); y[i] = v``
for ``set`` (every recipe), ``y[i] += v`` (and ``-=``, ``*=``, ``/=``, ``**=``)
for ``at()``'s arithmetic, and ``y[i] = torch.minimum(y[i], v)`` (or
``maximum``) for ``min`` and ``max``, as ``at``'s own table states them. A
Python number goes to ``torch.minimum`` as ``torch.tensor(v)``, a 0-d tensor,
which promotes as the number would (it has no dimensions).

Repeated positions: ``at()``'s ops apply every update in index order (its
contract, as NumPy's ``ufunc.at``); their reference is :func:`torch_write_each`,
``y[p] = op(y[p], s)`` for each position and step in turn.

>>> x = torch.zeros(3)
>>> torch_write("add", x, torch.tensor([0, 2]), 1.0)
tensor([1., 0., 1.])
>>> torch_write_each("add", x, torch.tensor([2, 2]), 1.0)
tensor([0., 0., 2.])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .spec import RECIPE_NAMES, op_of
from .timeout import CaseTimeout

Writer = Callable[[Tensor, Any, Any], Tensor]


def _other(value: Any, like: Tensor) -> Tensor:
    return value if isinstance(value, Tensor) else torch.tensor(value, device=like.device)


def _apply(op: str, y: Tensor, index: Any, value: Any) -> None:
    """``y[index] <op>= value`` on ``y`` itself, as a user writes it."""
    if op == "set":
        y[index] = value
    elif op == "add":
        y[index] += value
    elif op == "subtract":
        y[index] -= value
    elif op == "multiply":
        y[index] *= value
    elif op == "divide":
        y[index] /= value
    elif op == "power":
        y[index] **= value
    elif op == "min":
        y[index] = torch.minimum(y[index], _other(value, y))
    elif op == "max":
        y[index] = torch.maximum(y[index], _other(value, y))
    else:
        raise ValueError(f"unknown op {op!r}")


_COMBINE: dict[str, Callable[[Tensor, Any], Tensor]] = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": lambda a, b: torch.minimum(a, _other(b, a)),
    "max": lambda a, b: torch.maximum(a, _other(b, a)),
}


def _detached(value: Any) -> Any:
    return value.detach() if isinstance(value, Tensor) else value


def torch_write(
    op: str, x: Tensor, index: Any, value: Any, *, differentiable: bool = False
) -> Tensor:
    """``y = x.clone()`` then ``op``'s in-place statement: torch's own answer.

    With ``differentiable``, for derivatives: the in-place statement's backward
    fails in torch 2.13 where the op saves its input or result and setitem then
    copies into it (``y[1] **= v`` and ``y[1] *= v`` with ``v`` requiring grad:
    "one of the variables needed for gradient computation has been modified
    by an inplace operation"). So the statement runs once without autograd,
    for torch's errors, and the result is ``y[index] = op(x[index], value)``:
    the same values (``y`` is a copy of ``x``; no position repeats here; the
    result cast to ``y``'s dtype, as the in-place op casts it), whose
    derivatives torch computes.
    """
    if not differentiable or op == "set":
        y = x.clone()
        _apply(op, y, index, value)
        return y
    torch_write(op, x.detach(), index, _detached(value))
    y = x.clone()
    y[index] = _COMBINE[op](x[index], value).to(y.dtype)  # an in-place op keeps y's dtype
    return y


def torch_write_each(
    op: str, x: Tensor, index: Any, value: Any, *, differentiable: bool = False
) -> Tensor:
    """``y[p] = op(y[p], s)`` for each position ``p`` of ``x[index]`` and its step ``s``,
    in index order (``set``: torch's own setitem, whose last write wins on the CPU).

    With ``differentiable``: the same steps on one 0-d tensor per element, each
    step a new tensor (see :func:`torch_write`), after a run without autograd
    for torch's errors.
    """
    if op == "set":
        return torch_write(op, x, index, value, differentiable=differentiable)
    positions = torch.arange(x.numel()).view(x.shape)[index].reshape(-1).tolist()
    if isinstance(value, Tensor):
        shape = x[index].shape
        steps: list[Any] = list(torch.broadcast_to(value, shape).reshape(-1).unbind())
    else:
        steps = [value] * len(positions)
    if not differentiable:
        y = x.clone()
        flat = y.view(-1)
        for p, s in zip(positions, steps, strict=True):
            _apply(op, flat, p, s)
        return y
    torch_write_each(op, x.detach(), index, _detached(value))
    elements = list(x.reshape(-1).unbind())
    for p, s in zip(positions, steps, strict=True):
        out = elements[p].clone()
        out[()] = _COMBINE[op](elements[p], s).to(out.dtype)
        elements[p] = out
    return torch.stack(elements).view(x.shape)


def writer(name: str) -> Writer:
    """The package's writer called ``name``: a recipe, or ``at.<op>``; ``torch`` is
    torch's own ``clone`` then setitem (the control of the compile axis)."""
    if name == "torch":
        return lambda x, index, value: torch_write("set", x, index, value)
    from inplace_recipes import RECIPES, at

    if name in RECIPE_NAMES:
        return RECIPES[name]
    op = op_of(name)

    def update(x: Tensor, index: Any, value: Any) -> Tensor:
        return getattr(at(x)[index], op)(value)  # type: ignore[no-any-return]

    return update


@dataclass
class Outcome:
    """What a call gave: its result, or the exception it raised, and its warnings."""

    result: Any = None
    error: Exception | None = None
    warned: tuple[str, ...] = ()

    @property
    def raised(self) -> bool:
        return self.error is not None

    def __str__(self) -> str:
        if self.error is not None:
            return f"{type(self.error).__name__}: {first_line(self.error)}"
        return "a result"


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:300] if lines else ""


def attempt(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """``fn(*args, **kwargs)``: its result or its exception, warnings recorded (never raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
        except CaseTimeout:
            raise
        except Exception as error:  # noqa: BLE001 - the error is the outcome
            return Outcome(error=error, warned=tuple(str(w.message) for w in caught))
    return Outcome(result=result, warned=tuple(str(w.message) for w in caught))
