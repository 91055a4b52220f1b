"""The index model: positions, masks and steps agree with what ``x[index]`` reads."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given

from inplace_recipes import RECIPES, NotApplicable
from inplace_recipes._indexing import IndexPlan
from inplace_recipes.recipes._index_put import index_put_indices, writes_flat
from refusals import refused
from strategies import SEQUENCE_WARNING, Case, cases


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True))
def test_flat_positions_read_what_indexing_reads(case: Case) -> None:
    plan = IndexPlan.of(case.x, case.index)
    positions = plan.flat_positions()
    assert positions.shape == case.x[case.index].shape == plan.result_shape
    assert torch.equal(case.x.reshape(-1)[positions], case.x[case.index])


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True))
def test_mask_marks_exactly_the_written_positions(case: Case) -> None:
    plan = IndexPlan.of(case.x, case.index)
    expected = torch.zeros(case.x.shape, dtype=torch.bool)
    expected[case.index] = True
    assert torch.equal(plan.mask().expand(case.x.shape), expected)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True))
def test_spread_agrees_with_the_value_at_written_positions(case: Case) -> None:
    """Where two index entries name one position, the last one wins, as in setitem."""
    plan = IndexPlan.of(case.x, case.index)
    value = torch.as_tensor(case.value).to(case.x.dtype)
    spread = plan.spread(value).expand(case.x.shape)
    written = torch.zeros_like(case.x)
    written[case.index] = value
    assert torch.equal(spread[case.index], written[case.index])


@pytest.mark.parametrize(
    ("index", "kind"),
    [
        (0, "basic"),
        ((slice(None), -1), "basic"),
        ((None, Ellipsis), "basic"),
        (torch.ones(3, 4, dtype=torch.bool), "boolean"),
        (torch.ones(3, dtype=torch.bool), "boolean"),
        (torch.tensor([0, 1]), "advanced"),
        ([0, 1], "advanced"),
        (torch.tensor(1), "basic"),  # torch reads a 0-d integer tensor as an int
        (True, "advanced"),
        ((0, torch.tensor([1, 2])), "advanced"),
    ],
)
def test_kinds(index: Any, kind: str) -> None:
    assert IndexPlan.of(torch.zeros(3, 4), index).kind == kind


BAD_INDICES: list[tuple[Any, type[Exception], str]] = [
    (3, IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    (-4, IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    ((0, 9), IndexError, "index 9 is out of bounds for dimension 1 with size 4"),
    (torch.tensor([0, 5]), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (torch.ones(2, dtype=torch.bool), IndexError, r"shape of the mask \[2\] .* \[3, 4\]"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    (torch.tensor([0.5]), IndexError, "must be long, int, byte or bool"),
    (0.5, IndexError, "only integers, slices"),
    # torch 2.13 reads a uint8 mask (deprecated) and hands it with one value to masked_fill_
    (torch.ones(3, dtype=torch.uint8), RuntimeError, "masked_fill_ only supports boolean masks"),
]


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")
@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize(("index", "error", "message"), BAD_INDICES)
def test_bad_index_raises_what_torch_raises(
    name: str, index: Any, error: Any, message: str
) -> None:
    x = torch.zeros(3, 4)
    ours = error[0] if isinstance(error, tuple) else error
    with pytest.raises(ours, match=message):
        RECIPES[name](x, index, 1.0)
    with pytest.raises(error, match=message.split(" ")[0]):  # torch's own setitem refuses too
        x.clone()[index] = 1.0


@pytest.mark.parametrize("name", list(RECIPES))
def test_value_that_does_not_broadcast_names_both_shapes(name: str) -> None:
    with pytest.raises(RuntimeError, match=r"shape \[2\] .* shape \[3\]"):
        RECIPES[name](torch.zeros(3, 4), (slice(None), 0), torch.ones(2))


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize(
    ("x", "value", "message"),
    [
        ([1.0, 2.0], 0.0, "x must be a torch.Tensor, got list"),
        (torch.zeros(2), "a", "value must be a Python number or a torch.Tensor, got str"),
    ],
)
def test_bad_tensor_or_value_is_a_type_error(name: str, x: Any, value: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        RECIPES[name](x, 0, value)


@pytest.mark.filterwarnings("ignore:Casting complex values to real discards the imaginary part")
@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize(
    "index",
    [0, slice(None), torch.tensor([True, False]), [0]],
    ids=["int", "slice", "mask", "list"],
)
@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j, torch.tensor(1 + 2j)], ids=str)
def test_a_complex_value_into_a_real_x_is_what_setitem_makes_of_it(
    name: str, index: Any, value: Any
) -> None:
    """Issue 28, R2: torch casts a complex tensor written through ints and slices
    (dropping the imaginary part, with its warning), and raises RuntimeError for
    a Python complex with an imaginary part, for one element through a mask
    (masked_fill_'s overflow check) and for index tensors (dtypes must match)."""
    x = torch.zeros(2)
    try:
        want: torch.Tensor | Exception = x.clone()
        want[index] = value  # type: ignore[index]
    except RuntimeError as error:
        want = error
    if isinstance(want, Exception):
        with pytest.raises(RuntimeError, match=str(want).split(",")[0][:40]):
            RECIPES[name](x, index, value)
    elif refused(name, x, index, value):
        with pytest.raises(NotApplicable):
            RECIPES[name](x, index, value)
    else:
        assert torch.equal(RECIPES[name](x, index, value), want)


def test_setitem_drops_leading_ones_of_the_value_and_so_do_recipes() -> None:
    x = torch.zeros(3)
    value = torch.ones(1, 1, 3)
    expected = x.clone()
    expected[:] = value
    for name, fn in RECIPES.items():
        if name != "masked_fill":  # writes one value, not three
            assert torch.equal(fn(x, slice(None), value), expected), name


@pytest.mark.parametrize(
    "index", [(Ellipsis, Ellipsis), (Ellipsis, 1, Ellipsis), (0, Ellipsis, Ellipsis)]
)
def test_several_ellipses_follow_torch(index: Any) -> None:
    x = torch.arange(24.0).reshape(2, 3, 4)
    expected = x.clone()
    expected[index] = -1.0
    for name, fn in RECIPES.items():
        if name != "select_scatter":
            assert torch.equal(fn(x, index, -1.0), expected), name


def test_has_duplicates() -> None:
    x = torch.zeros(2, 2)
    assert IndexPlan.of(x, (torch.tensor([0, 0]), torch.tensor([1, 1]))).has_duplicates()
    assert not IndexPlan.of(x, (torch.tensor([0, 1]), torch.tensor([1, 1]))).has_duplicates()
    assert not IndexPlan.of(x, 0).has_duplicates()


def test_scatter_docstring_pitfall_scatter_refuses_what_setitem_takes() -> None:
    """The scatter recipe's docstring: torch's scatter takes no negative position
    and raises RuntimeError out of range; the recipe gives setitem's answer and error."""
    x = torch.zeros(4, 3)
    for bad in (-1, 7):
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.scatter(0, torch.full((1, 3), bad), 1.0)
    t = torch.tensor([-1, 0])
    want = x.clone()
    want[t] = 1.0
    assert torch.equal(RECIPES["scatter"](x, t, 1.0), want)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 4"):
        RECIPES["scatter"](x, torch.tensor([7]), 1.0)
    assert "RuntimeError" in (RECIPES["scatter"].__doc__ or "")


class _IndexPutCalls(torch.utils._python_dispatch.TorchDispatchMode):
    """Record the index lists of every ``aten::index_put`` / ``index_put_`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[Any]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func.overloadpacket in (torch.ops.aten.index_put, torch.ops.aten.index_put_):
            self.calls.append(list(args[1]))
        return func(*args, **(kwargs or {}))


def test_setitem_hands_a_leading_full_slice_to_index_put_as_none() -> None:
    # the sentence of index_put_indices and of the index_put recipe: x[:, t] = v
    # reaches aten::index_put_ as [None, t]
    x, t = torch.zeros(3, 4), torch.tensor([1, 3])
    with _IndexPutCalls() as seen:
        x[:, t] = 1.0
    ((first, second),) = seen.calls
    assert first is None
    assert torch.equal(second, t)
    # ... and Tensor.index_put takes no None, which is why the recipe calls aten's op
    with pytest.raises(TypeError, match="expected Tensor as element 0"):
        x.index_put((None, t), torch.tensor(1.0))


@given(case=cases())
def test_index_put_indices_write_what_setitem_writes(case: Case) -> None:
    # leading None's (full slices) and arange grids, through aten::index_put
    plan = IndexPlan.of(case.x, case.index)
    if plan.kind != "basic" or writes_flat(plan):
        return
    indices = index_put_indices(plan)
    nones = [i is None for i in indices]
    assert nones == sorted(nones, reverse=True)  # None's lead, tensors follow
    expected = case.x.detach().clone()
    expected[case.index] = 1
    one = torch.tensor(1, dtype=case.x.dtype)
    assert torch.equal(torch.ops.aten.index_put(case.x.detach(), list(indices), one), expected)


def test_the_index_put_recipe_saves_no_index_for_a_leading_full_slice() -> None:
    # x[:, 1::10] = v: only the column arange is saved for backward (10 int64s),
    # not a row arange beside it
    from inplace_recipes import bench

    x = torch.rand(10, 100, requires_grad=True) * 1
    saved, _ = bench.saved_bytes(RECIPES["index_put"], x, (slice(None), slice(1, None, 10)), 0.0)
    assert saved == 10 * 8
    with _IndexPutCalls() as seen:
        RECIPES["index_put"](x, (slice(None), slice(1, None, 10)), 0.0)
    assert [i is None for i in seen.calls[0]] == [True, False]


@pytest.mark.parametrize(
    ("shape", "index"),
    [
        ((3, 4), (slice(0, 2), 1)),
        ((2, 3, 4), (1, slice(None), 2)),
        ((3, 4, 5), (slice(None), slice(0, 2), 1)),
    ],
)
def test_index_put_compiles_an_int_beside_a_slice(shape: tuple[int, ...], index: Any) -> None:
    # torch 2.13 under aot_eager: index_put with a 0-d index after an arange fails
    # in backward ("IndexPutBackward0 returned an invalid gradient ... got []"),
    # where setitem compiles; the recipe's one-element int index avoids it
    x = torch.randn(shape, requires_grad=True)
    v = torch.randn(x[index].shape, requires_grad=True)
    compiled = torch.compile(lambda x, v: RECIPES["index_put"](x, index, v), backend="aot_eager")
    weights = torch.arange(x.numel(), dtype=x.dtype).reshape(shape)
    got = torch.autograd.grad((compiled(x, v) * weights).sum(), (x, v))
    ref = x * 1
    ref[index] = v
    want = torch.autograd.grad((ref * weights).sum(), (x, v))
    for g, w in zip(got, want, strict=True):
        assert torch.equal(g, w)


def test_a_0d_index_after_an_arange_still_breaks_compiled_index_put() -> None:
    # the torch bug the test above works around: when this stops failing, the
    # one-element int index may go back to 0-d
    x, v = torch.randn(3, 4, requires_grad=True), torch.randn(2, requires_grad=True)
    step = torch.compile(
        lambda x, v: x.index_put((torch.arange(2), torch.tensor(1)), v), backend="aot_eager"
    )
    with pytest.raises(Exception, match="IndexPutBackward0 returned an invalid gradient"):
        step(x, v).sum().backward()


@pytest.mark.parametrize(
    ("index", "saved"),
    [
        (torch.tensor([0, 1]), 2 * 8),  # an index tensor alone: as it is
        ((torch.tensor([0, 1]), torch.tensor([2, 3])), 2 * 2 * 8),
        ((1, torch.tensor([0, 1])), 2 * 8),
        ((slice(None), torch.tensor([0, 1])), 100 * 2 * 8),  # beside a slice: flat positions
        ((torch.tensor([0, 1]), slice(None)), 2 * 10 * 8),
    ],
)
def test_the_index_put_recipe_saves_what_its_docstring_says(index: Any, saved: int) -> None:
    x = torch.zeros(100, 10, requires_grad=True) * 1
    from inplace_recipes import bench

    assert bench.saved_bytes(RECIPES["index_put"], x, index, 1.0)[0] == saved


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("vshape", [(1,), (1, 1), (1, 1, 1)])
@pytest.mark.parametrize("written", [1, 3])
def test_a_one_element_value_with_leading_ones_through_a_mask(
    name: str, vshape: tuple[int, ...], written: int
) -> None:
    # a falsifying reader: index_put passed a (1, 1) value to index_put as it was,
    # and its backward raised "expected shape compatible with [1, 1]"
    from inplace_recipes import NotApplicable, compare_gradients

    x = torch.rand(5)
    mask = torch.arange(5) < written
    value = torch.rand(vshape)
    try:
        report = compare_gradients(x, mask, value, [name])
    except NotApplicable:
        return
    report.assert_ok()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    ("shape", "index"),
    [
        ((), ()),
        ((), Ellipsis),
        ((), None),
        ((), "mask"),
        ((5,), "mask"),
        ((2, 3), "mask"),
        ((5,), 1),
    ],
)
def test_the_mask_blend_tangent_has_setitems_dtype(
    dtype: torch.dtype, shape: tuple[int, ...], index: Any
) -> None:
    # a falsifying reader: jvp of the mask blend with a Python float gave a float64
    # tangent where setitem's is x's dtype (torch's add(..., alpha=float) with a
    # bool or 0-d other); the values agreed, the dtype did not
    x = torch.rand(shape, dtype=dtype)
    if index == "mask":
        index = torch.rand(shape) > 0.5 if shape else torch.tensor(True)
    tangent = torch.rand(shape, dtype=dtype)

    def ref(b: torch.Tensor) -> torch.Tensor:
        y = b.clone()
        y[index] = 0.1
        return y

    got = torch.func.jvp(lambda b: RECIPES["mask"](b, index, 0.1), (x,), (tangent,))
    want = torch.func.jvp(ref, (x,), (tangent,))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert torch.equal(g, w)


@pytest.mark.parametrize(
    ("shape", "other", "dtype"),
    [
        ((), torch.ones(()), torch.float64),  # both 0-d
        ((3,), torch.tensor([True, False, True]), torch.float64),  # a bool other
        ((3,), torch.tensor([1, 0, 1]), torch.float64),  # an integer other
        ((), torch.tensor([True, False, True]), torch.float64),
        ((3,), torch.tensor(True), torch.float32),  # self has dimensions, other 0-d
        ((3,), torch.ones(3), torch.float32),  # floating, with dimensions: no quirk
    ],
)
def test_torch_add_with_alpha_gives_a_float64_tangent(
    shape: tuple[int, ...], other: Any, dtype: torch.dtype
) -> None:
    # the torch 2.13 quirk the mask blend works around, as its CHANGELOG entry
    # states it; when this fails, torch changed and the blend may add the mask as it is
    x = torch.rand(shape)
    _, tangent = torch.func.jvp(
        lambda b: torch.add(b, other, alpha=2.5), (x,), (torch.ones(shape),)
    )
    assert tangent.dtype == dtype


@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("index", [(), Ellipsis, 0, "mask"])
def test_the_mask_blend_raises_setitems_overflow_error(shape: tuple[int, ...], index: Any) -> None:
    # a falsifying reader: computing the 0-d blend as a product wrote inf for 1e39
    # into float32, where setitem raises
    x = torch.zeros(shape)
    if index == "mask":
        index = torch.tensor(True) if not shape else torch.tensor([True, False, True])
    elif index == 0 and not shape:
        return
    y = x.clone()
    with pytest.raises(RuntimeError, match="overflow") as torchs:
        y[index] = 1e39
    with pytest.raises(RuntimeError, match="overflow") as ours:
        RECIPES["mask"](x, index, 1e39)
    assert str(ours.value) == str(torchs.value)
