"""A functional index update, ``at(x)[index].set(value)``, modelled on JAX's ``x.at[]``.

Each method returns a new tensor and never changes ``x``; gradients reach
``x`` and the value under autograd, ``torch.func`` transforms and
``torch.compile``.

============================  ===========================================
``at(x)[idx].set(v)``         ``y = x.clone(); y[idx] = v``
``at(x)[idx].add(v)``         ``y[idx] += v`` (every duplicate adds)
``at(x)[idx].subtract(v)``    ``y[idx] -= v``
``at(x)[idx].multiply(v)``    ``y[idx] *= v``
``at(x)[idx].divide(v)``      ``y[idx] /= v``
``at(x)[idx].power(v)``       ``y[idx] **= v``
``at(x)[idx].min(v)``         ``y[idx] = torch.minimum(y[idx], v)``
``at(x)[idx].max(v)``         ``y[idx] = torch.maximum(y[idx], v)``
``at(x)[idx].apply(fn)``      ``y[idx] = fn(y[idx])``
``at(x)[idx].get()``          ``x[idx]``
============================  ===========================================

>>> import torch
>>> x = torch.zeros(4)
>>> at(x)[1:3].set(7.0)
tensor([0., 7., 7., 0.])
>>> at(x)[torch.tensor([0, 0, 3])].add(1.0)  # duplicates: every update applies
tensor([2., 0., 0., 1.])
>>> x  # unchanged
tensor([0., 0., 0., 0.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

import torch
import torch.nn.functional as F
from torch import Tensor

from .indexing import IndexPlan, as_value
from .recipes import RECIPES
from .recommend import best_recipe

__all__ = ["MODES", "Mode", "at"]

#: Out-of-range index handling, as in JAX; ``None`` raises ``IndexError`` as PyTorch does.
Mode = Literal["promise_in_bounds", "clip", "drop", "fill"]
MODES: tuple[str, ...] = get_args(Mode)

Op = Literal["add", "multiply", "divide", "power", "min", "max"]
_REDUCE = {"multiply": "prod", "min": "amin", "max": "amax"}
_COMBINE: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": torch.add,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": torch.minimum,
    "max": torch.maximum,
}
#: Recipes the default avoids inside ``torch.func`` transforms (torch 2.13):
#: ``vmap`` refuses setitem into a clone for a batched value; autograd
#: through ``vmap`` counts x's gradient twice for a chain of
#: ``select_scatter(x, f(x.select(...)))`` (see the compatibility matrix); and
#: ``index_fill`` under ``vmap`` writes the last batch's fill value everywhere.
_NOT_UNDER_TRANSFORMS = frozenset({"clone", "select_scatter", "masked_fill"})


def _check_mode(mode: str | None) -> None:
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))} or None, got {mode!r}")


def _in_functorch_transform() -> bool:
    return torch._C._functorch.maybe_current_level() is not None


def default_method(x: Tensor, index: Any, value: Any) -> str:
    """The recipe ``set`` uses: :func:`~inplace_recipes.recommend.best_recipe`'s
    choice, except that inside a ``torch.func`` transform ``clone`` (which
    ``vmap`` refuses for a batched value), ``select_scatter`` (whose gradient
    to x is wrong through ``vmap``) and ``masked_fill`` (whose ``index_fill``
    writes one batch's value everywhere under ``vmap``) become ``index_put``.

    >>> default_method(torch.zeros(3), 1, 1.0)
    'clone'
    >>> names = []
    >>> _ = torch.func.vmap(lambda v: names.append(default_method(torch.zeros(3), 1, v)) or v)(
    ...     torch.ones(2)
    ... )
    >>> names
    ['index_put']
    """
    name = best_recipe(x, index, value)
    if name in _NOT_UNDER_TRANSFORMS and _in_functorch_transform():
        return "index_put"
    return name


def _kind(dtype: torch.dtype) -> int:
    """bool < integer < floating < complex (torch.can_cast, traceable by torch.compile)."""
    if dtype.is_complex:
        return 3
    if dtype.is_floating_point:
        return 2
    return 0 if dtype == torch.bool else 1


def _operand(x: Tensor, value: Any) -> Tensor:
    """``value`` as a tensor to combine with ``x`` as in-place ops do: in the
    promoted dtype, which must cast back to ``x``'s (``x[i] += 0.5`` on an
    integer tensor raises)."""
    if not isinstance(value, Tensor):
        return as_value(value, x)
    work = torch.promote_types(x.dtype, value.dtype)
    if value.ndim == 0 and _kind(value.dtype) <= _kind(x.dtype):
        work = x.dtype  # a 0-d value does not widen x, as in torch.result_type
    if _kind(work) > _kind(x.dtype):
        raise RuntimeError(f"result type {work} can't be cast to the desired output type {x.dtype}")
    return value.to(dtype=work, device=x.device)


def _fill_value(dtype: torch.dtype) -> float | int | bool:
    """JAX's fill for out-of-range reads: nan, or the dtype's extreme value."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    info = torch.iinfo(dtype)
    return info.max if dtype == torch.uint8 else info.min


def _bounded(
    x: Tensor, index: Any, mode: str | None, fill: Any = 0
) -> tuple[Tensor, Any, Callable[[Tensor], Tensor]]:
    """``(x, index, finish)`` with out-of-range positions handled as ``mode`` says.

    ``"clip"`` clamps each integer position into range. ``"drop"`` redirects
    out-of-range positions to one extra slot padded onto their dimension
    (holding ``fill``); ``finish`` cuts the slots off an updated result.
    """
    if mode in (None, "promise_in_bounds"):
        return x, index, lambda out: out
    items = IndexPlan.items(x.ndim, index)
    new: list[Any] = []
    padded: set[int] = set()
    for item, dim in items:
        integer = dim is not None and not isinstance(item, slice)
        if isinstance(item, Tensor) and item.dtype == torch.bool:
            integer = False
        if not integer or dim is None or dim >= x.ndim:
            new.append(item)  # IndexPlan.of reports what does not fit
            continue
        size = x.shape[dim]
        if mode == "clip":
            if size == 0:
                new.append(item)
            elif isinstance(item, Tensor):
                new.append(item.clamp(-size, size - 1))
            else:
                new.append(max(-size, min(size - 1, int(item))))
            continue
        padded.add(dim)  # "drop" and "fill"
        if isinstance(item, Tensor):
            item = torch.where(item < 0, item + size, item)
            new.append(torch.where((item < 0) | (item >= size), size, item))
        else:
            position = int(item) + size if int(item) < 0 else int(item)
            new.append(position if 0 <= position < size else size)
    if not padded:
        return x, tuple(new), lambda out: out
    pad: list[int] = []
    for dim in reversed(range(x.ndim)):
        pad += [0, 1 if dim in padded else 0]
    shape = x.shape
    grown = F.pad(x, pad, value=fill)
    return grown, tuple(new), lambda out: out[tuple(slice(0, s) for s in shape)]


class at:  # named like jax.Array.at and array_api_extra.at
    """Functional index updates: ``at(x)[index].set(value)`` and friends.

    ``at(x, index)`` is the same as ``at(x)[index]``. Every index that
    setitem takes works. Each method returns a new tensor of ``x``'s shape,
    dtype and device; a value is cast to ``x``'s dtype, as setitem casts it
    (as JAX does).

    Duplicate positions in index tensors: ``add``, ``subtract``,
    ``multiply``, ``min`` and ``max`` apply every update (like
    ``index_put(accumulate=True)`` and ``scatter_reduce``); ``divide`` and
    ``power`` divide by, or raise to, the product of the values for a
    position, as JAX does (complex tensors: forward only, as
    ``scatter_reduce`` has no complex autograd); ``apply`` applies ``fn`` once
    per position. As in
    JAX, ``set`` with duplicates writes one of the values, and which one is
    unspecified (on CPU, today, the last).

    ``mode`` handles out-of-range positions as JAX does: ``"clip"`` clamps
    them into range, ``"drop"`` (alias ``"fill"``) ignores their updates, and
    ``get`` reads ``fill_value`` there. ``None`` and ``"promise_in_bounds"``
    raise ``IndexError``, as PyTorch does.

    >>> x = torch.arange(5.0)
    >>> at(x)[torch.tensor([1, 9])].set(-1.0, mode="drop")
    tensor([ 0., -1.,  2.,  3.,  4.])
    >>> at(x)[::2].multiply(10.0)
    tensor([ 0.,  1., 20.,  3., 40.])
    """

    _UNSET: Any = object()

    def __init__(self, x: Tensor, index: Any = _UNSET) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"at() takes a torch.Tensor, got {type(x).__name__}")
        self._x = x
        self._index = index

    def __getitem__(self, index: Any) -> at:
        if self._index is not at._UNSET:
            raise TypeError("at(x)[i][j] is not supported: index once, e.g. at(x)[i, j]")
        return at(self._x, index)

    def __repr__(self) -> str:
        if self._index is at._UNSET:
            return f"at(<tensor {list(self._x.shape)} {self._x.dtype}>)"
        return f"at(<tensor {list(self._x.shape)} {self._x.dtype}>)[{self._index!r}]"

    @property
    def index(self) -> Any:
        if self._index is at._UNSET:
            raise TypeError("index first: at(x)[index].set(value)")
        return self._index

    # -- reading ------------------------------------------------------------

    def get(self, *, mode: Mode | None = None, fill_value: Any = None) -> Tensor:
        """``x[index]``; with ``mode="drop"``/``"fill"``, ``fill_value`` at
        out-of-range positions (default: nan, or the dtype's extreme value).

        >>> at(torch.arange(3.0))[torch.tensor([0, 7])].get(mode="fill")
        tensor([0., nan])
        """
        _check_mode(mode)
        fill = _fill_value(self._x.dtype) if fill_value is None else fill_value
        x, index, _ = _bounded(self._x, self.index, mode, fill)
        return x[IndexPlan.of(x, index).index]

    # -- writing ------------------------------------------------------------

    def set(self, value: Any, *, method: str | None = None, mode: Mode | None = None) -> Tensor:
        """``y = x.clone(); y[index] = value``, out of place.

        ``method`` names the recipe in :data:`~inplace_recipes.RECIPES`; by
        default :func:`default_method` picks it.

        >>> at(torch.zeros(3))[0].set(5.0, method="where")
        tensor([5., 0., 0.])
        """
        _check_mode(mode)
        if method is not None and method not in RECIPES:
            raise ValueError(f"unknown method {method!r}; choose from {', '.join(RECIPES)}")
        x, index, finish = _bounded(self._x, self.index, mode)
        name = method or default_method(x, index, value)
        return finish(RECIPES[name](x, index, value))

    def add(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] += value``; duplicate positions add every value.

        >>> at(torch.zeros(3))[torch.tensor([2, 2])].add(torch.tensor([1.0, 2.0]))
        tensor([0., 0., 3.])
        """
        return self._update("add", value, mode)

    def subtract(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] -= value``; duplicate positions subtract every value.

        >>> at(torch.ones(2))[1].subtract(3.0)
        tensor([ 1., -2.])
        """
        return self._update("add", -_operand(self._x, value), mode)

    def multiply(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] *= value``; duplicate positions multiply by every value.

        >>> at(torch.ones(2))[torch.tensor([0, 0])].multiply(torch.tensor([2.0, 3.0]))
        tensor([6., 1.])
        """
        return self._update("multiply", value, mode)

    def divide(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] /= value``; duplicates divide by the product of their values.

        Floating and complex tensors only: true division of an integer tensor
        cannot keep its dtype (setitem raises too).

        >>> at(torch.ones(2))[0].divide(4.0)
        tensor([0.2500, 1.0000])
        """
        if not (self._x.is_floating_point() or self._x.is_complex()):
            raise RuntimeError(
                f"at[].divide: result type {torch.get_default_dtype()} can't be cast to the "
                f"desired output type {self._x.dtype}; use .apply(lambda t: t // value)"
            )
        return self._update("divide", value, mode)

    def power(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] **= value``; duplicates raise to the product of their values.

        >>> at(torch.full((2,), 3.0))[1].power(2.0)
        tensor([3., 9.])
        """
        if not (self._x.is_floating_point() or self._x.is_complex()):
            exponent = _operand(self._x, value)
            if not (exponent.is_floating_point() or exponent.is_complex()) and bool(
                (exponent < 0).any()
            ):
                raise RuntimeError("Integers to negative integer powers are not allowed.")
        return self._update("power", value, mode)

    def min(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] = torch.minimum(y[index], value)``, over every duplicate.

        >>> at(torch.zeros(2))[:].min(torch.tensor([-1.0, 1.0]))
        tensor([-1.,  0.])
        """
        if self._x.is_complex():
            raise RuntimeError("minimum not implemented for complex tensors.")
        return self._update("min", value, mode)

    def max(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] = torch.maximum(y[index], value)``, over every duplicate.

        >>> at(torch.zeros(2))[:].max(torch.tensor([-1.0, 1.0]))
        tensor([0., 1.])
        """
        if self._x.is_complex():
            raise RuntimeError("maximum not implemented for complex tensors.")
        return self._update("max", value, mode)

    def apply(self, fn: Callable[[Tensor], Tensor], *, mode: Mode | None = None) -> Tensor:
        """``y[index] = fn(y[index])``, once per position; ``fn`` is elementwise.

        >>> at(torch.tensor([4.0, 9.0]))[1].apply(torch.sqrt)
        tensor([4., 3.])
        """
        _check_mode(mode)
        x, index, finish = _bounded(self._x, self.index, mode)
        plan = IndexPlan.of(x, index)
        if plan.kind != "advanced":
            new = as_value(fn(x[plan.index]), x)
            return finish(RECIPES[default_method(x, plan.index, new)](x, plan.index, new))
        # Duplicates allowed: apply fn everywhere, keep it where the index
        # points. fn sees a detached x elsewhere, so an infinite derivative of
        # fn there cannot turn the zero gradient into nan.
        hit = plan.mask()
        inner = torch.where(hit, x, x.detach())
        return finish(torch.where(hit, as_value(fn(inner), x), x))

    def _update(self, op: Op, value: Any, mode: Mode | None) -> Tensor:
        _check_mode(mode)
        x, index, finish = _bounded(self._x, self.index, mode)
        plan = IndexPlan.of(x, index)
        v = plan.fit(_operand(x, value))
        # scatter_reduce has no complex autograd (torch 2.13): without
        # duplicates, complex products take the read-combine-write path too.
        products = op in ("multiply", "divide", "power") and x.is_complex()
        if plan.kind != "advanced" or (products and not plan.has_duplicates()):
            # no duplicates: read, combine, write back
            new = _COMBINE[op](x[plan.index], v)
            return finish(RECIPES[default_method(x, plan.index, new)](x, plan.index, new))
        flat = x.reshape(-1).to(v.dtype)
        positions = plan.flat_positions().reshape(-1)
        source = v.reshape(-1)
        if op == "add":
            out = flat.index_put((positions,), source, accumulate=True)
        elif op in _REDUCE:
            out = flat.scatter_reduce(0, positions, source, _REDUCE[op], include_self=True)
        else:  # divide, power: by the product of every value for a position (JAX)
            factor = torch.ones_like(flat).scatter_reduce(0, positions, source, "prod")
            out = _COMBINE[op](flat, factor)
        return finish(out.view(x.shape).to(x.dtype))
