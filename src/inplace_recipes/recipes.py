"""Out-of-place recipes for ``y = x.clone(); y[index] = value``.

Each recipe is a function ``recipe(x, index, value) -> Tensor`` that returns a
new tensor and never changes ``x``. It is differentiable with respect to ``x``
and to ``value`` (when ``value`` is a tensor that requires grad), keeps ``x``'s
dtype, device and shape, and takes every index that setitem takes, except
duplicate positions in index tensors. :data:`RECIPES` lists them in the order
the documentation presents them.

>>> import torch
>>> x = torch.zeros(4)
>>> RECIPES["where"](x, slice(1, None, 2), 7.0)
tensor([0., 7., 0., 7.])
>>> x  # unchanged
tensor([0., 0., 0., 0.])

Torch can copy uint16, uint32 and uint64 tensors but has no ``index_put``,
``scatter``, ``masked_fill`` or addition for them on the CPU: the recipes write
ints and slices into them through a view as the signed dtype of the same width,
and for a mask or index tensors raise setitem's own ``NotImplementedError``.
One check that setitem skips is kept: ``x[False] = value`` returns before
looking at the value, while every recipe but ``clone`` raises torch's shape
error for a value that fits no write:

>>> y = torch.zeros(2)
>>> y[False] = torch.ones(5)  # no error
>>> RECIPES["where"](y, False, torch.ones(5))
Traceback (most recent call last):
    ...
RuntimeError: shape mismatch: value tensor of shape [5] cannot be broadcast to indexing result of shape [0, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch import Tensor

from .indexing import IndexPlan, as_value

__all__ = [
    "RECIPES",
    "NotApplicable",
    "Recipe",
    "UnsupportedIndexError",
    "UnsupportedValueError",
    "clone_setitem",
    "index_put",
    "inplace_setitem",
    "mask_blend",
    "masked_fill",
    "scatter",
    "select_scatter",
    "where",
]


class NotApplicable(Exception):
    """Base of the errors a recipe raises for an index or value it cannot take."""


class UnsupportedIndexError(NotApplicable, TypeError):
    """The recipe cannot express this kind of index."""


class UnsupportedValueError(NotApplicable, ValueError):
    """The recipe cannot write this kind of value."""


#: The signature every recipe shares.
Recipe = Callable[[Tensor, Any, Any], Tensor]

#: Unsigned dtypes that torch 2.13 can copy but not ``index_put``, ``scatter``,
#: ``masked_fill`` or add on the CPU: the recipes write them through a view as
#: the signed dtype of the same width (the same bits), see :func:`_wide_unsigned`.
_SIGNED_OF = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}

#: Dtypes that a Python float is written into exactly as setitem writes it,
#: so the recipes hand it to torch as a number, with no tensor to build.
_FLOAT_DTYPES = (torch.float32, torch.float64)


def _prepare(x: Tensor, index: Any, value: Any) -> tuple[IndexPlan, Tensor]:
    """Plan the index, cast the value to ``x``'s dtype and check that it fits."""
    plan = IndexPlan.of(x, index)
    checked = _checked_value(plan, x, value)
    refuse_other_dtype(x, index, plan, value)
    return plan, checked


def _checked_value(plan: IndexPlan, x: Tensor, value: Any) -> Tensor:
    """The value cast to ``x``'s dtype; torch's shape error when it does not fit."""
    v = as_value(value, x)
    if type(value) is not float and v.numel() != 1:  # one element always fits
        plan.fit(v)
    return v


def _plain_float(x: Tensor, value: Any) -> bool:
    """Whether ``value`` is a Python float that torch can take as it is."""
    return type(value) is float and x.dtype in _FLOAT_DTYPES


_current_level = torch._C._functorch.maybe_current_level
#: ``aten::index_put``, which takes ``None`` for a full slice (``Tensor.index_put`` does not).
_INDEX_PUT = torch.ops.aten.index_put.default


def _in_transform() -> bool:
    """Whether a ``torch.func`` transform (``vmap``, ``grad``, ``jvp``, ...) is active."""
    return _current_level() is not None


def _setitem_casts(x: Tensor, index: Any, plan: IndexPlan, value: Tensor) -> bool:
    """Whether setitem casts a tensor ``value`` of another dtype to ``x``'s (else it raises).

    Setitem writes ints, slices, ``...`` and ``None`` (and a lone Python
    bool) with ``copy_``, which casts. With an index tensor (a list, an
    array, a 0-d bool tensor or a bool inside a tuple included) it calls
    ``index_put_``, which requires equal dtypes, except that ``index_put_``
    hands one mask of at least one dimension and a one-element value on the
    CPU to ``masked_fill_``, which casts:

    >>> plan = IndexPlan.of(torch.zeros(3), torch.tensor([0, 2]))
    >>> _setitem_casts(torch.zeros(3), torch.tensor([0, 2]), plan, torch.tensor(1.0).double())
    False
    """
    if plan.kind == "basic" or index is True or index is False:
        return True
    tensors = [i for i in plan.index if isinstance(i, Tensor) and (i.ndim or i.dtype is torch.bool)]
    if not tensors:  # several '...': no tensor, a copy
        return True
    if value.numel() != 1 or value.device.type != "cpu" or len(tensors) != 1:
        return False
    mask = tensors[0]
    return mask.ndim > 0 and mask.dtype is torch.bool and mask.device == x.device


def _dtype_mismatch(x: Tensor, value: Tensor) -> RuntimeError:
    """Torch's own error for ``index_put_`` of a ``value.dtype`` value into ``x``, with a fix."""
    try:
        empty = torch.empty(0, dtype=torch.long)
        torch.empty(0, dtype=x.dtype).index_put_((empty,), torch.empty(0, dtype=value.dtype))
        message = f"Index put requires the source and destination dtypes match, got {x.dtype} and {value.dtype}"
    except RuntimeError as torch_error:
        message = str(torch_error)
    return RuntimeError(
        f"{message} (setitem casts a tensor value only for ints and slices, or for "
        "one element written through a mask; write value.to(x.dtype))"
    )


def refuse_other_dtype(x: Tensor, index: Any, plan: IndexPlan, value: Any) -> None:
    """Raise where setitem raises for a tensor ``value`` of another dtype than ``x``'s.

    Every recipe calls it first (and :func:`~inplace_recipes.at`'s ``min`` and
    ``max`` on the dtype of their result).

    Outside ``torch.func`` transforms and ``torch.compile``, torch's own setitem
    writes the value into a scratch tensor of ``x``'s shape, so that a shape or
    index error torch checks first comes first, as in setitem; inside them the
    dtype error is raised at once.

    >>> where(torch.zeros(3), [0, 2], torch.tensor(1.0, dtype=torch.float64))
    Traceback (most recent call last):
        ...
    RuntimeError: Index put requires the source and destination dtypes match, got Float for the destination and Double for the source. (setitem casts ...)
    """
    if not isinstance(value, Tensor) or value.dtype is x.dtype:
        return
    if value.is_complex() and not x.is_complex():
        return  # as_value's TypeError names the lost imaginary part
    if _setitem_casts(x, index, plan, value):
        return
    if not (_in_transform() or torch.compiler.is_compiling()):
        scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        try:
            scratch[index] = value.detach()
        except RuntimeError as error:
            if "dtypes match" in str(error):
                raise _dtype_mismatch(x, value) from None
            raise
        return  # torch cast it after all: so do the recipes
    raise _dtype_mismatch(x, value)


def _refuse_duplicates_for_grad(name: str, plan: IndexPlan, value: Any) -> None:
    """Refuse duplicate positions when the value's gradient would differ from torch's.

    Setitem sends a one-element value one gradient per index entry, so twice
    for a position named twice; a mask names it once. The check reads the
    index's data, so it runs only in eager mode (see :meth:`IndexPlan.duplicates_checkable`).
    """
    if not (isinstance(value, Tensor) and value.requires_grad and plan.kind == "advanced"):
        return
    if plan.duplicates_checkable() and plan.has_duplicates():
        raise UnsupportedIndexError(
            f"recipe {name!r} cannot write one value that requires grad to duplicate "
            "positions: setitem sends it one gradient per index entry, a mask one per "
            "position. Use recipe 'index_put' or 'where' (exact), or, to add rather than "
            "overwrite, at(x)[index].add(value) or x.index_put(indices, value, accumulate=True)"
        )


def _wide_unsigned(recipe: Recipe, plan: IndexPlan, x: Tensor, index: Any, value: Any) -> Tensor:
    """``recipe`` on a uint16, uint32 or uint64 ``x``, as setitem writes it.

    Ints, slices, ``...``, ``None``, 0-d integer tensors and a lone bool go
    through the recipe on a view of ``x`` as the signed dtype of the same
    width (its kernels exist; integers have no gradient). A mask or index
    tensors go to setitem itself, which raises its ``NotImplementedError``
    naming the kernel and dtype where torch lacks them, as on the CPU.

    >>> mask_blend(torch.zeros(3, dtype=torch.uint16), 1, 65535)
    tensor([    0, 65535,     0], dtype=torch.uint16)
    >>> where(torch.zeros(2, dtype=torch.uint32), torch.tensor([True, False]), 1)
    Traceback (most recent call last):
        ...
    NotImplementedError: "masked_fill" not implemented for 'UInt32'
    """
    lone_bool = index is True or index is False  # setitem copies or skips: no kernel
    if not lone_bool and any(
        isinstance(i, Tensor) and (i.ndim or i.dtype == torch.bool) for i in plan.index
    ):
        return clone_setitem(x, index, value)
    signed = _SIGNED_OF[x.dtype]
    written = recipe(x.view(signed), index, as_value(value, x).view(signed))
    return written.view(x.dtype)


def inplace_setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """The in-place baseline: ``x[index] = value``; returns ``x`` itself.

    This is what every recipe replaces, exposed for comparisons and
    benchmarks. It mutates ``x`` (and fails on a leaf that requires grad), so
    it is not in :data:`RECIPES`.

    >>> x = torch.zeros(3)
    >>> inplace_setitem(x, 0, 1.0) is x
    True
    """
    x[index] = value
    return x


def mask_blend(x: Tensor, index: Any, value: Any) -> Tensor:
    """Arithmetic blend ``x * (1 - m) + value * m`` with a mask ``m``.

    The classic answer, made general and dtype-safe: the mask is built in
    torch with ``x``'s dtype and device (a NumPy mask turns float32 into
    float64).

    Pitfalls: multiplying by zero does not erase ``inf`` or ``nan``
    (``inf * 0`` is ``nan``). A non-finite one-element value turns every
    element that is *not* written into ``nan`` (the written ones are right):
    ``mask_blend(torch.zeros(3), 0, float("inf"))`` is ``[inf, nan, nan]``;
    with index tensors only a Python float into float32 or float64 does (a
    tensor value is scattered into zeros first). A value tensor of several
    entries with non-finite ones does the same wherever the blend lays a
    copy of them over unwritten elements (for a row, every other row; for
    slices, a mask or index tensors, nowhere, as it is scattered into
    zeros). A non-finite entry of ``x`` at a written position turns that
    element into ``nan``. Float16 overflow is a non-finite value too. A
    written ``-0.0`` comes out as ``0.0`` (``0.0 + -0.0`` is ``0.0``; the
    two compare equal). For ints and slices (and index tensors with a Python
    number) the blend also builds and saves
    a full-size mask of ``x``'s dtype for backward (4 bytes an element in
    float32; two with a value that requires grad); for a mask, boolean
    masks (one byte an element), as for index tensors with a tensor value,
    which also save the written positions (8 bytes each).

    With index tensors that name a position twice, values and gradients match
    setitem's (the value is scattered first).

    >>> mask_blend(torch.ones(3), 1, 5.0)
    tensor([1., 5., 1.])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(mask_blend, plan, x, index, value)
    if _plain_float(x, value):  # x * (1 - m) + value * m, the product in x's dtype
        # torch 2.13's forward AD gives add(..., alpha=float) a float64 tangent when
        # ``other`` is bool, or both are 0-d: weights in x's dtype, and 0-d as (1,)
        # (alpha, not a product, so that torch's overflow error for the value stays)
        if plan.kind == "mask":
            mask = plan.mask()
            keep, put = ~mask, mask.to(x.dtype)
        else:
            keep, put = plan.weights(x.dtype)
        if not x.ndim:
            return torch.add((x * keep).reshape(1), put.reshape(1), alpha=value).reshape(())
        return torch.add(x * keep, put, alpha=value)
    if plan.kind == "basic":
        keep, put = plan.weights(x.dtype)
    else:  # bool weights: x's dtype wins the promotion (0-d values are tensors below)
        put = plan.mask()
        keep = ~put
    v = as_value(value, x)
    spread = plan.spread(v)
    if x.dtype == torch.bool:
        return (x & keep) | (spread & put)
    return x * keep + spread * put


def where(x: Tensor, index: Any, value: Any) -> Tensor:
    """``torch.where(mask, value, x)``.

    Pitfall: ``torch.where`` sends a zero gradient to the branch it did not
    select; if that branch was computed by an op whose derivative is infinite
    there (``sqrt`` at 0, ``log`` at 0), the op's backward makes it ``nan``.
    A second ``where`` on that op's *input*, before it runs, fixes it; one on
    its output does not. The same ``nan`` comes from overwriting such an
    element with any recipe or setitem (its gradient is zero too), and the
    same fix applies. Here both branches are inputs, so the recipe itself is
    safe. It saves the boolean mask (one byte per
    element) for backward, and, where it first spreads a value that requires
    grad with ``index_put`` (index tensors; a mask or slices and several
    values), the written positions too (8 bytes each). With index tensors that name a position twice,
    values and gradients match setitem's (the value is scattered first).

    >>> where(torch.ones(3), torch.tensor([True, False, True]), 0.0)
    tensor([0., 1., 0.])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(where, plan, x, index, value)
    if _plain_float(x, value):
        return torch.where(plan.mask(), value, x)
    v = as_value(value, x)
    if v.numel() != 1:
        plan.fit(v)
    return torch.where(plan.mask(), plan.spread(v), x)


def clone_setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """``y = x.clone(); y[index] = value``: the reference every recipe matches.

    For ints and slices autograd records the write as ``CopySlices`` and
    saves nothing for backward; with index tensors or a mask it is
    ``IndexPutBackward0``, which saves them. The index is planned only if setitem refuses it, so that the
    error is the one every recipe gives; on small tensors planning costs more
    than the write. Pitfall: under ``torch.func.vmap`` with a batched ``value`` and
    an unbatched ``x`` the write fails, since the clone has no batch
    dimension to receive it.

    >>> clone_setitem(torch.zeros(2, 2), (0, 1), 3.0)
    tensor([[0., 3.],
            [0., 0.]])
    >>> x = torch.zeros(3, requires_grad=True)
    >>> [type(clone_setitem(x, i, 3.0).grad_fn).__name__ for i in (1, [1])]
    ['CopySlices', 'IndexPutBackward0']
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.layout is not torch.strided:
        IndexPlan.of(x, index)  # torch's own message for sparse tensors
    if isinstance(value, Tensor) and value.dtype is not x.dtype:  # as every recipe does
        refuse_other_dtype(x, index, IndexPlan.of(x, index), value)
    v = value if type(value) in (bool, int, float) else as_value(value, x)
    y = x.clone()
    try:
        y[index] = v
    except (IndexError, RuntimeError, TypeError, ValueError):
        # Plan the index only now: it costs more than the write itself on
        # small tensors, and gives the same clear error every recipe gives.
        try:
            _prepare(x, index, value)
        except Exception as clear:
            raise clear from None
        raise
    return y


def index_put(x: Tensor, index: Any, value: Any) -> Tensor:
    """Out-of-place ``Tensor.index_put`` on the positions of the index.

    A boolean mask tensor, and index tensors alone (``x[t]``, ``x[t, u]``),
    go to ``index_put`` as they are; ints and slices as an ``arange`` per
    slice and a tensor per int, with the leading full slices as ``None``
    (``x[:]`` and ``x[...]``: one ``arange``); other indices (an index tensor
    beside an int, a slice or ``...``, such as ``x[1, t]`` or ``x[:, t]``; a
    Python bool; any index of a 0-d ``x``) as flat positions, although
    setitem hands ``x[:, t] = v`` to ``index_put_`` as ``[None, t]``. With
    duplicate positions, values and gradients match
    setitem's on the CPU, as both run the same kernel in the same order: the
    last write wins (torch's documentation leaves it undefined for
    ``index_put``); ``accumulate=True`` adds them instead. It saves its index
    tensors for backward: 8 bytes per element of each int64 index tensor (4
    for int32; a mask, one byte per element), which for flat positions is 8
    bytes per written position.

    >>> index_put(torch.zeros(4), torch.tensor([3, 0]), torch.tensor([1.0, 2.0]))
    tensor([2., 0., 0., 1.])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(index_put, plan, x, index, value)
    v = _checked_value(plan, x, value)
    if plan.kind == "mask" and x.ndim:  # a 0-d mask of a 0-d x: flat, below
        # one element as 0-d: a (1, 1) value's gradient must come back as (1, 1)
        return x.index_put((plan.index[0],), plan.fit(v) if v.numel() != 1 else v.reshape(()))
    indices = plan.index_put_indices()
    source = plan.index_put_value(v)
    if plan.flat_index_put and x.ndim != 1:  # flat positions, for x.reshape(-1)
        return x.flatten().index_put(indices, source).view_as(x)
    if indices[0] is None:  # leading full slices, as setitem writes them
        return _INDEX_PUT(x, list(indices), source)  # type: ignore[no-any-return]
    return x.index_put(indices, source)


def scatter(x: Tensor, index: Any, value: Any) -> Tensor:
    """``torch.scatter`` on the flat positions of the index.

    ``x.scatter(dim, positions, source)`` when the index writes along one
    dimension (one int or slice, or one index tensor over the first
    dimension: ``x.scatter(0, torch.full((1, C), r), v)`` for a row), and
    ``x.flatten().scatter(0, positions, source).view_as(x)`` otherwise; a
    mask's positions come from ``nonzero``, those of ints and slices from one
    ``arange`` per dimension they keep. With duplicate
    positions, values and gradients match setitem's on the CPU (the last
    write wins); ``scatter_reduce``/``scatter_add`` combine them instead.

    Pitfall of the one-liner: ``scatter`` takes no negative position and
    refuses one out of range with a ``RuntimeError``, where setitem counts ``-1`` from the end and raises
    ``IndexError``. The recipe therefore reads an index tensor through torch's
    own indexing once, ``torch.arange(x.shape[0])[t]``: one more torch call
    than ``x.scatter(0, t.unsqueeze(1).expand(-1, C), v)``.

    >>> scatter(torch.zeros(3), torch.tensor([False, True, True]), torch.tensor([4.0, 5.0]))
    tensor([0., 4., 5.])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(scatter, plan, x, index, value)
    plain = _plain_float(x, value)
    along = plan.scatter_index()
    if along is not None:  # along one dimension: x.scatter(dim, index, source)
        dim, positions = along
        source = value if plain else plan.scatter_source(as_value(value, x), dim)
        return x.scatter(dim, positions, source)
    positions = plan.flat_positions(flatten=True)
    source = value if plain else plan.fit(as_value(value, x)).reshape(-1)
    return x.flatten().scatter(0, positions, source).view_as(x)


def _scatter_steps(base: Tensor, steps: tuple[Any, ...], part: Tensor, exact_vmap: bool) -> Tensor:
    """Write ``part`` (of the shape ``base[steps]`` selects) into ``base``
    through a chain of select/slice steps."""
    (dim, where_), rest = steps[0], steps[1:]
    if isinstance(where_, slice):
        if rest:
            inner = base[(slice(None),) * dim + (where_,)]
            src = _scatter_steps(inner, rest, part, exact_vmap)
        else:
            src = part
        return base.slice_scatter(src, dim, where_.start, where_.stop, where_.step)
    src = _scatter_steps(base.select(dim, where_), rest, part, exact_vmap) if rest else part
    if exact_vmap:  # select_scatter's gradient is wrong under vmap; a 1-long slice is not
        return base.slice_scatter(src.unsqueeze(dim), dim, where_, where_ + 1)
    return base.select_scatter(src, dim, where_)


def select_scatter(x: Tensor, index: Any, value: Any) -> Tensor:
    """A chain of ``select_scatter``/``slice_scatter``, one per int or slice.

    Takes basic indices only (ints, slices, ``...``, ``None``); it raises
    ``TypeError`` for index tensors. Nothing is saved for backward. Torch
    has no complex autograd for these two ops, so complex tensors are
    written as real pairs through ``torch.view_as_real``. An index that
    overwrites every element is written as ``torch.where(True, value, x)``,
    so that ``x`` stays in the graph (with a zero gradient, as setitem's).

    Torch pitfall, avoided here: under ``torch.func.vmap``, torch 2.13's
    ``select_scatter`` sends the written *source* ``x.shape[dim]`` times its
    gradient, even for a one-step write and whether or not ``x`` is batched
    (``slice_scatter`` is right). Inside any ``torch.func`` transform this
    recipe therefore writes each int step as ``slice_scatter`` over a slice
    of length one.

    >>> select_scatter(torch.zeros(2, 3), (1, slice(None, None, 2)), 1.0)
    tensor([[0., 0., 0.],
            [1., 0., 1.]])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(select_scatter, plan, x, index, value)
    if plan.kind != "basic":
        plan.check()  # torch's error for index tensors that do not fit, first
        v = as_value(value, x)
        if v.numel() != 1:
            plan.fit(v)  # a value that does not fit is torch's shape error next
        raise UnsupportedIndexError(
            "recipe 'select_scatter' takes only ints, slices, '...' and None, "
            f"not an index with tensors ({plan.kind} index); use 'index_put' or 'where'"
        )
    if type(value) is float:  # as a user writes it: torch.full(shape, value), x's dtype and device
        part = x.new_full(plan.written_shape, value)
    else:
        part = plan.fitted(value, x)  # torch's shape error if it does not fit
        for axis in reversed(plan.new_axes):
            part = part.squeeze(axis)
    steps = plan.steps
    if not steps:  # the whole tensor is overwritten: keep x in the graph
        every = torch.ones((), dtype=torch.bool, device=x.device)
        return torch.where(every, part.expand(x.shape), x)
    exact_vmap = _in_transform()
    if len(steps) == 1 and not exact_vmap and not x.dtype.is_complex:  # one step: one call
        dim, where_ = steps[0]
        if type(where_) is slice:
            return x.slice_scatter(part, dim, where_.start, where_.stop, where_.step)
        return x.select_scatter(part, dim, where_)
    if x.dtype.is_complex:  # select_scatter has no complex autograd: write real pairs
        pairs = torch.view_as_real(x.resolve_conj())
        written = _scatter_steps(pairs, steps, torch.view_as_real(part.resolve_conj()), exact_vmap)
        return torch.view_as_complex(written)
    return _scatter_steps(x, steps, part, exact_vmap)


def masked_fill(x: Tensor, index: Any, value: Any) -> Tensor:
    """``x.masked_fill(mask, value)``.

    Writes a single value (a number or a one-element tensor, which receives
    its gradient); it raises ``ValueError`` for a tensor of values.

    Duplicates: a mask names each position once, so with index tensors that
    name a position twice a value that requires grad would get a smaller
    gradient than setitem gives it. In eager mode the recipe checks and
    refuses that case (pointing to ``index_put``); the check reads the
    index's data, so it cannot run while ``torch.compile`` traces or on an
    index batched by ``vmap``, and there the gradient counts each position
    once. Values and forward-mode derivatives are right in every case.

    Torch pitfall: under ``torch.func.vmap``, torch 2.13's ``index_fill``
    with an unbatched ``x`` and a batched one-element value writes the last
    batch's value into every batch (a batched ``x`` is right); this recipe
    does not use ``index_fill``.

    >>> masked_fill(torch.zeros(2, 3), (slice(None), 1), 9.0)
    tensor([[0., 9., 0.],
            [0., 9., 0.]])
    """
    plan = IndexPlan.of(x, index)
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        refuse_other_dtype(x, index, plan, value)
    if x.dtype in _SIGNED_OF:
        return _wide_unsigned(masked_fill, plan, x, index, value)
    if _plain_float(x, value):
        return x.masked_fill(plan.mask(), value)
    v = as_value(value, x)
    if v.numel() != 1:
        plan.check()  # torch's error for index tensors that do not fit, first
        plan.fit(v)  # a value that does not fit is torch's shape error next
        raise UnsupportedValueError(
            "recipe 'masked_fill' writes a single value, not a value of shape "
            f"{list(v.shape)}; use 'where' or 'index_put'"
        )
    _refuse_duplicates_for_grad("masked_fill", plan, value)
    return x.masked_fill(plan.mask(), v.reshape(()))


RECIPES: Mapping[str, Recipe] = MappingProxyType(
    {
        "mask": mask_blend,
        "where": where,
        "clone": clone_setitem,
        "index_put": index_put,
        "scatter": scatter,
        "select_scatter": select_scatter,
        "masked_fill": masked_fill,
    }
)
"""Every out-of-place recipe, by name, in the order the docs present them."""
