"""Torch's setitem in every corner: each writer against ``y = x.clone(); y[index] = value``.

The writers are every recipe of :data:`~inplace_recipes.RECIPES` and
``at(x)[index].set(value)``. The expected answer is always torch's own
setitem on a clone, including its error class; nothing here is written from
memory. Indices are drawn the way torch's setitem reads them: 0-d NumPy
arrays of every dtype (a 0-d bool or uint8 array is a mask, any other is an
int), sequence-likes (an object with ``__getitem__`` is converted with
``torch.tensor``, so its own error is the error), Python bools, 0-d tensors
of every integer dtype (a 0-d uint8 tensor is a mask, any other integer dtype
an int), and ``x`` of dtypes whose kernels torch lacks in places (uint16,
uint32 and uint64 have no ``index_put``, ``add``, ``scatter`` or
``masked_fill`` on the CPU; setitem itself raises ``NotImplementedError`` for
them with a mask or index tensors).

A recipe may refuse a write only as documented, with a
:class:`~inplace_recipes.NotApplicable` error: ``select_scatter`` takes only
indices that setitem reads as ints and slices, ``masked_fill`` writes one
value. Inputs (``x``, the value, index tensors and arrays) keep their values
and their version counters in every case. Gradients to ``x`` and to the value
are compared with torch's through :func:`~inplace_recipes.compare_gradients`,
with torch's setitem as the reference.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from inplace_recipes import RECIPES, NotApplicable, at, compare_gradients
from refusals import refused
from strategies import SEQUENCE_WARNING, cases, examples

pytestmark = [
    pytest.mark.filterwarnings(SEQUENCE_WARNING),
    pytest.mark.filterwarnings("ignore:Casting complex values to real discards"),
    pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated"),
]

Writer = Callable[[torch.Tensor, Any, Any], torch.Tensor]


def _at_set(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    return at(x)[index].set(value)


#: Every way this package writes ``x[index] = value``.
WRITERS: dict[str, Writer] = {**RECIPES, "at": _at_set}

#: NumPy dtypes of 0-d index arrays.
NUMPY_DTYPES = (
    np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64,
)  # fmt: skip
#: Integer (and bool) dtypes of 0-d index tensors.
INDEX_TENSOR_DTYPES = (
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint16, torch.uint32, torch.uint64,
)  # fmt: skip
#: Dtypes of ``x`` whose kernels differ from float32's.
X_DTYPES = (
    torch.uint16, torch.uint32, torch.uint64, torch.uint8, torch.int8, torch.int16, torch.bool,
    torch.float16, torch.bfloat16,
)  # fmt: skip
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTEGER_DTYPES = tuple(d for d in INDEX_TENSOR_DTYPES if d not in (torch.bool, torch.uint8))

#: An eighth of the profile's examples per property (37 by default, 370 with
#: ``HYPOTHESIS_PROFILE=thorough``), so that the module runs in well under a minute.
CORNERS = settings(max_examples=examples(37), deadline=None)


# -- torch's answer, and the check every writer must pass --------------------------


def torch_setitem(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """``y = x.clone(); y[index] = value``, exactly (a value of another dtype is
    cast or refused by torch, see :func:`test_values_of_another_dtype`)."""
    y = x.clone()
    y[index] = value
    return y


def _torch_answer(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor | Exception:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return torch_setitem(x.detach(), index, value)
        except Exception as error:  # noqa: BLE001 - torch's error is the expected answer
            return error


def _watched(*things: Any) -> list[Any]:
    """The tensors and arrays among the inputs (inside tuples and lists too)."""
    found: list[Any] = []
    for thing in things:
        if isinstance(thing, (torch.Tensor, np.ndarray)):
            found.append(thing)
        elif isinstance(thing, (tuple, list)):
            found.extend(_watched(*thing))
    return found


def _snapshot(things: list[Any]) -> list[tuple[Any, int | None]]:
    return [
        (t.detach().clone(), t._version) if isinstance(t, torch.Tensor) else (t.copy(), None)
        for t in things
    ]


def _assert_unchanged(things: list[Any], before: list[tuple[Any, int | None]], who: str) -> None:
    for now, (copy, version) in zip(things, before, strict=True):
        if isinstance(now, torch.Tensor):
            assert now._version == version, f"{who} wrote into an input tensor"
            assert torch.equal(now.detach(), copy), f"{who} changed an input tensor"
        else:
            assert np.array_equal(now, copy, equal_nan=True), f"{who} changed an input array"


def check_write(name: str, x: torch.Tensor, index: Any, value: Any) -> None:
    """``WRITERS[name]`` gives torch's answer or torch's error class, and changes no input."""
    expected = _torch_answer(x, index, value)
    watched = _watched(x, index, value)
    before = _snapshot(watched)
    writer = WRITERS[name]
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            writer(x, index, value)
    else:
        try:
            out = writer(x, index, value)
        except Exception as error:  # noqa: BLE001 - judged below
            out = error
        if isinstance(out, NotApplicable):
            assert refused(name, x, index, value), f"{name} refused what setitem takes: {out}"
            assert repr(name) in str(out)
        else:
            assert not isinstance(out, Exception), f"{name} raised {out!r}; setitem works"
            assert out.dtype == expected.dtype
            assert out.shape == expected.shape
            assert torch.equal(out.detach(), expected), f"{name}: {out} != torch's {expected}"
    _assert_unchanged(watched, before, name)


def check_every_writer(x: torch.Tensor, index: Any, value: Any) -> None:
    for name in WRITERS:
        check_write(name, x, index, value)


def check_gradients(x: torch.Tensor, index: Any, value: Any) -> None:
    """Gradients to ``x`` and to the value equal torch's (when setitem takes the write)."""
    if isinstance(_torch_answer(x, index, value), Exception):
        return  # the error classes are check_write's
    report = compare_gradients(x, index, value, WRITERS, reference=torch_setitem)
    for result in report:
        assert result.ok, f"{result.name}: {result.problems}"
        if result.not_applicable is not None:
            assert refused(result.name, x, index, value), result.not_applicable


def check_forward_mode(x: torch.Tensor, index: Any, value: torch.Tensor) -> None:
    """Forward-mode derivatives (``torch.func.jvp``) equal torch's setitem's."""
    if isinstance(_torch_answer(x, index, value), Exception):
        return
    tangents = (torch.ones_like(x), torch.full_like(value, 2.0))

    def through(writer: Writer) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        return lambda a, b: writer(a, index, b)

    _, want = torch.func.jvp(through(torch_setitem), (x, value), tangents)
    for name, writer in WRITERS.items():
        try:
            _, got = torch.func.jvp(through(writer), (x, value), tangents)
        except NotApplicable:
            assert refused(name, x, index, value)
            continue
        assert torch.equal(got, want), f"{name}: tangent {got} != torch's {want}"


# -- drawing indices the way torch reads them ----------------------------------------


def _x(draw: st.DrawFn, dtype: torch.dtype = torch.float32, ndim_max: int = 2) -> torch.Tensor:
    shape = tuple(draw(st.lists(st.integers(1, 4), max_size=ndim_max)))
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 50, shape, generator=gen).to(dtype)


def _value(draw: st.DrawFn, x: torch.Tensor, index: Any) -> Any:
    """A number, or a tensor that fits ``x[index]`` (or, now and then, one that does not)."""
    how = draw(st.sampled_from(["number", "number", "fits", "fits", "one", "misfit"]))
    number = draw(st.integers(0, 9))
    if how == "number":
        return float(number) if x.dtype.is_floating_point else number
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shape = x[index].shape
    except Exception:  # noqa: BLE001 - a refused index: any value
        shape = torch.Size(())
    if how == "one":
        shape = torch.Size((1,))
    elif how == "misfit":
        shape = torch.Size((*shape[:-1], shape[-1] + 1)) if shape else torch.Size((2,))
    return torch.full(shape, number).to(x.dtype)


def _place(draw: st.DrawFn, x: torch.Tensor, item: Any) -> Any:
    """``item`` alone, or in a tuple next to ints, slices, ``...`` and ``None``."""
    where = draw(st.sampled_from(["alone", "first", "last", "ellipsis", "none"]))
    if where == "alone":
        return item
    if where == "first":
        return (item, slice(None))
    if where == "last":
        return (slice(None), item) if x.ndim else (item,)
    if where == "ellipsis":
        return (Ellipsis, item)
    return (None, item)


@st.composite
def zero_d_array_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    x = _x(draw)
    dtype = draw(st.sampled_from(NUMPY_DTYPES))
    number = draw(st.integers(-5, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # -1 into an unsigned dtype wraps, as NumPy casts
        array = np.array(number).astype(dtype)
    index = _place(draw, x, array)
    return x, index, _value(draw, x, index)


@st.composite
def zero_d_tensor_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    x = _x(draw)
    dtype = draw(st.sampled_from(INDEX_TENSOR_DTYPES))
    low = 0 if dtype in (torch.bool, torch.uint8, torch.uint16, torch.uint32, torch.uint64) else -5
    tensor = torch.tensor(draw(st.integers(low, 5))).to(dtype)
    index = _place(draw, x, tensor)
    if x.ndim == 3 or draw(st.integers(0, 4)) == 0:  # next to an index tensor, past a slice
        index = (tensor, slice(None), torch.tensor([0]))
    return x, index, _value(draw, x, index)


@st.composite
def python_bool_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    x = _x(draw)
    items: list[Any] = [draw(st.booleans())]
    for _ in range(draw(st.integers(0, 2))):
        extra = draw(st.sampled_from([True, False, None, Ellipsis, slice(None), 0]))
        items.insert(draw(st.integers(0, len(items))), extra)
    index: Any = items[0] if len(items) == 1 else tuple(items)
    return x, index, _value(draw, x, index)


class SequenceLike:
    """An object torch reads as a sequence: ``__len__`` and ``__getitem__``.

    ``__getitem__`` returns ``items[i]``, or raises ``fail`` at position
    ``fail_at`` and beyond.
    """

    def __init__(self, items: list[Any], fail: type[Exception] | None, fail_at: int) -> None:
        self.items, self.fail, self.fail_at = items, fail, fail_at

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        if self.fail is not None and i >= self.fail_at:
            raise self.fail(f"no item {i}")
        return self.items[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items}, fail={self.fail}, fail_at={self.fail_at})"


class SequenceLikeWithIndex(SequenceLike):
    """A sequence-like that is also an integer (``__index__``): torch reads the sequence."""

    def __index__(self) -> int:
        return 0


class GetitemOnly:
    """``__getitem__`` and no ``__len__``: a sequence to torch, which then needs its length."""

    def __getitem__(self, i: int) -> int:
        return 0


class LengthFails(SequenceLike):
    """A sequence-like whose ``__len__`` raises."""

    def __len__(self) -> int:
        raise ValueError("no length")


@st.composite
def sequence_like_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    x = _x(draw)
    kind = draw(st.sampled_from([SequenceLike, SequenceLikeWithIndex, GetitemOnly, LengthFails]))
    item: Any
    if kind is GetitemOnly:
        item = GetitemOnly()
    else:
        size = x.shape[0] if x.ndim else 1
        element = st.integers(-size, size - 1) | st.booleans()
        if x.ndim and draw(st.booleans()):  # items that make it a tuple of indices
            element = element | st.sampled_from([slice(None), None, Ellipsis])
        items = draw(st.lists(element, max_size=3))
        fail = draw(st.sampled_from([None, IndexError, KeyError, TypeError, RuntimeError]))
        item = kind(items, fail, draw(st.integers(0, 3)))
    index = draw(st.sampled_from([item, (item,), (item, Ellipsis)]))
    return x, index, _value(draw, x, index)


@st.composite
def dtype_kernel_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    """Writes of every index kind into ``x`` of a dtype whose kernels differ."""
    dtype = draw(st.sampled_from(X_DTYPES))
    case = draw(cases(dtypes=(torch.int64,), torch_forms=True))
    x = case.x.abs() % 50
    value = case.value
    if isinstance(value, torch.Tensor):
        value = value.abs() % 50
        value = value != 0 if dtype == torch.bool else value.to(dtype)
    else:
        value = bool(value) if dtype == torch.bool else abs(value)
    x = x != 0 if dtype == torch.bool else x.to(dtype)
    return x, case.index, value


# -- the cases, one by one -----------------------------------------------------


def _seq_fails(fail: type[Exception]) -> SequenceLike:
    return SequenceLike([0], fail, 0)


def _seq_index_fails() -> SequenceLike:
    return SequenceLikeWithIndex([0], IndexError, 0)


#: A float64 value: setitem casts it, or refuses it, as the named cases say.
F64 = torch.tensor(2.0, dtype=torch.float64)

#: ``(label, make_x, index, value, what torch does)``: what torch does is an
#: error class or the written result as a list; the test checks torch first.
#: The first release whose setitem writes a Python int past int64 into a uint64 tensor.
BIG_UINT64_WRITTEN_SINCE = "2.14.0"

NAMED_CASES: list[tuple[str, Callable[[], torch.Tensor], Any, Any, Any]] = [
    ("0-d uint8 array reads as a mask", lambda: torch.zeros(5), np.array(3, dtype=np.uint8),
     1.0, [1.0] * 5),
    ("0-d uint8 array 0 writes nothing", lambda: torch.zeros(5), np.array(0, dtype=np.uint8),
     1.0, [0.0] * 5),
    ("0-d uint8 array next to a slice", lambda: torch.zeros(2, 2),
     (slice(None), np.array(1, dtype=np.uint8)), torch.tensor([1.0, 2.0]),
     [[1.0, 2.0], [1.0, 2.0]]),
    ("0-d uint16 array is an int", lambda: torch.zeros(3), np.array(2, dtype=np.uint16), 1.0,
     [0.0, 0.0, 1.0]),
    ("0-d uint64 array of 2**64-1 is -1", lambda: torch.zeros(3),
     np.array(2**64 - 1, dtype=np.uint64), 1.0, [0.0, 0.0, 1.0]),
    ("0-d float array truncates to an int", lambda: torch.zeros(3), np.array(1.7), 1.0,
     [0.0, 1.0, 0.0]),
    ("len and a failing getitem (IndexError)", lambda: torch.zeros(5), _seq_fails(IndexError),
     1.0, IndexError),
    ("len and a failing getitem (RuntimeError)", lambda: torch.zeros(5),
     _seq_fails(RuntimeError), 1.0, RuntimeError),
    ("len, __index__ and a failing getitem", lambda: torch.zeros(5), _seq_index_fails(), 1.0,
     IndexError),
    ("getitem and no len", lambda: torch.zeros(5), GetitemOnly(), 1.0, TypeError),
    ("a working sequence-like", lambda: torch.zeros(5), SequenceLike([1, 3], None, 0), 1.0,
     [0.0, 1.0, 0.0, 1.0, 0.0]),
    ("a sequence-like of slices is a tuple", lambda: torch.zeros(2, 3),
     SequenceLike([slice(None), 1], None, 0), 1.0, [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
    ("0-d x, np.array(True)", lambda: torch.zeros(()), np.array(True), 1.0, IndexError),
    ("0-d x, 0-d uint8 array", lambda: torch.zeros(()), np.array(1, dtype=np.uint8), 1.0,
     IndexError),
    ("1-d x, (np.array(True), 0)", lambda: torch.zeros(3), (np.array(True), 0), 1.0, IndexError),
    ("..., np.array(True): ... spans no dimension", lambda: torch.zeros(2),
     (Ellipsis, np.array(True)), torch.tensor([[1.0, 2.0]]), [1.0, 2.0]),
    ("..., np.array(True): a value of x[..., True]'s shape", lambda: torch.zeros(2),
     (Ellipsis, np.array(True)), torch.tensor([[1.0], [2.0]]), RuntimeError),
    ("..., nested bool list", lambda: torch.zeros(2, 2), (Ellipsis, [[True, False], [False, True]]),
     1.0, IndexError),
    ("0-d x, torch.tensor(True)", lambda: torch.zeros(()), torch.tensor(True), 1.0, 1.0),
    ("0-d x, torch.tensor(False)", lambda: torch.zeros(()), torch.tensor(False), 1.0, 0.0),
    ("0-d x, True", lambda: torch.zeros(()), True, 1.0, 1.0),
    ("0-d x, torch.tensor(True), value [1]", lambda: torch.zeros(()), torch.tensor(True),
     torch.ones(1), 1.0),
    ("uint16 mask", lambda: torch.zeros(3, dtype=torch.uint16),
     torch.tensor([True, False, True]), 1, NotImplementedError),
    ("uint32 mask", lambda: torch.zeros(3, dtype=torch.uint32),
     torch.tensor([True, False, True]), 1, NotImplementedError),
    ("uint64 mask", lambda: torch.zeros(3, dtype=torch.uint64),
     torch.tensor([True, False, True]), 1, NotImplementedError),
    ("uint32 index tensor", lambda: torch.zeros(3, dtype=torch.uint32), torch.tensor([0, 2]), 1,
     NotImplementedError),
    ("uint16 int", lambda: torch.zeros(3, dtype=torch.uint16), 1, 7, [0, 7, 0]),
    ("uint32 slice", lambda: torch.zeros(3, dtype=torch.uint32), slice(1, None), 7, [0, 7, 7]),
    ("uint64 row", lambda: torch.zeros(2, 2, dtype=torch.uint64), 0,
     torch.tensor([5, 6], dtype=torch.uint64), [[5, 6], [0, 0]]),
    ("uint64 big value", lambda: torch.zeros(2, dtype=torch.uint64), 1,
     torch.tensor(2**64 - 1, dtype=torch.uint64), [0, 2**64 - 1]),
    # torch 2.14 reads a Python int for a uint64 x as uint64 (2.13: ValueError past int64)
    ("uint64 big number", lambda: torch.zeros(2, dtype=torch.uint64), 1, 2**64 - 1,
     [0, 2**64 - 1] if torch.__version__ >= BIG_UINT64_WRITTEN_SINCE else ValueError),
    ("uint16 True", lambda: torch.zeros(2, dtype=torch.uint16), True, 3, [3, 3]),
    ("uint32 0-d int8 tensor", lambda: torch.zeros(3, dtype=torch.uint32),
     torch.tensor(1, dtype=torch.int8), 4, [0, 4, 0]),
    ("0-d uint8 index tensor is a mask", lambda: torch.zeros(5),
     torch.tensor(3, dtype=torch.uint8), 1.0, [1.0] * 5),
    ("0-d uint8 index tensor 0", lambda: torch.zeros(5), torch.tensor(0, dtype=torch.uint8),
     1.0, [0.0] * 5),
    ("0-d int8 index tensor is an int", lambda: torch.zeros(5),
     torch.tensor(3, dtype=torch.int8), 1.0, [0.0, 0.0, 0.0, 1.0, 0.0]),
    ("0-d int8 index tensor, negative", lambda: torch.zeros(5),
     torch.tensor(-1, dtype=torch.int8), 1.0, [0.0, 0.0, 0.0, 0.0, 1.0]),
    ("0-d uint16 index tensor", lambda: torch.zeros(5), torch.tensor(2, dtype=torch.uint16),
     1.0, [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("complex NumPy array is cast", lambda: torch.zeros(3), np.array([1 + 0j]), 1.0,
     [0.0, 1.0, 0.0]),
    ("list of complex numbers", lambda: torch.zeros(3), [1 + 0j], 1.0, TypeError),
    ("1-d int8 index tensor is refused", lambda: torch.zeros(5),
     torch.tensor([3], dtype=torch.int8), 1.0, IndexError),
    ("False with a value that does not fit", lambda: torch.zeros(3), False, torch.ones(7),
     [0.0, 0.0, 0.0]),
    # A tensor value of another dtype: copy_ (ints, slices, ..., None, a lone bool)
    # casts it; index_put_ refuses it, except that it hands one mask and a
    # one-element CPU value to masked_fill_, which casts.
    ("float64 value, int", lambda: torch.zeros(3), 1, F64, [0.0, 2.0, 0.0]),
    ("float64 value, slice", lambda: torch.zeros(3), slice(1, None), F64, [0.0, 2.0, 2.0]),
    ("float64 value, lone True", lambda: torch.zeros(2), True, F64, [2.0, 2.0]),
    ("float64 value, 0-d int tensor", lambda: torch.zeros(3), torch.tensor(2), F64,
     [0.0, 0.0, 2.0]),
    ("float64 value, index tensor", lambda: torch.zeros(3), torch.tensor([0, 2]), F64,
     RuntimeError),
    ("float64 value, list", lambda: torch.zeros(3), [0, 2], F64, RuntimeError),
    ("float64 value, NumPy array", lambda: torch.zeros(3), np.array([0, 2]), F64, RuntimeError),
    ("float64 value, empty index tensor", lambda: torch.zeros(3),
     torch.tensor([], dtype=torch.long), F64, RuntimeError),
    ("float64 value, out-of-range index tensor", lambda: torch.zeros(3), torch.tensor([5]),
     F64, RuntimeError),
    ("float64 value, slice and index tensor", lambda: torch.zeros(2, 3),
     (slice(None), torch.tensor([0, 2])), F64, RuntimeError),
    ("float64 value, int and index tensor", lambda: torch.zeros(2, 3),
     (1, torch.tensor([0, 2])), F64, RuntimeError),
    ("float64 value, 0-d bool tensor", lambda: torch.zeros(2), torch.tensor(True), F64,
     RuntimeError),
    ("float64 value, 0-d uint8 tensor", lambda: torch.zeros(2),
     torch.tensor(1, dtype=torch.uint8), F64, RuntimeError),
    ("float64 value, 0-d bool array", lambda: torch.zeros(2), np.array(True), F64,
     RuntimeError),
    ("float64 value, (True,)", lambda: torch.zeros(2), (True,), F64, RuntimeError),
    ("float64 value, (False,)", lambda: torch.zeros(2), (False,), F64, RuntimeError),
    ("float64 value, bool next to an int", lambda: torch.zeros(2, 3), (True, 1), F64,
     RuntimeError),
    ("float64 0-d value, mask", lambda: torch.zeros(3), torch.tensor([True, False, True]),
     F64, [2.0, 0.0, 2.0]),
    ("float64 one-element value, mask", lambda: torch.zeros(3),
     torch.tensor([True, False, True]), F64.reshape(1), [2.0, 0.0, 2.0]),
    ("float64 value, mask of nothing", lambda: torch.zeros(3), torch.zeros(3, dtype=torch.bool),
     F64, [0.0, 0.0, 0.0]),
    ("float64 value, list of bools", lambda: torch.zeros(3), [True, False, True], F64,
     [2.0, 0.0, 2.0]),
    ("float64 value, slice and mask", lambda: torch.zeros(2, 3),
     (slice(None), torch.tensor([True, False, True])), F64, [[2.0, 0.0, 2.0], [2.0, 0.0, 2.0]]),
    ("float64 value, int and mask", lambda: torch.zeros(2, 3),
     (1, torch.tensor([True, False, True])), F64, [[0.0, 0.0, 0.0], [2.0, 0.0, 2.0]]),
    ("float64 value, None and mask", lambda: torch.zeros(3),
     (None, torch.tensor([True, False, True])), F64, [2.0, 0.0, 2.0]),
    ("float64 value, two masks", lambda: torch.zeros(2, 3),
     (torch.tensor([True, False]), torch.tensor([True, False, True])), F64, RuntimeError),
    ("float64 value, mask and index tensor", lambda: torch.zeros(2, 3),
     (torch.tensor([True, False]), torch.tensor([0])), F64, RuntimeError),
    ("float64 row, mask", lambda: torch.zeros(2, 3), torch.tensor([True, False]),
     torch.full((3,), 2.0, dtype=torch.float64), RuntimeError),
    ("int64 value, mask, int x", lambda: torch.zeros(3, dtype=torch.int64),
     torch.tensor([True, False, True]), torch.tensor(7), [7, 0, 7]),
    ("int64 value, index tensor, float x", lambda: torch.zeros(3), torch.tensor([1]),
     torch.tensor(7), RuntimeError),
    ("float value, mask, int x (truncated)", lambda: torch.zeros(3, dtype=torch.int64),
     torch.tensor([True, False, True]), torch.tensor(2.7), [2, 0, 2]),
    ("bool value, index tensor, float x", lambda: torch.zeros(3), torch.tensor([1]),
     torch.tensor(True), RuntimeError),
    ("uint16 x, int64 value, index tensor", lambda: torch.zeros(3, dtype=torch.uint16),
     torch.tensor([1]), torch.tensor(2), RuntimeError),
    ("uint16 x, int64 value, mask", lambda: torch.zeros(3, dtype=torch.uint16),
     torch.tensor([True, False, True]), torch.tensor(2), NotImplementedError),
    ("float64 value that does not fit, index tensor", lambda: torch.zeros(3),
     torch.tensor([0, 1]), torch.ones(5, dtype=torch.float64), RuntimeError),
    ("Python float, index tensor", lambda: torch.zeros(3), torch.tensor([0, 2]), 2.0,
     [2.0, 0.0, 2.0]),
    ("Python int, index tensor, bool x", lambda: torch.zeros(3, dtype=torch.bool),
     torch.tensor([0, 2]), 1, [True, False, True]),
]  # fmt: skip


@pytest.mark.parametrize("name", list(WRITERS))
@pytest.mark.parametrize(
    ("label", "make_x", "index", "value", "torch_does"),
    NAMED_CASES,
    ids=[c[0] for c in NAMED_CASES],
)
def test_named_case(
    name: str, label: str, make_x: Any, index: Any, value: Any, torch_does: Any
) -> None:
    x = make_x()
    expected = _torch_answer(x, index, value)
    if isinstance(torch_does, type):  # the case is what the label says it is
        assert isinstance(expected, torch_does), f"torch now gives {expected!r}"
    else:
        assert not isinstance(expected, Exception), f"torch now raises {expected!r}"
        assert expected.tolist() == torch_does
    check_write(name, x, index, value)


_WIDE_UNSIGNED_OPS: dict[str, Callable[[torch.Tensor], Any]] = {
    "index_put": lambda x: x.index_put((torch.tensor([0, 2]),), x[0]),
    "scatter": lambda x: x.scatter(0, torch.tensor([0, 2]), x[1:]),
    "masked_fill": lambda x: x.masked_fill(torch.tensor([True, False, True]), x[0]),
    "add": lambda x: x + x,
}
#: The first torch release with each of these kernels for uint16/32/64 on the CPU, as
#: measured (``None``: none yet). Torch 2.14.0 added scatter and gather for them
#: ("scatter_gather_tensor_cpu" not implemented for 'UInt16' on 2.13.0).
_WIDE_UNSIGNED_KERNEL_SINCE: dict[str, str | None] = {
    "index_put": None,
    "scatter": "2.14.0",
    "masked_fill": None,
    "add": None,
}
_SIGNED_OF = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


@pytest.mark.parametrize("op", list(_WIDE_UNSIGNED_OPS))
@pytest.mark.parametrize("dtype", list(_SIGNED_OF))
def test_torch_lacks_these_kernels(dtype: torch.dtype, op: str) -> None:
    """What the recipes' module docstring says of uint16/32/64 on the CPU, for the running
    release: torch raises where the table above says it has no kernel, and where it has one
    gives the signed dtype's answer. When torch adds a kernel, this fails: the table (and
    the sentence) must change."""
    x = torch.tensor([1, 2, 3], dtype=dtype)
    since = _WIDE_UNSIGNED_KERNEL_SINCE[op]
    if since is None or torch.__version__ < since:
        with pytest.raises(NotImplementedError, match="not implemented for 'UInt"):
            _WIDE_UNSIGNED_OPS[op](x)
    else:
        got = _WIDE_UNSIGNED_OPS[op](x)
        assert got.dtype == dtype
        assert got.tolist() == _WIDE_UNSIGNED_OPS[op](x.to(_SIGNED_OF[dtype])).tolist()


def test_another_dtype_names_the_problem() -> None:
    """Where setitem refuses a value of another dtype, every writer gives torch's
    message (naming both dtypes) and says which indices cast."""
    for writer in WRITERS.values():
        for index in (torch.tensor([0, 2]), (..., [0]), torch.tensor(True)):
            with pytest.raises(RuntimeError, match=r"dtypes match, got Float .* and Double") as e:
                writer(torch.zeros(3), index, F64)
            assert "value.to(x.dtype)" in str(e.value)


def test_errors_name_the_problem() -> None:
    """Where torch's message is torch's own, ours names the dtype or the index too."""
    mask = torch.tensor([True, False, True])
    for dtype in (torch.uint16, torch.uint32, torch.uint64):
        for writer in WRITERS.values():
            with pytest.raises(NotImplementedError, match=f"(?i){str(dtype).split('.')[1]}"):
                writer(torch.zeros(3, dtype=dtype), mask, 1)
            with pytest.raises(NotImplementedError, match=f"(?i){str(dtype).split('.')[1]}"):
                writer(torch.zeros(3, dtype=dtype), torch.tensor([0, 2]), 1)
    for writer in WRITERS.values():
        with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
            writer(torch.zeros(()), np.array(True), 1.0)


# -- properties -----------------------------------------------------------------------


@CORNERS
@given(zero_d_array_writes())
def test_zero_d_arrays(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_every_writer(*write)


@CORNERS
@given(zero_d_tensor_writes())
def test_zero_d_tensors(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_every_writer(*write)


@CORNERS
@given(python_bool_writes())
def test_python_bools(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_every_writer(*write)


@CORNERS
@given(sequence_like_writes())
def test_sequence_likes(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_every_writer(*write)


@settings(CORNERS, max_examples=examples(2 * 37))
@given(dtype_kernel_writes())
def test_dtypes_against_each_kernel(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_every_writer(*write)


#: Dtypes of ``x`` and of the value for writes of another dtype.
CAST_DTYPES = (torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.bool)


@st.composite
def other_dtype_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    """Any index of :func:`strategies.cases`, with a value of a dtype drawn apart
    from ``x``'s: a 0-d tensor, one element, the shape of ``x[index]``, or a
    Python number, and a corner index (0-d arrays and tensors, bools, sequences)."""
    source = draw(st.sampled_from(["cases", "corner"]))
    if source == "cases":
        case = draw(cases(dtypes=(torch.float32,), torch_forms=True))
        x, index = case.x, case.index
    else:
        make = draw(
            st.sampled_from(
                [
                    zero_d_array_writes,
                    zero_d_tensor_writes,
                    python_bool_writes,
                    sequence_like_writes,
                ]
            )
        )
        x, index, _ = draw(make())
    x = x.to(draw(st.sampled_from(CAST_DTYPES)))
    dtype = draw(st.sampled_from(CAST_DTYPES))
    how = draw(st.sampled_from(["0-d", "one", "shaped", "number"]))
    if how == "number":
        return x, index, draw(st.sampled_from([2, 2.5, True]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shape = x[index].shape
    except Exception:  # noqa: BLE001 - a refused index: any value
        shape = torch.Size(())
    shape = {"0-d": torch.Size(()), "one": torch.Size((1,)), "shaped": shape}[how]
    return x, index, (torch.arange(shape.numel()).reshape(shape) % 3 + 1).to(dtype)


@settings(CORNERS, max_examples=examples(3 * 37))
@given(other_dtype_writes())
def test_values_of_another_dtype(write: tuple[torch.Tensor, Any, Any]) -> None:
    """Setitem casts a value of another dtype for ints and slices and for one
    element through a mask, and raises with index tensors: every writer too."""
    check_every_writer(*write)


@CORNERS
@given(other_dtype_writes())
def test_gradients_of_another_dtype(write: tuple[torch.Tensor, Any, Any]) -> None:
    x, index, value = write
    if x.is_floating_point() and isinstance(value, torch.Tensor) and value.is_floating_point():
        check_gradients(x, index, value)


@st.composite
def float_corner_writes(draw: st.DrawFn) -> tuple[torch.Tensor, Any, Any]:
    """A corner index (0-d array, 0-d tensor, bool, sequence-like) into a float ``x``."""
    source = draw(
        st.sampled_from(
            [zero_d_array_writes, zero_d_tensor_writes, python_bool_writes, sequence_like_writes]
        )
    )
    x, index, value = draw(source())
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    x = x.to(dtype) / 4
    if isinstance(value, torch.Tensor):
        value = value.to(dtype) / 8 + 1
    return x, index, value


@CORNERS
@given(float_corner_writes())
def test_gradients_at_corners(write: tuple[torch.Tensor, Any, Any]) -> None:
    check_gradients(*write)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "index",
    [np.array(2), np.array(1, dtype=np.uint8), torch.tensor(1, dtype=torch.int8),
     torch.tensor(1, dtype=torch.uint8), (True, 1), (slice(None), torch.tensor(0, dtype=torch.int16))],
    ids=["0-d int64 array", "0-d uint8 array", "0-d int8 tensor", "0-d uint8 tensor", "True, 1",
         "slice, 0-d int16 tensor"],
)  # fmt: skip
def test_gradients_of_a_tensor_value(dtype: torch.dtype, index: Any) -> None:
    x = torch.arange(6.0).reshape(3, 2).to(dtype)
    shape = x[index].shape
    value = (torch.arange(float(shape.numel())).reshape(shape) + 10).to(dtype)
    check_gradients(x, index, value)
    check_forward_mode(x, index, value)


@CORNERS
@given(float_corner_writes())
def test_forward_mode_at_corners(write: tuple[torch.Tensor, Any, Any]) -> None:
    x, index, value = write
    if not isinstance(value, torch.Tensor):
        value = torch.tensor(value, dtype=x.dtype)
    check_forward_mode(x, index, value)
