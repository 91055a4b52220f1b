"""The battery's cases: plain records, enumerated from fixed lists, built into tensors later.

A :class:`Case` names everything about one check as strings and numbers (which
writer, the ``x`` it writes into, the index, the value, what is checked), so
the list is cheap to make, the same on every run, and each case reads as its
id (``dtypes/where/forward/x=uint8[3,4]/i=mask/v=0d:float32:-3.0``). Tensors
are made from a case by :mod:`battery.build`; torch's answer comes from
:mod:`battery.oracle`.

>>> case = Case("dtypes", "where", X("uint8"), "mask", Value("0d", "float32", "-3.0"))
>>> str(case)
'dtypes/where/forward/x=uint8[3,4]/i=mask/v=0d:float32:-3.0'
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Every dtype ``x`` and a tensor value take, by name (``torch.<name>``).
DTYPES: tuple[str, ...] = (
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
#: The kinds of Python number a value can be (``Value("py", kind, ...)``).
PYTHON = ("bool", "int", "float", "complex")

#: ``at(x)[i].<op>(v)`` for each op; the recipes are ``set``.
AT_OPS = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max")
#: The recipes, by their name in ``inplace_recipes.RECIPES`` (fixed here, so that
#: the case list does not depend on the package under test; ``test_battery_count``
#: checks it is RECIPES' list).
RECIPE_NAMES = ("mask", "where", "clone", "index_put", "scatter", "select_scatter", "masked_fill")
#: Every writer the battery checks: each recipe, then ``at.<op>``.
WRITERS: tuple[str, ...] = RECIPE_NAMES + tuple(f"at.{op}" for op in AT_OPS)
#: ``at()``'s arithmetic and comparison ops (not ``set``).
AT_UPDATES = tuple(f"at.{op}" for op in AT_OPS if op != "set")


def op_of(writer: str) -> str:
    """The in-place statement ``writer`` stands for: ``set`` for every recipe.

    >>> op_of("where"), op_of("at.max")
    ('set', 'max')
    """
    return writer[3:] if writer.startswith("at.") else "set"


@dataclass(frozen=True)
class X:
    """The tensor written into.

    ``layout``: ``contiguous``, ``transposed`` (a permuted view of a contiguous
    tensor), ``channels_last``, ``expanded`` (stride 0 on dimension 0), ``sparse``
    (COO). ``kind``: ``tensor``, ``parameter`` (``nn.Parameter``) or ``tagged``
    (a subclass that keeps torch's ``__torch_function__``). ``grad``: a leaf that
    requires grad. ``content``: ``random`` (seeded normal values; small
    integers for integer dtypes) or ``negative`` (every entry below -0.5: a
    negative base for ``power``).
    """

    dtype: str = "float32"
    shape: tuple[int, ...] = (3, 4)
    device: str = "cpu"
    layout: str = "contiguous"
    kind: str = "tensor"
    grad: bool = False
    content: str = "random"

    def __str__(self) -> str:
        parts = [f"{self.dtype}[{','.join(map(str, self.shape))}]"]
        parts += [p for p in (self.device, self.layout, self.kind) if p not in _DEFAULTS]
        if self.content != "random":
            parts.append(self.content)
        if self.grad:
            parts.append("grad")
        return ":".join(parts)


@dataclass(frozen=True)
class Value:
    """The value written.

    ``form``: ``py`` (a Python number; ``dtype`` is then one of :data:`PYTHON`),
    ``0d``, ``one`` (shape ``(1,)``), ``full`` (the shape of ``x[index]``),
    ``row`` (its last dimension, broadcast), ``lead1`` (``(1, *full)``: setitem
    drops leading ones). ``content``: ``plain`` (small values every dtype holds)
    or a literal of :data:`LITERALS` (the same number in every entry).
    ``layout``: ``strided``, ``transposed``, ``expanded`` (stride 0) or ``sparse``.
    """

    form: str = "full"
    dtype: str = "float32"
    content: str = "plain"
    device: str = "cpu"
    layout: str = "strided"
    kind: str = "tensor"
    grad: bool = False

    def __str__(self) -> str:
        parts = [self.form, self.dtype, self.content]
        parts += [p for p in (self.device, self.layout, self.kind) if p not in _DEFAULTS]
        if self.grad:
            parts.append("grad")
        return ":".join(parts)


_DEFAULTS = frozenset({"cpu", "contiguous", "strided", "tensor"})

#: Named values: out of range for some dtype, non-finite, signed zero, huge.
#: A Python value of each, and a tensor of a dtype that holds it (else no case).
LITERALS: dict[str, bool | int | float | complex] = {
    "True": True,
    "2.7": 2.7,
    "-2.7": -2.7,
    "-3.0": -3.0,
    "300.0": 300.0,
    "-129.0": -129.0,
    "70000.0": 70000.0,
    "1e40": 1e40,
    "1e-8": 1e-8,
    "-0.0": -0.0,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "-1": -1,
    "2": 2,
    "128": 128,
    "256": 256,
    "65536": 1 << 16,
    "2**31": 1 << 31,
    "2**32": 1 << 32,
    "2**63-1": (1 << 63) - 1,
    "-2**63": -(1 << 63),
    "2**63": 1 << 63,
    "2**64-1": (1 << 64) - 1,
    "3e9": 3e9,
    "1e19": 1e19,
    "1.5-2j": 1.5 - 2j,
    "nan+1j": complex(float("nan"), 1.0),
    "1e40+0j": complex(1e40, 0.0),
}

#: Every index the battery writes through, by name; :func:`battery.build.index`
#: makes each for a given shape (``s0`` is the first dimension's size).
INDICES: tuple[str, ...] = (
    "int", "neg_int", "slice", "step_slice", "int_slice", "ellipsis_int", "none_int", "full",
    "ellipsis", "mask", "row_mask", "empty_mask", "mask_0d", "bool_true", "bool_false",
    "uint8_mask", "tensor", "tensor_int32", "tensor_2d", "tensor_pair", "list",
    "slice_tensor", "int_tensor", "tensor_0d", "empty_tensor",
)  # fmt: skip
#: Out-of-range and extreme indices (IndexError and friends, huge bounds).
EXTREME_INDICES: tuple[str, ...] = (
    "int_oob", "int_neg_oob", "int_2**62", "int_-2**63", "int_2**64", "slice_huge",
    "slice_step_huge", "slice_past", "tensor_oob", "tensor_neg_oob", "tensor_2**62",
    "tensor_int32_min", "tensor_int64_min", "mask_wrong_shape",
)  # fmt: skip
#: Indices with repeated positions (``at()``'s ops apply every update in order).
REPEAT_INDICES = ("dup", "dup3", "dup_pair")

#: The four indices most axes cross the others with: an int (a copy into a
#: view), ints and a slice, a mask and an index tensor (``index_put_``).
CORE_INDICES = ("int", "int_slice", "mask", "tensor")


@dataclass(frozen=True)
class Case:
    """One check: ``writer`` on ``x[index] = value`` (or its op), against torch.

    ``check`` is ``forward`` (value, dtype, type, device, error class, inputs
    unchanged), ``reverse`` (gradients), ``double`` (gradients of gradients),
    ``jvp`` (``torch.func.jvp``), ``dual`` (``torch.autograd.forward_ad``),
    ``grad`` (``torch.func.grad``), ``vmap:<batched>`` (``torch.func.vmap``
    with the named arguments batched, against a loop), ``compile:<backend>:<static|dynamic>``
    or ``context:<name>`` (``no_grad``, ``inference_mode``, ``deterministic``,
    ``view``: ``x`` a view of a base that requires grad).
    """

    axis: str
    writer: str
    x: X
    index: str
    value: Value
    check: str = "forward"
    index_device: str = "cpu"
    extra: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        where = self.index if self.index_device == "cpu" else f"{self.index}@{self.index_device}"
        parts = [self.axis, self.writer, self.check, f"x={self.x}", f"i={where}", f"v={self.value}"]
        return "/".join(parts + list(self.extra))

    @property
    def op(self) -> str:
        return op_of(self.writer)
