"""Hypothesis strategies for ``x[index] = value`` cases: shapes, indices, values.

Every index kind that setitem takes: ints (negative too), slices with steps,
``...``, ``None``, boolean masks over leading dimensions, integer index
tensors, and mixes of these. With ``torch_forms=True`` the index is also
restyled into the other spellings torch accepts: index tensors as (nested)
lists or NumPy arrays, ints as NumPy integers, a tuple as a list, Python
bools, empty lists. With ``duplicates=True`` index tensors may name a
position twice.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from hypothesis import settings
from hypothesis import strategies as st

#: torch's deprecation warning for a list read as a tuple of indices; tests that
#: draw ``torch_forms`` filter it with this pattern.
SEQUENCE_WARNING = "ignore:Using a non-tuple sequence for multidimensional indexing"

#: Examples per property test under the default profile (``tests/conftest.py``); the
#: ``thorough`` profile draws ten times as many.
DEFAULT_EXAMPLES = 300


def examples(n: int) -> int:
    """A slow property test's examples: ``n`` under the default profile, scaled with the
    profile loaded (ten times under ``HYPOTHESIS_PROFILE=thorough``), never a fixed count.

    >>> examples(40) == max(1, round(40 * settings().max_examples / DEFAULT_EXAMPLES))
    True
    """
    return max(1, round(n * settings().max_examples / DEFAULT_EXAMPLES))


DTYPES = (torch.float32, torch.float64, torch.complex64, torch.int64)


@dataclass
class Case:
    """One drawn write: ``x[index] = value``."""

    x: torch.Tensor
    index: Any
    value: Any

    def reference(self) -> torch.Tensor:
        """Torch's own ``y = x.clone(); y[index] = value``; raises where it raises
        (a value of another dtype with index tensors, see ``test_setitem_corners``)."""
        y = self.x.detach().clone()
        value = self.value
        y[self.index] = value.detach() if isinstance(value, torch.Tensor) else value
        return y

    def torch_error(self) -> Exception | None:
        """The error torch's setitem raises for this write, or ``None``."""
        try:
            self.reference()
        except Exception as error:  # noqa: BLE001 - torch's error is the expected answer
            return error
        return None


def _number(draw: st.DrawFn, dtype: torch.dtype) -> Any:
    if dtype.is_complex:
        return complex(draw(st.integers(-9, 9)), draw(st.integers(-9, 9)))
    if dtype.is_floating_point:
        return draw(st.integers(-9, 9)) / 4
    return draw(st.integers(-9, 9))


def _tensor(
    draw: st.DrawFn, shape: tuple[int, ...], dtype: torch.dtype, stream: int = 0
) -> torch.Tensor:
    """Random entries; ``stream`` 1 for values, so a value never equals x by chance."""
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(2 * seed + stream)
    if dtype.is_floating_point or dtype.is_complex:
        t = torch.randn(shape, generator=gen, dtype=dtype)
    else:
        t = torch.randint(-9, 10, shape, generator=gen, dtype=dtype)
    if stream == 0 and len(shape) >= 2:  # x in other memory layouts: setitem keeps to none
        layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
        if layout == "transposed":  # the same values, column-major
            t = t.mT.contiguous().mT
        elif layout == "strided":  # every other element of a wider tensor
            wide = torch.zeros((*shape[:-1], 2 * shape[-1]), dtype=dtype)
            wide[..., ::2] = t
            t = wide[..., ::2]
    return t


def _slice(draw: st.DrawFn, size: int) -> slice:
    start = draw(st.none() | st.integers(-size - 1, size + 1))
    stop = draw(st.none() | st.integers(-size - 1, size + 1))
    step = draw(st.sampled_from([None, 1, 2, 3]))
    return slice(start, stop, step)


def _basic(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    n = draw(st.integers(0, len(shape)))
    leading = draw(st.booleans())  # index the leading dims, or the trailing ones behind ...
    sizes = shape[:n] if leading else shape[len(shape) - n :]
    items: list[Any] = []
    for size in sizes:
        if size > 0 and draw(st.booleans()):
            items.append(draw(st.integers(-size, size - 1)))
        else:
            items.append(_slice(draw, size))
    if not leading:
        items.insert(0, Ellipsis)
    elif draw(st.booleans()):
        items.append(Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def _mask(draw: st.DrawFn, shape: tuple[int, ...]) -> torch.Tensor:
    k = draw(st.integers(1, len(shape)))
    seed = draw(st.integers(0, 2**16))
    return torch.rand(shape[:k], generator=torch.Generator().manual_seed(seed)) < 0.5


def _unique_positions(
    draw: st.DrawFn, sizes: tuple[int, ...], duplicates: bool = False
) -> list[torch.Tensor]:
    """Index tensors for ``sizes``; they name no position twice unless ``duplicates``."""
    total = 1
    for s in sizes:
        total *= s
    if duplicates and draw(st.booleans()):
        count = draw(st.integers(1, 6))
        flat = draw(st.lists(st.integers(0, total - 1), min_size=count, max_size=count))
    else:
        count = draw(st.integers(0, min(total, 6)))
        flat = draw(st.permutations(range(total)))[:count]
    coords = []
    for size in reversed(sizes):
        coords.append([f % size for f in flat])
        flat = [f // size for f in flat]
    coords.reverse()
    shape = (count,)
    if count and count % 2 == 0 and draw(st.booleans()):
        shape = (2, count // 2)
    tensors = []
    for c, size in zip(coords, sizes, strict=True):
        t = torch.tensor(c, dtype=torch.long).reshape(shape)
        if draw(st.booleans()):
            t = t - size  # negative positions name the same elements
        tensors.append(t)
    return tensors


def _advanced(draw: st.DrawFn, shape: tuple[int, ...], duplicates: bool = False) -> Any:
    nonempty = [d for d, s in enumerate(shape) if s > 0]
    if not nonempty:
        return _mask(draw, shape)
    dims = sorted(draw(st.lists(st.sampled_from(nonempty), min_size=1, max_size=2, unique=True)))
    tensors = _unique_positions(draw, tuple(shape[d] for d in dims), duplicates)
    items: list[Any] = [slice(None)] * (max(dims) + 1)
    for d, t in zip(dims, tensors, strict=True):
        items[d] = t
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def _restyle_item(draw: st.DrawFn, item: Any) -> Any:
    """One item in another spelling torch accepts (the meaning may change: the
    reference reads the restyled index too)."""
    if isinstance(item, torch.Tensor):
        how = draw(st.sampled_from(["keep", "list", "numpy"]))
        if how == "list":
            return item.tolist()
        if how == "numpy":
            return item.numpy()
        return item
    if type(item) is int and draw(st.booleans()):
        return draw(st.sampled_from([np.int64, np.int32, np.intp]))(item)
    return item


def _restyle(draw: st.DrawFn, index: Any) -> Any:
    """The index in the spellings of torch's setitem: lists, NumPy, bools, empty lists."""
    items = list(index) if isinstance(index, tuple) else [index]
    items = [_restyle_item(draw, i) for i in items]
    extra = draw(st.sampled_from(["none", "none", "bool", "empty", "empty alone"]))
    if extra == "bool":
        items.insert(draw(st.integers(0, len(items))), draw(st.booleans()))
    elif extra == "empty" and items:
        items[draw(st.integers(0, len(items) - 1))] = []
    elif extra in ("empty", "empty alone"):
        items = [[]]
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    if draw(st.integers(0, 3)) == 0:
        return items  # a list: torch reads it as a tuple or as one index tensor
    return tuple(items)


def _selects(x: torch.Tensor, index: Any) -> torch.Size | None:
    """``x[index].shape``, or ``None`` when torch refuses the index."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return x[index].shape
        except (IndexError, RuntimeError, TypeError, ValueError):
            return None


@st.composite
def cases(
    draw: st.DrawFn,
    dtypes: tuple[torch.dtype, ...] = DTYPES,
    torch_forms: bool = False,
    duplicates: bool = False,
) -> Case:
    """A tensor, an index into it and a value that fits ``x[index]``."""
    dtype = draw(st.sampled_from(dtypes))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    x = _tensor(draw, shape, dtype)
    if not shape:
        index = draw(st.sampled_from([(), Ellipsis, None, (None, Ellipsis)]))
    else:
        kind = draw(st.sampled_from(["basic", "boolean", "advanced"]))
        if kind == "advanced":
            index = _advanced(draw, shape, duplicates)
        else:
            index = {"basic": _basic, "boolean": _mask}[kind](draw, shape)
    if torch_forms and draw(st.booleans()):
        restyled = _restyle(draw, index)
        if _selects(x, restyled) is not None:
            index = restyled
    target = _selects(x, index)
    assert target is not None
    how = draw(st.sampled_from(["number", "full", "broadcast", "wider"]))
    value: Any
    if how == "number":
        value = _number(draw, dtype)
    else:
        vshape = list(target)
        if how == "broadcast" and vshape:
            keep = draw(st.integers(0, len(vshape)))
            vshape = [1 if draw(st.booleans()) else s for s in vshape[len(vshape) - keep :]]
        vdtype = dtype
        if how == "wider" and dtype == torch.float32:
            vdtype = torch.float64
        value = _tensor(draw, tuple(vshape), vdtype, stream=1)
    return Case(x, index, value)
