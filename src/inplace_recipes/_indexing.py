"""Planning an index: the forms recipes need, built when they are asked for.

Every recipe takes the index a user would write in ``x[index] = value`` and
asks an :class:`IndexPlan` for the form it can use: a boolean mask of ``x``'s
shape, flat positions, the index tensors, or a chain of ``(dim, int | slice)``
steps; a form that only one recipe needs (``scatter``'s positions along one
dimension, ``index_put``'s indices) is built in that recipe's module from
these. Recipes never parse indices themselves: :mod:`~inplace_recipes._index_reading`
reads the index (the one parser), this module plans its forms.

Nothing is kept between calls. A plan of ints and slices is pure Python (its
steps are views); each form is a few torch calls made only when a recipe asks
for it, and the plan keeps what it built only for as long as the caller keeps
the plan. Index tensors are read by torch itself (the positions of
``x[index]`` are what torch's own indexing reads from a grid of positions,
in the same order, with torch's bounds checks), so the plan agrees with
setitem by construction.

>>> import torch
>>> plan = IndexPlan.of(torch.zeros(2, 3), (1, slice(None, None, 2)))
>>> plan.kind, tuple(plan.result_shape)
('basic', (2,))
>>> plan.flat_positions()
tensor([3, 5])
>>> IndexPlan.of(torch.zeros(3, 4), ([0, 1], [1, 2])).flat_positions()  # rows, then columns
tensor([1, 6])

``[[0, 1], [1, 2]]`` means the same, as in torch, with torch's deprecation
warning (:data:`~inplace_recipes._index_reading.SEQUENCE_AS_TUPLE_WARNING`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.fx.experimental.symbolic_shapes import guard_or_true

from ._index_reading import SEQUENCE_AS_TUPLE_WARNING, Kind, ReadIndex, Step

__all__ = ["SEQUENCE_AS_TUPLE_WARNING", "IndexPlan", "Kind", "Step"]

_LONG = torch.long
#: Above this many elements, positions are summed from one grid per
#: dimension instead of indexing one ``arange`` over the whole tensor.
_ONE_GRID_MAX = 1 << 20


_current_level = torch._C._functorch.maybe_current_level


def _is_batched(t: Tensor) -> bool:
    return bool(torch._C._functorch.is_batchedtensor(t))


def _ints_only(steps: tuple[Step, ...]) -> bool:
    return all(type(where) is not slice for _, where in steps)


def _contiguous_strides(shape: torch.Size) -> list[int]:
    strides, step = [0] * len(shape), 1
    for dim in range(len(shape) - 1, -1, -1):
        strides[dim] = step
        step *= shape[dim]
    return strides


def _fitting_shape(value: Tensor, target: torch.Size) -> torch.Size:
    """``value``'s shape without the leading 1s setitem drops, or torch's shape error
    where it does not broadcast to ``target``."""
    shape = value.shape
    while len(shape) > len(target) and shape[0] == 1:  # setitem drops leading 1s
        shape = shape[1:]
    ok = len(shape) <= len(target) and all(
        s == 1 or s == t for s, t in zip(reversed(shape), reversed(target), strict=False)
    )
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
            f"broadcast to indexing result of shape {list(target)}"
        )
    return shape


class IndexPlan(ReadIndex):
    """What ``x[index]`` selects, in every form a recipe may need.

    Build one with :meth:`IndexPlan.of` (what :meth:`ReadIndex.read
    <inplace_recipes._index_reading.ReadIndex.read>` reads, plus the forms).
    Each form is built on the first call that asks for it and kept on the
    plan, so a recipe that asks twice pays once; a plan is made per call and
    nothing outlives it. Do not write into the tensors a plan returns.
    """

    __slots__ = ("_like", "_mask", "_positions", "_result_shape")

    def __init__(
        self,
        shape: torch.Size,
        device: torch.device,
        index: tuple[Any, ...],
        kind: Kind,
        steps: tuple[Step, ...] | None = None,
        new_axes: tuple[int, ...] | None = None,
    ) -> None:
        # ReadIndex's fields set here, not through super(): every recipe plans first
        self.shape, self.device, self.index, self.kind = shape, device, index, kind
        self._steps, self._new_axes = steps, new_axes
        self.uint8_mask = False
        self._positions: Tensor | None = None
        self._mask: Tensor | None = None
        self._result_shape: torch.Size | None = None
        #: The planned ``x`` itself (a plain tensor), the template of the masks
        #: :meth:`written` makes: ``zeros_like`` costs half of ``zeros(shape)``.
        self._like: Tensor | None = None

    @classmethod
    def of(cls, x: Tensor, index: Any) -> IndexPlan:
        """Plan ``x[index]``; raise torch's error for a bad int, slice or mask.

        No tensor is built here: index tensors are checked by torch when a
        form is built from them (:meth:`check` does it at once).

        >>> IndexPlan.of(torch.zeros(3), 5)
        Traceback (most recent call last):
            ...
        IndexError: index 5 is out of bounds for dimension 0 with size 3
        """
        plan = cls.read(x, index)
        if type(x) is Tensor:
            plan._like = x
        return plan

    def check(self) -> None:
        """Raise torch's error now for index tensors that do not fit ``x``.

        >>> IndexPlan.of(torch.zeros(3), [0, 3]).check()
        Traceback (most recent call last):
            ...
        IndexError: index 3 is out of bounds for dimension 0 with size 3
        """
        if self.kind == "advanced":
            self.flat_positions()

    # -- shapes ---------------------------------------------------------------

    @property
    def result_shape(self) -> torch.Size:
        """The shape of ``x[index]``.

        >>> IndexPlan.of(torch.zeros(2, 3), (torch.tensor([[0, 1]]), slice(1, None))).result_shape
        torch.Size([1, 2, 2])
        """
        if self._result_shape is None:
            if self.kind == "basic":
                sizes = list(self._written_shape())
                for axis in self.new_axes:
                    sizes.insert(axis, 1)
                self._result_shape = torch.Size(sizes)
            elif self._positions is not None:
                self._result_shape = self._positions.shape
            elif self.kind == "boolean":
                mask = self.index[0]
                if _is_batched(mask):
                    raise RuntimeError(_BATCHED_MASK_SHAPE)
                self._result_shape = torch.Size((int(mask.sum()),)) + self.shape[mask.ndim :]
            else:
                tensors = self.index_tensors()
                if tensors is not None and all(t.shape == tensors[0].shape for t in tensors):
                    self._result_shape = tensors[0].shape + self.shape[len(tensors) :]
                else:
                    self._result_shape = self.flat_positions().shape
        return self._result_shape

    @property
    def written_shape(self) -> torch.Size:
        """The shape of ``x[index]`` without the axes ``None`` adds (basic indices).

        >>> IndexPlan.of(torch.zeros(2, 3), (None, 1, slice(1, None))).written_shape
        torch.Size([2])
        """
        return torch.Size(self._written_shape())

    def _written_shape(self) -> list[int]:
        sizes = list(self.shape)
        for dim, step in self.steps:
            if type(step) is slice:
                sizes[dim] = len(range(step.start, step.stop, step.step))
            else:
                del sizes[dim]
        return sizes

    # -- the forms --------------------------------------------------------------

    def flat_positions(self, *, flatten: bool = False) -> Tensor:
        """Row-major positions in ``x.reshape(-1)`` of each element of ``x[index]``.

        The result has the shape of ``x[index]``, or one dimension with
        ``flatten=True``; do not write into it.

        >>> IndexPlan.of(torch.zeros(2, 2), torch.tensor([[True, False], [False, True]])).flat_positions()
        tensor([0, 3])
        >>> IndexPlan.of(torch.zeros(2, 2), (1, 0)).flat_positions(flatten=True)
        tensor([2])
        """
        if self._positions is None:
            if self.kind == "basic":
                steps = self.steps
                if flatten and len(steps) == len(self.shape) and _ints_only(steps):
                    return self._basic_positions(flat=True)  # one element, as [position]
                self._positions = self._basic_positions()
            elif self.kind == "boolean" and self.index[0].ndim == len(self.shape):
                self._positions = self.index[0].reshape(-1).nonzero().squeeze(1)
            else:
                self._positions = self._grid_positions()  # torch checks the index here
        positions = self._positions
        if flatten and positions.ndim != 1:
            return positions.reshape(-1)
        return positions

    def _basic_positions(self, flat: bool = False) -> Tensor:
        """Positions of a basic index: its offset plus one ``arange`` per dimension it keeps."""
        shape = self.shape
        strides = _contiguous_strides(shape)
        offset, dim = 0, 0
        kept: list[tuple[int, int]] = []  # (stride in x.reshape(-1), length), per kept dim
        n_real = sum(1 for i in self.index if i is not None and i is not Ellipsis)
        for item in self.index:
            if item is None:
                continue
            if item is Ellipsis:
                for d in range(dim, dim + len(shape) - n_real):
                    kept.append((strides[d], shape[d]))
                dim += len(shape) - n_real
                continue
            if type(item) is slice:
                start, stop, step = item.indices(shape[dim])
                offset += start * strides[dim]
                length = len(range(start, max(stop, start), step))
                # one element: its step is not needed (and 2**62 times a stride is past int64)
                kept.append((strides[dim] * step if length > 1 else strides[dim], length))
            else:
                offset += (item % shape[dim]) * strides[dim]
            dim += 1
        kept.extend((strides[d], shape[d]) for d in range(dim, len(shape)))
        if any(length == 0 for _, length in kept):  # nothing written
            return torch.empty(self.result_shape, dtype=_LONG, device=self.device)
        if not kept:
            if flat:
                return torch.full((1,), offset, dtype=_LONG, device=self.device)
            positions = torch.scalar_tensor(offset, dtype=_LONG, device=self.device)
        last = len(kept) - 1
        for k, (stride, length) in enumerate(kept):
            start = offset if k == 0 else 0
            grid = torch.arange(start, start + stride * length, stride, device=self.device)
            if k != last:
                grid = grid.view((length,) + (1,) * (last - k))
            positions = grid if k == 0 else positions + grid
        if self.new_axes:
            return positions.view(self.result_shape)
        return positions

    def _grid_positions(self) -> Tensor:
        """Flat positions of ``x[index]`` for any index, read by torch from a grid."""
        numel = self.shape.numel()
        if numel <= _ONE_GRID_MAX:
            grid = torch.arange(numel, device=self.device).view(self.shape)
            return grid[self.index]
        return self.positions_per_dimension()

    def positions_per_dimension(self) -> Tensor:
        """:meth:`flat_positions` with no tensor of ``x``'s size: torch indexes one
        expanded ``arange`` per dimension (stride 0 elsewhere, nothing allocated
        but the result), and the terms times each dimension's stride are summed:
        one indexing per dimension instead of one, no int64 grid of ``x``'s size.

        >>> IndexPlan.of(torch.zeros(3, 4), (torch.tensor([2, 0]), slice(1, 3))).positions_per_dimension()
        tensor([[ 9, 10],
                [ 1,  2]])
        """
        flat = None
        for dim, stride in enumerate(_contiguous_strides(self.shape)):
            size = self.shape[dim]
            view = [1] * len(self.shape)
            view[dim] = size
            grid = torch.arange(size, device=self.device).view(view).expand(self.shape)
            term = grid[self.index] * stride
            flat = term if flat is None else flat + term
        if flat is None:  # 0-d: index the single position 0
            return torch.zeros((), dtype=_LONG, device=self.device)[self.index]
        return flat

    def written(self, dtype: torch.dtype) -> Tensor:
        """A tensor of ``dtype`` broadcastable to ``x``'s shape: one (True) where
        ``x[index]`` writes, zero elsewhere; do not write into it.

        >>> IndexPlan.of(torch.zeros(3), slice(1, None)).written(torch.float32)
        tensor([0., 1., 1.])
        """
        kind = self.kind
        if kind == "basic":
            out = self._zeros(dtype)
            out[self.index] = 1
            return out
        if kind == "boolean":
            given: Tensor = self.index[0]
            if given.device != self.device:  # setitem takes a CPU mask for a meta x, where can't
                given = given.to(self.device)
            if given.ndim != len(self.shape):
                given = given.view(given.shape + (1,) * (len(self.shape) - given.ndim))
            return given if dtype is torch.bool else given.to(dtype)
        shape, device = self.shape, self.device
        tensors = self.index_tensors()
        if _current_level() is None and tensors is not None:
            out = self._zeros(dtype)
            out[tensors] = 1  # torch checks the index
            return out
        # out of place, so that a batched index works under vmap; contiguous, for view(-1)
        out = torch.zeros(shape, dtype=dtype, device=device)
        one = torch.ones((), dtype=dtype, device=device)
        if tensors is not None:
            return out.index_put(tensors, one)
        return out.view(-1).index_put((self.flat_positions(flatten=True),), one).view(shape)

    def mask(self) -> Tensor:
        """A boolean tensor broadcastable to ``x``'s shape, True where written.

        A mask index is returned as given (no copy); do not write into it.

        >>> IndexPlan.of(torch.zeros(3), slice(1, None)).mask()
        tensor([False,  True,  True])
        """
        mask = self._mask
        if mask is None:
            mask = self._mask = self.written(torch.bool)
        return mask

    def _zeros(self, dtype: torch.dtype) -> Tensor:
        """Zeros of ``dtype`` in ``x``'s shape and on its device, not batched by ``vmap``;
        with ``x``'s strides where ``zeros_like`` keeps them (write it by setitem, not ``view``)."""
        like = self._like
        if like is not None and _current_level() is None:
            return torch.zeros_like(like, dtype=dtype)
        return torch.zeros(self.shape, dtype=dtype, device=self.device)

    def spread(self, value: Tensor) -> Tensor:
        """``value`` laid out over ``x``'s shape: equal to it at written positions.

        Values elsewhere are unspecified (zero or broadcast copies). A
        one-element value (except with index tensors, where it is scattered so
        that each written position sends its own gradient back, as setitem's
        does) and a basic index of ints and full slices cost no copy; other
        values are scattered into a zero tensor.

        >>> IndexPlan.of(torch.zeros(2, 3), 1).spread(torch.tensor([7.0, 8.0, 9.0]))
        tensor([[7., 8., 9.]])
        """
        if value.numel() == 1 and self.kind != "advanced":  # one element always fits
            return value if value.ndim == 0 else value.reshape(())
        if self.kind == "boolean" and _is_batched(self.index[0]):
            return self._spread_by_rank(value)
        value = self.fit(value)
        if self.kind == "basic" and _ints_only(self.steps):
            for axis in reversed(self.new_axes):
                value = value.squeeze(axis)
            for dim, _ in reversed(self.steps):
                value = value.unsqueeze(dim)
            return value
        zeros = torch.zeros(self.shape.numel(), dtype=value.dtype, device=value.device)
        return zeros.index_put((self.flat_positions(),), value).view(self.shape)

    def _spread_by_rank(self, value: Tensor) -> Tensor:
        """:meth:`spread` for a mask that ``vmap`` batches: no ``nonzero`` (its
        size differs per example), but each written position's rank among
        the mask's True entries (a ``cumsum``) picks its entry of ``value``.

        The count of True entries cannot be compared with the value's length
        in Python under ``vmap``; where they differ, every position picks an
        entry past the end, so that ``index_select`` raises instead of writing
        a wrong value, and on the CPU that error becomes setitem's shape
        mismatch, which the loop over the examples raises for the same write
        (on CUDA an index out of range is a device-side assert; not checked
        here, for want of a GPU):

        >>> masks = torch.tensor([[True, True, False], [False, False, True]])
        >>> write = lambda m: IndexPlan.of(torch.zeros(3), m).spread(torch.tensor([5.0, 6.0]))
        >>> torch.func.vmap(write)(masks)
        Traceback (most recent call last):
            ...
        RuntimeError: shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [n] (n: an example's count of True entries, which under vmap is another than 2 for some example)
        """
        mask: Tensor = self.index[0]
        rest = len(self.shape) - mask.ndim
        value = self.fit(value)
        if value.ndim <= rest or value.shape[0] == 1:  # the same entries for every position
            return value.squeeze(0) if value.ndim > rest else value
        flat = mask.reshape(-1)
        n = value.shape[0]
        rank = torch.where(flat, flat.cumsum(0) - 1, n)  # unwritten positions: the padding
        rank = torch.where(flat.sum() == n, rank, n + 1)  # another count: out of range
        padded = torch.cat([value, value.new_zeros((1, *value.shape[1:]))])
        try:
            picked = padded.index_select(0, rank)
        except (IndexError, RuntimeError) as error:
            if "out of" not in str(error):
                raise
            rest_sizes = "".join(f", {size}" for size in value.shape[1:])
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                f"to indexing result of shape [n{rest_sizes}] (n: an example's count of True "
                f"entries, which under vmap is another than {n} for some example)"
            ) from None
        return picked.view(mask.shape + picked.shape[1:])

    def fit(self, value: Tensor) -> Tensor:
        """``value`` broadcast to the shape of ``x[index]``, as setitem does.

        Raise torch's ``RuntimeError`` naming both shapes when it does not fit.
        For a mask that ``vmap`` batches (each example's ``x[mask]`` has its
        own length) the value is returned without broadcasting, its trailing
        dimensions checked (its length along the mask is checked by
        :meth:`spread`).

        >>> plan = IndexPlan.of(torch.zeros(3), slice(None))
        >>> plan.fit(torch.ones(2))
        Traceback (most recent call last):
            ...
        RuntimeError: shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]
        """
        if self.kind == "boolean" and _is_batched(self.index[0]):
            return _fit_batched_mask(value, self.shape[self.index[0].ndim :])
        try:
            target = self.result_shape
        except IndexError:  # positions past the end: torch checks the value's shape first
            unread = self._shape_without_positions()
            if unread is not None and value.ndim != 0 and not torch.compiler.is_compiling():
                _fitting_shape(value, unread)
            raise
        if value.ndim == 0:  # fits anything
            return torch.broadcast_to(value, target)
        if torch.compiler.is_compiling():
            return _fit_traced(value, target)
        if value.shape == target:
            return value
        shape = _fitting_shape(value, target)
        if shape != value.shape:
            value = value.reshape(shape)
        return torch.broadcast_to(value, target)  # Tensor.expand parses a Size slowly

    def _shape_without_positions(self) -> torch.Size | None:
        """The shape of ``x[index]`` as torch reads it before any bounds check (from a
        meta tensor, which holds no data), or None where that cannot be read.

        >>> IndexPlan.of(torch.zeros(3, 4), (slice(None), torch.tensor([9])))._shape_without_positions()
        torch.Size([3, 1])
        """
        try:
            return torch.empty(self.shape, device="meta")[self.index].shape
        except Exception:  # noqa: BLE001 - the caller's own error is the answer then
            return None

    def mask_batched(self) -> bool:
        """Whether the index is one mask that ``vmap`` batches.

        >>> IndexPlan.of(torch.zeros(3), torch.tensor([True, False, True])).mask_batched()
        False
        """
        return self.kind == "boolean" and _is_batched(self.index[0])

    def has_duplicates(self) -> bool:
        """Whether two elements of ``x[index]`` are the same element of ``x``.

        A data-dependent check: it cannot run on an index that ``vmap``
        batches (then ``TypeError``) or inside ``torch.compile``.

        >>> IndexPlan.of(torch.zeros(3), torch.tensor([0, 2, 0])).has_duplicates()
        True
        """
        if self.kind != "advanced":
            return False
        flat = self.flat_positions(flatten=True)
        if _is_batched(flat):
            raise TypeError("cannot check an index batched by vmap for duplicate positions")
        return bool(flat.numel() != torch.unique(flat).numel())

    def distinct_by_construction(self) -> bool:
        """Whether no two elements of ``x[index]`` can be the same element of ``x``,
        known without reading the index: masks beside ints, slices, ``...`` and
        ``None``, with no other index tensor (the coordinates of a mask's True
        elements never repeat, and an int pairs each with one column).

        >>> x = torch.zeros(3, 2)
        >>> IndexPlan.of(x, (torch.tensor([True, False, True]), 1)).distinct_by_construction()
        True
        >>> IndexPlan.of(x, (torch.tensor([True, False, True]), torch.tensor([1, 1]))).distinct_by_construction()
        False
        """
        masks = 0
        for part in self.index:
            if isinstance(part, Tensor):
                if part.dtype is not torch.bool or part.ndim == 0:
                    return False
                masks += 1
            elif type(part) is bool:
                return False
        return masks > 0

    def duplicates_checkable(self) -> bool:
        """Whether :meth:`has_duplicates` can run here: not while ``torch.compile``
        traces, and not on an index that ``vmap`` batches.

        >>> IndexPlan.of(torch.zeros(3), [0, 1]).duplicates_checkable()
        True
        """
        if self.kind != "advanced" or torch.compiler.is_compiling():
            return False
        return not _is_batched(self.flat_positions())


#: Why ``x[mask].shape`` cannot be known under ``vmap`` with a batched mask.
_BATCHED_MASK_SHAPE = (
    "the shape of x[mask] is not known for a mask batched by vmap (each example's mask "
    "selects its own number of elements); write through it with recipe 'where' or 'mask'"
)


def _fit_batched_mask(value: Tensor, rest: torch.Size) -> Tensor:
    """:meth:`IndexPlan.fit` for a mask batched by ``vmap``: setitem's rule for
    the dimensions after the mask's (``rest``), leading ones dropped."""
    shape = value.shape
    while len(shape) > len(rest) + 1 and shape[0] == 1:  # setitem drops leading 1s
        shape = shape[1:]
    ok = len(shape) <= len(rest) + 1 and all(
        s == 1 or s == t for s, t in zip(reversed(shape), reversed(rest), strict=False)
    )
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
            f"to indexing result of shape [n{''.join(f', {size}' for size in rest)}] (n: the mask's "
            "count)"
        )
    return value.reshape(shape) if len(shape) != value.ndim else value


def _shape_mismatch(value: Tensor, target: torch.Size) -> str:
    return (
        f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
        f"broadcast to indexing result of shape {list(target)}"
    )


#: What a compiled recipe raises when the value does not fit ``x[mask]`` (Dynamo
#: takes a constant message only).
_TRACED_MISMATCH = "shape mismatch: value tensor cannot be broadcast to indexing result"


def _fit_traced(value: Tensor, target: torch.Size) -> Tensor:
    """:meth:`IndexPlan.fit` while ``torch.compile`` traces, where the shape of
    ``x[mask]`` is known only at run time: no Python comparison that Dynamo must
    guard on it, but ``torch._check``, which it turns into a check at run time."""
    shape = value.shape
    while len(shape) > len(target) and shape[0] == 1:  # setitem drops leading 1s
        shape = shape[1:]
    if len(shape) > len(target):
        raise RuntimeError(_shape_mismatch(value, target))
    for s, t in zip(reversed(shape), reversed(target), strict=False):
        # the value's own size: known, or guarded as torch guards it; a size known only
        # at run time (``fn(x[mask])`` in ``at().apply``) is taken as not 1, as torch's
        # own broadcasting takes an unbacked size (no guard on it)
        if guard_or_true(s != 1):
            torch._check(s == t, lambda: _TRACED_MISMATCH)  # type: ignore[no-untyped-call]
    if len(shape) != value.ndim:
        value = value.reshape(shape)
    return torch.broadcast_to(value, target)
