"""The peers' ``at[]`` test cases, as data that any array library can run.

Ported from:

- JAX, ``tests/lax_numpy_indexing_test.py`` at jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5:
  the index specs of ``IndexedUpdateTest`` (``STATIC_INDEXING_TESTS``,
  ``STATIC_INDEXING_OUT_OF_BOUNDS_TESTS``, ``ADVANCED_INDEXING_TESTS`` and
  ``..._NO_REPEATS``, ``MIXED_ADVANCED_INDEXING_TESTS`` and ``..._NO_REPEATS``)
  crossed with the update ops, ``testWrapNegativeIndices1D`` (modes),
  ``testIndexMulGradFailsIfNotUnique``, ``testSegmentSumBehavior``,
  ``testIndexedUpdateAliasingBug``, ``testScatterValuesCastToTargetDType``
  and ``ValidateIndicesTest.test_simple_indexing`` (``get``). The batching
  bug tests (``testIndexApplyBatchingBug``, ``testIndexUpdateScalarBug``,
  ``testGradOfVmapOfScatter``) need ``vmap``/``apply``/``jacrev`` and are
  ported as code in ``tests/test_at_conformance.py``.
- array-api-extra, ``tests/main/test_at.py`` at
  data-apis/array-api-extra@693b257ed3903045fcd5f5fc0cb8d0f07f783581:
  ``test_update_ops``, ``test_incompatible_dtype``, ``test_bool_mask_nd``,
  ``test_no_inf_warnings``, ``test_gh134``, ``test_alternate_index_syntax``.

Library-neutral: ``x``, values and expected results are NumPy arrays, indices
are ints, slices, ``None``, ``...``, tuples of these and NumPy arrays (the
peers' Python lists are NumPy arrays here). Expected results come from NumPy
alone (``x[index] = values`` for ``set``, ``ufunc.at`` for the others, as
JAX's ``UpdateOps.np_fn`` does), never from the package under test.

:data:`TORCH_DIFFERS` lists the cases whose NumPy semantics torch does not
share (negative slice steps, the layout of mixed basic and advanced indices).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

JAX = "jax-ml/jax tests/lax_numpy_indexing_test.py@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5"
XPX = "data-apis/array-api-extra tests/main/test_at.py@693b257ed3903045fcd5f5fc0cb8d0f07f783581"

OPS = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max")
_UFUNC = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "power": np.power,
    "min": np.minimum,
    "max": np.maximum,
}


@dataclass(frozen=True)
class AtCase:
    """One ``at(x)[index].<op>(values, mode=mode)`` with NumPy's answer."""

    id: str  # unique, readable
    source: str  # upstream file and commit
    x: np.ndarray
    index: Any  # ints, slices, None, Ellipsis, tuples of these, np.ndarray (int or bool)
    op: str  # one of OPS, or "get"
    values: Any  # np.ndarray or Python scalar (None for get)
    expected: np.ndarray | None  # NumPy's answer; None where the case expects an error
    mode: str | None = None
    error: type[BaseException] | None = None  # what the peers expect raised, if anything
    note: str = ""  # why it differs, or what to know


def numpy_update(op: str, x: np.ndarray, index: Any, values: Any) -> np.ndarray:
    """JAX's ``UpdateOps.np_fn``: setitem for ``set``, ``ufunc.at`` otherwise."""
    out = x.copy()
    if op == "set":
        out[index] = values
    elif op == "get":
        return np.asarray(x[index])
    else:
        with np.errstate(all="ignore"):
            ufunc = _UFUNC[op]
            if op in ("min", "max"):
                values = np.asarray(values).astype(x.dtype)
            ufunc.at(out, index, values)
    return out


def _as_arrays(index: Any) -> Any:
    """The peers' lists inside a tuple, as NumPy integer arrays."""
    if isinstance(index, list):
        return np.asarray(index, dtype=np.intp)
    if isinstance(index, tuple):
        return tuple(_as_arrays(i) for i in index)
    return index


def _name(index: Any) -> str:
    if isinstance(index, tuple):
        return "(" + ",".join(_name(i) for i in index) + ")"
    if isinstance(index, slice):
        parts = ["" if p is None else str(p) for p in (index.start, index.stop, index.step)]
        return ":".join(parts).rstrip(":") or ":"
    if isinstance(index, np.ndarray):
        return "a" + str(index.tolist()).replace(" ", "")
    if index is Ellipsis:
        return "..."
    return str(index)


def _has_negative_step(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, slice) and i.step is not None and i.step < 0 for i in items)


def _has_repeats(shape: tuple[int, ...], index: Any) -> bool:
    positions = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[index]
    flat = np.asarray(positions).reshape(-1)
    return len(np.unique(flat)) != flat.size


# -- JAX's index specs (shape, index) ------------------------------------------------

_S = slice
STATIC = {
    "OneIntIndex": [((3,), 1), ((3, 3), 0), ((3, 4, 5), 2), ((3,), -1), ((3,), -2)],
    "TwoIntIndices": [((3, 3), (2, 1)), ((3, 4, 5), (1, 2)), ((3, 4, 5), (-1, 2))],
    "ThreeIntIndices": [((3, 4, 5), (1, 2, 3))],
    "OneSliceIndex": [
        ((10,), _S(1, 3)),
        ((10,), _S(1, -1)),
        ((10,), _S(None, -1)),
        ((10,), _S(None, None, None)),
        ((10, 8), _S(1, 3)),
        ((10, 8), _S(1, None)),
        ((10, 8), _S(None, 3)),
        ((10, 8), _S(-3, None)),
    ],
    "OneSliceIndexNegativeStride": [
        ((10,), _S(3, 1, -1)),
        ((10,), _S(1, 8, -1)),
        ((10,), _S(None, 1, -2)),
        ((10,), _S(None, None, -1)),
        ((10, 8), _S(3, 1, -1)),
        ((10, 8), _S(0, 8, -1)),
        ((10, 8), _S(None, None, -1)),
        ((10, 8), _S(12, 12, -4)),
        ((10, 8), _S(12, 4, -4)),
    ],
    "OneSliceIndexNonUnitStride": [
        ((10,), _S(0, 8, 2)),
        ((10,), _S(0, 8, 3)),
        ((10,), _S(1, 3, 2)),
        ((10,), _S(1, None, 2)),
        ((10,), _S(None, 1, -2)),
        ((10, 8), _S(1, 8, 3)),
        ((10, 8), _S(None, None, 2)),
        ((10, 8), _S(None, 1, -2)),
        ((10, 8), _S(None, None, -2)),
    ],
    "TwoSliceIndices": [
        ((10, 8), (_S(1, 3), _S(0, 2))),
        ((10, 8), (_S(1, None), _S(None, 2))),
        ((10, 8), (_S(None, None, -1), _S(None, 2))),
        ((10, 8, 3), (_S(1, 3), _S(0, 2))),
        ((10, 8, 3), (_S(1, 3), _S(0, None))),
        ((10, 8, 3), (_S(1, None), _S(0, 2))),
    ],
    "OneColonIndex": [((3,), _S(None)), ((3, 4), _S(None))],
    "MultipleColonIndices": [((3, 4), (_S(None), _S(None))), ((3, 4, 5), (_S(None), _S(None)))],
    "MixedSliceIndices": [((10, 4), (_S(None), _S(0, 2))), ((10, 4), (1, _S(None)))],
    "EllipsisIndex": [((3,), ...), ((3, 4), ...), ((3, 4, 5), (0, ...)), ((3, 4, 5), (..., 2, 3))],
    "SliceIndexClamping": [
        ((10,), _S(2, 11, 1)),
        ((10,), _S(11, 12, 1)),
        ((10,), _S(-11, -2, 1)),
        ((10,), _S(-2, -12, -1)),
        ((10,), _S(12, -12, -1)),
    ],
    "NoneIndex": [
        ((), None),
        ((), (None, None)),
        ((), (..., None)),
        ((3,), None),
        ((3, 4), None),
        ((3, 4), (..., None)),
        ((3, 4), (0, None, ...)),
        ((3, 4, 5), (1, None, ...)),
        ((3, 4, 5), (1, None, _S(None), None)),
    ],
    "EmptyIndex": [((), ()), ((3,), ()), ((3, 4), ())],
    "TupleOfIntAndSliceAndIntArray": [
        ((3, 2, 3), (0, _S(None), np.arange(3))),
        ((3, 2, 3), (np.int32(1), _S(None), np.arange(3))),
        ((3, 2, 3), (np.array(2), _S(None), np.arange(3))),
    ],
}

OUT_OF_BOUNDS = {
    "OneIntIndex": [((3,), -4), ((3, 3), 3), ((3, 4, 5), 4)],
    "TwoIntIndices": [((3, 3), (2, -4)), ((3, 4, 5), (3, 2)), ((3, 4, 5), (-4, 4))],
}

_A = np.array
ADVANCED = {  # ADVANCED_INDEXING_TESTS (with repeats)
    "One1DIntArrayIndex": [
        ((3,), _A([0, 1])),
        ((3, 3), _A([1, 2, 1])),
        ((3, 4, 5), _A([0, 2, 0, 1])),
        ((3,), _A([-1, 1])),
        ((3,), _A([-2, -1])),
        ((0,), _A([], dtype=np.int32)),
    ],
    "One2DIntArrayIndex": [
        ((3,), _A([[0, 0]])),
        ((3, 3), _A([[1, 2, 1], [0, 1, -1]])),
        ((3, 4, 5), _A([[0, 2, 0, 1], [-1, -2, 1, 0]])),
    ],
    "Two1DIntArrayIndicesNoBroadcasting": [
        ((3, 3), (_A([0, 1]), _A([1, 2]))),
        ((3, 4, 5), (_A([0, 2, 0, 1]), _A([-1, 0, -1, 2]))),
    ],
    "Two1DIntArrayIndicesWithBroadcasting": [
        ((3, 3), (_A([[0, 1]]), _A([1, 2]))),
        ((3, 4, 5), (_A([[0, 2, 0, 1]]), _A([-1, 0, -1, 2]))),
    ],
    "ArrayOfInts": [((3,), _A([0, 1, 0])), ((3, 4, 5), _A([0, -1]))],
    "TupleOfEmptyList": [((3, 4), ([],)), ((3, 4), ([], 0)), ((3, 4), ([], []))],
    "TupleOfListsOfPythonInts": [
        ((3, 4, 5), ([0, 1],)),
        ((3, 4, 5), ([[0], [-1]], [[2, 3, 0, 3]])),
    ],
    "TupleOfPythonIntsAndIntArrays": [
        ((3, 4, 5), (0, _A([0, 1]))),
        ((3, 4, 5), (0, 1, _A([[2, 3, 0, 3]]))),
    ],
    "TupleOfListsOfPythonIntsAndIntArrays": [
        ((3, 4, 5), ([0, 1], _A([0]))),
        ((3, 4, 5), ([[0], [-1]], _A([[2, 3, 0, 3]]))),
    ],
}

ADVANCED_NO_REPEATS = {
    "One1DIntArrayIndex": [
        ((3,), _A([0, 1])),
        ((3, 3), _A([1, 2, 0])),
        ((3, 4, 5), _A([0, 2, 1])),
        ((3,), _A([-1, 1])),
        ((3,), _A([-2, -1])),
        ((0,), _A([], dtype=np.int32)),
    ],
    "One2DIntArrayIndex": [((3,), _A([[0, 1]])), ((6, 6), _A([[1, 2, 0], [3, 4, -1]]))],
    "Two1DIntArrayIndicesNoBroadcasting": [
        ((3, 3), (_A([0, 1]), _A([1, 2]))),
        ((4, 5, 6), (_A([0, 2, 1, 3]), _A([-1, 0, -2, 1]))),
    ],
    "Two1DIntArrayIndicesWithBroadcasting": [
        ((3, 3), (_A([[0, 1]]), _A([1, 2]))),
        ((4, 5, 6), (_A([[0, 2, -1, 1]]), _A([-1, 0, -2, 2]))),
    ],
    "ArrayOfInts": [((3,), _A([0, 2, 1])), ((3, 4, 5), _A([0, -1]))],
    "TupleOfListsOfPythonInts": [((3, 4, 5), ([0, 1],)), ((3, 4, 5), ([[0], [-1]], [[2, 3, 0]]))],
    "TupleOfPythonIntsAndIntArrays": [
        ((3, 4, 5), (0, _A([0, 1]))),
        ((3, 4, 5), (0, 1, _A([[2, 3, 0]]))),
    ],
    "TupleOfListsOfPythonIntsAndIntArrays": [
        ((3, 4, 5), ([0, 1], _A([0]))),
        ((3, 4, 5), ([[0], [-1]], _A([[2, 3, 0]]))),
    ],
}

MIXED_NO_REPEATS = {
    "SlicesAndOneIntArrayIndex": [
        ((2, 3), (_A([0, 1]), _S(1, 2))),
        ((2, 3), (_S(0, 2), _A([0, 2]))),
        ((3, 4, 5), (..., _A([0, 2]), _S(None))),
        ((3, 4, 5), (..., _A([[0, 2], [1, 3]]), _S(None))),
    ],
    "SlicesAndTwoIntArrayIndices": [
        ((3, 4, 5), (..., _A([0, 2]), _A([-1, 2]))),
        ((3, 4, 5), (_A([0, 2]), ..., _A([-1, 2]))),
        ((3, 4, 5), (_A([0, 2]), _A([-1, 2]), ...)),
        ((3, 4, 5), (_A([0, 2]), _A([-1, 2]), _S(1, 3))),
        ((3, 4, 5), (_A([0, 2]), _S(1, 3), _A([-1, 2]))),
        ((3, 4, 5), (_A([0, 2, -2]), _S(None, None, 2), _A([-1, 2, 1]))),
    ],
    "NonesAndIntArrayIndices": [
        ((3, 4, 5), (_A([0, 2]), None, _A([-1, 2]))),
        ((3, 4, 5), (_A([0, 2]), None, None, _A([-1, 2]))),
        ((3, 4, 5), (..., _A([0, 2]), None, None, _A([-1, 2]))),
    ],
    "IntArrayWithInt32Type": [((3, 4), (..., _A(1, dtype=np.int32)))],
    "EllipsisWithArrayIndices": [
        ((3, 4, 5), (_A([0, 1]), ..., _A([0, 1]))),
        ((3, 4, 5), (_S(None), _A([0, 1]), ..., _A([0, 1]))),
        ((3, 4, 5), (_S(None), ..., _A([0, 1]), _A([0, 1]))),
    ],
}

MIXED_REPEATS = {  # the additions of MIXED_ADVANCED_INDEXING_TESTS
    "SlicesAndOneIntArrayIndex": [((3, 4, 5), (..., _A([[0, 2], [1, 1]]), _S(None)))],
    "SlicesAndTwoIntArrayIndices": [
        ((3, 4, 5), (_A([0, 2, -2]), _S(None, None, 2), _A([-1, 2, -1]))),
        ((3, 4, 5), (_A([[0, 2], [2, 0]]), ..., _A([[1, 0], [1, 0]]))),
    ],
}


# -- building the cases ----------------------------------------------------------------


class _Builder:
    def __init__(self) -> None:
        self.rng = np.random.default_rng(20260813)
        self.cases: list[AtCase] = []
        self.ids: set[str] = set()

    def floats(self, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
        """Positive values in [0.5, 1.5): every op, power and divide included, stays finite."""
        return np.asarray(self.rng.random(shape) + 0.5, dtype=dtype)

    def ints(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.asarray(self.rng.integers(-5, 6, size=shape), dtype=np.int64)

    def add(
        self,
        id: str,
        source: str,
        x: np.ndarray,
        index: Any,
        op: str,
        values: Any,
        *,
        mode: str | None = None,
        expected: np.ndarray | None = None,
        error: type[BaseException] | None = None,
        note: str = "",
    ) -> None:
        assert id not in self.ids, id
        self.ids.add(id)
        if expected is None and error is None:
            expected = numpy_update(op, x, index, values)
        self.cases.append(AtCase(id, source, x, index, op, values, expected, mode, error, note))


def _spec_cases(
    b: _Builder, family: str, specs: dict[str, list[Any]], ops: tuple[str, ...]
) -> None:
    for name, entries in specs.items():
        for k, (shape, raw_index) in enumerate(entries):
            index = _as_arrays(raw_index)
            out_shape = np.zeros(shape)[index].shape
            repeats = _has_repeats(shape, index)
            base = f"{family}/{name}{k}/{_name(raw_index)}"
            note = "duplicates: every update applies (NumPy ufunc.at)" if repeats else ""
            for op in ops:
                if op == "set" and repeats:
                    continue  # which duplicate wins is unspecified (JAX, torch)
                b.add(
                    f"{base}/{op}/f64",
                    JAX,
                    b.floats(shape),
                    index,
                    op,
                    b.floats(out_shape),
                    note=note,
                )
                if op in ("set", "multiply"):
                    b.add(f"{base}/{op}/scalar", JAX, b.floats(shape), index, op, 1.25, note=note)
                if op in ("set", "add", "max"):
                    b.add(
                        f"{base}/{op}/int64",
                        JAX,
                        b.ints(shape),
                        index,
                        op,
                        b.ints(out_shape),
                        note=note,
                    )
            if family in ("static", "advanced"):
                b.add(f"{base}/get", JAX, b.floats(shape), index, "get", None)


def _out_of_bounds_cases(b: _Builder) -> None:
    """STATIC_INDEXING_OUT_OF_BOUNDS_TESTS under the modes (testStaticIndexingGrads)."""
    for name, entries in OUT_OF_BOUNDS.items():
        for k, (shape, index) in enumerate(entries):
            items = index if isinstance(index, tuple) else (index,)
            clipped = tuple(max(-n, min(n - 1, i)) for i, n in zip(items, shape, strict=False))
            inside = all(-n <= i < n for i, n in zip(items, shape, strict=False))
            out_shape = np.zeros(shape)[clipped].shape
            for op in ("set", "add", "subtract", "multiply"):
                x, v = b.floats(shape), b.floats(out_shape)
                base = f"static_oob/{name}{k}/{_name(index)}/{op}"
                b.add(
                    f"{base}/clip",
                    JAX,
                    x,
                    index,
                    op,
                    v,
                    mode="clip",
                    expected=numpy_update(op, x, clipped, v),
                )
                b.add(
                    f"{base}/drop",
                    JAX,
                    x,
                    index,
                    op,
                    v,
                    mode="drop",
                    expected=numpy_update(op, x, clipped, v) if inside else x.copy(),
                )
                b.add(
                    f"{base}/none",
                    JAX,
                    x,
                    index,
                    op,
                    v,
                    error=IndexError,
                    note="no mode: out of bounds raises IndexError, as torch's setitem does",
                )


def _wrap_negative_cases(b: _Builder) -> None:
    """testWrapNegativeIndices1D: unique positions, half made negative, the
    largest pushed out of bounds above and the smallest below."""
    for n, op, mode in itertools.product((5, 10), OPS, ("fill", "clip")):
        idx = b.rng.permutation(n)[:5]
        idx = np.where(b.rng.random(5) < 0.5, idx, idx - n)
        idx[idx == n - 1] = n + 2
        idx[idx == -n] = -(n + 2)
        x = np.round(b.floats((n,), np.float32), 1)
        v = np.round(b.floats((5,), np.float32), 1)
        wrapped = np.where(idx < 0, idx + n, idx)
        if mode == "fill":
            ok = (wrapped >= 0) & (wrapped < n)
            expected = numpy_update(op, x, wrapped[ok], v[ok])
        else:
            expected = numpy_update(op, x, np.clip(wrapped, 0, n - 1), v)
            if op == "set" and _has_repeats((n,), np.clip(wrapped, 0, n - 1)):
                continue  # clipping made two positions equal: unspecified winner
        b.add(
            f"wrap_negative/{n}/{op}/{mode}/{_name(idx)}",
            JAX,
            x,
            idx,
            op,
            v,
            mode=mode,
            expected=expected,
        )


def _jax_single_tests(b: _Builder) -> None:
    b.add(
        "jax/IndexMulGradFailsIfNotUnique",
        JAX,
        np.ones(100, np.float32),
        np.ones(10, np.int32),
        "multiply",
        np.ones(10, np.float32),
        note="JAX refuses jvp of multiply with repeated indices (NotImplementedError); "
        "at() computes it exactly",
    )
    data = np.array([5, 1, 7, 2, 3, 4, 1, 3], dtype=float)
    segments = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    b.add(
        "jax/SegmentSumBehavior",
        JAX,
        np.zeros(4),
        segments,
        "add",
        data,
        expected=np.array([13.0, 2.0, 7.0, 4.0]),
    )
    y = np.zeros(8)
    b.add("jax/IndexedUpdateAliasingBug", JAX, y, slice(1, None), "set", 1 + y[:-1])
    b.add(
        "jax/ScatterValuesCastToTargetDType",
        JAX,
        np.zeros(1, np.uint32),
        0,
        "set",
        2**32 - 1,
        expected=np.array([2**32 - 1], np.uint32),
    )


def _array_api_extra_cases(b: _Builder) -> None:
    table = {  # test_update_ops: (op, y, expected for x = [10, 20, 30] at [1:])
        "set": (40.0, [10.0, 40.0, 40.0]),
        "add": (40.0, [10.0, 60.0, 70.0]),
        "subtract": (100.0, [10.0, -80.0, -70.0]),
        "multiply": (2.0, [10.0, 40.0, 60.0]),
        "divide": (2.0, [10.0, 10.0, 15.0]),
        "power": (2.0, [10.0, 400.0, 900.0]),
        "min": (25.0, [10.0, 20.0, 25.0]),
        "max": (25.0, [10.0, 25.0, 30.0]),
    }
    for op, (y, upstream) in table.items():
        x = np.array([10.0, 20.0, 30.0])
        for bool_mask, y_ndim in itertools.product((False, True), (0, 1)):
            index = np.array([False, True, True]) if bool_mask else slice(1, None)
            values = np.array([y, y]) if y_ndim else y
            case_id = f"xpx/update_ops/{op}/{'mask' if bool_mask else 'slice'}/y{y_ndim}"
            expected = numpy_update(op, x, index, values)
            assert expected.tolist() == upstream, case_id
            b.add(case_id, XPX, x, index, op, values, expected=expected)
        scalar = np.array(30.0 if op == "min" else 20.0)
        for bool_mask in (False, True):
            index = np.array(True) if bool_mask else ()
            case_id = f"xpx/update_ops/{op}/0d/{'mask' if bool_mask else 'empty_tuple'}"
            want = np.array(upstream[2] if op == "min" else upstream[1])
            b.add(case_id, XPX, scalar, index, op, y, expected=want)
    for op in OPS:
        for bool_mask in (False, True):
            x = np.array([2, 4])
            index = np.array([True, False]) if bool_mask else slice(None)
            case_id = f"xpx/incompatible_dtype/{op}/{'mask' if bool_mask else 'slice'}"
            if op in ("set", "min", "max"):
                b.add(
                    case_id,
                    XPX,
                    x,
                    index,
                    op,
                    1.1,
                    expected=numpy_update(op, x, index, 1.1).astype(x.dtype),
                    note="an int array keeps its dtype: the float is cast, as setitem casts",
                )
            else:
                b.add(
                    case_id,
                    XPX,
                    x,
                    index,
                    op,
                    1.1,
                    error=Exception,
                    note="array-api-extra expects an error matching 'cast|promote|dtype' "
                    "(torch: result type Float can't be cast to the desired output type Long)",
                )
    b.add(
        "xpx/bool_mask_nd",
        XPX,
        np.array([[1, 2, 3], [4, 5, 6]]),
        np.array([[True, False, False], [False, True, True]]),
        "set",
        0,
        expected=np.array([[0, 2, 3], [4, 0, 0]]),
    )
    for bool_mask in (False, True):
        x = np.array([np.inf, 1.0, 2.0])
        index = ~np.isinf(x) if bool_mask else slice(1, None)
        b.add(
            f"xpx/no_inf_warnings/{'mask' if bool_mask else 'slice'}",
            XPX,
            x,
            index,
            "subtract",
            np.inf,
            expected=np.array([np.inf, -np.inf, -np.inf]),
        )
        b.add(
            f"xpx/gh134/{'mask' if bool_mask else 'empty_tuple'}",
            XPX,
            np.array(np.zeros(1)[0]),
            np.array(True) if bool_mask else (),
            "set",
            1,
            expected=np.array(1.0),
        )
    a = np.array([1, 2, 3])
    b.add("xpx/alternate_index_syntax/set", XPX, a, 0, "set", 4, expected=np.array([4, 2, 3]))
    b.add("xpx/alternate_index_syntax/add0", XPX, a, 0, "add", 1, expected=np.array([2, 2, 3]))
    b.add("xpx/alternate_index_syntax/add1", XPX, a, 1, "add", 2, expected=np.array([1, 4, 3]))


def _build() -> Iterator[AtCase]:
    b = _Builder()
    _spec_cases(b, "static", STATIC, OPS)
    _spec_cases(b, "advanced", ADVANCED_NO_REPEATS, OPS)
    repeats = {
        name: [(s, i) for s, i in entries if _has_repeats(s, _as_arrays(i))]
        for name, entries in ADVANCED.items()
    }
    _spec_cases(b, "advanced_repeats", {k: v for k, v in repeats.items() if v}, OPS[1:])
    _spec_cases(b, "mixed", MIXED_NO_REPEATS, OPS)
    _spec_cases(b, "mixed_repeats", MIXED_REPEATS, OPS[1:])
    _out_of_bounds_cases(b)
    _wrap_negative_cases(b)
    _jax_single_tests(b)
    _array_api_extra_cases(b)
    yield from b.cases


AT_CASES: tuple[AtCase, ...] = tuple(_build())


def _torch_differs(case: AtCase) -> str | None:
    """Why torch cannot give NumPy's answer for ``case``, or None."""
    if _has_negative_step(case.index):
        return "torch has no negative slice steps: x[::-1] raises ValueError"
    return None


#: Case id -> reason, for cases whose NumPy semantics torch does not share.
TORCH_DIFFERS: dict[str, str] = {
    c.id: reason for c in AT_CASES if (reason := _torch_differs(c)) is not None
}
