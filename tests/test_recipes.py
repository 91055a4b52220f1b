"""Every recipe against the reference: ``y = x.clone(); y[index] = value``."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from hypothesis import assume, event, given

import inplace_recipes as ir
from inplace_recipes import RECIPES, NotApplicable, at, compare_gradients
from inplace_recipes._indexing import IndexPlan
from inplace_recipes.recipes import RECORDS
from refusals import refused, refused_with_grad
from strategies import SEQUENCE_WARNING, Case, cases

NAMES = list(RECIPES)


def refuses(name: str, case: Case, value_requires_grad: bool = False) -> bool:
    """Whether recipe ``name`` is documented (by its record) to refuse this case."""
    if value_requires_grad:
        return refused_with_grad(name, case.x, case.index, case.value)
    return refused(name, case.x, case.index, case.value)


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
@given(case=cases(torch_forms=True, duplicates=True))
def test_recipe_matches_reference_forward_and_backward(name: str, case: Case) -> None:
    fn = RECIPES[name]
    kind = IndexPlan.of(case.x, case.index).kind
    event(f"{kind} index, {case.x.dtype}, {type(case.value).__name__} value")
    refused = case.torch_error()
    if refused is not None:  # torch refuses a value of another dtype with index tensors
        event(f"torch raises {type(refused).__name__}")
        with pytest.raises(type(refused)):
            fn(case.x, case.index, case.value)
        return
    if refuses(name, case):
        with pytest.raises(NotApplicable, match=name):
            fn(case.x, case.index, case.value)
        return
    x_before, version = case.x.clone(), case.x._version
    out = fn(case.x, case.index, case.value)
    expected = case.reference()
    assert out.dtype == case.x.dtype
    assert out.shape == case.x.shape
    assert out.device == case.x.device
    assert torch.equal(out, expected)
    assert torch.equal(case.x, x_before), "the recipe changed x"
    assert case.x._version == version, "the recipe wrote into x"
    report = compare_gradients(case.x, case.index, case.value, [name])
    report.assert_ok()


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
@given(case=cases(dtypes=(torch.float32,), torch_forms=True, duplicates=True))
def test_gradient_reaches_value(name: str, case: Case) -> None:
    """Duplicate positions included: setitem sends a value one gradient per index entry."""
    refused = case.torch_error()
    if refused is not None:  # a float64 value with index tensors: torch raises, so do we
        with pytest.raises(type(refused)):
            RECIPES[name](case.x, case.index, case.value)
        return
    if isinstance(case.value, torch.Tensor) and refuses(name, case, value_requires_grad=True):
        value = case.value.detach().requires_grad_(True)
        with pytest.raises(NotApplicable, match=name):
            RECIPES[name](case.x, case.index, value)
        return
    assume(isinstance(case.value, torch.Tensor))
    value = case.value.detach().requires_grad_(True)
    x = case.x.detach().requires_grad_(True)
    out = RECIPES[name](x, case.index, value)
    weights = torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
    grad_x, grad_v = torch.autograd.grad((out * weights).sum(), (x, value), allow_unused=True)
    ref_x, ref_v = x.detach().clone().requires_grad_(True), value.detach().clone().requires_grad_()
    ref = ref_x * 1
    ref[case.index] = ref_v  # torch casts here (it raised above where it does not)
    want_x, want_v = torch.autograd.grad((ref * weights).sum(), (ref_x, ref_v), allow_unused=True)
    zeros_x, zeros_v = torch.zeros_like(x), torch.zeros_like(value)
    torch.testing.assert_close(
        zeros_x if grad_x is None else grad_x, zeros_x if want_x is None else want_x
    )
    torch.testing.assert_close(
        zeros_v if grad_v is None else grad_v, zeros_v if want_v is None else want_v
    )
    if want_v is not None:  # connected wherever setitem connects it
        assert grad_v is not None
    if grad_v is not None:
        assert grad_v.dtype == value.dtype  # a float64 value gets a float64 gradient


GRADCHECK_CASES: list[tuple[str, tuple[int, ...], Any, Any]] = [
    ("element", (3, 4), (1, -1), "number"),
    ("row", (3, 4), 1, (4,)),
    ("strided slice", (5, 3), slice(0, None, 2), (3, 1)),
    ("new axis", (3, 4), (None, ..., 2), (1, 3)),
    ("mask", (3, 4), "mask", "matching"),
    ("leading mask", (3, 4), "row mask", (4,)),
    ("index tensor", (5,), "positions", (3,)),
    ("mixed", (3, 4), "mixed", (2,)),
    ("0-d", (), (), ()),
]


def _gradcheck_inputs(shape: tuple[int, ...], index: Any, vshape: Any) -> tuple[Any, ...]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    index = (
        {
            "mask": torch.tensor([[True, False, True, False]] * 3),
            "row mask": torch.tensor([True, False, True]),
            "positions": torch.tensor([4, 0, 2]),
            "mixed": (torch.tensor([0, 2]), torch.tensor([3, 1])),
        }.get(index, index)
        if isinstance(index, str)
        else index
    )
    if vshape == "number":
        return x, index, 0.5
    if vshape == "matching":
        vshape = x[index].shape
    return x, index, torch.randn(vshape, dtype=torch.float64, generator=gen)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("label", "shape", "index", "vshape"), GRADCHECK_CASES)
def test_gradcheck_and_gradgradcheck(
    name: str, label: str, shape: tuple[int, ...], index: Any, vshape: Any
) -> None:
    x, index, value = _gradcheck_inputs(shape, index, vshape)
    probe = Case(x, index, value)
    fn = RECIPES[name]
    if refuses(name, probe):  # a documented refusal must be a clear error
        with pytest.raises(NotApplicable, match=f"'{name}'"):
            fn(x, index, value)
        return
    x.requires_grad_(True)
    if isinstance(value, torch.Tensor):
        value.requires_grad_(True)
        inputs: tuple[torch.Tensor, ...] = (x, value)

        def call(*args: torch.Tensor) -> torch.Tensor:
            return fn(args[0], index, args[1])
    else:
        inputs = (x,)

        def call(*args: torch.Tensor) -> torch.Tensor:
            return fn(args[0], index, value)

    assert torch.autograd.gradcheck(call, inputs)
    assert torch.autograd.gradgradcheck(call, inputs)


@pytest.mark.parametrize("name", NAMES)
def test_integer_and_bool_tensors(name: str) -> None:
    x = torch.arange(6).reshape(2, 3)
    expected = x.clone()
    expected[:, 1] = 7
    torch.testing.assert_close(RECIPES[name](x, (slice(None), 1), 7), expected)
    flags = torch.tensor([True, False, True])
    assert torch.equal(RECIPES[name](flags, 1, True), torch.tensor([True, True, True]))


@pytest.mark.parametrize("name", NAMES)
def test_keeps_float32_with_a_float64_value(name: str) -> None:
    """The NumPy-mask answer turns float32 into float64; none of ours may."""
    x = torch.zeros(4)
    out = RECIPES[name](x, 2, torch.tensor(1.5, dtype=torch.float64))
    assert out.dtype == torch.float32


def test_blend_turns_overwritten_inf_into_nan_as_documented() -> None:
    x = torch.tensor([1.0, float("inf"), 3.0])
    assert torch.isnan(RECIPES["mask"](x, 1, 0.0)[1])
    for name in NAMES:
        if name != "mask":
            assert RECIPES[name](x, 1, 0.0)[1] == 0.0, name


def test_inplace_baseline_mutates_and_is_not_a_recipe() -> None:
    x = torch.zeros(3)
    assert ir.inplace_setitem(x, 0, 1.0) is x
    assert x[0] == 1.0
    assert ir.inplace_setitem not in RECIPES.values()


def test_recipes_is_read_only_and_ordered() -> None:
    assert list(RECIPES)[:7] == [
        "mask",
        "where",
        "clone",
        "index_put",
        "scatter",
        "select_scatter",
        "masked_fill",
    ]
    with pytest.raises(TypeError):
        RECIPES["mine"] = RECIPES["where"]  # type: ignore[index]


@pytest.mark.parametrize("name", NAMES)
def test_leaf_that_requires_grad_is_accepted(name: str) -> None:
    """What `x[0] = 42` refuses on a leaf, every recipe does out of place."""
    x = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 42.0
    out = RECIPES[name](x, 0, 42.0)
    out.sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.filterwarnings(
    "ignore:There is a performance drop because we have not yet implemented"
)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [1, (slice(None), 2), (0, slice(1, None, 2))])
def test_vmap_over_a_batched_value_matches_a_loop(name: str, index: Any) -> None:
    """torch 2.13's index_fill writes the last batch's value everywhere under vmap."""
    base = torch.zeros(3, 4)
    values = torch.arange(1.0, 5.0)
    fn = RECIPES[name]
    expected = torch.stack([fn(base, index, v) for v in values])
    if name == "clone":  # setitem cannot write a batched value into an unbatched clone
        with pytest.raises(RuntimeError, match="vmap"):
            torch.func.vmap(lambda v: fn(base, index, v))(values)
        return
    assert torch.equal(torch.func.vmap(lambda v: fn(base, index, v))(values), expected)


def test_blend_with_a_non_finite_value_spoils_every_unwritten_element() -> None:
    """As the docstring says: ``inf * 0`` is ``nan`` wherever the value is not written."""
    out = RECIPES["mask"](torch.zeros(3), 0, float("inf"))
    assert out[0] == float("inf")
    assert torch.isnan(out[1:]).all()
    half = RECIPES["mask"](torch.zeros(3, dtype=torch.float16), 1, 1e6)  # overflows to inf
    assert torch.isnan(half[[0, 2]]).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [Ellipsis, None, (), slice(None)], ids=repr)
def test_overwriting_everything_keeps_x_in_the_graph(name: str, index: Any) -> None:
    shape = () if index == () else (3,)
    x = torch.rand(shape, requires_grad=True)
    y = RECIPES[name](x, index, 2.0)
    assert y.grad_fn is not None
    (grad,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(grad, torch.zeros_like(x))


@pytest.mark.parametrize("name", ["mask", "where", "index_put", "scatter", "clone"])
def test_duplicate_positions_send_the_value_one_gradient_per_entry(name: str) -> None:
    x = torch.zeros(3, requires_grad=True)
    v = torch.tensor(1.0, requires_grad=True)
    RECIPES[name](x, torch.tensor([0, 0]), v).sum().backward()
    assert v.grad == 2.0  # setitem's answer


def test_masked_fill_refuses_duplicates_for_a_value_that_requires_grad() -> None:
    x = torch.zeros(3)
    v = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(NotApplicable, match=r"at\(x\)\[index\]\.add\(value\)"):
        RECIPES["masked_fill"](x, torch.tensor([0, 0]), v)
    # a number, or a value without grad, is written exactly
    assert RECIPES["masked_fill"](x, torch.tensor([0, 0]), 1.0).tolist() == [1.0, 0.0, 0.0]


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@pytest.mark.parametrize("name", NAMES)
def test_nested_list_means_what_it_means_to_torch(name: str) -> None:
    x = torch.zeros(3, 4)
    expected = x.clone()
    expected[[[0, 1], [1, 2]]] = 5.0
    assert expected.sum() == 10.0  # torch writes (0, 1) and (1, 2) only
    try:
        out = RECIPES[name](x, [[0, 1], [1, 2]], 5.0)
    except NotApplicable:
        assert name == "select_scatter"
        return
    assert torch.equal(out, expected)


def test_select_scatter_gradient_to_the_source_is_right_under_vmap() -> None:
    """torch 2.13's own select_scatter sends x.shape[0] times the gradient here."""
    x0 = torch.randn(7, 4, requires_grad=True)
    s = torch.randn(5, 4, requires_grad=True)
    raw = torch.func.vmap(lambda s: x0.select_scatter(s, 0, 1))(s)
    assert torch.equal(torch.autograd.grad(raw.sum(), s)[0], torch.full((5, 4), 7.0))
    out = torch.func.vmap(lambda s: RECIPES["select_scatter"](x0, 1, s))(s)
    grad_s, grad_x = torch.autograd.grad(out.sum(), (s, x0))
    assert torch.equal(grad_s, torch.ones(5, 4))
    expected_x = torch.full((7, 4), 5.0)
    expected_x[1] = 0.0
    assert torch.equal(grad_x, expected_x)


# -- issue 28: the axes the index tests did not walk, one test per root cause ---------------
# (tests/battery/FINDINGS.md; each failed on the code before the one value rule)

MASK = torch.tensor([True, False, True])


def _setitem(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor | Exception:
    y = x.clone()
    try:
        y[index] = value
    except Exception as error:  # noqa: BLE001 - torch's error is the expected answer
        return error
    return y


def _same_as_setitem(name: str, x: torch.Tensor, index: Any, value: Any) -> None:
    want = _setitem(x, index, value)
    if isinstance(want, Exception):
        with pytest.raises(type(want), match=re.escape(str(want)[:40])):
            RECIPES[name](x, index, value)
    elif refused(name, x, index, value):
        with pytest.raises(NotApplicable):
            RECIPES[name](x, index, value)
    elif RECORDS[name].not_exact and not bool(want.isfinite().all()):
        RECIPES[name](x, index, value)  # its documented exception (the blend's non-finite values)
    else:
        got = RECIPES[name](x, index, value)
        assert type(got) is type(want)
        assert got.dtype == want.dtype
        assert torch.equal(got, want) or (got.isnan() == want.isnan()).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        (torch.uint8, torch.tensor(-3.0)),
        (torch.int8, torch.tensor(300.0)),
        (torch.float16, torch.tensor(70000.0, dtype=torch.float64)),
        (torch.float32, torch.tensor(1e40, dtype=torch.float64)),
        (torch.uint8, torch.tensor([-3.0], dtype=torch.bfloat16)),
    ],
    ids=["uint8 -3", "int8 300", "float16 70000", "float32 1e40", "uint8 (1,) bfloat16"],
)
@pytest.mark.parametrize("index", [MASK, 0, slice(0, 2)], ids=["mask", "int", "slice"])
def test_one_value_out_of_range_is_cast_as_setitem_casts(
    name: str, dtype: torch.dtype, value: torch.Tensor, index: Any
) -> None:
    """R1: through a mask setitem hands one element to masked_fill_, which checks
    for overflow (RuntimeError); through ints and slices copy_ casts (wraps, inf)."""
    _same_as_setitem(name, torch.zeros(3, dtype=dtype), index, value)


def test_select_scatter_writes_a_float_as_setitem_does() -> None:
    """R1b: ``y[1] = 70000.0`` into float16 is a row of inf, not new_full's overflow error."""
    _same_as_setitem("select_scatter", torch.zeros(3, 4, dtype=torch.float16), 1, 70000.0)


def test_gradient_of_a_value_of_another_dtype_is_summed_in_its_dtype() -> None:
    """Setitem's copy_ casts the gradient to the value's dtype, then sums it over the
    positions it broadcast the value to (here in float32, not in float16)."""
    x = torch.tensor([1.5410, -0.2935], dtype=torch.float16)
    report = compare_gradients(x, (Ellipsis,), torch.tensor([1.0]), NAMES)
    report.assert_ok()


@pytest.mark.parametrize("shape", [(), (1,), (4,)], ids=str)
@pytest.mark.parametrize("index", [slice(None), 0, (slice(None), 1)], ids=str)
def test_gradient_of_a_value_of_another_dtype_follows_fill_or_copy(
    shape: tuple[int, ...], index: Any
) -> None:
    """Torch 2.13's setitem fills ``x[index]`` with a 0-d CPU value (``fill_``: the
    gradient is summed in ``x``'s dtype, then cast) and expands any other value,
    then copies (cast first, summed in the value's own dtype): float16 ``x``,
    float32 value, ``12.0`` against ``12.0015`` over twelve positions. Every
    recipe's gradient to the value equals setitem's bit for bit."""
    x = (torch.arange(12.0).reshape(3, 4) / 4).half()
    weights = torch.linspace(0.5, 1.5, 12).view(3, 4).half()
    written = x[index].shape
    if len(shape) == 1 and shape[0] != 1 and written[-1:] != shape:
        shape = written[-1:]
    value = torch.full(shape, 1.3, requires_grad=True)
    want = _setitem(x, index, value)
    assert isinstance(want, torch.Tensor)
    (expected,) = torch.autograd.grad((want * weights).sum(), value)
    for name in NAMES:
        if refused(name, x, index, value):
            continue
        (got,) = torch.autograd.grad((RECIPES[name](x, index, value) * weights).sum(), value)
        assert torch.equal(got, expected), (name, got, expected)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.uint64, torch.int64, torch.float32], ids=str)
@pytest.mark.parametrize(
    "value", [1 << 63, (1 << 64) - 1, 1 << 64, -1, -(1 << 63) - 1], ids=lambda v: f"{v:#x}"
)
@pytest.mark.parametrize("index", [0, slice(0, 2), MASK, [0, 2]], ids=str)
def test_big_python_ints_are_read_as_the_running_torch_reads_them(
    name: str, dtype: torch.dtype, value: int, index: Any
) -> None:
    """Torch 2.13 reads every Python int value as an int64 (ValueError past it);
    torch 2.14 reads one for a uint64 x as a uint64 (2**63 to 2**64 - 1 written,
    OverflowError for a negative int or 2**64): the recipes follow the torch they
    run on (here and under the 2.14.1 venv)."""
    _same_as_setitem(name, torch.zeros(3, dtype=dtype), index, value)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mask_device", ["cpu", "meta"])
@pytest.mark.parametrize("value", [1.0, torch.tensor(2.0), torch.ones(2)], ids=str)
def test_meta_x_is_written_as_setitem_writes_it(name: str, mask_device: str, value: Any) -> None:
    """R6: a meta x with a CPU or meta mask: a meta result, no data read (no .item())."""
    x = torch.zeros(3, device="meta")
    index = MASK.to(mask_device)
    want = _setitem(x, index, value)
    assert isinstance(want, torch.Tensor)
    if refused(name, torch.zeros(3), MASK, value):
        return
    got = RECIPES[name](x, index, value)
    assert (got.shape, got.dtype, got.device) == (want.shape, want.dtype, want.device)


@pytest.mark.parametrize("name", NAMES)
def test_where_and_the_blend_take_a_mask_batched_by_vmap(name: str) -> None:
    """R7: torch.where takes a batched mask; recipes that cannot refuse, naming vmap
    (clone is setitem itself: torch's own vmap error, its pitfall)."""
    x = torch.zeros(3, 4)
    masks = torch.tensor([[True, False, True], [False, True, True]])
    values = torch.arange(8.0).view(2, 4)  # two rows per example

    def loop() -> torch.Tensor:
        return torch.stack([_setitem(x, m, v) for m, v in zip(masks, values, strict=True)])  # type: ignore[misc]

    def mapped() -> torch.Tensor:
        return torch.func.vmap(lambda m, v: RECIPES[name](x, m, v))(masks, values)  # type: ignore[no-any-return]

    if name in ("mask", "where"):
        assert torch.equal(mapped(), loop())
    elif name == "clone":
        with pytest.raises(RuntimeError, match="vmap"):
            mapped()
    elif RECORDS[name].not_with_batched_masks:
        with pytest.raises(NotApplicable, match=r"batched by torch\.func\.vmap"):
            mapped()
    else:  # refused by its kinds of index or value, as outside vmap
        with pytest.raises(NotApplicable):
            mapped()


@pytest.mark.parametrize("name", ["where", "mask", "at.set", "at.add", "at.max"])
def test_a_batched_mask_with_the_wrong_count_raises_setitems_shape_error_under_vmap(
    name: str,
) -> None:
    """R7: the count of a batched mask cannot be compared in Python; the value's
    entries are picked out of range instead, so the write raises, with the shape
    mismatch that the loop over the examples raises (not index_select's "out of bounds")."""
    masks = torch.tensor([[True, False, True], [True, True, True]])
    for mask in masks:  # the loop: the second example's write does not fit
        y = torch.zeros(3)
        try:
            y[mask] = torch.ones(2)
        except RuntimeError as error:
            loop = str(error)
    assert loop.startswith("shape mismatch: value tensor of shape [2] cannot be broadcast")

    def write(m: torch.Tensor) -> torch.Tensor:
        if name.startswith("at."):
            return getattr(at(torch.zeros(3))[m], name[3:])(torch.ones(2))  # type: ignore[no-any-return]
        return RECIPES[name](torch.zeros(3), m, torch.ones(2))

    with pytest.raises(RuntimeError) as caught:
        torch.func.vmap(write)(masks)
    assert str(caught.value).startswith(loop.split(" to indexing")[0]), caught.value
    assert "(n: an example's count of True entries" in str(caught.value)


@pytest.mark.parametrize("name", NAMES)
def test_extreme_indices_raise_torchs_class(name: str) -> None:
    """R10: an int past int64 is torch's ValueError; a slice step of 2**62 writes one row."""
    x = torch.zeros(3, 4)
    _same_as_setitem(name, x, 1 << 64, 1.0)
    _same_as_setitem(name, x, slice(None, None, 1 << 62), torch.ones(4))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [0, MASK, torch.tensor([0, 2])], ids=["int", "mask", "tensor"])
def test_a_sparse_value_raises_torchs_class(name: str, index: Any) -> None:
    """R11: copy_'s RuntimeError for ints, index_put_'s NotImplementedError for tensors."""
    x = torch.zeros(3, 2)
    shape = x[index].shape
    _same_as_setitem(name, x, index, torch.ones(shape).to_sparse())


class _Tagged(torch.Tensor):
    """A subclass that keeps torch's ``__torch_function__``: ops return it."""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [1, MASK, torch.tensor([0, 2])], ids=["int", "mask", "tensor"])
def test_a_subclass_value_leaves_x_type(name: str, index: Any) -> None:
    """R12: setitem writes into the clone of x and keeps its type."""
    x = torch.zeros(3, 4)
    value = torch.ones(x[index].shape).as_subclass(_Tagged)
    _same_as_setitem(name, x, index, value)


def _words(text: str) -> str:
    """``text`` with its line breaks, comment marks and runs of spaces folded."""
    lines = [line.strip().removeprefix("#").strip() for line in text.splitlines()]
    return " ".join(" ".join(lines).split())


def test_the_rule_lists_its_exceptions_as_the_records_declare_them() -> None:
    """The README's rule, at's docstring and the at[] page name exactly the recipes
    whose record declares ``not_exact``, each with the record's own sentence."""
    from pathlib import Path

    from inplace_recipes import _at

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    start = readme.index("**One rule: exact, or a clear error.**")
    rule = _words(readme[start : readme.index("\n\n", start)])
    inexact = {name: record.not_exact for name, record in RECORDS.items() if record.not_exact}
    assert inexact, "no record declares an exception: say so in the README's rule"
    assert set(re.findall(r'RECIPES\["(\w+)"\]', rule)) == set(inexact)
    at_text = _words(f"{_at.__doc__}\n{_at.at.__doc__}")
    page = _words((root / "recipes" / "tools" / "plot_at.py").read_text(encoding="utf-8"))
    for name, sentence in inexact.items():
        assert sentence in rule, name
        assert sentence in at_text, name
        assert f'method="{name}"' in at_text, name
        assert sentence in page, name
        assert f'method="{name}"' in page, name
