"""A functional index update, ``at(x)[index].set(value)``, modelled on JAX's ``x.at[]``.

The rule: **exact, or a clear error.** Each method gives what plain torch
gives for ``y = x.clone()`` followed by the in-place statement below (value,
dtype, gradient to ``x`` and to the value, in reverse and forward mode), or
raises an error that names the problem. It returns a new tensor and never
changes ``x``.

============================  ===========================================
``at(x)[idx].set(v)``         ``y = x.clone(); y[idx] = v``
``at(x)[idx].add(v)``         ``y[idx] += v`` (every duplicate adds)
``at(x)[idx].subtract(v)``    ``y[idx] -= v``
``at(x)[idx].multiply(v)``    ``y[idx] *= v``
``at(x)[idx].divide(v)``      ``y[idx] /= v``
``at(x)[idx].power(v)``       ``y[idx] **= v``
``at(x)[idx].min(v)``         ``y[idx] = torch.minimum(y[idx], v)``
``at(x)[idx].max(v)``         ``y[idx] = torch.maximum(y[idx], v)``
``at(x)[idx].apply(fn)``      ``y[idx] = fn(x[idx])``
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
from torch import Tensor

from ._indexing import IndexPlan, as_value
from ._pick import best_recipe, quick_recipe
from .recipes import RECIPES
from .recipes._checks import refuse_other_dtype

__all__ = ["MODES", "Mode", "at"]

#: Out-of-range index handling, as in JAX; ``None`` raises ``IndexError`` as PyTorch does.
Mode = Literal["promise_in_bounds", "clip", "drop", "fill"]
MODES: tuple[str, ...] = get_args(Mode)

Op = Literal["add", "subtract", "multiply", "divide", "power", "min", "max"]
_COMBINE: dict[str, Callable[[Tensor, Any], Tensor]] = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": torch.minimum,
    "max": torch.maximum,
}
_REDUCE = {"min": "amin", "max": "amax"}
_current_level = torch._C._functorch.maybe_current_level
_is_batched = torch._C._functorch.is_batchedtensor


def _check_mode(mode: str | None) -> None:
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))} or None, got {mode!r}")


def _check_writable(x: Tensor) -> None:
    """Refuse sparse and other non-strided tensors as setitem does."""
    if x.layout != torch.strided:
        raise RuntimeError(f"Cannot assign to a sparse tensor (layout {x.layout})")


def _fill_value(dtype: torch.dtype) -> float | int | bool:
    """JAX's fill for out-of-range reads: nan for inexact dtypes, True for
    bool, the largest value for unsigned integers, the smallest for signed.

    >>> [_fill_value(d) for d in (torch.uint32, torch.int8)]
    [4294967295, -128]
    """
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    info = torch.iinfo(dtype)
    return info.max if info.min == 0 else info.min


def _bounded(
    x: Tensor, index: Any, mode: str | None, fill: Any = 0
) -> tuple[Tensor, Any, Callable[[Tensor], Tensor]]:
    """``(x, index, finish)`` with out-of-range positions handled as ``mode`` says.

    ``"clip"`` clamps each integer position into range. ``"drop"`` redirects
    out-of-range positions to one extra slot padded onto their dimension
    (holding ``fill``); ``finish`` cuts the slots off an updated result.
    The items and the dimension each indexes come from :meth:`IndexPlan.items`.
    """
    if mode in (None, "promise_in_bounds"):
        return x, index, lambda out: out
    new: list[Any] = []
    padded: list[int] = []
    for item, dim in IndexPlan.items(x.ndim, index):
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
        padded.append(dim)  # "drop" and "fill"
        if isinstance(item, Tensor):
            item = torch.where(item < 0, item + size, item)
            new.append(torch.where((item < 0) | (item >= size), size, item))
        else:
            position = int(item) + size if int(item) < 0 else int(item)
            new.append(position if 0 <= position < size else size)
    if not padded:
        return x, tuple(new), lambda out: out
    shape, grown = x.shape, x
    for dim in sorted(set(padded)):  # torch.cat, not F.pad: F.pad turns uint64's max into 0
        slot = list(grown.shape)
        slot[dim] = 1
        grown = torch.cat([grown, torch.full(slot, fill, dtype=x.dtype, device=x.device)], dim)
    return grown, tuple(new), lambda out: out[tuple(slice(0, s) for s in shape)]


def _index_tensors_batched(plan: IndexPlan) -> bool:
    """Whether an index tensor is batched by ``vmap`` (then no data-dependent check works)."""
    return any(isinstance(i, Tensor) and _is_batched(i) for i in plan.index)


def _occurrence(positions: Tensor) -> Tensor:
    """For each position, how many equal positions come before it (0 for the first).

    >>> _occurrence(torch.tensor([3, 1, 3, 3]))
    tensor([0, 0, 1, 2])
    """
    ordered, order = torch.sort(positions, stable=True)
    rank = torch.arange(positions.numel(), device=positions.device)
    rank = rank - torch.searchsorted(ordered, ordered)
    return torch.empty_like(rank).scatter(0, order, rank)


def _kind(dtype: torch.dtype) -> int:
    """bool < integer < floating < complex: ``torch.can_cast`` is ``_kind(a) <=
    _kind(b)``, written out because torch.compile cannot trace ``can_cast``."""
    if dtype.is_complex:
        return 3
    if dtype.is_floating_point:
        return 2
    return 0 if dtype == torch.bool else 1


def _cannot_cast(result: torch.dtype, target: torch.dtype) -> RuntimeError:
    """Torch's own error for an in-place op whose result type does not cast back."""
    try:
        torch.empty(0, dtype=target).add_(torch.empty(0, dtype=result))
    except RuntimeError as exc:
        return exc
    return RuntimeError(f"result type {result} can't be cast to the desired output type {target}")


def _refuse_result_dtype(x: Tensor, index: Any, plan: IndexPlan, op: Op, value: Tensor) -> None:
    """Raise where ``y[index] = torch.minimum(x[index], value)`` (or ``maximum``)
    raises: setitem refuses a result of another dtype than ``x``'s with index
    tensors (see :func:`~inplace_recipes.recipes.refuse_other_dtype`).

    >>> at(torch.zeros(3))[[0, 2]].min(torch.tensor([-1.0, 5.0], dtype=torch.float64))
    Traceback (most recent call last):
        ...
    RuntimeError: Index put requires the source and destination dtypes match, ...
    """
    work = _result_dtype(op, x.dtype, len(plan.result_shape) > 0, value)
    if work is not x.dtype:
        result = torch.empty(plan.result_shape, dtype=work, device=x.device)
        refuse_other_dtype(
            x, index, plan, result + torch.empty(value.shape, dtype=work, device=x.device)
        )


def _result_dtype(op: Op, dtype: torch.dtype, shaped: bool, value: Any) -> torch.dtype:
    """The dtype torch's own ``op`` gives for ``x[index]`` (of ``dtype``, 0-d
    unless ``shaped``) and ``value``, found by running it on a one-element
    sample (so that torch's own checks on the operands raise, with its message).

    >>> _result_dtype("divide", torch.int64, True, 1)
    torch.float32
    """
    sample = torch.ones((1,) if shaped else (), dtype=dtype)
    if isinstance(value, Tensor):
        value = torch.ones((1,) if value.ndim else (), dtype=value.dtype)
    return _COMBINE[op](sample, value).dtype


class at:  # named like jax.Array.at and array_api_extra.at
    """Functional index updates: ``at(x)[index].set(value)`` and friends.

    Exact, or a clear error: each method equals ``y = x.clone()`` then the
    in-place statement of the module table, in value, dtype and gradients
    (``backward``, ``torch.func.grad``/``jvp``/``jacfwd``/``hessian``,
    ``vmap``), or raises. ``at(x, index)`` is the same as ``at(x)[index]``.
    The index is whatever setitem takes, understood by
    :class:`~inplace_recipes._indexing.IndexPlan`.

    Types follow torch's in-place promotion: ``set``, ``min`` and ``max``
    cast the value to ``x``'s dtype where setitem casts it, and raise where
    it raises (a tensor of another dtype with index tensors, or through a
    mask with more than one element); the arithmetic methods
    raise torch's "result type Float can't be cast to the desired output
    type Long" where ``y[idx] *= 2.5`` raises it.

    Duplicate positions in index tensors: ``add``, ``subtract``,
    ``multiply``, ``divide``, ``power``, ``min`` and ``max`` apply every
    update, in index order, as NumPy's ``ufunc.at`` does; ``apply`` writes
    each position once; ``set`` writes one of the values, unspecified which
    (as JAX documents; on CPU today the last), with setitem's gradients.

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

    __slots__ = ("_index", "_x")
    _UNSET: Any = object()

    def __init__(self, x: Tensor, index: Any = _UNSET) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"at() takes a torch.Tensor, got {type(x).__name__}")
        self._x = x
        self._index = index

    def __getitem__(self, index: Any) -> at:
        if self._index is not at._UNSET:
            raise TypeError("at(x)[i][j] is not supported: index once, e.g. at(x)[i, j]")
        indexed = object.__new__(at)  # x was checked once already
        indexed._x, indexed._index = self._x, index
        return indexed

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
        out-of-range positions (default as JAX: nan, or for integers the
        dtype's largest value if unsigned and smallest if signed).

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
        default :func:`~inplace_recipes.best_recipe` picks it (inside ``torch.func``
        transforms too).

        >>> at(torch.zeros(3))[0].set(5.0, method="where")
        tensor([5., 0., 0.])
        """
        index = self._index
        if method is None and mode is None and index is not at._UNSET and _current_level() is None:
            x = self._x  # the common call, with nothing to check or bound
            name = quick_recipe(index, value) or best_recipe(x, index, value)
            return RECIPES[name](x, index, value)
        _check_mode(mode)
        _check_writable(self._x)
        if method is not None and method not in RECIPES:
            raise ValueError(f"unknown method {method!r}; choose from {', '.join(RECIPES)}")
        x, index, finish = _bounded(self._x, self.index, mode)
        name = method or best_recipe(x, index, value)
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
        return self._update("subtract", value, mode)

    def multiply(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] *= value``; duplicate positions multiply by every value.

        An integer tensor times a float raises, as ``y[index] *= 2.5`` does:

        >>> at(torch.ones(2))[torch.tensor([0, 0])].multiply(torch.tensor([2.0, 3.0]))
        tensor([6., 1.])
        >>> at(torch.arange(3))[0].multiply(2.5)
        Traceback (most recent call last):
            ...
        RuntimeError: result type Float can't be cast to the desired output type Long
        """
        return self._update("multiply", value, mode)

    def divide(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] /= value``; duplicates divide by every value in turn.

        True division of an integer tensor raises, as setitem does.

        >>> at(torch.ones(2))[0].divide(4.0)
        tensor([0.2500, 1.0000])
        """
        return self._update("divide", value, mode)

    def power(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] **= value``; duplicates raise to every value in turn.

        >>> at(torch.full((2,), 3.0))[1].power(2.0)
        tensor([3., 9.])
        """
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
        """``y[index] = fn(x[index])``, for every kind of index.

        ``fn`` receives a copy of the selected elements, shaped like
        ``x[index]`` (so an in-place ``fn`` such as ``torch.relu_`` cannot
        change ``x``), and its result must broadcast to that shape. A position
        that the index names twice is written once, from its first occurrence
        (any elementwise ``fn`` gives the same value for both), and its
        gradient counts once.

        >>> at(torch.tensor([4.0, 9.0]))[1].apply(torch.sqrt)
        tensor([4., 3.])
        >>> at(torch.tensor([1.0, 2.0, 3.0]))[1:].apply(torch.sum)  # not elementwise
        tensor([1., 5., 5.])
        """
        _check_mode(mode)
        _check_writable(self._x)
        x, index, finish = _bounded(self._x, self.index, mode)
        plan = IndexPlan.of(x, index)
        selected = x[plan.index]
        if plan.kind == "basic":
            selected = selected.clone()  # a view: an in-place fn would write into x
        out = fn(selected)
        if not isinstance(out, Tensor):
            raise TypeError(f"at[].apply: fn must return a torch.Tensor, got {type(out).__name__}")
        new = plan.fit(as_value(out, x))
        if plan.kind != "advanced":
            return finish(RECIPES[best_recipe(x, plan.index, new)](x, plan.index, new))
        positions = plan.flat_positions().reshape(-1)
        first = _occurrence(positions) == 0
        # Later occurrences go to one extra slot, cut off at the end.
        flat = torch.cat([x.reshape(-1), x.new_zeros(1)])
        written = torch.where(first, positions, x.numel())
        flat = flat.index_put((written,), new.reshape(-1))
        return finish(flat[: x.numel()].view(x.shape))

    # -- the arithmetic updates -----------------------------------------------

    def _update(self, op: Op, value: Any, mode: Mode | None) -> Tensor:
        _check_mode(mode)
        _check_writable(self._x)
        x, index, finish = _bounded(self._x, self.index, mode)
        plan = IndexPlan.of(x, index)
        if isinstance(value, Tensor) and value.device != x.device:
            value = value.to(x.device)
        if op in _REDUCE:  # no in-place form: the value is cast to x's dtype, as setitem casts
            if isinstance(value, Tensor):  # ... where setitem casts the result of minimum/maximum
                _refuse_result_dtype(x, index, plan, op, value)
            value = as_value(value, x)
        if plan.kind != "advanced":
            return finish(self._combine_and_write(x, plan, op, value))
        return finish(self._update_positions(x, plan, op, value))

    @staticmethod
    def _combine_and_write(x: Tensor, plan: IndexPlan, op: Op, value: Any) -> Tensor:
        """Read ``x[index]``, combine with torch's own op, check the cast back, write."""
        new = _COMBINE[op](x[plan.index], value)
        if _kind(new.dtype) > _kind(x.dtype):
            raise _cannot_cast(new.dtype, x.dtype)
        new = plan.fit(new).to(x.dtype)
        return RECIPES[best_recipe(x, plan.index, new)](x, plan.index, new)

    @staticmethod
    def _update_positions(x: Tensor, plan: IndexPlan, op: Op, value: Any) -> Tensor:
        """Index tensors: every update applies, duplicates included.

        ``add``/``subtract`` accumulate with ``index_put``. The others
        (``multiply``, ``divide``, ``power``, ``min``, ``max``) run in rounds,
        one per occurrence of a position, each a gather, torch's own op and an
        ``index_put``, so each occurrence is ``y[p] = op(y[p], v)`` in every
        mode: torch 2.13's ``scatter_reduce(reduce="prod")`` drops the
        forward-mode tangent, and ``scatter_reduce(reduce="amax")`` shares the
        gradient of a tie equally among every tied entry (as JAX does), where
        ``torch.maximum`` applied once per occurrence halves it at each step.
        """
        positions = plan.flat_positions().reshape(-1)
        work = _result_dtype(op, x.dtype, len(plan.result_shape) > 0, value)
        if _kind(work) > _kind(x.dtype):
            raise _cannot_cast(work, x.dtype)
        if isinstance(value, Tensor):
            v = value.to(work)
        else:
            v = torch.tensor(value, dtype=work, device=x.device)
        source = plan.fit(v).reshape(-1)
        flat = x.reshape(-1).to(work)
        if op in ("add", "subtract"):
            if op == "subtract":
                source = -source
            out = flat.index_put((positions,), source, accumulate=True)
        else:
            # a Python number stays one, as in torch's own `y[i] **= 2` (bool ** True)
            step = source if isinstance(value, Tensor) else value
            out = _in_rounds(flat, positions, step, op, plan)
        return out.view(x.shape).to(x.dtype)


def _in_rounds(
    flat: Tensor, positions: Tensor, source: Tensor | complex, op: Op, plan: IndexPlan
) -> Tensor:
    """``flat[p] = op(flat[p], s)`` for every ``(p, s)`` in order, one round per
    occurrence: round k takes each position's k-th update. Updates outside the
    round go to an extra slot (their value 1, or the number ``source``), cut
    off at the end: nothing there reaches x or the value."""
    occurrence = _occurrence(positions)
    if torch.compiler.is_compiling() or _index_tensors_batched(plan):
        rounds = positions.numel()  # no data-dependent count under vmap or compile
    else:
        rounds = int(occurrence.max()) + 1 if positions.numel() else 0
    n = flat.numel()
    one = torch.ones(1, dtype=flat.dtype, device=flat.device)
    grown = torch.cat([flat, one])
    for k in range(rounds):
        this = occurrence == k
        where_ = torch.where(this, positions, n)
        step = torch.where(this, source, one) if isinstance(source, Tensor) else source
        grown = grown.index_put((where_,), _COMBINE[op](grown[where_], step))
    return grown[:n]
