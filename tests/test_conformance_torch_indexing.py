"""PyTorch's own setitem and index_put tests, run through every recipe.

Ported from ``test/test_indexing.py`` of pytorch/pytorch at commit
017943b70f6920c395e3b6dac100e2cd7ecfa92a (classes ``TestIndexing`` and
``NumpyTests``, the latter itself ported from NumPy's ``test_indexing.py``).
Every write ``x[index] = value`` of those tests runs through every recipe in
:data:`~inplace_recipes.RECIPES`. The expected result is computed without
this package: by NumPy where upstream does (``set_numpy``), otherwise by
plain torch (``y = x.clone(); y[index] = value``). Upstream's getitem-only
checks are turned into writes of a value that fits ``x[index]``, and
upstream's errors must be raised by every recipe with the same exception
type. For float tensors the gradients to ``x`` and to the value are checked
against plain torch too.

A recipe may refuse a case only as documented (``select_scatter`` takes no
index tensors, ``masked_fill`` writes one value); the refusal must be a
:class:`~inplace_recipes.NotApplicable` error naming the recipe.

Skipped upstream cases, with the reason:

- ``test_byte_mask``, ``test_byte_mask_accumulate``, ``test_multiple_byte_mask``
  and the uint8 halves of ``test_index_setitem_bools_slices`` /
  ``test_index_scalar_with_bool_mask``: torch deprecates uint8 masks (and
  refuses one with a single value, "masked_fill_ only supports boolean
  masks"); the recipes take them as torch does, checked on
  ``test_byte_tensor_assignment``'s write and by the battery (``tests/battery/``).
- ``test_index_put_accumulate_*``, ``test_bool_indices_accumulate``,
  ``test_index_put_accumulate_large_tensor`` (2**31 elements): accumulation
  is ``at(x)[i].add(v)``, tested in ``tests/test_at*.py``, not a setitem.
- ``test_index_put_large_indices``, ``test_index_put_accumulate_non_contiguous``,
  ``test_index_put_deterministic_with_optional_tensors``,
  ``test_cuda_broadcast_index_use_deterministic_algorithms``, ``test_cpu_indices``,
  ``test_invalid_device``: CUDA/XPU only.
- ``test_index_copy*``, ``test_index_add_deterministic``, ``test_index_fill``,
  ``test_index_select``, ``test_index_reduce``, ``test_take_along_dim*``,
  ``test_unravel_index_errors``, ``test_gather_take_along_dim_cross_device``:
  other torch functions, not setitem.
- ``test_jit_indexing``: TorchScript.
- ``test_empty_slice``, ``test_everything_returns_views``,
  ``test_index_getitem_copy_bools_slices``, ``test_single_int``,
  ``test_multiple_int``, ``test_none``, ``test_step``, ``test_bool_indices``,
  ``test_byte_mask2d``, ``test_advancedindex_big``,
  ``test_index_tensor_empty_indices``, ``test_index_limits``: about views,
  strides or getitem results (covered here as writes where they index).
- ``test_index_put_non_accumulate_deterministic``: duplicates in deterministic
  mode over 20,000+ positions; the recipes' duplicate semantics are tested by
  the property tests (tests/test_recipes.py) against setitem.
"""

from __future__ import annotations

import random
from itertools import product
from typing import Any

import numpy as np
import pytest
import torch

from inplace_recipes import RECIPES, NotApplicable
from refusals import refused
from strategies import SEQUENCE_WARNING

pytestmark = pytest.mark.filterwarnings(SEQUENCE_WARNING)

NAMES = list(RECIPES)


def _reference(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """Plain torch: the write on a clone (a tensor value as it is: upstream's
    values have ``x``'s dtype, and setitem refuses another with index tensors)."""
    y = x.detach().clone()
    y[index] = value
    return y


def _documented_refusal(name: str, error: NotApplicable, x: Any, index: Any, value: Any) -> None:
    assert refused(name, x, index, value), f"{name} refused: {error}"
    assert repr(name) in str(error)


def _gradients(fn: Any, x: torch.Tensor, index: Any, value: Any) -> tuple[Any, Any]:
    x = x.detach().clone().requires_grad_(True)
    v = value.detach().clone().requires_grad_(True) if isinstance(value, torch.Tensor) else value
    out = fn(x, index, v)
    weights = torch.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    inputs = [x, v] if isinstance(v, torch.Tensor) else [x]
    grads = torch.autograd.grad((out * weights).sum(), inputs, allow_unused=True)
    grads = [torch.zeros_like(i) if g is None else g for i, g in zip(inputs, grads, strict=True)]
    return grads[0], grads[1] if len(grads) > 1 else None


def _plain_write(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    y = x * 1
    y[index] = value
    return y


def check_write(
    x: torch.Tensor, index: Any, value: Any, expected: Any = None, *, grad: bool = True
) -> None:
    """Every recipe writes ``x[index] = value`` as torch (or NumPy) does, and
    leaves ``x``, ``value`` and any index tensor unchanged."""
    if expected is None:
        expected = _reference(x, index, value)
    expected = torch.as_tensor(expected).to(x.dtype)
    grad = grad and (x.is_floating_point() and x.dtype != torch.bfloat16)
    if grad:
        want_x, want_v = _gradients(_plain_write, x, index, value)
    watched = [t for t in (x, value, *_tensors_in(index)) if isinstance(t, torch.Tensor)]
    before = [(t.clone(), t._version) for t in watched]
    for name in NAMES:
        fn = RECIPES[name]
        try:
            out = fn(x, index, value)
        except NotApplicable as error:
            _documented_refusal(name, error, x, index, value)
            continue
        assert out.dtype == x.dtype, name
        assert out.shape == x.shape, name
        assert torch.equal(out, expected), f"{name}: {out} != {expected}"
        for t, (copy, version) in zip(watched, before, strict=True):
            assert torch.equal(t, copy), f"{name} changed an input"
            assert t._version == version, f"{name} wrote into an input"
        if grad:
            got_x, got_v = _gradients(fn, x, index, value)
            torch.testing.assert_close(got_x, want_x, msg=f"{name}: gradient to x")
            if want_v is not None:
                torch.testing.assert_close(got_v, want_v, msg=f"{name}: gradient to value")


def _tensors_in(index: Any) -> list[torch.Tensor]:
    items = index if isinstance(index, (tuple, list)) else (index,)
    return [i for i in items if isinstance(i, torch.Tensor)]


def check_error(
    x: torch.Tensor, index: Any, value: Any, error: type[Exception], match: str | None = None
) -> None:
    """Torch's setitem raises ``error``; so does every recipe, and none changes ``x``."""
    with pytest.raises(error, match=match):
        x.clone()[index] = value
    before = x.clone()
    for name in NAMES:
        with pytest.raises(error, match=match):
            RECIPES[name](x, index, value)
        assert torch.equal(x, before), name


def consec(
    size: tuple[int, ...], start: int = 1, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    numel = 1
    for s in size:
        numel *= s
    return (torch.arange(numel, dtype=torch.float64) + start).view(size).to(dtype)


def _f64(data: Any) -> torch.Tensor:
    """A value of the float64 ``x`` of these tests' dtype, as upstream's are."""
    return torch.tensor(data, dtype=torch.float64)


def ri_forms(indices: Any) -> list[Any]:
    """Upstream's ``ri`` picks one of these at random; every one is tried here."""
    return [torch.tensor(indices), list(indices), tuple(indices)]


# -- TestIndexing.test_index: basic indices -----------------------------------------

BASIC_INDICES_3D = [
    0, 1, 2, (0, 1), slice(0, 2), (2, 2, 2), slice(None),
    (Ellipsis, 2), (0, Ellipsis, 2), (0, 2, Ellipsis), (Ellipsis, 2, 2, 2), (2, Ellipsis, 2, 2),
    (2, 2, Ellipsis, 2), (2, 2, 2, Ellipsis), Ellipsis,
    (2, None), (2, None, None), (slice(2, 4), None), (None, 2, None, None),
    (None, slice(2, 5), None, None), slice(0), (slice(0), 2), (2, slice(0)), (2, slice(1, 1), 2),
]  # fmt: skip


@pytest.mark.parametrize("index", BASIC_INDICES_3D, ids=repr)
@pytest.mark.parametrize("value", ["number", "tensor"])
def test_index_basic(index: Any, value: str) -> None:
    reference = consec((5, 5, 5))
    target = reference[index].shape
    v = -7.5 if value == "number" else -consec(tuple(target))
    check_write(reference, index, v)


@pytest.mark.parametrize(
    "index", [(Ellipsis, 1, 0), (2, Ellipsis, 1, 0), (2, 1, 0, Ellipsis, 1), Ellipsis]
)
def test_index_basic_5d(index: Any) -> None:
    check_write(consec((3, 3, 3, 3, 3)), index, -1.0)


def test_index_steps() -> None:
    reference = consec((10, 10, 10))
    for index in [slice(1, 5, 2), slice(1, 6, 2), slice(1, 9, 4), (slice(2, 4), slice(1, 5, 2)),
                  (3, slice(1, 6, 2)), (None, 2, slice(1, 9, 4)), (slice(None), 2, slice(1, 6, 2))]:  # fmt: skip
        check_write(reference, index, -consec(tuple(reference[index].shape)), grad=False)


def test_index_random_slices_against_python_lists() -> None:
    """Upstream compares random slices with Python list slicing; here writes, with
    the expected value from NumPy."""
    rng = random.Random(0)
    lst = [list(range(i, i + 10)) for i in range(0, 100, 10)]
    tensor = torch.tensor(lst, dtype=torch.float64)
    for _ in range(20):
        start = rng.randrange(10)
        idx1 = slice(start, start + rng.randrange(1, 10 - start + 1), rng.randrange(1, 8))
        if rng.randrange(2) == 0:
            start2 = rng.randrange(10)
            idx2 = slice(start2, start2 + rng.randrange(1, 10 - start2 + 1), rng.randrange(1, 8))
            index: Any = (idx1, idx2)
        else:
            index = idx1
        expected = np.array(lst, dtype=np.float64)
        expected[index] = -1
        check_write(tensor, index, -1.0, expected, grad=False)


@pytest.mark.parametrize(
    ("index", "error", "match"),
    [
        (slice(1, 9, 0), ValueError, "slice step cannot be zero"),
        (slice(1, 9, -1), ValueError, "step must be greater than zero"),
        ((1, 1, 1, 1), IndexError, "too many indices"),
        ((1, 1, 1, slice(1, 1)), IndexError, "too many indices"),
        ((3, 3, 3, 3, 3, 3, 3, 3), IndexError, "too many indices"),
        (0.0, IndexError, "only integers"),
        (slice(0.0, 2.0), TypeError, "slice indices"),
        ((0.0, slice(0.0, 2.0)), IndexError, "only integers"),
        ((0.0, slice(None), slice(0.0, 2.0)), IndexError, "only integers"),
        ((0.0, Ellipsis, slice(0.0, 2.0)), IndexError, "only integers"),
        ((0.0, slice(None), 0.0), IndexError, "only integers"),
    ],
    ids=repr,
)
def test_index_errors(index: Any, error: type[Exception], match: str) -> None:
    check_error(consec((3, 3, 3)), index, 1.0, error, match)


# -- TestIndexing.test_advancedindex ----------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_advancedindex_validate_setting(dtype: torch.dtype) -> None:
    x = consec((10,), dtype=dtype)
    check_write(x, [0], -2.0)
    for form in ri_forms([0]):
        check_write(x, (form,), -1.0)
    check_write(x, [2, 3, 4], 4.0)
    for form in ri_forms([2, 3, 4]):
        check_write(x, (form,), 3.0)
    for form in ri_forms([0, 2, 4]):
        check_write(x, (form,), torch.tensor([5.0, 4.0, 3.0], dtype=dtype))


def _strided(
    storage_of: torch.Tensor, offset: int, size: tuple[int, ...], stride: tuple[int, ...]
) -> torch.Tensor:
    return storage_of.as_strided(size, stride, offset)


def test_advancedindex_strided_tensors() -> None:
    reference = consec((10,))
    strided = _strided(reference, 0, (4,), (2,))
    for index in ([0], [3], [1, 2], [[2, 1], [0, 3]]):
        for form in ri_forms(index):
            check_write(strided, (form,), -1.0)
    reference = torch.arange(0.0, 24, dtype=torch.float64).view(3, 8)
    strided = _strided(reference, 1, (2, 4), (8, 2))
    for rows, cols in [([0, 1], [0]), ([0], [0]), ([1], [3]), ([0, 0], [0, 3]), ([1], [0, 1, 1, 0, 3]),
                       ([0, 0, 1, 1], [0, 1, 0, 0]), ([[0, 1], [1, 0]], [1, 2]),
                       ([[0, 0], [1, 1]], [[0, 1], [1, 2]])]:  # fmt: skip
        for r, c in product(ri_forms(rows), ri_forms(cols)):
            check_write(strided, (r, c), -3.0)
    strided = _strided(torch.arange(0.0, 24, dtype=torch.float64).view(3, 8), 10, (2, 2), (7, 1))
    check_write(strided, (torch.tensor([0]), torch.tensor([1])), -1.0)
    check_write(strided, (torch.tensor([0, 1]), torch.tensor([1, 0])), _f64([-1.0, 2.0]))
    rows, cols = torch.tensor([[0], [1]]), torch.tensor([[0, 1], [0, 1]])
    check_write(strided, (rows, cols), _f64([[4.0, 6.0], [2.0, 3.0]]))


@pytest.mark.parametrize("transposed", [False, True])
def test_advancedindex_rows_and_columns(transposed: bool) -> None:
    if transposed:
        reference = torch.arange(12, dtype=torch.float64).view(3, 4).t()
        pairs = [([0, 1, 2], [0]), ([0, 1, 2], [1]), ([0], [0]), ([2], [1]), ([0, 0], [0, 1]),
                 ([0, 1, 1, 0, 3], [1]), ([0, 0, 1, 1], [0, 1, 0, 0])]  # fmt: skip
    else:
        reference = consec((3, 2))
        pairs = [([0, 1, 2], [0]), ([0, 1, 2], [1]), ([0], [0]), ([2], [1]), ([0, 0], [0, 1]),
                 ([0, 1, 1, 0, 2], [1]), ([0, 0, 1, 1], [0, 1, 0, 0])]  # fmt: skip
    for rows, cols in pairs:
        for r, c in product(ri_forms(rows), ri_forms(cols)):
            check_write(reference, (r, c), -9.0, grad=False)
    check_write(reference, (torch.tensor([0]), torch.tensor([1])), -1.0)
    check_write(reference, (torch.tensor([0, 1, 2]), torch.tensor([0])), _f64([-1.0, 2.0, -4.0]))
    rows = torch.tensor([[0, 0], [1, 2]])
    for columns in (([0],), torch.tensor([1, 0]), torch.tensor([[0, 1], [1, 0]])):
        check_write(reference, (rows, columns), _f64([[4.0, 6.0], [2.0, 3.0]]))


def test_advancedindex_fewer_dims_and_ellipsis() -> None:
    reference = consec((3, 2))
    for form in ri_forms([0, 2]):
        check_write(reference, (form,), -1.0)
    for form in ri_forms([1]):
        check_write(reference, (form, Ellipsis), -1.0)
        check_write(reference, (Ellipsis, form), -1.0)
    check_error(
        reference, (torch.tensor([1]), torch.tensor([0, 2]), torch.tensor([3])), 1.0, IndexError
    )


def test_advancedindex_out_of_bounds() -> None:
    reference = torch.empty(10, dtype=torch.float64)
    for err_idx in (10, -11):
        check_error(reference, err_idx, 1.0, IndexError, "out of")
        check_error(reference, torch.tensor([err_idx]), 1.0, IndexError, "out of")
        check_error(reference, [err_idx], 1.0, IndexError, "out of")


def _numpy_index(indexer: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(i.tolist() if isinstance(i, torch.Tensor) else i for i in indexer)


def _assert_set_eq(tensor: torch.Tensor, indexer: Any, value: Any) -> None:
    """Upstream's ``assert_set_eq``: the expected tensor comes from NumPy."""
    expected = tensor.numpy().copy()
    expected[_numpy_index(indexer)] = value.numpy() if isinstance(value, torch.Tensor) else value
    # gradients once per indexer: with the tensor value (x's gradient is the same for both)
    check_write(
        tensor, indexer, value, torch.from_numpy(expected), grad=isinstance(value, torch.Tensor)
    )


def _set_tensor(indexed: torch.Tensor, indexer: Any) -> torch.Tensor:
    shape = indexed[indexer].shape
    gen = torch.Generator().manual_seed(0)
    return torch.randperm(shape.numel(), generator=gen).view(shape).double()


INDICES_2D = [
    (slice(None), [1, 3]), ([0, 2], slice(None)), (slice(None), [[0, 1], [2, 3]]),
    ([-1], [0]), ([0, 2], [-1]), (slice(None), [-1]),
]  # fmt: skip

INDICES_3D = [
    (slice(None), slice(None), (0, 3, 4)), (slice(None), (2, 4, 5, 7), slice(None)),
    ((2, 3), slice(None), slice(None)), (slice(None), (0, 2, 3), (1, 3, 4)),
    (slice(None), (0,), (1, 2, 4)), (slice(None), (0, 1, 3), (4,)),
    (slice(None), ((0, 1), (1, 0)), ((2, 3),)), (slice(None), ((0, 1), (2, 3)), ((0,),)),
    (slice(None), ((5, 6),), ((0, 3), (4, 4))), ((0, 2, 3), (1, 3, 4), slice(None)),
    ((0,), (1, 2, 4), slice(None)), ((0, 1, 3), (4,), slice(None)),
    (((0, 1), (1, 0)), ((2, 1), (3, 5)), slice(None)), (((0, 1), (1, 0)), ((2, 3),), slice(None)),
    (((0, 1), (2, 3)), ((0,),), slice(None)), (((2, 1),), ((0, 3), (4, 4)), slice(None)),
    (((2,),), ((0, 3), (4, 1)), slice(None)), ((0, 2, 3), slice(None), (1, 3, 4)),
    ((0, 2),), ((0, 2), slice(None)), ((0, 2), Ellipsis), ((0, 2), slice(None), Ellipsis),
    ((0, 2), Ellipsis, slice(None)), ((0, 2), (1, 3)), ((0, 2), (1, 3), Ellipsis),
    (Ellipsis, (1, 3), (2, 3)), (Ellipsis, (2, 3, 4)), (Ellipsis, slice(None), (2, 3, 4)),
    (slice(None), Ellipsis, (2, 3, 4)), (Ellipsis, slice(None), slice(None), (0, 3, 4)),
    (slice(None), Ellipsis, slice(None), (0, 3, 4)), (slice(None), slice(None), Ellipsis, (0, 3, 4)),
    (slice(None), slice(None), (0, 3, 4), Ellipsis),
    (Ellipsis, ((0, 1), (1, 0)), ((2, 1), (3, 5)), slice(None)),
    (((0, 1), (1, 0)), ((2, 1), (3, 5)), Ellipsis, slice(None)),
    (((0, 1), (1, 0)), ((2, 1), (3, 5)), slice(None), Ellipsis),
]  # fmt: skip

INDICES_4D = [
    (slice(None), slice(None), slice(None), (0, 3, 4)), (slice(None), slice(None), (2, 4, 5, 7), slice(None)),
    (slice(None), (2, 3), slice(None), slice(None)), ((1, 2), slice(None), slice(None), slice(None)),
    (slice(None), slice(None), (0, 2, 3), (1, 3, 4)), (slice(None), slice(None), (0,), (1, 2, 4)),
    (slice(None), slice(None), (0, 1, 3), (4,)), (slice(None), slice(None), ((0, 1), (1, 0)), ((2, 3),)),
    (slice(None), slice(None), ((0, 1), (2, 3)), ((0,),)), (slice(None), slice(None), ((5, 6),), ((0, 3), (4, 4))),
    (slice(None), (0, 2, 3), (1, 3, 4), slice(None)), (slice(None), (0,), (1, 2, 4), slice(None)),
    (slice(None), (0, 1, 3), (4,), slice(None)), (slice(None), ((0, 1), (3, 4)), ((2, 3), (0, 1)), slice(None)),
    (slice(None), ((0, 1), (3, 4)), ((2, 3),), slice(None)), (slice(None), ((0, 1), (3, 2)), ((0,),), slice(None)),
    (slice(None), ((2, 1),), ((0, 3), (6, 4)), slice(None)), (slice(None), ((2,),), ((0, 3), (4, 2)), slice(None)),
    ((0, 1, 2), (1, 3, 4), slice(None), slice(None)), ((0,), (1, 2, 4), slice(None), slice(None)),
    ((0, 1, 2), (4,), slice(None), slice(None)), (((0, 1), (0, 2)), ((2, 4), (1, 5)), slice(None), slice(None)),
    (((0, 1), (1, 2)), ((2, 0),), slice(None), slice(None)), (((2, 2),), ((0, 3), (4, 5)), slice(None), slice(None)),
    (((2,),), ((0, 3), (4, 5)), slice(None), slice(None)), (slice(None), (3, 4, 6), (0, 2, 3), (1, 3, 4)),
    (slice(None), (2, 3, 4), (1, 3, 4), (4,)), (slice(None), (0, 1, 3), (4,), (1, 3, 4)),
    (slice(None), (6,), (0, 2, 3), (1, 3, 4)), (slice(None), (2, 3, 5), (3,), (4,)),
    (slice(None), (0,), (4,), (1, 3, 4)), (slice(None), (6,), (0, 2, 3), (1,)),
    (slice(None), ((0, 3), (3, 6)), ((0, 1), (1, 3)), ((5, 3), (1, 2))),
    ((2, 2, 1), (0, 2, 3), (1, 3, 4), slice(None)), ((2, 0, 1), (1, 2, 3), (4,), slice(None)),
    ((0, 1, 2), (4,), (1, 3, 4), slice(None)), ((0,), (0, 2, 3), (1, 3, 4), slice(None)),
    ((0, 2, 1), (3,), (4,), slice(None)), ((0,), (4,), (1, 3, 4), slice(None)),
    ((1,), (0, 2, 3), (1,), slice(None)), (((1, 2), (1, 2)), ((0, 1), (2, 3)), ((2, 3), (3, 5)), slice(None)),
    (Ellipsis, (0, 3, 4)), (Ellipsis, slice(None), (0, 3, 4)), (Ellipsis, slice(None), slice(None), (0, 3, 4)),
    (slice(None), Ellipsis, (0, 3, 4)), (slice(None), slice(None), Ellipsis, (0, 3, 4)),
    (slice(None), (0, 2, 3), (1, 3, 4)), (slice(None), (0, 2, 3), (1, 3, 4), Ellipsis),
    (Ellipsis, (0, 2, 3), (1, 3, 4), slice(None)), ((0,), (1, 2, 4)), ((0,), (1, 2, 4), slice(None)),
    ((0,), (1, 2, 4), Ellipsis), ((0,), (1, 2, 4), Ellipsis, slice(None)), ((1,),),
    ((0, 2, 1), (3,), (4,)), ((0, 2, 1), (3,), (4,), slice(None)), ((0, 2, 1), (3,), (4,), Ellipsis),
    (Ellipsis, (0, 2, 1), (3,), (4,)),
    (slice(None), slice(None), [[0, 1], [1, 0]], [[2, 3], [3, 0]]),
    (slice(None), slice(None), [[2]], [[0, 3], [4, 4]]),
]  # fmt: skip


@pytest.mark.parametrize("indexer", INDICES_2D, ids=repr)
def test_advancedindex_numpy_2d(indexer: Any) -> None:
    reference = torch.arange(0.0, 20, dtype=torch.float64).view(4, 5)
    _assert_set_eq(reference, indexer, 44.0)
    _assert_set_eq(reference, indexer, _set_tensor(reference, indexer))


@pytest.mark.parametrize("indexer", INDICES_3D, ids=repr)
def test_advancedindex_numpy_3d(indexer: Any) -> None:
    reference = torch.arange(0.0, 160, dtype=torch.float64).view(4, 8, 5)
    _assert_set_eq(reference, indexer, 212.0)
    _assert_set_eq(reference, indexer, _set_tensor(reference, indexer))


@pytest.mark.parametrize("indexer", INDICES_4D, ids=repr)
def test_advancedindex_numpy_4d(indexer: Any) -> None:
    reference = torch.arange(0.0, 1296, dtype=torch.float64).view(3, 9, 8, 6)
    _assert_set_eq(reference, indexer, 1333.0)
    _assert_set_eq(reference, indexer, _set_tensor(reference, indexer))


# -- single TestIndexing cases --------------------------------------------------------------


def test_set_item_to_scalar_tensor() -> None:
    """``z[:, 0] = w`` sends ``w`` one gradient per row written."""
    m, n = 4, 3
    z = torch.randn(m, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    w = torch.tensor(1.0, dtype=torch.float64)
    check_write(z, (slice(None), 0), w)
    for name in NAMES:
        leaf = w.clone().requires_grad_(True)
        RECIPES[name](z, (slice(None), 0), leaf).sum().backward()
        assert leaf.grad == m, name


def test_step_assignment() -> None:
    v = torch.zeros(4, 4)
    expected = v.clone()
    expected[0] = torch.tensor([0.0, 3.0, 0.0, 4.0])
    check_write(v, (0, slice(1, None, 2)), torch.tensor([3.0, 4.0]), expected)


def test_bool_mask_assignment() -> None:
    v = torch.tensor([[1, 2], [3, 4]])
    mask = torch.tensor([1, 0], dtype=torch.bool)
    check_write(v, (mask, slice(None)), 0, torch.tensor([[0, 0], [3, 4]]))
    check_write(v, (slice(None), mask), 0, torch.tensor([[0, 2], [0, 4]]))


def test_multi_dimensional_bool_mask_assignment() -> None:
    v = torch.tensor([[[[1], [2]], [[3], [4]]]])
    mask = torch.tensor([[1, 0], [0, 1]], dtype=torch.bool)
    check_write(v, (slice(None), mask, slice(None)), 0, torch.tensor([[[[0], [2]], [[3], [0]]]]))


def test_multiple_bool_indices() -> None:
    v = torch.randn(5, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mask1 = torch.tensor([1, 0, 1, 1, 0], dtype=torch.bool)
    mask2 = torch.tensor([1, 1, 1], dtype=torch.bool)
    check_write(v, (mask1, slice(None), mask2), -consec((3, 7)))


def _multi_dimensional_bool_indices() -> list[tuple[tuple[int, ...], Any]]:
    b = ((True, False), (False, False))
    m = torch.tensor(b, dtype=torch.bool)
    z, t, f = torch.tensor(0), torch.tensor(True), torch.tensor(False)
    cases: list[tuple[tuple[int, ...], Any]] = []
    for mask in (b, m):
        for rest in [(), (slice(None, None, 2),), (None,), (0,), (z,), (True,), (True,) * 4,
                     (False,), (True, True, False, True), (t,), (f,)]:  # fmt: skip
            cases.append(((2, 2, 3), (mask, *rest)))
    cases += [
        ((3, 2, 2, 5), (slice(None), m, slice(None))),
        ((3, 2, 2, 5), (0, m, slice(None, None, 2))),
        ((3, 2, 2, 5), (Ellipsis, m, slice(None, None, 2))),
        ((3, 2, 2, 5), (None, Ellipsis, m, slice(None, None, 2))),
    ]
    return cases


@pytest.mark.parametrize(("shape", "index"), _multi_dimensional_bool_indices(), ids=repr)
def test_multi_dimensional_bool_mask(shape: tuple[int, ...], index: Any) -> None:
    """Upstream checks ``x[index].shape``: here every recipe writes through the index."""
    x = consec(shape)
    check_write(x, index, -consec(tuple(x[index].shape)))


def test_empty_index() -> None:
    x = torch.arange(0, 12).view(4, 3)
    check_write(x, torch.tensor([], dtype=torch.long), -1, x)
    check_write(x, torch.zeros(4, 3).bool(), -1, x)


def test_empty_ndim_index() -> None:
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    check_write(x, (slice(None), torch.empty(0, 6, dtype=torch.int64)), 1.0, x)
    x = torch.randn(5, dtype=torch.float64)
    check_write(x, torch.empty(0, 2, dtype=torch.int64), 1.0, x)
    x = torch.empty(10, 0)
    check_write(x, [1, 2], 1.0, x)
    check_write(x, ([], []), 1.0, x)
    check_error(x, (slice(None), [0, 1]), 1.0, IndexError, "for dimension with size 0")


def test_index_setitem_bools_slices() -> None:
    for a in (torch.randn(2, 3, dtype=torch.float64), torch.tensor(3.0, dtype=torch.float64)):
        neg_ones_expanded = (torch.ones_like(a) * -1).unsqueeze(0).unsqueeze(0)
        check_write(a, True, neg_ones_expanded)
        check_write(a, False, 5.0, a)
        check_write(a, None, neg_ones_expanded * 3)
        check_write(a, Ellipsis, neg_ones_expanded * 4)
        if a.dim() == 0:
            check_error(a, slice(None), neg_ones_expanded * 5, IndexError)


def test_setitem_expansion_error() -> None:
    a = torch.randn(2, 3)
    a_expanded = a.expand(torch.Size([5, 1]) + a.size())
    check_error(a, True, a_expanded, RuntimeError)
    check_error(a, torch.tensor(True), a_expanded, RuntimeError)


def test_setitem_scalars() -> None:
    zero = torch.tensor(0, dtype=torch.int64)
    a = torch.randn(2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    b = torch.randn(3, dtype=torch.float64)
    expected = a.clone()
    expected[0] = b
    check_write(a, zero, b, expected)
    expected = a.clone()
    expected[1, 0] = 7.7
    check_write(a, (1, zero), 7.7, expected)
    r = torch.randn((), dtype=torch.float64)
    check_error(r, slice(None), 8.8, IndexError)
    check_error(r, zero, 8.8, IndexError)
    check_write(r, Ellipsis, 9.9, torch.tensor(9.9, dtype=torch.float64))


def test_basic_advanced_combined() -> None:
    x = torch.arange(0, 12).view(4, 3)
    expected = x.clone()
    expected[1, 1:3] = 0
    check_write(x, (slice(1, 2), [1, 2]), 0, expected)


def test_int_assignment() -> None:
    x = torch.arange(0, 4).view(2, 2)
    check_write(x, 1, 5, torch.tensor([[0, 1], [5, 5]]))
    check_write(x, 1, torch.arange(5, 7), torch.tensor([[0, 1], [5, 6]]))


def test_variable_slicing() -> None:
    x = torch.arange(0, 16).view(4, 4)
    i, j = torch.IntTensor([0, 1])
    check_write(x, slice(i, j), -1)


def test_ellipsis_tensor() -> None:
    x = torch.arange(0, 9).view(3, 3)
    idx = torch.tensor([0, 2])
    check_write(x, (Ellipsis, idx), -1, torch.tensor([[-1, 1, -1], [-1, 4, -1], [-1, 7, -1]]))
    check_write(x, (idx, Ellipsis), -1, torch.tensor([[-1, -1, -1], [3, 4, 5], [-1, -1, -1]]))


def test_int_indices() -> None:
    v = torch.randn(5, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for index in ([0, 4, 2], (slice(None), [0, 4, 2]), (slice(None), [[0, 1], [4, 3]])):
        check_write(v, index, -consec(tuple(v[index].shape)))


def test_int_indices2d_and_broadcast() -> None:
    x = torch.arange(0, 12).view(4, 3)
    rows, columns = torch.tensor([[0, 0], [3, 3]]), torch.tensor([[0, 2], [0, 2]])
    check_write(x, (rows, columns), -1)
    check_write(
        x, (torch.tensor([0, 3])[:, None], torch.tensor([0, 2])), torch.tensor([[-1, -2], [-3, -4]])
    )


def test_index_ind_dtype() -> None:
    """int32 index tensors write as int64 ones do."""
    x = torch.randn(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    src = torch.randn(4, dtype=torch.float64)
    ind_long = torch.arange(4, dtype=torch.long)
    expected = _reference(x, (ind_long, ind_long), src)
    check_write(x, (ind_long.int(), ind_long.int()), src, expected)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.long, torch.bfloat16, torch.bool, torch.complex64]
)
def test_index_src_datatype(dtype: torch.dtype) -> None:
    src = torch.ones(3, 2, 4, dtype=dtype)
    res = src[[0, 2, 1], :, :]
    check_write(src, ([0, 2, 1], slice(None), slice(None)), res)


def test_list_indices() -> None:
    """A list of 32 or more ranges is one index tensor; 31 are a tuple of 31 indices."""
    t = torch.randn(1000, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    indices = [range(i, i + 10) for i in range(1000 - 10)]
    for i in [100, 32]:
        check_write(t, indices[:i], -1.0, grad=False)  # overlapping windows: duplicates
    check_error(t, indices[:31], -1.0, IndexError, "too many indices")


def test_zero_dim_index() -> None:
    check_error(torch.tensor(10), 0, 1, IndexError, "invalid index")


def test_out_of_bound_index() -> None:
    x = torch.arange(0, 100).view(2, 5, 10)
    check_error(x, (0, 5), 1, IndexError, "index 5 is out of bounds for dimension 1 with size 5")
    check_error(x, (4, 5), 1, IndexError, "index 4 is out of bounds for dimension 0 with size 2")
    check_error(
        x, (0, 1, 15), 1, IndexError, "index 15 is out of bounds for dimension 2 with size 10"
    )
    check_error(
        x,
        (slice(None), slice(None), 12),
        1,
        IndexError,
        "index 12 is out of bounds for dimension 2 with size 10",
    )


def test_invalid_index() -> None:
    x = torch.arange(0, 16).view(4, 4)
    check_error(x, slice("0", "1"), 1, TypeError, "slice indices")


# -- NumpyTests ----------------------------------------------------------------------------

NO_FLOATS = [0.0, (0, 0.0), (0.0, 0), (0.0, slice(None)), (slice(None), 0.0),
             (slice(None), 0.0, slice(None)), (0.0, slice(None), slice(None)), (0, 0, 0.0),
             (0.0, 0, 0), (0, 0.0, 0), -1.4, (0, -1.4), (-1.4, 0), (-1.4, slice(None)),
             (slice(None), -1.4), (slice(None), -1.4, slice(None)), (-1.4, slice(None), slice(None)),
             (0, 0, -1.4), (-1.4, 0, 0), (0, -1.4, 0)]  # fmt: skip


@pytest.mark.parametrize("index", NO_FLOATS, ids=repr)
def test_index_no_floats(index: Any) -> None:
    check_error(torch.tensor([[[5.0]]]), index, 1.0, IndexError)


def test_none_and_empty_tuple_index() -> None:
    a = torch.tensor([1, 2, 3])
    check_write(a, None, 7, torch.tensor([7, 7, 7]))
    check_write(a, (), 7, torch.tensor([7, 7, 7]))


def test_empty_fancy_index() -> None:
    a = torch.tensor([1, 2, 3])
    check_write(a, [], 7, a)
    check_write(a, torch.tensor([]).long(), 7, a)
    check_error(a, torch.tensor([]).float(), 7, IndexError)


def test_ellipsis_index() -> None:
    a = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    for index in [Ellipsis, (0, Ellipsis), (Ellipsis, 0), (0, Ellipsis, 1)]:
        check_write(a, index, -1)
    check_write(torch.tensor(1), (Ellipsis,), 2, torch.tensor(2))


def test_single_int_and_bool_index() -> None:
    a = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    check_write(a, 0, torch.tensor([-1, -2, -3]))
    check_write(a, -1, torch.tensor([-1, -2, -3]))
    check_error(a, 1 << 30, 1, IndexError)
    check_write(a, True, -1, torch.full((3, 3), -1))
    check_write(a, False, -1, a)


def test_boolean_shape_mismatch() -> None:
    arr = torch.ones((5, 4, 3))
    check_error(arr, torch.tensor([True]), 1.0, IndexError, "mask")
    check_error(arr, torch.tensor([False] * 6), 1.0, IndexError, "mask")


def test_boolean_indexing_onedim() -> None:
    a = torch.tensor([[0.0, 0.0, 0.0]])
    check_write(a, torch.tensor([True]), 1.0, torch.tensor([[1.0, 1.0, 1.0]]))


@pytest.mark.parametrize("value", [[], [1, 2, 3]])
def test_boolean_assignment_value_mismatch(value: list[int]) -> None:
    a = torch.arange(0, 4)
    check_error(a, a > -1, torch.tensor(value), RuntimeError, "shape mismatch")
    check_error(a[:1], a[:1] > -1, torch.tensor(value), RuntimeError, "shape mismatch")


def test_boolean_indexing_twodim() -> None:
    a = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    b = torch.tensor([[True, False, True], [False, True, False], [True, False, True]])
    check_write(a, b, 0, torch.tensor([[0, 2, 0], [4, 0, 6], [0, 8, 0]]))
    check_write(a, b[1], 0)


def test_boolean_indexing_weirdness() -> None:
    a = torch.ones((2, 3, 4), dtype=torch.float64)
    check_write(a, (False, True, Ellipsis), 5.0, a)
    for true in (True, torch.tensor(True)):
        index = (true, [0, 1], true, true, [1], [[2]])
        check_write(a, index, _f64([[-1.0, -2.0]]))
    for false in (False, torch.tensor(False)):
        check_error(a, (false, [0, 1], Ellipsis), 5.0, IndexError)


def test_boolean_indexing_alldims() -> None:
    a = torch.ones((2, 3), dtype=torch.float64)
    check_write(a, (True, True), -consec((1, 2, 3)))
    check_write(a, (torch.tensor(True), torch.tensor(True)), -consec((1, 2, 3)))


def test_boolean_list_indexing() -> None:
    a = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    b, c = [True, False, False], [True, True, False]
    check_write(a, b, 0, torch.tensor([[0, 0, 0], [4, 5, 6], [7, 8, 9]]))
    check_write(a, (b, b), 0, torch.tensor([[0, 2, 3], [4, 5, 6], [7, 8, 9]]))
    check_write(a, c, 0)
    check_write(a, (c, c), 0, torch.tensor([[0, 2, 3], [4, 0, 6], [7, 8, 9]]))


def test_broaderrors_indexing() -> None:
    check_error(torch.zeros(5, 5), ([0, 1], [0, 1, 2]), 0.0, IndexError, "shape mismatch")


def test_trivial_fancy_out_of_bounds() -> None:
    a = torch.zeros(5)
    ind = torch.ones(20, dtype=torch.int64)
    ind[-1] = 10
    check_error(a, ind, 0.0, IndexError)
    ind = torch.ones(20, dtype=torch.int64)
    ind[0] = 11
    check_error(a, ind, 0.0, IndexError)


def test_index_is_larger() -> None:
    a = torch.zeros((5, 5))
    expected = a.clone()
    expected[:3, :3] = torch.tensor([2.0, 3.0, 4.0])
    check_write(a, ([[0], [1], [2]], [0, 1, 2]), torch.tensor([2.0, 3.0, 4.0]), expected)


def test_broadcast_subspace() -> None:
    a = torch.zeros((100, 100))
    v = torch.arange(0.0, 100)[:, None]
    b = torch.arange(99, -1, -1).long()
    check_write(a, b, v, b.float().unsqueeze(1).expand(100, 100), grad=False)


def test_truncate_leading_1s() -> None:
    col_max = torch.randn(1, 4, generator=torch.Generator().manual_seed(0))
    kernel = col_max.T * col_max
    expected = kernel.clone()
    torch.diagonal(expected).copy_(torch.square(col_max.view(4)))
    check_write(kernel, (range(4), range(4)), torch.square(col_max), expected)


# -- TestIndexing.test_byte_tensor_assignment: uint8 masks, as torch 2.13 takes them ---------


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")
def test_byte_tensor_assignment() -> None:
    """Upstream's write through a uint8 mask (deprecated: torch reads it as
    ``mask.bool()``, with its warning), and torch's ``masked_fill_`` refusal of a
    uint8 mask with one value (issue 28, R9: the recipes raised IndexError)."""
    x = torch.arange(16.0).view(4, 4)
    b = torch.tensor([1, 0, 1, 0], dtype=torch.uint8)
    value = torch.tensor([3.0, 4.0, 5.0, 6.0])
    check_write(x, b, value)
    check_write(x, (b, torch.tensor([0, 1])), 7.0)  # beside an index tensor: positions
    for one in (1.0, torch.tensor(2.0), torch.tensor([2.0], dtype=torch.float64)):
        check_error(x, b, one, RuntimeError, "masked_fill_ only supports boolean masks")
