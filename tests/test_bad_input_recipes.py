"""Bad inputs to every recipe: torch's answer or a clear error, and no input changed.

Each case is ``x[index] = value`` with something wrong or unusual in it
(issue 9's list and its neighbours). Where torch's setitem answers, every
recipe gives that answer: the same result, or an error of the same type.
Where torch's error is an internal one, the case names the clear error
expected instead. In every case ``x``, the value and any index tensor keep their
values and their version counters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from inplace_recipes import RECIPES, NotApplicable
from refusals import refused
from strategies import SEQUENCE_WARNING

pytestmark = [
    pytest.mark.filterwarnings(SEQUENCE_WARNING),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state"),
    pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated"),
    pytest.mark.filterwarnings("ignore:Casting complex values to real discards the imaginary"),
]

NAMES = list(RECIPES)

#: ``(label, make_x, index, value)``: the expected answer is torch's own.
TORCH_ANSWERS: list[tuple[str, Callable[[], torch.Tensor], Any, Any]] = [
    ("sparse coo", lambda: torch.eye(3).to_sparse(), 0, 1.0),
    ("sparse coo, tensor index", lambda: torch.eye(3).to_sparse(), torch.tensor([0]), 1.0),
    ("sparse csr", lambda: torch.eye(3).to_sparse_csr(), (0, 1), 1.0),
    ("float tensor index", lambda: torch.zeros(3), torch.tensor([0.0, 1.0]), 1.0),
    ("empty float tensor index", lambda: torch.zeros(3), torch.tensor([]), 1.0),
    ("float index", lambda: torch.zeros(3), 1.0, 1.0),
    ("float in a tuple", lambda: torch.zeros(3, 2), (0, 1.0), 1.0),
    ("NumPy float index", lambda: torch.zeros(3), np.float64(1.0), 1.0),
    ("NumPy bool scalar index", lambda: torch.zeros(3), np.bool_(True), 1.0),
    ("list of floats (torch truncates)", lambda: torch.zeros(3), [0.5, 1.7], 1.0),
    ("NumPy float array (torch truncates)", lambda: torch.zeros(3), np.array([0.5, 1.7]), 1.0),
    ("complex tensor index", lambda: torch.zeros(3), torch.tensor([1j]), 1.0),
    ("int16 tensor index", lambda: torch.zeros(3), torch.tensor([0], dtype=torch.int16), 1.0),
    ("int8 tensor index", lambda: torch.zeros(3), torch.tensor([0], dtype=torch.int8), 1.0),
    ("int32 tensor index", lambda: torch.zeros(3), torch.tensor([2], dtype=torch.int32), 1.0),
    ("int too large", lambda: torch.zeros(3), 3, 1.0),
    ("int too small", lambda: torch.zeros(3), -4, 1.0),
    ("tensor out of bounds", lambda: torch.zeros(3), torch.tensor([0, 3]), 1.0),
    ("tensor too negative", lambda: torch.zeros(3), torch.tensor([-4]), 1.0),
    ("list out of bounds", lambda: torch.zeros(3), [5], 1.0),
    ("NumPy array out of bounds", lambda: torch.zeros(3), np.array([5]), 1.0),
    ("out of bounds in the second dim", lambda: torch.zeros(2, 3), (0, torch.tensor([3])), 1.0),
    ("too many indices", lambda: torch.zeros(3), (0, 0), 1.0),
    ("int into a 0-d tensor", lambda: torch.tensor(1.0), 0, 2.0),
    ("slice of a 0-d tensor", lambda: torch.tensor(1.0), slice(None), 2.0),
    ("mask of the wrong shape", lambda: torch.zeros(3, 4), torch.ones(4, dtype=torch.bool), 1.0),
    ("bool list of the wrong length", lambda: torch.zeros(3), [True, False], 1.0),
    ("index tensors that do not broadcast", lambda: torch.zeros(5, 5), ([0, 1], [0, 1, 2]), 1.0),
    ("ragged nested list", lambda: torch.zeros(3, 3), ([[0, 1], [1]],), 1.0),
    ("string index", lambda: torch.zeros(3), "a", 1.0),
    ("list of strings", lambda: torch.zeros(3), ["a"], 1.0),
    ("dict index", lambda: torch.zeros(3), {0: 1}, 1.0),
    ("set index", lambda: torch.zeros(3), {0}, 1.0),
    ("negative step", lambda: torch.zeros(3), slice(None, None, -1), 1.0),
    ("zero step", lambda: torch.zeros(3), slice(None, None, 0), 1.0),
    ("string slice bounds", lambda: torch.zeros(3), slice("0", "1"), 1.0),
    ("None value", lambda: torch.zeros(3), 0, None),
    ("string value", lambda: torch.zeros(3), 0, "a"),
    ("list value", lambda: torch.zeros(3), 0, [1.0]),
    ("NumPy array value", lambda: torch.zeros(3), 0, np.ones(())),
    ("NumPy float32 value", lambda: torch.zeros(3), 0, np.float32(1.0)),
    ("NumPy float64 value", lambda: torch.zeros(3), 0, np.float64(2.0)),
    ("NumPy int64 value", lambda: torch.zeros(3), 1, np.int64(3)),
    ("value that does not broadcast", lambda: torch.zeros(3, 4), 0, torch.ones(3)),
    ("value with extra leading dims", lambda: torch.zeros(3), slice(None), torch.ones(2, 3)),
    ("value with leading ones", lambda: torch.zeros(3), slice(None), torch.ones(1, 1, 3)),
    ("0-d value into an empty selection", lambda: torch.zeros(0), slice(None), torch.ones(())),
    ("inf into an int tensor", lambda: torch.zeros(3, dtype=torch.long), 0, float("inf")),
    ("nan into an int tensor", lambda: torch.zeros(3, dtype=torch.long), 0, float("nan")),
    ("300 into int8", lambda: torch.zeros(3, dtype=torch.int8), 0, 300),
    ("float into a bool tensor", lambda: torch.zeros(3, dtype=torch.bool), 0, 2.5),
    ("bool into an int tensor", lambda: torch.zeros(3, dtype=torch.long), 0, True),
    ("float into an int tensor", lambda: torch.zeros(3, dtype=torch.long), 0, 2.7),
    ("value that requires grad into an int tensor", lambda: torch.zeros(3, dtype=torch.long), 0,
     torch.tensor(1.0, requires_grad=True)),
    ("empty list", lambda: torch.zeros(3, 4), [], 1.0),
    ("empty list in a tuple", lambda: torch.zeros(3, 4), ([], 0), 1.0),
    ("empty NumPy array", lambda: torch.zeros(3, 4), np.array([], dtype=np.int64), 1.0),
    ("False", lambda: torch.zeros(3), False, 1.0),
    ("nested list", lambda: torch.zeros(3, 4), [[0, 1], [1, 2]], 5.0),
    ("list next to a tensor", lambda: torch.zeros(3, 4), (torch.tensor([[0], [2]]), [1]),
     torch.ones(2, 1)),
    # issue 28: torch's answer where the package once refused
    ("uint8 mask", lambda: torch.zeros(3), torch.tensor([1, 0, 1], dtype=torch.uint8), 1.0),
    ("uint8 mask, values", lambda: torch.zeros(3), torch.tensor([1, 0, 1], dtype=torch.uint8),
     torch.tensor([2.0, 3.0])),
    ("uint8 NumPy mask", lambda: torch.zeros(3), np.array([1, 0, 1], dtype=np.uint8), 1.0),
    ("uint8 index next to a tensor", lambda: torch.zeros(3, 2),
     (torch.tensor([1, 0, 1], dtype=torch.uint8), torch.tensor([0, 1])), 1.0),
    ("sparse value", lambda: torch.zeros(3, 3), 0, torch.ones(3).to_sparse()),
    ("sparse value, mask", lambda: torch.zeros(3), torch.tensor([True, False, True]),
     torch.ones(2).to_sparse()),
    ("complex value into a real tensor", lambda: torch.zeros(3), 0, 1j),
    ("complex tensor into a real tensor", lambda: torch.zeros(3), [0], torch.tensor(1j)),
    ("int too large for int64", lambda: torch.zeros(3), 1 << 64, 1.0),
]  # fmt: skip

#: ``(label, make_x, index, value, error, match)``: a clear error where torch's
#: answer is a deprecated acceptance or an internal message.
CLEAR_ERRORS: list[tuple[str, Callable[[], torch.Tensor], Any, Any, type[Exception], str]] = [
    ("x is a list", lambda: [1.0, 2.0], 0, 1.0, TypeError, "x must be a torch.Tensor"),
    ("x is a NumPy array", lambda: np.zeros(3), 0, 1.0, TypeError, "x must be a torch.Tensor"),
]  # fmt: skip


def _tensors(*things: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for thing in things:
        if isinstance(thing, torch.Tensor):
            found.append(thing)
        elif isinstance(thing, (tuple, list)):
            found.extend(_tensors(*thing))
    return found


def _snapshot(tensors: list[torch.Tensor]) -> list[tuple[torch.Tensor, int]]:
    return [(t.detach().clone(), t._version) for t in tensors]


def _assert_unchanged(tensors: list[torch.Tensor], before: list[Any], name: str) -> None:
    for t, (copy, version) in zip(tensors, before, strict=True):
        assert t._version == version, f"{name} wrote into an input"
        if t.layout is not torch.strided:
            t, copy = t.to_dense(), copy.to_dense()
        same = torch.equal(t, copy)
        assert same, f"{name} changed an input"


def _torch_answer(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor | BaseException:
    y = x.clone()
    if isinstance(value, torch.Tensor) and value.layout is torch.strided:
        value = value.detach()
    try:
        y[index] = value
    except Exception as error:  # noqa: BLE001 - torch's error is the expected answer
        return error
    return y


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("label", "make_x", "index", "value"), TORCH_ANSWERS, ids=[c[0] for c in TORCH_ANSWERS]
)
def test_torch_answer(name: str, label: str, make_x: Any, index: Any, value: Any) -> None:
    x = make_x()
    expected = _torch_answer(x, index, value)
    watched = _tensors(x, index, value)
    before = _snapshot(watched)
    fn = RECIPES[name]
    if isinstance(expected, BaseException):
        with pytest.raises(type(expected)):
            fn(x, index, value)
    elif refused(name, x, index, value):  # as the recipe's record declares
        with pytest.raises(NotApplicable, match=repr(name)):
            fn(x, index, value)
    else:
        out = fn(x, index, value)
        assert out.dtype == expected.dtype
        assert torch.equal(out, expected), f"{out} != {expected}"
    _assert_unchanged(watched, before, name)


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("label", "make_x", "index", "value", "error", "match"),
    CLEAR_ERRORS,
    ids=[c[0] for c in CLEAR_ERRORS],
)
def test_clear_error(
    name: str, label: str, make_x: Any, index: Any, value: Any, error: Any, match: str
) -> None:
    x = make_x()
    if name == "clone" and label.startswith("uint8") and isinstance(x, torch.Tensor):
        pytest.skip("the clone recipe is setitem itself: it takes torch's deprecated uint8 path")
    watched = _tensors(x, index, value)
    before = _snapshot(watched)
    with pytest.raises(error, match=match):
        RECIPES[name](x, index, value)
    _assert_unchanged(watched, before, name)


def test_sparse_refusal_is_torchs_message() -> None:
    with pytest.raises(TypeError, match=r"^Cannot assign to a sparse tensor$"):
        torch.eye(2).to_sparse()[0] = 1.0
    for name in NAMES:
        with pytest.raises(TypeError, match=r"^Cannot assign to a sparse tensor$"):
            RECIPES[name](torch.eye(2).to_sparse(), 0, 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_inputs_unchanged_when_the_write_works(name: str) -> None:
    """A successful write leaves x, value and index tensors alone (values and versions)."""
    x = torch.randn(4, 3, requires_grad=True)
    value = torch.randn(2, 3, requires_grad=True)
    index = torch.tensor([2, 0])
    before = _snapshot([x, value, index])
    try:
        out = RECIPES[name](x, index, value)
    except NotApplicable:
        return
    out.sum().backward()
    _assert_unchanged([x, value, index], before, name)
