"""``at()`` fed the awkward inputs of issue 9 and their neighbours.

For each input: torch's own answer (``y = x.clone()`` then the in-place
statement, or ``x[index]`` for ``get``) or a clear error, and no input
changed (``x``, the value, an index tensor: contents and version counter).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from inplace_recipes._at import at

_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.iadd,
    "subtract": operator.isub,
    "multiply": operator.imul,
    "divide": operator.itruediv,
    "power": operator.ipow,
}


def torch_answer(op: str, x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """Plain torch: what the Python statement does."""
    if op == "get":
        return x[index]
    y = x.clone()
    if op == "set":
        y[index] = value
    elif op in ("min", "max"):  # a number as a 0-d tensor, compared, then cast by setitem
        fn = torch.minimum if op == "min" else torch.maximum
        y[index] = fn(y[index], value if isinstance(value, torch.Tensor) else torch.tensor(value))
    else:
        part = y[index]
        y[index] = _INPLACE[op](part, value)
    return y


def at_answer(op: str, x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    ref = at(x)[index]
    return ref.get() if op == "get" else getattr(ref, op)(value)  # type: ignore[no-any-return]


def snapshot(*things: Any) -> list[tuple[Any, torch.Tensor, int]]:
    found: list[torch.Tensor] = []

    def walk(item: Any) -> None:
        if isinstance(item, torch.Tensor):
            found.append(item)
        elif isinstance(item, (tuple, list)):
            for i in item:
                walk(i)

    for t in things:
        walk(t)
    return [(t, t.detach().clone(), t._version) for t in found]


def assert_unchanged(saved: list[tuple[Any, torch.Tensor, int]]) -> None:
    for tensor, copy, version in saved:
        assert tensor._version == version, "an input was written in place"
        assert torch.equal(tensor.detach(), copy) or (
            tensor.is_floating_point() and torch.equal(tensor.isnan(), copy.isnan())
        )


OPS = ["get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max"]

#: (id, x, index, value): the inputs of issue 9 and their neighbours.
INPUTS: list[tuple[str, Callable[[], torch.Tensor], Any, Any]] = [
    ("nested_list", lambda: torch.zeros(3, 4), [[0, 1], [1, 2]], 5.0),
    ("list_next_to_tensor", lambda: torch.zeros(3, 4), (torch.tensor([[0], [2]]), [1]), 5.0),
    ("empty_list", lambda: torch.zeros(3), [], 5.0),
    ("empty_list_then_int", lambda: torch.zeros(3, 4), ([], 0), 5.0),
    ("numpy_int_array", lambda: torch.zeros(4), np.array([0, 2]), 5.0),
    ("numpy_int_scalar", lambda: torch.zeros(4), np.int64(2), 5.0),
    ("python_true", lambda: torch.zeros(3), True, 5.0),
    ("python_false", lambda: torch.zeros(3), False, 5.0),
    ("zero_d_x_empty_tuple", lambda: torch.tensor(2.0), (), 5.0),
    ("zero_d_x_none", lambda: torch.tensor(2.0), None, 5.0),
    ("zero_d_x_ellipsis", lambda: torch.tensor(2.0), ..., 5.0),
    ("empty_x", lambda: torch.zeros(0, 3), slice(None), 5.0),
    ("all_false_mask", lambda: torch.zeros(3), torch.tensor([False, False, False]), 5.0),
    ("mask_2d", lambda: torch.zeros(2, 2), torch.tensor([[True, False], [False, True]]), 5.0),
    ("int32_index", lambda: torch.zeros(4), torch.tensor([3, 1], dtype=torch.int32), 5.0),
    ("negative_indices", lambda: torch.zeros(4), torch.tensor([-1, -4]), 5.0),
    ("mixed_layout", lambda: torch.zeros(3, 2, 3), (0, slice(None), torch.arange(3)), 5.0),
    ("non_contiguous_x", lambda: torch.arange(6.0).view(2, 3).t(), (slice(None), 1), 5.0),
    ("inf_value", lambda: torch.zeros(3), 0, float("inf")),
    ("nan_value", lambda: torch.zeros(3), torch.tensor([1]), float("nan")),
    ("int_x_float_value", lambda: torch.arange(1, 5), 0, 2.5),
    ("int_x_half_value", lambda: torch.arange(1, 5), torch.tensor([0, 2]), 0.5),
    ("int_x_float_tensor", lambda: torch.arange(1, 5), slice(0, 2), torch.tensor(2.5)),
    ("int_x_int_value", lambda: torch.arange(1, 5), torch.tensor([1, 3]), 2),
    ("bool_x_int_value", lambda: torch.tensor([True, False]), 0, 1),
    ("uint8_x_negative", lambda: torch.tensor([1, 2], dtype=torch.uint8), 0, -1),
    ("float16_x_large", lambda: torch.ones(3, dtype=torch.float16), 1, 1e5),
    (
        "float32_x_float64_value",
        lambda: torch.ones(3),
        slice(0, 2),
        torch.tensor([2.0, 3.0], dtype=torch.float64),
    ),
    ("complex_value_real_x", lambda: torch.zeros(3), 0, 1 + 2j),
    ("wrong_value_shape", lambda: torch.zeros(3), slice(0, 2), torch.ones(3)),
    ("out_of_bounds_int", lambda: torch.zeros(3), 3, 1.0),
    ("out_of_bounds_tensor", lambda: torch.zeros(3), torch.tensor([0, 5]), 1.0),
    ("float_index_tensor", lambda: torch.zeros(3), torch.tensor([0.0]), 1.0),
    ("too_many_indices", lambda: torch.zeros(3), (0, 0), 1.0),
    ("negative_step", lambda: torch.zeros(3), slice(None, None, -1), 1.0),
    ("numpy_value", lambda: torch.zeros(3), slice(0, 2), np.array([1.0, 2.0])),
    ("string_value", lambda: torch.zeros(3), 0, "1"),
    ("string_index", lambda: torch.zeros(3), "0", 1.0),
]

#: Where torch answers and at() refuses on purpose, with the reason (none: min
#: and max compare with ``torch.tensor(value)``, then setitem casts, as torch).
REFUSED: dict[tuple[str, str], str] = {}


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence:UserWarning")
@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized:UserWarning")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(("name", "make_x", "index", "value"), INPUTS, ids=[i[0] for i in INPUTS])
def test_torchs_answer_or_a_clear_error(
    op: str, name: str, make_x: Callable[[], torch.Tensor], index: Any, value: Any
) -> None:
    x = make_x()
    try:
        want: torch.Tensor | None = torch_answer(op, x, index, value)
        failure: Exception | None = None
    except Exception as exc:  # noqa: BLE001 - torch refuses: at() must too
        want, failure = None, exc
    saved = snapshot(x, index, value)
    if (name, op) in REFUSED:
        with pytest.raises(TypeError):
            at_answer(op, x, index, value)
    elif want is None:
        with pytest.raises(Exception) as caught:
            at_answer(op, x, index, value)
        assert str(caught.value).strip(), f"empty error message (torch said: {failure})"
        assert not isinstance(caught.value, (AssertionError, AttributeError, KeyError))
    else:
        got = at_answer(op, x, index, value)
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    assert_unchanged(saved)


def test_apply_with_an_in_place_fn_leaves_x_alone() -> None:
    x = torch.tensor([-1.0, 2.0, -3.0, 4.0])
    for index in (slice(0, 3), torch.tensor([0, 1, 2]), x < 3):
        saved = snapshot(x, index)
        assert torch.equal(at(x)[index].apply(torch.relu_), torch.tensor([0.0, 2.0, 0.0, 4.0]))
        assert_unchanged(saved)


def test_apply_fn_that_returns_no_tensor_is_named() -> None:
    with pytest.raises(TypeError, match=r"fn must return a torch\.Tensor"):
        at(torch.zeros(3))[0].apply(lambda t: 1.0)  # type: ignore[arg-type,return-value]


def test_apply_fn_result_must_fit_the_selection() -> None:
    with pytest.raises(RuntimeError, match="shape mismatch"):
        at(torch.zeros(3))[0:2].apply(lambda t: torch.ones(3))


@pytest.mark.parametrize("op", OPS[1:])
@pytest.mark.parametrize(
    "index", [torch.tensor([0]), 0, slice(0, 2)], ids=["tensor", "int", "slice"]
)
def test_sparse_x_is_refused_as_torch_refuses(op: str, index: Any) -> None:
    """Torch's own class for each op and index (issue 28, R11): its sparse indexing
    raises NotImplementedError, setitem into a sparse tensor TypeError."""
    x = torch.zeros(3).to_sparse()
    with pytest.raises(Exception) as torchs:
        torch_answer(op, x, index, 1.0)
    with pytest.raises(type(torchs.value)):
        getattr(at(x)[index], op)(1.0)


def test_duplicates_with_a_value_that_requires_grad_match_setitem() -> None:
    x = torch.zeros(3, requires_grad=True)
    v = torch.tensor(2.0, requires_grad=True)
    out = at(x)[torch.tensor([0, 0])].set(v)
    (gx, gv) = torch.autograd.grad(out.sum(), (x, v))
    y = x.clone()
    y[torch.tensor([0, 0])] = v
    (wx, wv) = torch.autograd.grad(y.sum(), (x, v))
    assert torch.equal(gx, wx)
    assert torch.equal(gv, wv)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mode": "wrap"}, ValueError, "'clip'"),
        ({"method": "nope"}, ValueError, "choose from"),
    ],
)
def test_bad_options_are_named(kwargs: dict[str, str], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        at(torch.zeros(3))[0].set(1.0, **kwargs)  # type: ignore[arg-type]


def test_not_a_tensor() -> None:
    with pytest.raises(TypeError, match=r"takes a torch\.Tensor"):
        at([1.0, 2.0])  # type: ignore[arg-type]
