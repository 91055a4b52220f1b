"""One index model: turn any ``x[index]`` index into the forms recipes need.

Every recipe takes the index a user would write in ``x[index] = value`` and
asks an :class:`IndexPlan` for the form it can use: a boolean mask of ``x``'s
shape, flat positions for ``index_put``/``scatter``, or a chain of
``(dim, int | slice)`` steps for ``select_scatter``/``slice_scatter``.
Recipes never parse indices themselves.

Torch itself does the hard part. The plan converts the index item by item
exactly as torch's setitem does (a list holding a list, a slice, ``None``,
``...`` or a tensor is a tuple of indices, any other list or a NumPy array is
one index tensor, and so on), then indexes a coordinate tensor with it, so the
positions it returns are exactly those that ``x[index]`` reads, in the same
order, with torch's own layout rules and bounds checks.

The common forms (an int, a slice, a tuple of them, one index tensor) take a
fast path, and the masks and positions of int and slice indices are cached
(see :func:`clear_cache`), so planning costs far less than the write itself.

>>> import torch
>>> plan = IndexPlan.of(torch.zeros(2, 3), (1, slice(None, None, 2)))
>>> plan.kind, tuple(plan.result_shape)
('basic', (2,))
>>> plan.flat_positions()
tensor([3, 5])
>>> IndexPlan.of(torch.zeros(3, 4), ([0, 1], [1, 2])).flat_positions()  # rows, then columns
tensor([1, 6])

``[[0, 1], [1, 2]]`` means the same, as in torch, with torch's deprecation
warning (:data:`SEQUENCE_AS_TUPLE_WARNING`).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import torch
from torch import Tensor

__all__ = ["IndexPlan", "Step", "as_value", "clear_cache"]

_T = TypeVar("_T")
Kind = Literal["basic", "mask", "advanced"]
#: One step of a basic index: ``(dim, position)`` or ``(dim, slice)``, where
#: ``dim`` counts the dimensions of the tensor left after the earlier steps.
Step = tuple[int, int | slice]

_INDEX_DTYPES = (torch.int64, torch.int32, torch.bool)
_BAD_ITEM = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
    "Variables are valid indices (got {})"
)
_BAD_DTYPE = "tensors used as indices must be long, int, byte or bool tensors; got {}"
_UINT8 = (
    "setitem takes bool masks, not torch.uint8 ones (torch refuses them in most "
    "forms and deprecates the rest): use mask.bool()"
)
#: torch's own warning when a list is read as a tuple of indices.
SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result"
)


# -- turning a user's index into torch's items ---------------------------------


def _is_ndarray(obj: Any) -> bool:
    return type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray"


def _is_sequence(obj: Any) -> bool:
    """Whether torch's indexing sees ``obj`` as a sequence (``PySequence_Check``)."""
    if isinstance(obj, (dict, Tensor)):
        return isinstance(obj, Tensor)
    return isinstance(obj, (list, tuple, range, str, bytes, Sequence)) or _is_ndarray(obj)


def _as_tuple(index: Any) -> tuple[Any, ...]:
    """The index as torch's setitem reads it: a tuple of items.

    A list (not a tuple, tensor or NumPy array) of fewer than 32 items is a
    tuple of indices when one of its items is a tensor, a sequence, a slice,
    ``None`` or ``...`` (NumPy's old rule, which torch 2.13 still follows with
    a deprecation warning); otherwise it is one index.
    """
    if isinstance(index, tuple):
        return tuple(index)
    if isinstance(index, Tensor) or _is_ndarray(index) or isinstance(index, (str, bytes)):
        return (index,)
    if isinstance(index, (list, range)) or (
        isinstance(index, Sequence) and not isinstance(index, (str, bytes))
    ):
        items = list(index)
        if len(items) < 32 and any(
            isinstance(i, slice) or i is None or i is Ellipsis or _is_sequence(i) for i in items
        ):
            warnings.warn(SEQUENCE_AS_TUPLE_WARNING, UserWarning, stacklevel=4)
            return tuple(items)
    return (index,)


def _sequence_to_tensor(item: Any) -> Tensor:
    """A list or NumPy array inside an index, as torch converts it: bool stays
    bool, uint8 stays uint8 (then refused), anything else becomes int64."""
    # torch's own errors (a ragged list, a list of strings) pass through unchanged
    tensor = torch.as_tensor(item) if _is_ndarray(item) else torch.tensor(item)
    if tensor.dtype in (torch.bool, torch.uint8):
        return tensor
    if tensor.is_complex():
        raise IndexError(_BAD_DTYPE.format(f"a sequence of {tensor.dtype}"))
    return tensor.long()


def _item(item: Any) -> Any:
    """One item of the index tuple, in the form the plan keeps."""
    if item is None or item is Ellipsis or type(item) is int or type(item) is slice:
        return item
    if isinstance(item, bool):  # Python bools index like 0-d masks, not like ints
        return torch.tensor(item)
    if isinstance(item, Tensor):
        if item.dtype not in _INDEX_DTYPES:
            if item.dtype == torch.uint8:
                raise IndexError(_UINT8)
            raise IndexError(_BAD_DTYPE.format(item.dtype))
        return item
    if _is_ndarray(item) and item.ndim == 0 and item.dtype.kind in "iu":
        return operator.index(item)  # torch reads a 0-d integer array as an int
    if _is_ndarray(item) or isinstance(item, (list, tuple, range)):
        tensor = _sequence_to_tensor(item)
        if tensor.dtype == torch.uint8:
            raise IndexError(_UINT8)
        return tensor
    if isinstance(item, (str, bytes)):  # torch: "new(): invalid data type 'str'"
        raise TypeError(f"an index cannot be a {type(item).__name__} ({item!r})")
    try:
        return operator.index(item)  # NumPy integers and other __index__ objects
    except TypeError:
        raise IndexError(_BAD_ITEM.format(type(item).__name__)) from None


def _items(index: Any) -> tuple[Any, ...]:
    return tuple(_item(i) for i in _as_tuple(index))


def _check_layout(x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.layout is not torch.strided:
        if x.is_sparse or x.layout in (
            torch.sparse_csr,
            torch.sparse_csc,
            torch.sparse_bsr,
            torch.sparse_bsc,
        ):
            raise TypeError("Cannot assign to a sparse tensor")
        raise TypeError(f"Cannot assign to a tensor of layout {x.layout}")


# -- caches: plans of int/slice indices, and the tensors they build ----------------

#: Plans of indices made only of ints and slices, by index, shape and device;
#: each keeps the masks and positions it built (see :meth:`IndexPlan._held`).
_PLANS: dict[tuple[Any, ...], IndexPlan] = {}
#: Other tensors worth keeping: ``arange``\ s and 0-d scalars.
_CACHE: dict[tuple[Any, ...], tuple[Any, tuple[int, ...]]] = {}
_CACHE_ENTRIES = 128
_CACHE_ENTRY_BYTES = 8 << 20  # an arange over 1e6 elements fits

_STRIDED = torch.strided
_BOOL = torch.bool
_is_compiling = torch.compiler.is_compiling
_dispatch_depth = torch._C._len_torch_dispatch_stack
_inference_mode = torch.is_inference_mode_enabled


def clear_cache() -> None:
    """Forget the cached plans, masks and positions (they are rebuilt on demand).

    >>> clear_cache()
    """
    _PLANS.clear()
    _CACHE.clear()


def _caching() -> bool:
    """Caching is off while torch traces (compile, fake tensors) and in inference mode."""
    # is_compiling first: dynamo cannot trace the others
    return not (_is_compiling() or _dispatch_depth() or _inference_mode())


def _remember(store: dict[tuple[Any, ...], _T], key: tuple[Any, ...], value: _T) -> None:
    """``store[key] = value``, forgetting the oldest entry past ``_CACHE_ENTRIES``."""
    if len(store) >= _CACHE_ENTRIES:
        del store[next(iter(store))]
    store[key] = value


def _fresh(held: tuple[Any, tuple[int, ...]]) -> bool:
    """Whether no one wrote into the tensors of a cache entry since it was built."""
    value, versions = held
    if type(value) is tuple:
        return all(t._version == v for t, v in zip(value, versions, strict=True))
    return bool(value._version == versions[0] and not value.requires_grad)


def _entry(built: Any) -> tuple[Any, tuple[int, ...]] | None:
    """``(built, versions)`` to cache, or ``None`` when it is too big to keep."""
    tensors: tuple[Tensor, ...] = built if type(built) is tuple else (built,)
    if sum(t.numel() * t.element_size() for t in tensors) > _CACHE_ENTRY_BYTES:
        return None
    return built, tuple(t._version for t in tensors)


def _cached(key: tuple[Any, ...], build: Callable[[], _T]) -> _T:
    """``build()`` (a tensor or a tuple of them), remembered under ``key``.

    A cached tensor that anyone wrote into (its version moved) is rebuilt.
    While ``torch.compile`` traces, under a dispatch mode and in inference
    mode, nothing is cached or read from the cache.
    """
    if not _caching():  # tracing (dynamo cannot trace the version check), fake tensors
        return build()
    hit = _CACHE.get(key)
    if hit is not None and _fresh(hit):
        return hit[0]  # type: ignore[no-any-return]
    built = build()
    entry = _entry(built)
    if entry is not None:
        _remember(_CACHE, key, entry)
    return built


def _shared_scalar(value: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    """A cached 0-d tensor holding ``value``: nobody may write into it."""
    # -0.0 == 0.0, so the sign of a zero is part of its name; nan is never found
    key = (value, dtype, device) if value else (value, math.copysign(1.0, value), dtype, device)
    hit = _CACHE.get(key)
    if hit is not None:
        tensor: Tensor = hit[0]
        if tensor._version == hit[1][0] and not tensor.requires_grad:
            return tensor
    tensor = torch.scalar_tensor(value, dtype=dtype, device=device)
    if value == value:  # noqa: PLR0124 - nan is never equal to a key, so never kept
        _remember(_CACHE, key, (tensor, (tensor._version,)))
    return tensor


def _basic_key(index: Any) -> Any:
    """A hashable name of an index made only of ints and slices of ints, or ``None``.

    Slices are not hashable before Python 3.12: each becomes a
    ``(start, stop, step)`` tuple (an index never holds a tuple, so the names
    cannot collide).

    >>> _basic_key(3), _basic_key((1, 2)), _basic_key((0, slice(None, 4))), _basic_key([0])
    (3, (1, 2), (0, (None, 4, None)), None)
    """
    tp = type(index)
    if tp is int:
        return index
    if tp is slice:
        index = (index,)
    elif tp is not tuple:
        return None
    else:
        for i in index:  # the most common tuple: ints only, its own name
            if type(i) is not int:
                break
        else:
            return index
    key = []
    for i in index:
        ti = type(i)
        if ti is int:
            key.append(i)
        elif ti is slice:
            start, stop, step = i.start, i.stop, i.step
            if not (
                (start is None or type(start) is int)
                and (stop is None or type(stop) is int)
                and (step is None or type(step) is int)
            ):
                return None
            key.append((start, stop, step))
        else:
            return None
    return tuple(key)


def _arange(numel: int, device: torch.device) -> Tensor:
    return _cached(("arange", numel, device), lambda: torch.arange(numel, device=device))


def _is_batched(t: Tensor) -> bool:
    return bool(torch._C._functorch.is_batchedtensor(t))


# -- the plan ------------------------------------------------------------------------


def _basic_steps(shape: torch.Size, items: tuple[Any, ...]) -> tuple[tuple[Step, ...], bool]:
    """``(steps, has_new_axes)`` of a basic index, with torch's errors."""
    ndim = len(shape)
    n_real = 0
    new_axes = False
    for i in items:
        if i is None:
            new_axes = True
        elif i is not Ellipsis:
            n_real += 1
    if n_real > ndim:
        if ndim == 0 and len(items) == 1 and type(items[0]) is int:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    steps: list[Step] = []
    dim = 0  # dimension of the original tensor
    out_dim = 0  # dimension of the tensor left after the steps so far
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            skipped = ndim - n_real
            dim += skipped
            out_dim += skipped
            continue
        size = shape[dim]
        if type(item) is slice:
            step = None if item.step is None else operator.index(item.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step is not None and step < 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = item.indices(size)
            stop = max(stop, start)
            if start != 0 or stop != size or step != 1:
                steps.append((out_dim, slice(start, stop, step)))
            out_dim += 1
        else:
            if not -size <= item < size:
                raise IndexError(
                    f"index {item} is out of bounds for dimension {dim} with size {size}"
                )
            steps.append((out_dim, item % size))
        dim += 1
    return tuple(steps), new_axes


class IndexPlan:
    """What ``x[index]`` selects, in every form a recipe may need.

    Build one with :meth:`IndexPlan.of`. ``kind`` is ``"basic"`` for ints,
    slices, one ``...`` and ``None`` alone; ``"mask"`` for one boolean tensor
    over the leading dimensions; ``"advanced"`` for anything with an index
    tensor (lists and NumPy arrays included, and torch's rarely used several
    ``...``). ``index`` is the index as a tuple torch reads the same way as
    the user's: lists and NumPy arrays converted to tensors as torch converts
    them, Python bools to 0-d bool tensors.
    """

    __slots__ = (
        "_fit",
        "_held_tensors",
        "_new_axes",
        "_positions",
        "_result_shape",
        "_shared",
        "_steps",
        "device",
        "index",
        "kind",
        "shape",
    )

    shape: torch.Size
    device: torch.device
    index: tuple[Any, ...]
    kind: Kind

    def __init__(
        self, shape: torch.Size, device: torch.device, index: tuple[Any, ...], kind: Kind
    ) -> None:
        self.shape, self.device, self.index, self.kind = shape, device, index, kind
        self._steps: tuple[Step, ...] | None = None
        self._new_axes: tuple[int, ...] | None = None
        self._positions: Tensor | None = None
        self._result_shape: torch.Size | None = None
        #: The masks and positions built so far, by name: ``(tensor, versions)``.
        self._held_tensors: dict[Any, tuple[Any, tuple[int, ...] | None]] = {}
        #: Whether the plan is in the cache of plans (then shared between calls).
        self._shared = False
        #: The last float :meth:`fitted` wrote: (float, dtype, 0-d tensor, its broadcast, version).
        self._fit: tuple[float, torch.dtype, Tensor, Tensor, int] | None = None

    def __repr__(self) -> str:
        return f"IndexPlan(kind={self.kind!r}, shape={list(self.shape)}, index={self.index!r})"

    @classmethod
    def of(cls, x: Tensor, index: Any) -> IndexPlan:
        """Plan ``x[index]``; raise torch's error for a bad index.

        Plans of indices made only of ints and slices are cached by index,
        shape and device (with the masks and positions they build), so
        planning the same write again costs one dictionary lookup.

        >>> IndexPlan.of(torch.zeros(3), 5)
        Traceback (most recent call last):
            ...
        IndexError: index 5 is out of bounds for dimension 0 with size 3
        """
        if (type(x) is not Tensor and not isinstance(x, Tensor)) or x.layout is not _STRIDED:
            _check_layout(x)
        shape = x.shape
        tp = type(index)
        if tp is Tensor and index.dtype is _BOOL and index.shape == shape:
            return cls(shape, x.device, (index,), "mask")  # the common mask: nothing to check
        key = _basic_key(index)
        if key is not None:  # the fast path: ints and slices of ints
            # _caching(), inlined: this is every recipe's first step
            if _is_compiling() or _dispatch_depth() or _inference_mode():
                return cls._basic(shape, x.device, index if type(index) is tuple else (index,))
            device = x.device
            cache_key = (key, shape, device)
            plan = _PLANS.get(cache_key)
            if plan is None:
                plan = cls._basic(shape, device, index if type(index) is tuple else (index,))
                plan._shared = True
                _remember(_PLANS, cache_key, plan)
            return plan
        kind: Kind
        if tp is tuple and all(type(i) is int or type(i) is slice for i in index):
            items, kind = index, "basic"
        elif isinstance(index, Tensor):
            items = (_item(index),)
            kind = "mask" if index.dtype == torch.bool and index.ndim >= 1 else "advanced"
        else:
            items = _items(index)
            basic = True
            ellipses = 0
            for i in items:
                if i is Ellipsis:
                    ellipses += 1
                elif not (i is None or type(i) is int or type(i) is slice):
                    basic = False
            if basic and ellipses <= 1:
                kind = "basic"
            elif (
                len(items) == 1
                and isinstance(items[0], Tensor)
                and items[0].dtype == torch.bool
                and items[0].ndim >= 1
            ):
                kind = "mask"
            else:
                kind = "advanced"
        if kind == "basic":
            return cls._basic(shape, x.device, items)
        plan = cls(shape, x.device, items, kind)
        if kind == "mask":
            mask = items[0]
            if mask.ndim > len(shape) or mask.shape != shape[: mask.ndim]:
                raise IndexError(
                    f"The shape of the mask {list(mask.shape)} at index 0 does not match "
                    f"the shape of the indexed tensor {list(shape)} at index 0"
                )
        else:
            plan._positions = plan._advanced_positions()  # torch checks the index here
        return plan

    @classmethod
    def _basic(cls, shape: torch.Size, device: torch.device, items: tuple[Any, ...]) -> IndexPlan:
        """The plan of a basic index (ints, slices, one ``...``, ``None``)."""
        plan = cls(shape, device, items, "basic")
        plan._steps, new_axes = _basic_steps(shape, items)
        if not new_axes:
            plan._new_axes = ()
        return plan

    def _held(self, name: Any, build: Callable[[], _T]) -> _T:
        """``build()``, kept on the plan under ``name`` for the next call.

        A shared plan (one of the cache of plans) rebuilds a tensor that
        anyone wrote into, and keeps only what it built while caching is on
        (not while torch traces or in inference mode) and what is small
        enough (``_CACHE_ENTRY_BYTES``).
        """
        held = self._held_tensors.get(name)
        if held is not None:
            value, versions = held
            if versions is None:
                return value  # type: ignore[no-any-return]
            if type(value) is tuple:
                for t, v in zip(value, versions):  # noqa: B905 - built together
                    if t._version != v:
                        break
                else:
                    return value  # type: ignore[return-value]
            elif value._version == versions[0] and not value.requires_grad:
                return value  # type: ignore[no-any-return]
        built = build()
        if not self._shared:
            self._held_tensors[name] = (built, None)
        elif _caching():
            entry = _entry(built)
            if entry is not None:
                self._held_tensors[name] = entry
        return built

    @staticmethod
    def items(ndim: int, index: Any) -> tuple[tuple[Any, int | None], ...]:
        """Each item of ``index`` (lists, arrays and bools as tensors) with the
        first dimension of an ``ndim``-dimensional ``x`` that it indexes
        (``None`` for ``None`` and ``...``). Bounds are not checked.

        >>> IndexPlan.items(3, (..., [0, 5]))
        ((Ellipsis, None), (tensor([0, 5]), 2))
        """
        items = _items(index)
        n_real = sum(
            i.ndim if isinstance(i, Tensor) and i.dtype == torch.bool else 1
            for i in items
            if i is not None and i is not Ellipsis
        )
        out: list[tuple[Any, int | None]] = []
        dim = 0
        for item in items:
            if item is None:
                out.append((item, None))
            elif item is Ellipsis:
                out.append((item, None))
                dim += max(ndim - n_real, 0)
            else:
                out.append((item, dim))
                is_mask = isinstance(item, Tensor) and item.dtype == torch.bool
                dim += item.ndim if is_mask else 1
        return tuple(out)

    # -- basic indices ------------------------------------------------------

    @property
    def steps(self) -> tuple[Step, ...]:
        """The basic index as ``select``/``slice`` steps, skipping full slices.

        >>> IndexPlan.of(torch.zeros(4, 5), (-1, slice(1, None))).steps
        ((0, 3), (0, slice(1, 5, 1)))
        """
        if self._steps is None:
            raise TypeError(f"only basic indices have steps; this index is {self.kind}")
        return self._steps

    @property
    def new_axes(self) -> tuple[int, ...]:
        """Dimensions of ``x[index]`` that ``None`` created (basic indices).

        >>> IndexPlan.of(torch.zeros(2, 3), (None, 0, None)).new_axes
        (0, 1)
        """
        if self.kind != "basic":
            raise TypeError(f"only basic indices have new axes; this index is {self.kind}")
        if self._new_axes is None:
            axes, out_dim = [], 0
            n_real = sum(1 for i in self.index if i is not None and i is not Ellipsis)
            for item in self.index:
                if item is None:
                    axes.append(out_dim)
                    out_dim += 1
                elif item is Ellipsis:
                    out_dim += len(self.shape) - n_real
                elif type(item) is slice:
                    out_dim += 1
            self._new_axes = tuple(axes)
        return self._new_axes

    def _basic_index(self) -> tuple[Any, ...]:
        """The basic index without ``None`` (it moves no position)."""
        return tuple(i for i in self.index if i is not None)

    # -- every index ----------------------------------------------------------

    def _advanced_positions(self) -> Tensor:
        """Flat positions of ``x[index]`` for an advanced index, read by torch."""
        numel = self.shape.numel()
        if numel <= _CACHE_ENTRY_BYTES // 8:
            return _arange(numel, self.device).view(self.shape)[self.index]
        flat = None
        strides = torch.empty(self.shape, device="meta").stride()
        for dim, stride in enumerate(strides):
            size = self.shape[dim]
            view = [1] * len(self.shape)
            view[dim] = size
            grid = torch.arange(size, device=self.device).view(view).expand(self.shape)
            term = grid[self.index] * stride
            flat = term if flat is None else flat + term
        if flat is None:  # 0-d: index the single position 0
            return torch.zeros((), dtype=torch.long, device=self.device)[self.index]
        return flat

    @property
    def result_shape(self) -> torch.Size:
        """The shape of ``x[index]``.

        >>> IndexPlan.of(torch.zeros(2, 3), (torch.tensor([[0, 1]]), slice(1, None))).result_shape
        torch.Size([1, 2, 2])
        """
        if self._result_shape is None:
            if self.kind == "mask":
                mask = self.index[0]
                self._result_shape = torch.Size((int(mask.sum()),)) + self.shape[mask.ndim :]
            elif self._positions is not None:
                self._result_shape = self._positions.shape
            elif self.kind == "basic":
                sizes = list(self.shape)
                for dim, step in self.steps:
                    if type(step) is slice:
                        sizes[dim] = len(range(step.start, step.stop, step.step))
                    else:
                        del sizes[dim]
                for axis in self.new_axes:
                    sizes.insert(axis, 1)
                self._result_shape = torch.Size(sizes)
            else:
                probe = torch.zeros((), dtype=torch.bool, device=self.device).expand(self.shape)
                self._result_shape = probe[self.index].shape
        return self._result_shape

    def flat_positions(self, *, flatten: bool = False) -> Tensor:
        """Row-major positions in ``x.reshape(-1)`` of each element of ``x[index]``.

        The result has the shape of ``x[index]``, or one dimension with
        ``flatten=True``; do not write into it.

        >>> IndexPlan.of(torch.zeros(2, 2), torch.tensor([[True, False], [False, True]])).flat_positions()
        tensor([0, 3])
        >>> IndexPlan.of(torch.zeros(2, 2), (1, 0)).flat_positions(flatten=True)
        tensor([2])
        """
        if flatten:
            return self._held("positions_1d", lambda: self.flat_positions().reshape(-1))
        if self._positions is not None:
            return self._positions
        return self._held("positions", self._build_positions)

    def _build_positions(self) -> Tensor:
        numel = self.shape.numel()
        if self.kind == "mask":
            given: Tensor = self.index[0]
            if given.ndim == len(self.shape):
                return given.reshape(-1).nonzero().squeeze(1)
            return _arange(numel, self.device).view(self.shape)[given]
        return _arange(numel, self.device).view(self.shape)[self.index].clone()

    def mask(self) -> Tensor:
        """A boolean tensor broadcastable to ``x``'s shape, True where written.

        A mask index is returned as given (no copy); do not write into it.

        >>> IndexPlan.of(torch.zeros(3), slice(1, None)).mask()
        tensor([False,  True,  True])
        """
        if self.kind == "mask":
            given: Tensor = self.index[0]
            if given.ndim == len(self.shape):
                return given
            return given.view(given.shape + (1,) * (len(self.shape) - given.ndim))
        return self._held("mask", self._build_mask)

    def _build_mask(self) -> Tensor:
        shape, device = self.shape, self.device
        if self.kind == "basic":
            mask = torch.zeros(shape, dtype=torch.bool, device=device)
            mask[self._basic_index()] = True
            return mask
        # out of place, so that a batched index works under vmap
        flat = torch.zeros(shape.numel(), dtype=torch.bool, device=device)
        hit = torch.ones((), dtype=torch.bool, device=device)
        return flat.index_put((self.flat_positions(flatten=True),), hit).view(shape)

    def weights(self, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """``(keep, put)``: ``~mask`` and ``mask`` in ``dtype`` (kept for the next call).

        Do not write into them.

        >>> IndexPlan.of(torch.zeros(3), 1).weights(torch.float32)
        (tensor([1., 0., 1.]), tensor([0., 1., 0.]))
        """
        return self._held(
            ("weights", dtype), lambda: ((~self.mask()).to(dtype), self.mask().to(dtype))
        )

    def nonzero(self) -> tuple[Tensor, ...]:
        """``mask().nonzero(as_tuple=True)`` over ``x``'s shape: one position
        tensor per dimension, in the order ``x[index]`` reads a basic index
        (kept for the next call). Do not write into them.

        >>> IndexPlan.of(torch.zeros(2, 3), (1, slice(1, None))).nonzero()
        (tensor([1, 1]), tensor([1, 2]))
        """
        return self._held("nonzero", lambda: self.mask().expand(self.shape).nonzero(as_tuple=True))

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
        value = self.fit(value)
        if self.kind == "basic" and all(type(s) is not slice for _, s in self.steps):
            for axis in reversed(self.new_axes):
                value = value.squeeze(axis)
            for dim, _ in reversed(self.steps):
                value = value.unsqueeze(dim)
            return value
        zeros = torch.zeros(self.shape.numel(), dtype=value.dtype, device=value.device)
        return zeros.index_put((self.flat_positions(),), value).view(self.shape)

    def value(self, value: Any, x: Tensor) -> Tensor:
        """``as_value(value, x, shared=True)``: a float becomes a cached 0-d
        tensor when this plan is cached (nobody may write into it).

        >>> IndexPlan.of(torch.zeros(2), 0).value(1.5, torch.zeros(2, dtype=torch.float64))
        tensor(1.5000, dtype=torch.float64)
        """
        if self._shared and type(value) is float:  # the plan was made while caching
            return _shared_scalar(value, x.dtype, self.device)
        return as_value(value, x, shared=True)

    def fitted(self, value: Any, x: Tensor) -> Tensor:
        """``fit(value(value, x))``: ``value`` in ``x``'s dtype, broadcast to the
        shape of ``x[index]``. A cached plan keeps the last float it fitted.

        >>> IndexPlan.of(torch.zeros(2, 3), (slice(None), 1)).fitted(4.0, torch.zeros(2, 3))
        tensor([4., 4.])
        """
        if self._shared and type(value) is float:
            held = self._fit
            if (
                held is not None
                and held[0] == value
                and held[1] is x.dtype
                and (value or math.copysign(1.0, value) == math.copysign(1.0, held[0]))
                and held[2]._version == held[4]
            ):
                return held[3]
            scalar = self.value(value, x)
            spread = torch.broadcast_to(scalar, self.result_shape)
            self._fit = (value, x.dtype, scalar, spread, scalar._version)
            return spread
        return self.fit(self.value(value, x))

    def fit(self, value: Tensor) -> Tensor:
        """``value`` broadcast to the shape of ``x[index]``, as setitem does.

        Raise torch's ``RuntimeError`` naming both shapes when it does not fit.

        >>> plan = IndexPlan.of(torch.zeros(3), slice(None))
        >>> plan.fit(torch.ones(2))
        Traceback (most recent call last):
            ...
        RuntimeError: shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]
        """
        target = self.result_shape
        if value.ndim == 0:  # fits anything
            return torch.broadcast_to(value, target)
        shape = value.shape
        if shape == target:
            return value
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
        if shape != value.shape:
            value = value.reshape(shape)
        return torch.broadcast_to(value, target)  # Tensor.expand parses a Size slowly

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

    def duplicates_checkable(self) -> bool:
        """Whether :meth:`has_duplicates` can run here: not while ``torch.compile``
        traces, and not on an index that ``vmap`` batches.

        >>> IndexPlan.of(torch.zeros(3), [0, 1]).duplicates_checkable()
        True
        """
        if self.kind != "advanced" or torch.compiler.is_compiling():
            return False
        return not _is_batched(self.flat_positions())


def as_value(value: Any, x: Tensor, *, shared: bool = False) -> Tensor:
    """``value`` as a tensor of ``x``'s dtype and device, as setitem casts it.

    With ``shared=True`` a Python float becomes a cached 0-d tensor, which
    the caller must neither write into nor mark as requiring grad (recipes
    use it; the cache rebuilds a tensor that was changed).

    Gradients flow through the cast, so a float64 value that requires grad
    still receives its gradient when written into a float32 ``x``. (Setitem
    casts too for ints and slices, but refuses another dtype with index
    tensors; recipes accept it for every index.)

    >>> as_value(2.7, torch.zeros(2, dtype=torch.int64))
    tensor(2)
    """
    if shared and type(value) is float and _caching():
        return _shared_scalar(value, x.dtype, x.device)
    if isinstance(value, Tensor):
        if value.is_complex() and not x.is_complex():
            raise TypeError(
                f"cannot write a {value.dtype} value into a {x.dtype} tensor: "
                "the imaginary part would be lost"
            )
        if value.layout is not torch.strided:
            raise TypeError(f"value must be a strided (dense) tensor, not {value.layout}")
        return value.to(dtype=x.dtype, device=x.device)
    if isinstance(value, complex) and not x.is_complex():
        raise TypeError(f"cannot write a complex value into a {x.dtype} tensor")
    if not isinstance(value, (bool, int, float, complex)):
        try:  # NumPy integers, which setitem takes too
            value = operator.index(value)
        except TypeError:
            raise TypeError(
                f"value must be a Python number or a torch.Tensor, got {type(value).__name__}"
            ) from None
    return torch.scalar_tensor(value, dtype=x.dtype, device=x.device)
