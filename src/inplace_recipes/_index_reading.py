"""Reading an index: any ``x[index]`` index, in the one normal form the plans start from.

:meth:`ReadIndex.read` takes the index a user writes in ``x[index] = value``
and reads it item by item exactly as torch's setitem does (a list holding a
list, a slice, ``None``, ``...`` or a tensor is a tuple of indices, any other
list or a NumPy array is one index tensor, a Python bool or a 0-d uint8
array or tensor is a 0-d mask, any other 0-d integer tensor or 0-d array an
int, any object with ``__getitem__`` a sequence, and so on), with torch's
errors for what torch refuses. The result says what
kind of index it is and, for ints and slices, the ``select``/``slice``
steps it takes. It builds no tensor for ints and slices; the forms a
recipe needs are planned from it by :class:`~inplace_recipes._indexing.IndexPlan`.

>>> import torch
>>> read = ReadIndex.read(torch.zeros(2, 3), (1, slice(None, None, 2)))
>>> read.kind, read.steps
('basic', ((0, 1), (0, slice(0, 3, 2))))
>>> ReadIndex.read(torch.zeros(3, 4), [0, 1]).index
(tensor([0, 1]),)
"""

from __future__ import annotations

import ctypes
import operator
import warnings
from typing import Any, Literal, TypeVar

import torch
from torch import Tensor

__all__ = ["SEQUENCE_AS_TUPLE_WARNING", "UINT8_MASK_WARNING", "Kind", "ReadIndex", "Step"]

Kind = Literal["basic", "boolean", "advanced"]
#: One step of a basic index: ``(dim, position)`` or ``(dim, slice)``, where
#: ``dim`` counts the dimensions of the tensor left after the earlier steps.
Step = tuple[int, int | slice]

_INDEX_DTYPES = (torch.int64, torch.int32, torch.bool)
_BAD_ITEM = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
    "Variables are valid indices (got {})"
)
_BAD_DTYPE = "tensors used as indices must be long, int, byte or bool tensors; got {}"
#: torch's own warning when an index holds a uint8 mask (read as ``mask.bool()``).
UINT8_MASK_WARNING = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
)
#: torch's own warning when a list is read as a tuple of indices.
SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result"
)
_STRIDED = torch.strided
_INT64 = 1 << 63
_BOOL = torch.bool
_R = TypeVar("_R", bound="ReadIndex")


# -- torch's items -------------------------------------------------------------


def _is_ndarray(obj: Any) -> bool:
    return type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray"


_PySequence_Check = ctypes.pythonapi.PySequence_Check
_PySequence_Check.argtypes = (ctypes.py_object,)
_PySequence_Check.restype = ctypes.c_int


def _is_sequence(obj: Any) -> bool:
    """Whether torch's indexing sees ``obj`` as a sequence: ``PySequence_Check``,
    as torch calls it (true for any class with ``__getitem__`` that is not a dict).

    >>> _is_sequence([0]), _is_sequence({0: 1}), _is_sequence(3)
    (True, False, False)
    """
    tp = type(obj)
    if tp is int or tp is bool or tp is float or tp is slice or obj is None or obj is Ellipsis:
        return False  # the common items of a list, without a call into C
    if isinstance(obj, (Tensor, list, tuple, range)) or _is_ndarray(obj):
        return True
    return bool(_PySequence_Check(obj))


def _reads_as_tuple(seq: Any) -> bool:
    """torch's ``treatSequenceAsTuple`` for a sequence that is not a tuple, tensor
    or NumPy array: fewer than 32 items, one of them a tensor, a sequence, a
    slice, ``None`` or ``...`` (NumPy's old rule, which torch 2.13 still
    follows with a deprecation warning). A ``len`` or an item that fails
    makes it one index, as in torch (which then reports the failure)."""
    if type(seq) is list:  # the common one: reading its items cannot fail
        return len(seq) < 32 and any(_makes_a_tuple(item) for item in seq)
    try:
        n = len(seq)
    except Exception:  # noqa: BLE001 - torch clears any error here
        return False
    if n >= 32:
        return False
    for i in range(n):
        try:
            item = seq[i]
        except Exception:  # noqa: BLE001 - torch clears any error here
            return False
        if _makes_a_tuple(item):
            return True
    return False


def _makes_a_tuple(item: Any) -> bool:
    return _is_sequence(item) or isinstance(item, slice) or item is None or item is Ellipsis


def _as_tuple(index: Any) -> tuple[Any, ...]:
    """The index as torch's setitem reads it: a tuple of items.

    A sequence other than a tuple, a tensor, a NumPy array or a string is a
    tuple of indices when :func:`_reads_as_tuple` says so; otherwise it is
    one index.
    """
    if isinstance(index, tuple):
        return tuple(index)
    if isinstance(index, (Tensor, str, bytes)) or _is_ndarray(index) or not _is_sequence(index):
        return (index,)
    if _reads_as_tuple(index):
        warnings.warn(SEQUENCE_AS_TUPLE_WARNING, UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _sequence_to_tensor(item: Any) -> Tensor:
    """A sequence or NumPy array inside an index, as torch converts it: bool
    stays bool, uint8 stays uint8 (a mask, see :func:`_item`), anything else becomes int64."""
    # torch's own errors (a ragged list, a list of strings) pass through unchanged
    if _is_ndarray(item):
        tensor = torch.as_tensor(item)
    elif not isinstance(item, (list, tuple, range)):  # a sequence-like of the user's
        tensor = torch.tensor(_read_items(item))
    else:
        try:
            tensor = torch.tensor(item)
        except Exception:  # noqa: BLE001 - read it as setitem does, for setitem's error
            tensor = torch.tensor(_read_items(item))
    if tensor.dtype is torch.int64:  # a list of ints: done
        return tensor
    if tensor.dtype in (torch.bool, torch.uint8):
        return tensor
    if tensor.is_complex() and not _is_ndarray(item):  # torch casts an array, not a list
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return tensor.long()


def _read_items(seq: Any) -> list[Any]:
    """``seq`` as nested lists, read in the order setitem reads an index:
    ``len(seq)``, then each ``seq[i]`` in turn, nested sequences first, so that
    the first error (their own, or torch's for an item it cannot convert) is
    setitem's.

    >>> _read_items(range(3))
    [0, 1, 2]
    """
    items = []
    for i in range(len(seq)):
        item = seq[i]
        if item is seq:
            raise TypeError("new(): self-referential lists are incompatible")
        nested = not isinstance(item, (Tensor, str, bytes)) and not _is_ndarray(item)
        if nested and _is_sequence(item):
            item = _read_items(item)
        else:
            torch.tensor(item)  # torch's error for an item it cannot convert
        items.append(item)
    if items and not isinstance(seq, (list, tuple, range)):  # torch copies them by iterating
        walked = len(list(seq))
        if walked != len(items):
            raise ValueError(f"expected sequence of length {len(items)} at dim 0 (got {walked})")
    return items


def _item(item: Any, uint8: list[bool] | None = None) -> Any:
    """One item of the index tuple, in the form the plan keeps.

    As torch's setitem reads it: a 0-d integer tensor is an int (read with
    ``item()`` where its value can be read, else kept as an int64 index
    tensor), a 0-d uint8 tensor or NumPy array a 0-d mask, like a bool; any
    other 0-d NumPy array is cast to int64 and is an int. A uint8 tensor or
    array of at least one dimension is a mask, read as ``mask.bool()`` with
    torch's deprecation warning (:data:`UINT8_MASK_WARNING`), and noted in
    ``uint8`` (torch's ``masked_fill_`` refuses it, see
    :func:`~inplace_recipes.recipes.setitem_value`). An object
    with ``__getitem__`` is converted by ``torch.tensor`` (so its own errors
    pass through), one with ``__index__`` only is an int.

    >>> import numpy as np
    >>> _item(np.array(3, dtype=np.uint8)), _item(torch.tensor(2, dtype=torch.int8))
    (tensor(True), 2)
    """
    if item is None or item is Ellipsis or type(item) is int or type(item) is slice:
        return item
    if isinstance(item, bool):  # Python bools index like 0-d masks, not like ints
        return torch.tensor(item)
    if isinstance(item, Tensor):
        if item.ndim == 0 and item.dtype is not _BOOL and not item.is_floating_point():
            if item.dtype == torch.uint8:
                return item != 0  # torch reads a 0-d uint8 tensor as a bool
            if not item.is_complex():  # ... and a 0-d integer tensor as an int (select)
                return int(item) if _readable(item) else item.long()
        if item.dtype not in _INDEX_DTYPES:
            if item.dtype == torch.uint8:
                return _uint8_mask(item, uint8)
            raise IndexError(_BAD_DTYPE.format(item.dtype))
        return item
    if _is_ndarray(item) and item.ndim == 0:
        if item.dtype.kind == "b" or item.dtype.name == "uint8":  # a 0-d mask
            return torch.tensor(bool(item))
        return int(torch.as_tensor(item).long())  # torch casts to int64 (wrapping, truncating)
    if isinstance(item, (str, bytes)):  # torch: "new(): invalid data type 'str'"
        raise TypeError(f"an index cannot be a {type(item).__name__} ({item!r})")
    if _is_sequence(item):
        tensor = _sequence_to_tensor(item)
        if tensor.dtype == torch.uint8:
            return _uint8_mask(tensor, uint8)
        return tensor
    try:
        return operator.index(item)  # NumPy integers and other __index__ objects
    except TypeError:
        raise IndexError(_BAD_ITEM.format(type(item).__name__)) from None


def _uint8_mask(mask: Tensor, uint8: list[bool] | None) -> Tensor:
    """A uint8 mask as torch 2.13 reads it: ``mask.bool()``, with its deprecation warning."""
    warnings.warn(UINT8_MASK_WARNING, UserWarning, stacklevel=5)
    if uint8 is not None:
        uint8.append(True)
    return mask.bool()


def _readable(t: Tensor) -> bool:
    """Whether the value of a 0-d index tensor can be read here, as setitem
    reads it (``item()``): not while ``torch.compile`` traces, under a
    dispatch mode (fake tensors), on the meta device, for a tensor subclass
    or one that ``vmap`` batches. Elsewhere the tensor stays an index tensor,
    which selects the same elements."""
    return not (
        torch.compiler.is_compiling()
        or torch._C._len_torch_dispatch_stack()
        or type(t) is not Tensor
        or t.is_meta
        or torch._C._functorch.is_batchedtensor(t)
    )


def _specified_dims(items: tuple[Any, ...]) -> int:
    """How many dimensions of ``x`` torch's setitem counts for the raw items
    (``count_specified_dimensions``): a bool or uint8 tensor counts its
    dimensions, ``None``, ``...`` and Python bools none, anything else one
    (a 0-d bool NumPy array too)."""
    count = 0
    for item in items:
        if isinstance(item, Tensor):
            count += item.ndim if item.dtype in (torch.bool, torch.uint8) else 1
        elif not (item is None or item is Ellipsis or item is True or item is False):
            count += 1
    return count


def _items(index: Any, ndim: int | None = None, uint8: list[bool] | None = None) -> tuple[Any, ...]:
    """The items of ``index`` as the plan keeps them; with ``ndim``, torch's
    "too many indices" error for an ``ndim``-dimensional ``x`` first. A uint8
    mask among them is noted in ``uint8`` (see :func:`_item`)."""
    raw = _as_tuple(index)
    if ndim is None:
        return tuple(_item(i) for i in raw)
    specified = _specified_dims(raw)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    items = tuple(_item(i, uint8) for i in raw)
    ellipses = [at for at, i in enumerate(items) if i is Ellipsis]
    if len(ellipses) == 1 and _specified_dims(items) != specified:
        # torch's ``...`` spans the dimensions the raw items leave: a 0-d NumPy
        # bool or a nested list of bools counts one there, not as the mask it becomes
        at = ellipses[0]
        items = items[:at] + (slice(None),) * (ndim - specified) + items[at + 1 :]
    return items


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


def _ints_and_slices(index: tuple[Any, ...]) -> bool:
    """Whether every item is an int or a slice (a loop: ``all()`` costs twice as much)."""
    for i in index:  # noqa: SIM110 - a loop, for speed
        if type(i) is not int and type(i) is not slice:
            return False
    return True


def _basic_steps(
    shape: torch.Size, items: tuple[Any, ...], plain: bool = False
) -> tuple[tuple[Step, ...], bool]:
    """``(steps, has_new_axes)`` of a basic index, with torch's errors.

    ``plain``: the items are ints and slices only (no ``None``, no ``...``).
    """
    ndim = len(shape)
    n_real = 0
    new_axes = False
    if plain:
        n_real = len(items)
    else:
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
            step = item.step
            if step is None:
                if item.start is None and item.stop is None:  # `:`
                    out_dim += 1
                    dim += 1
                    continue
            else:
                if type(step) is not int:
                    step = operator.index(step)
                if step <= 0:
                    raise ValueError(
                        "slice step cannot be zero"
                        if step == 0
                        else "step must be greater than zero"
                    )
            start, stop, step = item.indices(size)
            if stop < start:  # noqa: PLR1730 - max() costs a call
                stop = start
            if step >= size and stop > start:  # one element: a step as big as 2**62 must
                stop, step = start + 1, 1  # not reach the positions' arithmetic
            if start != 0 or stop != size or step != 1:
                steps.append((out_dim, slice(start, stop, step)))
            out_dim += 1
        else:
            if not -size <= item < size:
                if not -_INT64 <= item < _INT64:  # setitem reads an int as an int64 first
                    raise ValueError("Overflow when unpacking long long")
                raise IndexError(
                    f"index {item} is out of bounds for dimension {dim} with size {size}"
                )
            steps.append((out_dim, item % size))
        dim += 1
    return tuple(steps), new_axes


class ReadIndex:
    """An index as torch's setitem reads it, for a tensor of a given shape.

    Build one with :meth:`read`. ``kind`` is ``"basic"`` for ints, slices,
    one ``...`` and ``None`` alone; ``"boolean"`` for one boolean tensor over
    the leading dimensions; ``"advanced"`` for anything with an index tensor
    (lists and NumPy arrays included, and torch's rarely used several
    ``...``). ``index`` is the index as a tuple torch reads the same way as
    the user's: lists and NumPy arrays converted to tensors as torch converts
    them, Python bools to 0-d bool tensors. Reading checks ints and slices
    against the shape and a mask's shape; index tensors are checked by torch
    when a form is built from them.
    """

    __slots__ = ("_new_axes", "_steps", "device", "index", "kind", "shape", "uint8_mask")

    shape: torch.Size
    device: torch.device
    index: tuple[Any, ...]
    kind: Kind
    #: Whether the index held a uint8 mask (``index`` holds it as ``mask.bool()``).
    uint8_mask: bool

    def __init__(
        self,
        shape: torch.Size,
        device: torch.device,
        index: tuple[Any, ...],
        kind: Kind,
        steps: tuple[Step, ...] | None = None,
        new_axes: tuple[int, ...] | None = None,
    ) -> None:
        self.shape, self.device, self.index, self.kind = shape, device, index, kind
        self._steps, self._new_axes = steps, new_axes
        self.uint8_mask = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, shape={list(self.shape)}, index={self.index!r})"

    @classmethod
    def read(cls: type[_R], x: Tensor, index: Any) -> _R:  # noqa: PYI019 - Python 3.10
        """Read ``x[index]``; raise torch's error for a bad index.

        >>> ReadIndex.read(torch.zeros(3), 5)
        Traceback (most recent call last):
            ...
        IndexError: index 5 is out of bounds for dimension 0 with size 3
        """
        if (type(x) is not Tensor and not isinstance(x, Tensor)) or x.layout is not _STRIDED:
            _check_layout(x)
        shape = x.shape
        tp = type(index)
        # the common indices first, read with as little Python as they need
        if tp is int and shape and -shape[0] <= index < shape[0]:  # a row
            return cls(shape, x.device, (index,), "basic", ((0, index % shape[0]),), ())
        if tp is Tensor and index.dtype is _BOOL and index.shape == shape:
            return cls(shape, x.device, (index,), "boolean")  # the common mask: nothing to check
        if tp is list and index and all(type(i) is int for i in index):  # [a, b, c]
            return cls(shape, x.device, (torch.tensor(index),), "advanced")
        kind: Kind
        if tp is tuple and len(index) <= len(shape):  # (i, j): ints in range
            steps: list[Step] = []
            for dim, i in enumerate(index):
                if type(i) is not int or not -shape[dim] <= i < shape[dim]:
                    break
                steps.append((0, i % shape[dim]))
            else:
                return cls(shape, x.device, index, "basic", tuple(steps), ())
        plain = False
        uint8: list[bool] = []
        if tp is int or tp is slice:
            items: tuple[Any, ...] = (index,)
            kind, plain = "basic", True
        elif tp is tuple and _ints_and_slices(index):
            items, kind, plain = index, "basic", True
        elif isinstance(index, Tensor):
            if not shape and (index.ndim or index.dtype not in (_BOOL, torch.uint8)):
                raise IndexError("too many indices for tensor of dimension 0")
            items = (_item(index, uint8),)
            if type(items[0]) is int:  # a 0-d integer tensor: an int, as torch reads it
                kind = "basic"
            else:
                kind = "boolean" if index.dtype == torch.bool and index.ndim >= 1 else "advanced"
        else:
            items = _items(index, len(shape), uint8)
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
                kind = "boolean"
            else:
                kind = "advanced"
        read = cls(shape, x.device, items, kind)
        if uint8:
            read.uint8_mask = True
        if kind == "basic":
            read._steps, new_axes = _basic_steps(shape, items, plain)
            if not new_axes:
                read._new_axes = ()
        elif len(items) == 1 and items[0].dtype == torch.bool and items[0].ndim >= 1:
            mask = items[0]  # a boolean mask, or a uint8 one read as bool (kind "advanced")
            if mask.ndim > len(shape) or mask.shape != shape[: mask.ndim]:
                raise IndexError(
                    f"The shape of the mask {list(mask.shape)} at index 0 does not match "
                    f"the shape of the indexed tensor {list(shape)} at index 0"
                )
        return read

    @staticmethod
    def items(ndim: int, index: Any) -> tuple[tuple[Any, Any, int | None], ...]:
        """Each item of ``index`` as given, as read (lists, arrays and bools as tensors),
        and the first dimension of an ``ndim``-dimensional ``x`` that it indexes (``None``
        for ``None`` and ``...``, whose span is what torch's count of the given items
        leaves: a 0-d NumPy bool counts one there). Bounds are not checked.

        >>> ReadIndex.items(3, (..., [0, 5]))
        ((Ellipsis, Ellipsis, None), ([0, 5], tensor([0, 5]), 2))
        >>> import numpy as np
        >>> [dim for _, _, dim in ReadIndex.items(3, (np.array(True), ..., 1))]
        [0, None, 1]
        """
        raw = _as_tuple(index)
        out: list[tuple[Any, Any, int | None]] = []
        dim = 0
        for given in raw:
            item = _item(given)
            if item is None or item is Ellipsis:
                out.append((given, item, None))
                if item is Ellipsis:
                    dim += max(ndim - _specified_dims(raw), 0)
            else:
                out.append((given, item, dim))
                is_mask = isinstance(item, Tensor) and item.dtype == torch.bool
                dim += item.ndim if is_mask else 1
        return tuple(out)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The basic index as ``select``/``slice`` steps, skipping full slices.

        >>> ReadIndex.read(torch.zeros(4, 5), (-1, slice(1, None))).steps
        ((0, 3), (0, slice(1, 5, 1)))
        """
        if self._steps is None:
            raise TypeError(f"only basic indices have steps; this index is {self.kind}")
        return self._steps

    @property
    def new_axes(self) -> tuple[int, ...]:
        """Dimensions of ``x[index]`` that ``None`` created (basic indices).

        >>> ReadIndex.read(torch.zeros(2, 3), (None, 0, None)).new_axes
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

    def index_tensors(self) -> tuple[Tensor, ...] | None:
        """The index as a tuple of integer index tensors over the leading
        dimensions, as ``Tensor.index_put`` takes it, or ``None`` when it holds
        anything else (a slice, ``None``, ``...``, a mask).

        >>> ReadIndex.read(torch.zeros(3, 4), ([0, 2], [1, 1])).index_tensors()
        (tensor([0, 2]), tensor([1, 1]))
        """
        if self.kind != "advanced" or len(self.index) > len(self.shape):
            return None
        for i in self.index:
            if type(i) is not Tensor or i.dtype is _BOOL:
                return None
        return self.index
