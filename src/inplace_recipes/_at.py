"""A functional index update, ``at(x)[index].set(value)``, modelled on JAX's ``x.at[]``.

The rule: **exact, or a clear error.** Each method gives what plain torch
gives for ``y = x.clone()`` followed by the in-place statement below (value,
dtype, type, gradient to ``x`` and to the value, in reverse and forward mode),
or raises torch's error (its class, or a subclass) or one that names the
problem, with one exception: ``set(value, method="mask")`` writes with the
mask blend and keeps its documented pitfall (see :class:`at`). It returns a
new tensor and never changes ``x``.

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
from typing import Any, Literal, cast, get_args

import torch
from torch import Tensor
from torch.fx.experimental.symbolic_shapes import guard_or_true

from ._indexing import IndexPlan
from ._pick import best_recipe, quick_recipe
from .recipes import RECIPES
from .recipes._value import number_error, setitem_value

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
_IN_PLACE = {
    "add": "add_",
    "subtract": "sub_",
    "multiply": "mul_",
    "divide": "div_",
    "power": "pow_",
}
_DISABLED = torch._C._disabled_torch_function_impl
_current_level = torch._C._functorch.maybe_current_level
_is_batched = torch._C._functorch.is_batchedtensor
_level_of = torch._C._functorch.maybe_get_level


def _check_mode(mode: str | None) -> None:
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))} or None, got {mode!r}")


def _check_writable(x: Tensor) -> None:
    """Refuse sparse and other non-strided tensors as setitem does (its ``TypeError``)."""
    if x.layout != torch.strided:
        raise TypeError("Cannot assign to a sparse tensor")


def _statement_error(op: Op, x: Tensor, index: Any, value: Any) -> Exception:
    """The error torch's own ``y[index] op= value`` raises for a sparse (or other
    non-strided) ``x``, found by running it on a detached clone: a sparse
    tensor's indexing raises ``NotImplementedError`` (``aten::index.Tensor``,
    ``aten::as_strided`` from SparseCPU), its in-place ops others, and
    setitem into it ``TypeError``, depending on the index and the op."""
    y = x.detach().clone()
    v = value.detach() if isinstance(value, Tensor) else value
    try:
        if op in _REDUCE:
            y[index] = _COMBINE[op](y[index], _other(v, y))
        else:
            part = y[index]
            getattr(part, _IN_PLACE[op])(v)
            y[index] = part
    except Exception as error:  # noqa: BLE001 - torch's error is the answer
        return error
    return TypeError("Cannot assign to a sparse tensor")


def _other(value: Any, like: Tensor) -> Any:
    """The value as ``torch.minimum``/``maximum`` take it: a Python number as
    ``torch.tensor(value)`` (a 0-d tensor, which promotes as the number would)."""
    return value if isinstance(value, Tensor) else torch.tensor(value, device=like.device)


def _operand(value: Any) -> Any:
    """``value`` as torch's in-place op takes it, a ``__torch_function__`` subclass
    unwrapped (setitem keeps ``x``'s type, an op would take the value's)."""
    tp = type(value)
    if tp is not Tensor and isinstance(value, Tensor) and tp.__torch_function__ is not _DISABLED:
        return value.as_subclass(Tensor)
    return value


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
    if mode in (None, "promise_in_bounds") or index is True or index is False:
        # (a lone bool has no position to bound, and as a tuple's item it would mean another
        # write: ``y[False] = v`` writes nothing, ``y[(False,)] = v`` an empty selection)
        return x, index, lambda out: out
    new: list[Any] = []
    padded: list[int] = []
    changed = False
    for given, item, dim in IndexPlan.items(x.ndim, index):
        integer = dim is not None and not isinstance(item, slice)
        if isinstance(item, Tensor) and item.dtype == torch.bool:
            integer = False
        if not integer or dim is None or dim >= x.ndim:
            # as given, so that it means what it meant: a uint8 mask stays one (setitem
            # refuses it with a number), a 0-d NumPy bool counts one dimension for ``...``
            new.append(given)  # (IndexPlan.of reports what does not fit)
            continue
        size = x.shape[dim]
        if not isinstance(item, Tensor) and -size <= int(item) < size:
            new.append(given)  # an int in range: nothing to bound, no slot to pad
            continue
        changed = True
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
    if not changed:
        return x, index, lambda out: out  # (a tuple of one mask is read as another kind)
    if not padded:
        return x, tuple(new), lambda out: out
    shape, grown = x.shape, x
    for dim in sorted(set(padded)):  # torch.cat, not F.pad: F.pad turns uint64's max into 0
        slot = list(grown.shape)
        slot[dim] = 1
        grown = torch.cat([grown, torch.full(slot, fill, dtype=x.dtype, device=x.device)], dim)
    # (contiguous, as the write without a mode returns it: not a view of the padded copy)
    return grown, tuple(new), lambda out: out[tuple(slice(0, s) for s in shape)].contiguous()


def _slots(grown: Tensor, shape: torch.Size) -> Tensor | None:
    """Where :func:`_bounded` padded ``grown`` (the slots that take the updates ``"drop"``
    and ``"fill"`` drop), as a bool tensor of its shape; ``None`` where it padded nothing.

    >>> _slots(torch.zeros(4, 2), torch.Size([3, 2]))
    tensor([[False, False],
            [False, False],
            [False, False],
            [ True,  True]])
    """
    if grown.shape == shape:
        return None
    slots = torch.ones(grown.shape, dtype=torch.bool, device=grown.device)
    slots[tuple(slice(0, s) for s in shape)] = False
    return slots


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
    elif op in _REDUCE:
        value = torch.tensor(value)
    return _COMBINE[op](sample, value).dtype


def _opmath(dtype: torch.dtype) -> torch.dtype:
    """The dtype torch's CPU kernels compute ``dtype`` in (float32 for float16 and
    bfloat16), which is where they read a 0-d operand."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _check_in_place_shape(part: Tensor, new: Tensor) -> None:
    """Raise torch's error where ``part op= value`` cannot keep ``part``'s shape:
    the value may broadcast to it, never grow it (``y[1] += torch.ones(1, 4)``
    into a row of 4). Sizes that ``torch.compile`` knows only at run time pass."""
    if len(new.shape) != len(part.shape) or not all(
        guard_or_true(a == b) for a, b in zip(part.shape, new.shape, strict=True)
    ):
        raise RuntimeError(
            f"output with shape {list(part.shape)} doesn't match the broadcast shape "
            f"{list(new.shape)}"
        )


def _check_traced_sizes(part: Tensor, value: Any) -> None:
    """While ``torch.compile`` traces, tell it that ``value``'s sizes equal those
    of ``part`` (``x[mask]``, whose length it knows only at run time) where they
    must for ``part op= value``, with ``torch._check``: no Python comparison that
    Dynamo must guard on."""
    if not (isinstance(value, Tensor) and torch.compiler.is_compiling()):
        return
    for s, t in zip(reversed(part.shape), reversed(value.shape), strict=False):
        if t != 1:
            torch._check(s == t, lambda: "value cannot be broadcast to x[index]")  # type: ignore[no-untyped-call]


class at:  # named like jax.Array.at and array_api_extra.at
    """Functional index updates: ``at(x)[index].set(value)`` and friends.

    Exact, or a clear error: each method equals ``y = x.clone()`` then the
    in-place statement of the module table, in value, dtype, type and
    gradients (``backward``, ``torch.func.grad``/``jvp``/``jacfwd``/``hessian``,
    ``vmap``, ``torch.compile``), on every device (the meta device included),
    or raises torch's error. ``at(x, index)`` is the same as ``at(x)[index]``.
    The index is whatever setitem takes, understood by
    :class:`~inplace_recipes._indexing.IndexPlan`.

    Types follow torch's in-place ops: the value goes to torch's own op as
    given (a Python number stays a number, a 0-d tensor a scalar of its own
    precision, ``add`` and ``subtract`` multiply it by their ``alpha``), and
    the result is cast back as the in-place op casts it, or the op raises
    (``result type Float can't be cast to the desired output type Long``
    where ``y[idx] *= 2.5`` raises it, ``output with shape [4] doesn't match
    the broadcast shape [1, 4]`` where the value would grow ``y[idx]``).
    ``set`` casts the value as setitem casts it for the index
    (:mod:`~inplace_recipes.recipes._value`: ``copy_`` for ints and slices,
    an overflow check for one element through a mask, equal dtypes for index
    tensors); ``min`` and ``max`` compare first, in the promoted dtype, then
    hand their result to the same rule, as ``y[idx] = torch.minimum(y[idx],
    v)`` does (a Python number as ``torch.tensor(v)``):

    >>> at(torch.tensor([1, 2, 3], dtype=torch.uint8))[1].min(-3.0)  # -3.0, then copy_'s cast
    tensor([  1, 253,   3], dtype=torch.uint8)
    >>> at(torch.zeros(3, 4))[1].add(torch.ones(1, 4))
    Traceback (most recent call last):
        ...
    RuntimeError: output with shape [4] doesn't match the broadcast shape [1, 4]

    The one exception to the rule is the recipe it is asked to use:
    ``set(value, method="mask")`` writes with the classic mask blend, whose
    documented pitfall (its record's ``not_exact``) it keeps: a value that is
    not finite in x's dtype (an infinity, a nan, or a number past that dtype's
    range) makes every unwritten element it is laid over nan (in a complex x,
    the written ones too), a non-finite element of x at a written position
    becomes nan, and a written -0.0 comes out as 0.0. By default ``set``
    never picks it.

    >>> at(torch.zeros(3, dtype=torch.float16))[0].set(1e5, method="mask")  # past float16's range
    tensor([inf, nan, nan], dtype=torch.float16)
    >>> at(torch.zeros(2, dtype=torch.complex64))[0].set(float("inf"), method="mask")
    tensor([nan+nanj, nan+nanj])

    >>> at(torch.zeros(3))[0].set(float("inf"), method="mask")
    tensor([inf, nan, nan])
    >>> at(torch.zeros(3))[0].set(float("inf"))
    tensor([inf, 0., 0.])

    Under ``vmap`` a mask that is batched cannot be read (each example's
    ``x[mask]`` has its own length): the ops then run over all of ``x`` and
    ``torch.where`` keeps the written positions.

    Duplicate positions in index tensors: ``add``, ``subtract``,
    ``multiply``, ``divide``, ``power``, ``min`` and ``max`` apply every
    update, in index order, as NumPy's ``ufunc.at`` does; ``apply`` writes
    each position once; ``set`` writes one of the values, unspecified which
    (as JAX documents; on CPU today the last), with setitem's gradients.
    Each occurrence is the statement ``y[p] = op(y[p], s)`` run once, in
    index order, in value, gradients and tangents, non-finite steps
    included: a step is never merged with another (``x / (s1 * s2)``,
    ``x ** (s1 * s2)``), so an ``inf`` or ``nan`` one step makes reaches
    the next steps and the derivatives as that chain of statements gives
    them:

    >>> at(torch.tensor([-4.0]))[torch.tensor([0, 0])].power(torch.tensor([0.5, 2.0]))
    tensor([nan])
    >>> x, v = torch.tensor([3.0], requires_grad=True), torch.tensor([0.0, 2.0], requires_grad=True)
    >>> torch.autograd.grad(at(x)[torch.tensor([0, 0])].divide(v).sum(), (x, v))
    (tensor([inf]), tensor([-inf, -inf]))

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
            try:
                name = quick_recipe(index, value) or best_recipe(x, index, value)
            except Exception:
                error = number_error(x, value)  # a number's error comes first, as in setitem
                if error is None:
                    raise
                raise error from None
            return RECIPES[name](x, index, value)
        _check_mode(mode)
        _check_writable(self._x)
        if method is not None and method not in RECIPES:
            raise ValueError(f"unknown method {method!r}; choose from {', '.join(RECIPES)}")
        x, index, finish = _bounded(self._x, self.index, mode)
        try:
            name = method or best_recipe(x, index, value)
        except Exception:
            error = number_error(x, value)  # a number's error comes first, as in setitem
            if error is None:
                raise
            raise error from None
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

        Forward mode is torch's own, torch 2.13's difference included: for a
        complex ``x`` and a real exponent tensor, ``pow``'s tangent takes the
        exponent's contribution ``x ** v * log(x) * dv`` as real, so its
        imaginary part is dropped (finite differences give ``0.0233+1.0206j``
        here); reverse mode is right.

        >>> x, v = torch.tensor([1 + 1j]), torch.tensor([0.5], dtype=torch.float64)
        >>> tangents = (torch.zeros_like(x), torch.ones_like(v))
        >>> torch.func.jvp(lambda a, b: at(a)[torch.tensor([0])].power(b), (x, v), tangents)[1]
        tensor([0.0233-0.j])
        >>> (((x + 0j) ** (v + 1e-6) - (x + 0j) ** (v - 1e-6)) / 2e-6).to(torch.complex64)
        tensor([0.0233+1.0206j])
        """
        return self._update("power", value, mode)

    def min(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] = torch.minimum(y[index], value)``, over every duplicate.

        >>> at(torch.zeros(2))[:].min(torch.tensor([-1.0, 1.0]))
        tensor([-1.,  0.])
        """
        return self._update("min", value, mode)

    def max(self, value: Any, *, mode: Mode | None = None) -> Tensor:
        """``y[index] = torch.maximum(y[index], value)``, over every duplicate.

        >>> at(torch.zeros(2))[:].max(torch.tensor([-1.0, 1.0]))
        tensor([0., 1.])
        """
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
        if self.index is False:
            return finish(x.clone())  # setitem writes nothing: fn's result leaves the graph
        if plan.kind != "advanced":
            return finish(RECIPES[best_recipe(x, index, out)](x, index, out))  # index as given
        new = plan.fit(cast(Tensor, setitem_value(x, index, plan, out)))
        positions = plan.flat_positions().reshape(-1)
        first = _occurrence(positions) == 0
        # Later occurrences go to one extra slot, cut off at the end.
        flat = torch.cat([x.reshape(-1), x.new_zeros(1)])
        written = torch.where(first, positions, x.numel())
        flat = flat.index_put((written,), new.reshape(-1))
        return finish(flat[: x.numel()].view(x.shape))

    # -- the arithmetic updates -----------------------------------------------

    def _update(self, op: Op, value: Any, mode: Mode | None) -> Tensor:
        """``y = x.clone()`` then ``op``'s statement (the module table), out of place.

        The value goes to torch's own op as given (a Python number stays a
        number, a 0-d tensor a scalar of its own precision), and the result is
        cast back as the in-place op casts it (its "result type ... can't be
        cast" and shape errors included); ``min`` and ``max`` hand their result
        to setitem's rule for the value, as ``y[i] = torch.minimum(y[i], v)``
        does (:func:`~inplace_recipes.recipes._value.setitem_value`).
        """
        _check_mode(mode)
        if self._x.layout is not torch.strided:
            raise _statement_error(op, self._x, self.index, value)
        x, index, finish = _bounded(self._x, self.index, mode)
        plan = IndexPlan.of(x, index)
        value = _operand(value)
        if self.index is False:
            # setitem writes nothing for a lone False: torch's op on the empty y[False]
            # gives its errors, and its result leaves the graph with the value
            _in_place(op, x.detach()[False].clone(), value)
            return finish(x.clone())
        # a dropped update's value is 1 there, so that its derivative at the slot (for
        # ``0 ** v`` or ``0 / v``, inf or nan) cannot reach the value's gradient
        slots = _slots(x, self._x.shape)
        if plan.kind == "advanced":
            return finish(_update_positions(x, index, plan, op, value, slots))
        if plan.mask_batched():
            return finish(_update_batched_mask(x, plan, op, value))
        if slots is not None and isinstance(value, Tensor):
            # ints and slices: all of x[index] is in a slot, or none of it (a 0-d condition
            # keeps the value's shape, and so the dtype torch computes in)
            value = torch.where(slots[plan.index].any(), value.new_ones(()), value)
        return finish(_update_part(x, index, plan, op, value))


def _update_part(x: Tensor, index: Any, plan: IndexPlan, op: Op, value: Any) -> Tensor:
    """Ints and slices, or a mask: torch's op on ``x[index]`` (:func:`_in_place`), then a write.

    For ints and slices the write is the recipe :func:`~inplace_recipes.best_recipe`
    picks; for a mask, ``x.index_put((mask,), new)``, setitem's own kernel for
    ``y[mask] = new``, whose sizes torch checks (so that ``torch.compile`` needs
    no Python comparison of ``x[mask]``'s length).
    """
    part = x[plan.index]
    if plan.kind == "basic" and op not in _REDUCE:
        part = part.clone()  # a view of x: the op runs on a copy
    _check_traced_sizes(part, value)
    new = _in_place(op, part, value)
    if plan.kind == "basic" or not x.ndim:  # (a 0-d mask of a 0-d x: index_put takes none)
        return RECIPES[best_recipe(x, plan.index, new)](x, plan.index, new)
    while new.ndim > part.ndim and new.shape[0] == 1:  # setitem drops leading 1s
        new = new.squeeze(0)
    written = setitem_value(x, index, plan, new)  # min/max: setitem's cast, or its error
    return x.index_put(plan.index, cast(Tensor, written))


def _in_place(op: Op, part: Tensor, value: Any) -> Tensor:
    """``part op= value`` as torch computes it (``part`` is a copy, not a view of
    ``x``): torch's in-place op itself, with its casts, checks and errors (and
    its rules for operands on another device); ``min`` and ``max``,
    ``torch.minimum(part, value)``. Inside ``torch.func`` transforms, the
    in-place op where ``part`` is of the innermost grad or jvp level; else the
    out-of-place op, checked and cast as the in-place one (vmap refuses an
    in-place op whose operand is batched and ``part`` is not, and has no
    batching rule for ``pow_``; grad transforms refuse one that writes a
    captured tensor)."""
    if op in _REDUCE:
        return _COMBINE[op](part, _other(value, part))
    level = _current_level()
    if level is None or (_level_of(part) == level and not _is_batched(part)):
        # (inside grad or jvp, where part is of its innermost level: torch's in-place op
        # works there, and its forward rule reads the rounded result, as `y[0] /= v` does)
        return getattr(part, _IN_PLACE[op])(value)  # type: ignore[no-any-return]
    if _scalar_in_opmath(op, part, value):
        # a batched 0-d value of higher precision: vmap's rule rounds it to part's dtype
        # first, where the kernel reads a scalar in the dtype it computes in
        result = torch.result_type(part, value)
        compute = _opmath(result)
        new = _COMBINE[op](part.to(compute), value.to(compute)).to(result)
    else:
        new = _COMBINE[op](part, value)
    if _kind(new.dtype) > _kind(part.dtype):
        raise _cannot_cast(new.dtype, part.dtype)
    _check_in_place_shape(part, new)
    return new.to(part.dtype)


def _scalar_in_opmath(op: Op, part: Tensor, value: Any) -> bool:
    """Whether ``part op value`` under ``vmap`` must read ``value`` as the kernel reads a
    scalar: a batched 0-d value of another dtype than the float16 or bfloat16 result it
    joins (``y[1:] *= v`` on bfloat16 ``y`` with a float32 ``v`` per example). Torch
    2.13's CPU kernels for ``mul`` and ``div`` read such a scalar in float32; ``add`` and
    ``sub`` round it to the result's dtype first, as vmap's rule does."""
    return (
        op in ("multiply", "divide")
        and isinstance(value, Tensor)
        and value.ndim == 0
        and _is_batched(value)
        and value.dtype is not part.dtype
        and torch.result_type(part, value) in (torch.float16, torch.bfloat16)
    )


def _update_batched_mask(x: Tensor, plan: IndexPlan, op: Op, value: Any) -> Tensor:
    """A mask that ``vmap`` batches, where ``x[mask]`` has no shape: torch's op
    over all of ``x``, then ``torch.where``. So that no derivative at an
    unwritten position is infinite (``0 * inf`` is nan), the operand there is
    the op's identity, 1: the value is laid over the written positions (a
    Python number or 0-d tensor read in the dtype torch's kernels compute in,
    :func:`_opmath`, as they read a scalar operand), or for ``power`` with a
    scalar exponent the base is 1 there and the exponent goes to torch's
    kernel as it is (torch's special cases for ``0.5`` and ``2`` included).
    """
    mask = plan.mask()
    scalar = not (isinstance(value, Tensor) and value.ndim)
    if op == "power" and scalar:
        new = torch.pow(torch.where(mask, x, x.new_ones(())), value)
    else:
        if op in _REDUCE:
            operand: Tensor = _other(value, x)
        elif scalar:  # a scalar operand, read as torch's kernels read it
            compute = _opmath(torch.result_type(x.reshape(-1)[:1], value))
            operand = _exact_tensor(value, x.device).to(compute)
        else:
            operand = value
        spread = plan.spread(operand) if operand.ndim else operand
        new = _COMBINE[op](
            x, torch.where(mask, spread, x if op in _REDUCE else spread.new_ones(()))
        )
    if op in _REDUCE:
        if new.dtype is not x.dtype:  # setitem's rule, for a count it cannot know here
            new = cast(Tensor, setitem_value(x, plan.index, plan, new))
        return torch.where(mask, new, x)
    if _kind(new.dtype) > _kind(x.dtype):
        raise _cannot_cast(new.dtype, x.dtype)
    return torch.where(mask, new.to(x.dtype), x)


def _exact_tensor(value: Any, device: torch.device) -> Tensor:
    """A Python number (or a 0-d tensor) as a 0-d tensor that holds it exactly."""
    if isinstance(value, Tensor):
        return value
    dtype = {bool: torch.bool, int: torch.int64, float: torch.float64}.get(
        type(value), torch.complex128
    )
    return torch.tensor(value, dtype=dtype, device=device)


def _update_positions(
    x: Tensor, index: Any, plan: IndexPlan, op: Op, value: Any, slots: Tensor | None = None
) -> Tensor:
    """Index tensors: every update applies, duplicates included.

    In rounds, one per occurrence of a position, each a gather, torch's own op
    and an ``index_put``, so each occurrence is ``y[p] = op(y[p], v)`` in every
    mode, cast back to ``x``'s dtype at each step, as ``y[p] op= v`` casts:
    torch 2.13's ``scatter_reduce(reduce="prod")`` drops the forward-mode
    tangent, ``scatter_reduce(reduce="amax")`` shares the gradient of a tie
    equally among every tied entry (as JAX does), where ``torch.maximum``
    applied once per occurrence halves it at each step, and
    ``index_put(accumulate=True)`` adds a complex value that ``add`` would
    multiply by its ``alpha`` first (``1 * (nan+1j)`` is ``nan+nanj``).
    """
    positions = plan.flat_positions().reshape(-1)
    shaped = len(plan.result_shape) > 0
    work = _result_dtype(op, x.dtype, shaped, value)
    if op not in _REDUCE and _kind(work) > _kind(x.dtype):
        raise _cannot_cast(work, x.dtype)  # the in-place op's own error comes first
    written = work if op in _REDUCE else x.dtype
    if written is not x.dtype or plan.uint8_mask:
        # setitem's rule for y[t] = op(y[t], v): for min and max its cast, and for a uint8
        # mask that selects one element its error
        setitem_value(x, index, plan, torch.empty(plan.result_shape, dtype=written))
    if isinstance(value, Tensor) and x.is_meta and value.device != x.device:
        _in_place(op, x[plan.index].clone(), value)  # torch's rule for an operand elsewhere
        value = value.to(x.device)  # (add_ takes one on the CPU, pow_ does not)
    if isinstance(value, Tensor) and value.layout is not torch.strided:
        # torch's own op on x[index] and the sparse value: its error, or its answer
        # (``y[t] += sparse`` works), which the dense value gives
        _in_place(op, x[plan.index].detach(), value.detach())
        value = value.to_dense()
    if isinstance(value, Tensor) and value.ndim:
        target = plan.result_shape
        broadcast = torch.broadcast_shapes(target, value.shape)  # type: ignore[no-untyped-call]
        if op not in _REDUCE and broadcast != target:
            raise RuntimeError(
                f"output with shape {list(target)} doesn't match the broadcast shape "
                f"{list(broadcast)}"
            )
        step: Any = plan.fit(value).reshape(-1)
    elif op in _REDUCE:
        step = _other(value, x)
    else:
        step = value
    dropped = None if slots is None else slots.reshape(-1)[positions]
    return _in_rounds(x, positions, step, op, plan, dropped).view(x.shape)


def _in_rounds(
    x: Tensor,
    positions: Tensor,
    step: Any,
    op: Op,
    plan: IndexPlan,
    dropped: Tensor | None = None,
) -> Tensor:
    """``y[p] = op(y[p], s)`` for every ``(p, s)`` in order, one round per
    occurrence: round k takes each position's k-th update. Updates outside the
    round go to an extra slot (holding 1), cut off at the end: nothing there
    reaches x or the value. A per-position ``step`` is 1 there too; a 0-d one
    that requires grad is laid per position in the dtype torch reads it in
    (:func:`_opmath`) when rounds may reach the slot, so that the slot's
    derivative (``1 / 0`` for a zero divisor) cannot reach its gradient; a
    Python number or any other 0-d tensor goes to the op as it is. The ``dropped``
    updates (of ``mode="drop"`` or ``"fill"``) go to the extra slot in every round."""
    occurrence = _occurrence(positions)
    readable = not (
        torch.compiler.is_compiling() or _index_tensors_batched(plan) or positions.is_meta
    )
    if plan.distinct_by_construction():
        rounds = 1  # no count to read: a mask beside ints compiles with fullgraph=True
    elif not readable or not positions.numel():
        # no data-dependent count under vmap, compile or on meta; with no position, one
        # round writes nothing but gives the value torch's zero gradient (no round: none)
        rounds = max(positions.numel(), 1)
    else:
        rounds = int(occurrence.max()) + 1
    if dropped is not None and readable and not bool(dropped.any()):
        dropped = None  # every position in range: the write without a mode, to the last bit
    flat = x.reshape(-1)
    n = flat.numel()
    grown = torch.cat([flat, torch.ones(1, dtype=x.dtype, device=x.device)])
    per_position = isinstance(step, Tensor) and step.ndim > 0
    # (the extra slot holds 1, where only divide's derivative can be infinite: 1 / 0)
    reaches_slot = rounds > 1 or (dropped is not None and op == "divide")
    if not per_position and isinstance(step, Tensor) and step.requires_grad and reaches_slot:
        compute = _opmath(torch.result_type(flat[:1], step))
        step = torch.broadcast_to(step.to(compute), positions.shape)
        per_position = True
    for k in range(rounds):
        this = occurrence == k
        if dropped is not None:
            this = this & ~dropped
        where_ = torch.where(this, positions, n)
        s = torch.where(this, step, step.new_ones(())) if per_position else step
        new = _in_place(op, grown[where_], s)
        grown = grown.index_put((where_,), new.to(x.dtype))
    return grown[:n]
