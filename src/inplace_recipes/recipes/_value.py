"""Setitem's rule for the value, in one place: what ``y[index] = value`` makes of it.

Torch's setitem takes one of three paths, chosen by the index and the value,
and each casts (or refuses) a value its own way (:func:`setitem_path`):

``"copy"``
    ints, slices, ``...``, ``None`` and a lone Python bool: ``copy_`` into
    the view, which broadcasts, then casts any dtype (a complex value into a
    real ``x`` with torch's warning, dropping the imaginary part). Backward
    casts the gradient to the value's dtype before it sums it over the
    positions the value was broadcast to.
``"masked_fill"``
    one mask of at least one dimension and a one-element value on the CPU:
    ``index_put_`` hands it to ``masked_fill_``, which reads the value as a
    number and converts it with an overflow check (``value cannot be
    converted to type uint8_t without overflow``); a uint8 mask raises there.
``"index_put"``
    anything else with index tensors: ``index_put_``, which requires ``x``'s dtype.

:func:`setitem_value` applies the rule; every recipe receives its value from
it (the shared start, :mod:`~inplace_recipes.recipes._start`), and
:func:`~inplace_recipes.at` hands the results of its ops to the recipes (or
to it) in turn. A Python number becomes a tensor of ``x``'s dtype by torch's
own conversion (``torch.scalar_tensor``, which raises where setitem raises:
``256`` into uint8, a complex number into a real ``x``); a float into
float32 or float64 stays a number for the recipes whose record says they take
numbers (torch writes it exactly so).

>>> import torch
>>> from inplace_recipes import RECIPES
>>> m = torch.tensor([True, False, True])
>>> RECIPES["where"](torch.zeros(3, dtype=torch.uint8), m, torch.tensor(-3.0))
Traceback (most recent call last):
    ...
RuntimeError: value cannot be converted to type uint8_t without overflow
>>> RECIPES["where"](torch.zeros(3, dtype=torch.uint8), 0, torch.tensor(-3.0))  # copy_ wraps
tensor([253,   0,   0], dtype=torch.uint8)

The ``"masked_fill"`` path's checked conversion is ``masked_fill`` itself, in
the graph: it raises where torch's own setitem raises, in eager mode and under
``torch.compile`` with the ``aot_eager`` backend, and casts without a check
under inductor, as inductor does for torch's own setitem. Under ``vmap`` with
``x`` or the value batched, torch's ``index_put_`` has no ``masked_fill_``
path: it requires ``x``'s dtype, and so does the rule.

One difference on that path is documented: into an integer or bool ``x``, a
value that requires grad is written detached. Setitem's result there has a
``grad_fn`` (``IndexPutBackward0``), but backward through it fails on
torch's internal assert ``isDifferentiableType``; the recipes' result has none:

>>> v = torch.tensor(1.5, requires_grad=True)
>>> RECIPES["where"](torch.zeros(3, dtype=torch.int64), m, v)
tensor([1, 0, 1])
"""

from __future__ import annotations

import math
import operator
from typing import Any, Literal, cast

import torch
from torch import Tensor

from .._indexing import IndexPlan

__all__ = [
    "FLOAT_DTYPES",
    "Path",
    "float_as_it_is",
    "in_transform",
    "not_a_number",
    "number_error",
    "setitem_path",
    "setitem_value",
]

#: Dtypes that a Python float is written into exactly as setitem writes it,
#: so a recipe that takes numbers is handed it as it is, with no tensor to build.
FLOAT_DTYPES = (torch.float32, torch.float64)

Path = Literal["copy", "masked_fill", "index_put"]

_STRIDED = torch.strided
_FLOAT32, _FLOAT64 = FLOAT_DTYPES
_FLOAT32_MAX = torch.finfo(torch.float32).max
_INT64 = 1 << 63
_UINT64 = torch.uint64
_DISABLED = torch._C._disabled_torch_function_impl
_current_level = torch._C._functorch.maybe_current_level
_is_batched = torch._C._functorch.is_batchedtensor
_unpack_dual = torch.autograd.forward_ad.unpack_dual
#: torch 2.13's own message, from ``masked_fill_`` (``index_put_`` hands it a
#: uint8 mask with a one-element value).
_UINT8_MASKED_FILL = (
    "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
)


def float_as_it_is(dtype: torch.dtype, value: float) -> bool:
    """Whether setitem writes the float ``value`` into ``dtype`` exactly as the recipes that
    take numbers write it: float64, or float32 within its range (torch raises ``value cannot
    be converted to type float without overflow`` past it; an infinity or nan it holds).

    >>> float_as_it_is(torch.float32, 1.5), float_as_it_is(torch.float32, 1e39)
    (True, False)
    >>> float_as_it_is(torch.float32, float("-inf")), float_as_it_is(torch.float32, float("nan"))
    (True, True)
    """
    return dtype is _FLOAT64 or (
        dtype is _FLOAT32 and (abs(value) <= _FLOAT32_MAX or not math.isfinite(value))
    )


def in_transform() -> bool:
    """Whether a ``torch.func`` transform (``vmap``, ``grad``, ``jvp``, ...) is active."""
    return _current_level() is not None


def setitem_value(
    x: Tensor, index: Any, plan: IndexPlan, value: Any, *, numbers: bool = False
) -> Tensor | float:
    """``value`` as setitem writes it into ``x[index]``, or setitem's error.

    A tensor of ``x``'s dtype, on its device, of the plain ``Tensor`` type (a
    value of a ``__torch_function__`` subclass is unwrapped with
    ``as_subclass``, which keeps it in the graph, so that the result has
    ``x``'s type as setitem's has); its shape is the value's own, or, for a
    value that requires grad cast on the ``"copy"`` path, that of ``x[index]``
    (the cast follows the broadcast, as in ``copy_``). With
    ``numbers``, a float for a float32 or float64 ``x`` is returned as it is.
    Errors are torch's own, class and message.

    >>> plan = IndexPlan.of(torch.zeros(3), [0, 2])
    >>> setitem_value(torch.zeros(3), [0, 2], plan, 2.5)
    tensor(2.5000)
    >>> setitem_value(torch.zeros(3), [0, 2], plan, torch.tensor([1.0, 2.0], dtype=torch.float64))
    Traceback (most recent call last):
        ...
    RuntimeError: Index put requires the source and destination dtypes match, got Float for the destination and Double for the source. (setitem casts ...)
    """
    tp = type(value)
    if tp is float and not plan.uint8_mask:  # the common values, first
        if numbers and float_as_it_is(x.dtype, value):
            return cast(float, value)
        return torch.scalar_tensor(value, dtype=x.dtype, device=x.device)
    if (
        tp is Tensor
        and value.dtype is x.dtype
        and value.layout is _STRIDED
        and not plan.uint8_mask
        and value.device == x.device
    ):
        if value.ndim == 0 and in_transform():
            return _tangent_cast(x, index, plan, value)
        return cast(Tensor, value)
    if not isinstance(value, Tensor):
        number = _number(value, x.dtype)
        if plan.uint8_mask and setitem_path(x, index, plan, 1, True) == "masked_fill":
            raise RuntimeError(_UINT8_MASKED_FILL)
        if numbers and type(number) is float and float_as_it_is(x.dtype, number):
            return number
        return torch.scalar_tensor(number, dtype=x.dtype, device=x.device)
    return _tensor_value(x, index, plan, value)


def _tangent_cast(x: Tensor, index: Any, plan: IndexPlan, value: Tensor) -> Tensor:
    """A 0-d ``value`` of ``x``'s dtype inside a transform, with a tangent of another
    dtype cast as setitem casts it, or refused as setitem refuses it.

    Torch 2.13's ``torch.func.jvp`` gives a 0-d tensor combined with a Python float a
    float64 tangent (``a[0] + 1.5`` for a float32 ``a``). Setitem's ``copy_`` and
    ``masked_fill_`` cast it; its ``index_put_`` raises (``Index put requires the source and
    destination dtypes match``). A copy in ``x``'s dtype casts the tangent with the value
    (``_to_copy``'s forward rule).
    """
    if _is_batched(value):  # (vmap has no batching rule for unpacking a dual tensor)
        return value
    tangent = _unpack_dual(value).tangent  # type: ignore[no-untyped-call]
    if tangent is None or tangent.dtype is value.dtype:
        return value
    on_cpu = value.device.type == "cpu" and not _is_batched(x)
    if setitem_path(x, index, plan, 1, on_cpu) == "index_put":
        plan.check()  # torch's IndexError for an index tensor past the end comes first
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_type(x.dtype)} for the destination and {_scalar_type(tangent.dtype)} for "
            "the source."
        )
    return value.to(x.dtype, copy=True)


def not_a_number(value: Any) -> TypeError | None:
    """The package's ``TypeError`` for a value that is neither a tensor nor a number setitem
    takes (a Python number, or one with ``__index__``, as NumPy integers have), else None.

    >>> not_a_number("a"), not_a_number(3)
    (TypeError('value must be a Python number or a torch.Tensor, got str'), None)
    """
    if isinstance(value, (Tensor, bool, int, float, complex)) or hasattr(value, "__index__"):
        return None
    return TypeError(_not_a_number_message(value))


def _not_a_number_message(value: Any) -> str:
    return f"value must be a Python number or a torch.Tensor, got {type(value).__name__}"


def number_error(x: Tensor, value: Any) -> Exception | None:
    """Setitem's error for a Python number that ``x``'s dtype cannot hold (``None`` for a
    tensor or a number it can hold). Torch converts a number before it reads the index,
    so that this error comes before the index's: ``y[5] = 300`` into three int8 elements
    raises the overflow, not the ``IndexError``.

    >>> number_error(torch.zeros(3, dtype=torch.int8), 300)
    RuntimeError('value cannot be converted to type int8_t without overflow')
    >>> number_error(torch.zeros(3), "a")  # not a number: a TypeError, as torch's, first too
    TypeError('value must be a Python number or a torch.Tensor, got str')
    """
    if isinstance(value, Tensor) or not isinstance(x, Tensor):
        return None
    if (error := not_a_number(value)) is not None:
        return error
    try:
        torch.scalar_tensor(_number(value, x.dtype), dtype=x.dtype)
    except Exception as error:  # noqa: BLE001 - torch's error is the answer
        return error
    return None


def setitem_path(x: Tensor, index: Any, plan: IndexPlan, numel: int, on_cpu: bool) -> Path:
    """Which of torch's paths setitem takes for a value of ``numel`` elements
    (on the CPU or not) written into ``x[index]`` (see the module docstring).

    Ints, slices, ``...`` and ``None`` (and a lone Python bool) copy. With an
    index tensor (a list, an array, a 0-d bool tensor or a bool inside a
    tuple included) setitem calls ``index_put_``, which hands one mask of at
    least one dimension and a one-element value on the CPU to ``masked_fill_``
    (under ``vmap`` with ``x`` or the value batched, torch 2.13's batching rule
    for ``index_put_`` does not: ``on_cpu`` is false there).

    >>> plan = IndexPlan.of(torch.zeros(3), torch.tensor([True, False, True]))
    >>> setitem_path(torch.zeros(3), plan.index, plan, 1, True), setitem_path(torch.zeros(3), plan.index, plan, 2, True)
    ('masked_fill', 'index_put')
    """
    if plan.kind == "basic" or index is True or index is False:
        return "copy"
    tensors = [i for i in plan.index if isinstance(i, Tensor) and (i.ndim or i.dtype is torch.bool)]
    if not tensors:  # several '...': no tensor, a copy
        return "copy"
    if numel != 1 or not on_cpu or len(tensors) != 1:
        return "index_put"
    mask = tensors[0]
    return "masked_fill" if mask.ndim > 0 and mask.dtype is torch.bool else "index_put"


def _number(value: Any, dtype: torch.dtype) -> bool | int | float | complex:
    """A Python number as setitem reads it for an ``x`` of ``dtype`` (NumPy
    integers too), or torch's error.

    An int outside int64, or any negative int for a uint64 ``x``, is read by
    the running torch's own setitem, on a one-element scratch tensor: torch
    2.13 reads every int as an int64 (``ValueError: Overflow when unpacking
    long long`` past it; ``-1`` wraps into uint64), torch 2.14 reads one for a
    uint64 ``x`` as a uint64 (``2**63`` to ``2**64 - 1`` written, ``OverflowError``
    for a negative int or ``2**64``).

    >>> _number(1 << 64, torch.float32)
    Traceback (most recent call last):
        ...
    ValueError: Overflow when unpacking long long
    """
    if not isinstance(value, (bool, int, float, complex)):
        try:  # NumPy integers, which setitem takes too
            value = operator.index(value)
        except TypeError:
            raise TypeError(_not_a_number_message(value)) from None
    if type(value) is int and (not -_INT64 <= value < _INT64 or dtype is _UINT64):
        torch.empty(1, dtype=dtype)[0] = value  # torch's reading, and its error
    return cast("bool | int | float | complex", value)


def _tensor_value(x: Tensor, index: Any, plan: IndexPlan, value: Tensor) -> Tensor:
    """:func:`setitem_value` for a tensor of another dtype, device, layout or type."""
    if type(value) is not Tensor and type(value).__torch_function__ is not _DISABLED:
        value = value.as_subclass(Tensor)  # setitem keeps x's type; ops would take the value's
    on_cpu = value.device.type == "cpu" and not (_is_batched(value) or _is_batched(x))
    path = setitem_path(x, index, plan, value.numel(), on_cpu)
    if path == "masked_fill" and plan.uint8_mask:
        raise RuntimeError(_UINT8_MASKED_FILL)
    if value.layout is _STRIDED and value.dtype is x.dtype:
        return value.to(device=x.device)
    if value.layout is _STRIDED and path == "copy":
        if value.requires_grad and not _fills(value, plan):
            # broadcast first, then cast, as copy_ does: backward casts the gradient to
            # the value's dtype before it sums it over the positions it was broadcast to
            value = plan.fit(value)
        return value.to(dtype=x.dtype, device=x.device)
    if value.layout is _STRIDED and path == "masked_fill":
        # masked_fill's own checked conversion, in the graph: differentiable, and it
        # runs where torch's runs (eager kernels, aot_eager), not where inductor
        # writes the cast without a check (as it does for torch's own setitem)
        true = torch.ones((), dtype=torch.bool, device=x.device)
        if not (x.is_floating_point() or x.is_complex()):
            # no gradient into integers: setitem's graph there ends in an internal assert
            value = value.detach()
        return x.new_zeros(()).masked_fill(true, value.reshape(()))
    if path == "index_put" and value.numel() != 1 and torch.compiler.is_compiling():
        plan.fit(value)  # torch's shape error comes before its dtype error (eager: the scratch)
    error = _torch_error(x, index, value, path)
    if error is not None:
        raise error
    return value.to(dtype=x.dtype, device=x.device)  # torch's setitem cast it after all


def _fills(value: Tensor, plan: IndexPlan) -> bool:
    """Whether setitem writes ``value`` into ``x[index]`` (ints and slices) without
    broadcasting it: a value of ``x[index]``'s shape (``copy_``), or a 0-d value
    on the CPU (``fill_``), so that the cast comes first.

    Torch 2.13's ``copy_to`` (``TensorIndexing.h``) copies a value of the view's
    shape, ``fill_``s the view with a 0-d value on the CPU, and else expands the
    value, then copies. ``fill_``'s backward sums the gradient in ``x``'s dtype and
    then casts it to the value's; ``copy_`` after ``expand`` casts first, then
    sums in the value's dtype (for a float16 ``x`` and a float32 value: ``12.0``
    and ``12.0015`` over twelve positions).

    >>> plan = IndexPlan.of(torch.zeros(3, 4), 0)
    >>> _fills(torch.tensor(1.0), plan), _fills(torch.ones(1), plan), _fills(torch.ones(4), plan)
    (True, False, True)
    """
    target = plan.result_shape
    if value.shape == target:
        return True
    return value.ndim == 0 and value.device.type == "cpu"


def _torch_error(x: Tensor, index: Any, value: Tensor, path: Path) -> Exception | None:
    """Torch's own error for writing ``value`` into ``x[index]`` (``None`` where
    torch writes it), found by running torch's setitem on a scratch tensor of
    ``x``'s shape, so that a shape or index error torch checks first comes
    first; inside ``torch.func`` transforms and ``torch.compile``, where the
    scratch write cannot run, torch's kernel for ``path`` on empty tensors. A
    dtype mismatch says what to write instead."""
    error: Exception | None = None
    if torch.compiler.is_compiling() and path == "index_put" and value.layout is _STRIDED:
        # Dynamo traces the kernel on empty tensors without its dtype check: torch's words
        error = RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_type(x.dtype)} for the destination and {_scalar_type(value.dtype)} for "
            "the source."
        )
    elif in_transform() or torch.compiler.is_compiling():
        error = _on_empty(x, value, path)
    else:
        scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        try:
            scratch[index] = value.detach()
        except Exception as torch_error:  # noqa: BLE001 - torch's error is the answer
            error = torch_error
    if isinstance(error, RuntimeError) and "dtypes match" in str(error):
        return RuntimeError(
            f"{error} (setitem casts a tensor value only for ints and slices, or for "
            "one element written through a mask; write value.to(x.dtype))"
        )
    return error


#: Torch's C++ names of the dtypes (c10::toString of a ScalarType), as its messages print them.
_SCALAR_TYPES = {
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
    torch.float32: "Float",
    torch.float64: "Double",
    torch.complex32: "ComplexHalf",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
    torch.bool: "Bool",
    torch.uint8: "Byte",
    torch.int8: "Char",
    torch.int16: "Short",
    torch.int32: "Int",
    torch.int64: "Long",
    torch.uint16: "UInt16",
    torch.uint32: "UInt32",
    torch.uint64: "UInt64",
}


def _scalar_type(dtype: torch.dtype) -> str:
    """``Float`` for ``torch.float32``: the dtype as torch's C++ messages name it."""
    return _SCALAR_TYPES.get(dtype, str(dtype).removeprefix("torch."))


def _on_empty(x: Tensor, value: Tensor, path: Path) -> Exception | None:
    """Torch's error for ``value`` on ``path``, from its kernel on empty tensors."""
    empty = torch.empty(0, dtype=x.dtype, device=x.device)
    source = (
        value.detach() if value.layout is not _STRIDED else empty.new_empty(0, dtype=value.dtype)
    )
    try:
        if path == "copy":
            empty.copy_(source)
        else:
            empty.index_put_((torch.empty(0, dtype=torch.long, device=x.device),), source)
    except Exception as torch_error:  # noqa: BLE001 - torch's error is the answer
        return torch_error
    return None
