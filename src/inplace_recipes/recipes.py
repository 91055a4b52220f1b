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


def _prepare(x: Tensor, index: Any, value: Any) -> tuple[IndexPlan, Tensor]:
    """Plan the index, cast the value to ``x``'s dtype and check that it fits."""
    plan = IndexPlan.of(x, index)
    v = as_value(value, x)
    if v.numel() != 1:  # one element always fits; skip counting a mask's True entries
        plan.fit(v)
    return plan, v


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

    Pitfalls: multiplying by zero does not erase ``inf`` or ``nan``, so a
    non-finite entry of ``x`` at an overwritten position, or a non-finite
    ``value``, turns into ``nan``. It builds and saves a full-size mask of
    ``x``'s dtype for backward (4 bytes an element in float32).

    >>> mask_blend(torch.ones(3), 1, 5.0)
    tensor([1., 5., 1.])
    """
    plan, v = _prepare(x, index, value)
    put = plan.mask()
    spread = plan.spread(v)
    if x.dtype == torch.bool:
        return (x & ~put) | (spread & put)
    return x * (~put).to(x.dtype) + spread * put.to(x.dtype)


def where(x: Tensor, index: Any, value: Any) -> Tensor:
    """``torch.where(mask, value, x)``.

    Pitfall: ``torch.where`` sends a zero gradient to the branch it did not
    select, and ``0 * nan`` is ``nan``: if the unselected branch was computed
    by an op whose own gradient is infinite there (``sqrt`` at 0, ``log`` of a
    negative), the gradient becomes ``nan``. The fix is a second ``where``
    that makes the input of that op safe. Here both branches are inputs, so
    the recipe itself is safe. It saves the boolean mask (one byte per
    element) for backward.

    >>> where(torch.ones(3), torch.tensor([True, False, True]), 0.0)
    tensor([0., 1., 0.])
    """
    plan, v = _prepare(x, index, value)
    return torch.where(plan.mask(), plan.spread(v), x)


def clone_setitem(x: Tensor, index: Any, value: Any) -> Tensor:
    """``y = x.clone(); y[index] = value``: the reference every recipe matches.

    Autograd records the write as ``CopySlices``; nothing extra is saved for
    backward. The index is planned only if setitem refuses it, so that the
    error is the one every recipe gives; on small tensors planning costs more
    than the write. Pitfall: under ``torch.func.vmap`` with a batched ``value`` and
    an unbatched ``x`` the write fails, since the clone has no batch
    dimension to receive it.

    >>> clone_setitem(torch.zeros(2, 2), (0, 1), 3.0)
    tensor([[0., 3.],
            [0., 0.]])
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    # setitem with index tensors refuses a value of another dtype: pass the cast one
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
    """Out-of-place ``Tensor.index_put`` on the flat positions of the index.

    Pitfall: with duplicate positions, which write wins is undefined (on CUDA
    it varies from run to run); ``accumulate=True`` adds them instead. It
    saves the positions (8 bytes each) for backward.

    >>> index_put(torch.zeros(4), torch.tensor([3, 0]), torch.tensor([1.0, 2.0]))
    tensor([2., 0., 0., 1.])
    """
    plan, v = _prepare(x, index, value)
    flat = x.reshape(-1).index_put((plan.flat_positions(),), plan.fit(v))
    return flat.view(x.shape)


def scatter(x: Tensor, index: Any, value: Any) -> Tensor:
    """``masked_scatter`` for a mask, ``torch.scatter`` on flat positions otherwise.

    Pitfall: ``scatter`` with duplicate positions keeps one write, undefined
    which; ``scatter_reduce``/``scatter_add`` combine them instead.

    >>> scatter(torch.zeros(3), torch.tensor([False, True, True]), torch.tensor([4.0, 5.0]))
    tensor([0., 4., 5.])
    """
    plan, v = _prepare(x, index, value)
    source = plan.fit(v)
    if plan.kind == "mask":
        return x.masked_scatter(plan.mask(), source.contiguous())
    positions = plan.flat_positions().reshape(-1)
    flat = x.reshape(-1).scatter(0, positions, source.reshape(-1))
    return flat.view(x.shape)


def _scatter_steps(base: Tensor, steps: tuple[Any, ...], part: Tensor) -> Tensor:
    """Write ``part`` into ``base`` through a chain of select/slice steps."""
    if not steps:
        return part.expand(base.shape)
    (dim, where_), rest = steps[0], steps[1:]
    if isinstance(where_, slice):
        inner = base[(slice(None),) * dim + (where_,)]
        src = _scatter_steps(inner, rest, part)
        return base.slice_scatter(src, dim, where_.start, where_.stop, where_.step)
    src = _scatter_steps(base.select(dim, where_), rest, part)
    return base.select_scatter(src, dim, where_)


def select_scatter(x: Tensor, index: Any, value: Any) -> Tensor:
    """A chain of ``select_scatter``/``slice_scatter``, one per int or slice.

    Takes basic indices only (ints, slices, ``...``, ``None``); it raises
    ``TypeError`` for index tensors. Nothing is saved for backward. Torch
    has no complex autograd for these two ops, so complex tensors are
    written as real pairs through ``torch.view_as_real``.

    Pitfall: under ``torch.func.vmap``, autograd through ``select_scatter``
    whose source depends on ``x`` gives ``x`` a wrong gradient in torch 2.13,
    so an index of two or more steps (``x[1, ::2]``) has wrong gradients
    there (see the compatibility matrix); ``index_put`` is right.

    >>> select_scatter(torch.zeros(2, 3), (1, slice(None, None, 2)), 1.0)
    tensor([[0., 0., 0.],
            [1., 0., 1.]])
    """
    plan, v = _prepare(x, index, value)
    if plan.kind != "basic":
        raise UnsupportedIndexError(
            "recipe 'select_scatter' takes only ints, slices, '...' and None, "
            f"not an index with tensors ({plan.kind} index); use 'index_put' or 'where'"
        )
    part = plan.fit(v)
    for axis in reversed(plan.new_axes):
        part = part.squeeze(axis)
    if not plan.steps:  # the whole tensor is overwritten
        return part.expand(x.shape).clone()
    if x.is_complex():  # select_scatter has no complex autograd: write real pairs
        pairs = torch.view_as_real(x.resolve_conj())
        written = _scatter_steps(pairs, plan.steps, torch.view_as_real(part.resolve_conj()))
        return torch.view_as_complex(written)
    return _scatter_steps(x, plan.steps, part)


def masked_fill(x: Tensor, index: Any, value: Any) -> Tensor:
    """``index_fill`` along one dimension, ``masked_fill`` otherwise.

    Writes a single value (a number or a one-element tensor, which receives
    its gradient); it raises ``ValueError`` for a tensor of values. Pitfall
    avoided: under ``torch.func.vmap`` with a batched one-element value,
    torch 2.13's ``index_fill`` writes the last batch's value into every
    batch, so a tensor value always goes through ``masked_fill``.

    >>> masked_fill(torch.zeros(2, 3), (slice(None), 1), 9.0)
    tensor([[0., 9., 0.],
            [0., 9., 0.]])
    """
    plan, v = _prepare(x, index, value)
    if v.numel() != 1:
        raise UnsupportedValueError(
            "recipe 'masked_fill' writes a single value, not a value of shape "
            f"{list(v.shape)}; use 'where' or 'index_put'"
        )
    fill = v.reshape(())
    # index_fill with a tensor value is wrong under vmap when the value is
    # batched (torch 2.13 writes the last batch's value everywhere), so only
    # a Python number, which cannot be batched, takes this path.
    if plan.kind == "basic" and len(plan.steps) == 1 and not isinstance(value, Tensor):
        dim, where_ = plan.steps[0]
        if isinstance(where_, slice):
            positions = torch.arange(where_.start, where_.stop, where_.step, device=x.device)
        else:
            positions = torch.tensor([where_], device=x.device)
        return x.index_fill(dim, positions, fill)
    return x.masked_fill(plan.mask(), fill)


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
