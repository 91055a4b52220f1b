"""The axes the battery walks, each a fixed enumeration of cases, and the default sample.

Every axis crosses a few lists of :mod:`battery.spec`; nothing is drawn at
random, so the list and its count are the same on every run. The default run
takes a deterministic sample of each axis (:func:`sample`): per writer, every
``1/share``-th case of a seeded shuffle, at least one; ``HYPOTHESIS_PROFILE=thorough``
(the README's profile, see ``tests/conftest.py``) runs every case.

>>> len(cases("compile")) == len(set(map(str, cases("compile"))))  # ids are unique
True
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from .build import holds
from .spec import (
    COMPLEX,
    CORE_INDICES,
    DTYPES,
    EXTREME_INDICES,
    FLOATS,
    INDICES,
    LITERALS,
    PYTHON,
    REPEAT_INDICES,
    WRITERS,
    Case,
    Value,
    X,
)

# -- the axes ----------------------------------------------------------------------------


def _dtypes() -> Iterator[Case]:
    """Every dtype of ``x`` crossed with every value dtype (0-d and full) and every
    kind of Python number, through an int, a mask and an index tensor."""
    values = [Value("py", kind) for kind in PYTHON]
    values += [Value(form, d) for d in DTYPES for form in ("0d", "full")]
    for xd in DTYPES:
        for value in values:
            for index in ("int", "mask", "tensor"):
                for w in WRITERS:
                    yield Case("dtypes", w, X(xd), index, value)


#: ``x``'s dtype, and the values that are out of its range, non-finite, a signed
#: zero, or otherwise at its edge.
_EDGES: dict[str, tuple[str, ...]] = {
    "uint8": ("-3.0", "300.0", "2.7", "-2.7", "-1", "256", "nan", "inf", "True"),
    "int8": ("300.0", "-129.0", "128", "-1", "2.7", "nan", "-inf"),
    "int16": ("70000.0", "65536"),
    "int32": ("3e9", "2**31"),
    "int64": ("2**63-1", "-2**63", "2**63", "1e19", "nan", "inf"),
    "uint16": ("-1", "65536", "-3.0"),
    "uint32": ("-1", "2**32", "3e9"),
    "uint64": ("-1", "2**63", "2**64-1", "1e19"),
    "bool": ("2", "-3.0", "2.7", "nan", "-0.0"),
    "float16": ("70000.0", "1e40", "1e-8", "-0.0", "nan", "inf", "2**63-1"),
    "bfloat16": ("1e40", "1e-8", "-0.0", "nan", "2**63-1"),
    "float32": ("1e40", "-0.0", "nan", "-inf", "2**63", "2**64-1"),
    "float64": ("2**63", "2**64-1", "-0.0", "nan"),
    "complex64": ("1e40", "1e40+0j", "nan+1j", "-0.0", "1.5-2j"),
    "complex128": ("nan+1j", "2**64-1"),
}


def _tensor_dtypes(literal: str) -> tuple[str, ...]:
    """The dtypes a tensor value of ``literal`` comes in: the widest of its kind
    that holds it (float32 too for a float, as ``torch.tensor(-3.0)`` gives)."""
    number = LITERALS[literal]
    if isinstance(number, bool):
        return ("bool",)
    if isinstance(number, int):
        return ("int64",) if holds("int64", literal) else ("uint64",)
    if isinstance(number, float):
        return ("float64", "float32")
    return ("complex128",)


def _literals() -> Iterator[Case]:
    """Values at the edge of ``x``'s dtype, as a Python number and as tensors of
    several shapes, through an int, ints and a slice, a mask, a row mask and an
    index tensor."""
    for xd, literals in _EDGES.items():
        for literal in literals:
            kind = type(LITERALS[literal]).__name__
            values = [Value("py", kind, literal)]
            for vd in _tensor_dtypes(literal):
                if not holds(vd, literal):
                    continue
                forms = ("0d", "one", "full") if vd != "float32" else ("0d",)
                values += [Value(form, vd, literal) for form in forms]
            for value in values:
                for index in ("int", "int_slice", "mask", "row_mask", "tensor"):
                    for w in WRITERS:
                        yield Case("literals", w, X(xd), index, value)


def _indices() -> Iterator[Case]:
    """Every kind of index crossed with every shape of value, in four dtypes."""
    forms = ("0d", "one", "full", "row", "lead1")
    py_kind = {"float32": "float", "int64": "int", "bool": "bool", "complex64": "complex"}
    for xd, kind in py_kind.items():
        for index in INDICES:
            values = [Value("py", kind)] + [Value(form, xd) for form in forms]
            for value in values:
                for w in WRITERS:
                    yield Case("indices", w, X(xd), index, value)


def _extremes() -> Iterator[Case]:
    """Out-of-range, huge and extreme indices; and an ``x`` of 2**21 elements (past
    the 2**20 where the index planning changes method)."""
    for xd, kind in (("float32", "float"), ("int64", "int")):
        for index in EXTREME_INDICES:
            for value in (Value("py", kind), Value("0d", xd), Value("full", xd)):
                for w in WRITERS:
                    yield Case("extremes", w, X(xd), index, value)
    huge = X("float32", (512, 4096))
    for index in ("tensor", "mask", "list", "slice_tensor", "int_tensor", "tensor_pair"):
        for value in (Value("0d"), Value("full")):
            for w in WRITERS:
                yield Case("extremes", w, huge, index, value)


def _devices() -> Iterator[Case]:
    """A meta ``x`` with a CPU or meta index and a Python, CPU or meta value, in
    float32 and int64. (A CPU ``x`` with a meta index or value is left out: torch
    2.13 reads the meta tensor's missing data there, so its own answer changes
    from run to run.)"""
    indices = ("int", "int_slice", "mask", "row_mask", "tensor", "tensor_pair", "list", "bool_true")
    tensor_indices = {"mask", "row_mask", "tensor", "tensor_pair"}
    for xd, kind in (("float32", "float"), ("int64", "int")):
        for index in indices:
            index_devices = ("cpu", "meta") if index in tensor_indices else ("cpu",)
            for index_device in index_devices:
                values = [Value("py", kind)]
                values += [Value(f, xd, device=d) for f in ("0d", "full") for d in ("cpu", "meta")]
                for value in values:
                    for w in WRITERS:
                        x = X(xd, device="meta")
                        yield Case("devices", w, x, index, value, "forward", index_device)


def _layouts() -> Iterator[Case]:
    """``x`` transposed, channels_last or expanded (stride 0), values transposed or
    expanded, in float32 and int64."""
    indices = ("int", "step_slice", "mask", "tensor", "slice_tensor", "ellipsis_int")
    for xd in ("float32", "int64"):
        for layout in ("contiguous", "transposed", "channels_last", "expanded"):
            x = X(xd, (2, 3, 2, 2), layout=layout)
            values = [Value("0d", xd)] + [
                Value("full", xd, layout=v) for v in ("strided", "transposed", "expanded")
            ]
            for index in indices:
                for value in values:
                    if layout == "contiguous" and value.layout == "strided":
                        continue
                    for w in WRITERS:
                        yield Case("layouts", w, x, index, value)


def _subclasses() -> Iterator[Case]:
    """``nn.Parameter`` and a ``__torch_function__`` subclass, as ``x`` and as the value."""
    for x_kind in ("tensor", "parameter", "tagged"):
        x = X(kind=x_kind, grad=x_kind == "parameter")
        values = [Value("py", "float")]
        values += [
            Value("full", kind=k, grad=k == "parameter") for k in ("tensor", "parameter", "tagged")
        ]
        for value in values:
            if x_kind == "tensor" and value.kind == "tensor":
                continue
            for index in (*CORE_INDICES, "tensor_pair"):
                for w in WRITERS:
                    yield Case("subclasses", w, x, index, value)


#: Indices that make ``y[index]`` a view at an offset (see :func:`_sparse`).
BASIC_SPARSE_VIEWS = frozenset({"int", "int_slice", "slice"})


def _sparse() -> Iterator[Case]:
    """A sparse ``x`` (setitem refuses it) and sparse values (refused for ints and
    slices, written by ``y[t] += v``)."""
    for index in CORE_INDICES:
        for value in (Value("py", "float"), Value("0d"), Value("full")):
            for w in WRITERS:
                yield Case("sparse", w, X(layout="sparse"), index, value)
    for index in (*CORE_INDICES, "slice", "list"):
        for value in (Value("0d", layout="sparse"), Value("full", layout="sparse")):
            for w in WRITERS:
                if index in BASIC_SPARSE_VIEWS and w in ("at.add", "at.subtract", "at.multiply"):
                    # torch 2.13's `view.add_(sparse)` (sub_, mul_) ignores the dense
                    # view's storage offset: `y[1] += v` writes row 2, and `y[1:] += v`
                    # corrupts the heap (glibc aborts): no answer of torch's to compare with
                    continue
                yield Case("sparse", w, X(), index, value)


def _repeats() -> Iterator[Case]:
    """Index tensors that name a position twice or more: ``at()``'s ops apply every
    update in order; non-finite steps (a zero divisor, a root of a negative base)."""
    for xd in ("float32", "float64", "int64"):
        grad = xd != "int64"
        for index in REPEAT_INDICES:
            for w in WRITERS:
                specials: tuple[str, ...] = ()
                if grad and w == "at.divide":
                    specials = ("zero_first",)
                if grad and w == "at.power":
                    specials = ("half_first",)
                for content in ("plain", *specials):
                    x = X(
                        xd, grad=grad, content="negative" if content == "half_first" else "random"
                    )
                    values = [Value("full", xd, content, grad=grad)]
                    if content == "plain":
                        values += [
                            Value("0d", xd, grad=grad),
                            Value("py", "int" if xd == "int64" else "float"),
                        ]
                    for value in values:
                        for check in ("forward", "reverse", "dual") if grad else ("forward",):
                            yield Case("repeats", w, x, index, value, check)


def _autograd() -> Iterator[Case]:
    """Reverse mode, double backward, ``torch.func.jvp``, dual tensors and
    ``torch.func.grad``, with ``x`` and the value requiring grad, in every float
    dtype, complex64 and as an ``nn.Parameter``."""
    indices = (
        *CORE_INDICES,
        "tensor_pair",
        "slice_tensor",
        "row_mask",
        "none_int",
        "empty_mask",
        "empty_tensor",  # torch gives the value zeros: in the graph
        "bool_false",  # setitem writes nothing: the value is not in the graph
    )
    for xd in (*FLOATS, COMPLEX[0]):
        other = "float64" if xd != "float64" else "float32"
        values = [
            Value("py", "complex" if xd in COMPLEX else "float"),
            Value("0d", xd, grad=True),
            Value("one", xd, grad=True),
            Value("full", xd, grad=True),
            Value("full", other, grad=True),
        ]
        checks = ("reverse", "jvp", "dual")
        if xd in ("float32", "float64"):
            checks += ("double", "grad")
        for check in checks:
            for index in indices:
                for value in values:
                    for w in WRITERS:
                        yield Case("autograd", w, X(xd, grad=True), index, value, check)
    for index in indices:
        for value in (Value("py", "float"), Value("full", grad=True)):
            for w in WRITERS:
                yield Case("autograd", w, X(kind="parameter", grad=True), index, value, "reverse")


def _contexts() -> Iterator[Case]:
    """``no_grad``, ``inference_mode``, deterministic algorithms, and ``x`` a view of
    a base that requires grad."""
    for context in ("no_grad", "inference_mode", "deterministic", "view"):
        for index in CORE_INDICES:
            for value in (Value("py", "float"), Value("full", grad=True)):
                for w in WRITERS:
                    x = X(grad=context in ("no_grad", "deterministic"))
                    yield Case("contexts", w, x, index, value, f"context:{context}")


_VMAP_BATCHES = ("x", "value", "index", "x,value", "x,index", "index,value", "x,index,value")


def _vmap() -> Iterator[Case]:
    """``torch.func.vmap`` with each argument batched (and backward through it),
    against a loop over the examples."""
    for batched in _VMAP_BATCHES:
        names = batched.split(",")
        if "index" in names:
            indices: tuple[str, ...] = ("mask", "row_mask", "tensor", "tensor_2d")
        else:
            indices = (*CORE_INDICES, "tensor_pair", "slice_tensor")
        values = [Value("0d", grad=True), Value("full", grad=True), Value("row", grad=True)]
        if "value" not in names:
            values.append(Value("py", "float"))
        for index in indices:
            for value in values:
                for w in WRITERS:
                    yield Case("vmap", w, X(grad=True), index, value, f"vmap:{batched}")


#: The inputs of the compile axis: the issue's failures (a mask with a value of
#: several elements; an int index with a 0-d value that requires grad) and the
#: other kinds of write.
_COMPILE_INPUTS = (
    ("int", Value("0d", grad=True)),
    ("int_slice", Value("full", grad=True)),
    ("mask", Value("full", grad=True)),
    ("mask", Value("py", "float")),
    ("tensor", Value("full", grad=True)),
    ("row_mask", Value("row", grad=True)),
    ("slice_tensor", Value("full", grad=True)),
)


def _compile() -> Iterator[Case]:
    """``torch.compile(fullgraph=True)``, aot_eager and inductor, static and
    ``dynamic=True``, forward and backward; ``torch``'s own clone + setitem as
    the control."""
    for backend in ("aot_eager", "inductor"):
        for mode in ("static", "dynamic"):
            for index, value in _COMPILE_INPUTS:
                for w in ("torch", *WRITERS):
                    yield Case(
                        "compile", w, X(grad=True), index, value, f"compile:{backend}:{mode}"
                    )


@dataclass(frozen=True)
class Axis:
    """An axis: its cases, and the share of them the default run takes."""

    make: Callable[[], Iterator[Case]]
    share: float


AXES: dict[str, Axis] = {
    "dtypes": Axis(_dtypes, 0.2),
    "literals": Axis(_literals, 0.2),
    "indices": Axis(_indices, 0.2),
    "extremes": Axis(_extremes, 0.15),
    "devices": Axis(_devices, 0.25),
    "layouts": Axis(_layouts, 0.25),
    "subclasses": Axis(_subclasses, 0.4),
    "sparse": Axis(_sparse, 0.4),
    "repeats": Axis(_repeats, 0.4),
    "autograd": Axis(_autograd, 0.2),
    "contexts": Axis(_contexts, 0.4),
    "vmap": Axis(_vmap, 0.3),
    "compile": Axis(_compile, 0.07),  # two cases per writer
}


@cache
def cases(axis: str) -> tuple[Case, ...]:
    """Every case of ``axis``, in enumeration order."""
    return tuple(AXES[axis].make())


def profile() -> str:
    """The Hypothesis profile ``tests/conftest.py`` loads (the same rule)."""
    return os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")


def thorough() -> bool:
    return profile() == "thorough"


@cache
def sample(axis: str) -> tuple[Case, ...]:
    """The default run's cases of ``axis``: per writer, a seeded ``share`` of them
    (at least one), in enumeration order."""
    every = cases(axis)
    share = AXES[axis].share
    picked: set[Case] = set()
    for w in sorted({c.writer for c in every}):
        group = [c for c in every if c.writer == w]
        rng = random.Random(f"battery/{axis}/{w}")
        rng.shuffle(group)
        picked.update(group[: max(1, round(share * len(group)))])
    return tuple(c for c in every if c in picked)


def selected(axis: str) -> tuple[Case, ...]:
    """The cases this run takes: every case under the thorough profile, else the sample."""
    return cases(axis) if thorough() else sample(axis)


def counts() -> dict[str, tuple[int, int]]:
    """``axis -> (cases, cases in the default sample)``."""
    return {axis: (len(cases(axis)), len(sample(axis))) for axis in AXES}


def header() -> str:
    """The line pytest prints: the battery's size and what this run takes."""
    every = counts()
    total = sum(n for n, _ in every.values())
    taken = total if thorough() else sum(k for _, k in every.values())
    return f"battery (issue 28): {total} cases, {taken} in this run (profile {profile()})"
