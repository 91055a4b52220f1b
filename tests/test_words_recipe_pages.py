"""The general words of the recipe pages (``recipes/by_recipe``, ``recipes/patterns``),
each checked over the set it names.

Each test holds one sentence of a page (``docs/general_words/recipe-pages.json``
says which): the recipes come from :data:`~inplace_recipes.RECIPES`, the kinds
of write and the measurements from the committed benchmark, and small index
spaces are enumerated whole, so a new recipe, write or measurement is covered
with no edit here.
"""

from __future__ import annotations

import itertools
import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import event, given

import inplace_recipes as ir
from docs_modules import import_docs_module
from inplace_recipes import RECIPES, bench
from inplace_recipes.matrix import COLUMNS, compatibility_matrix, default_rows
from inplace_recipes.recipes import RECORDS, UnsupportedValueError
from refusals import refused
from strategies import SEQUENCE_WARNING, Case, cases

committed = import_docs_module("committed")
INF, NAN = float("inf"), float("nan")


def _saved(fn: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """What ``fn()`` returns, and every tensor autograd saved for its backward."""
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        out = fn()
    return out, saved


def _nodes(out: torch.Tensor) -> set[str]:
    """The names of the nodes of the graph behind ``out``."""
    seen: set[str] = set()
    todo = [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and type(node).__name__ not in seen:
            seen.add(type(node).__name__)
            todo.extend(n for n, _ in node.next_functions)
    return seen


def _index_lists(positions: int, longest: int) -> list[list[int]]:
    """Every list of 2 to ``longest`` positions in ``range(positions)``, duplicates included."""
    return [
        list(p)
        for n in range(2, longest + 1)
        for p in itertools.product(range(positions), repeat=n)
    ]


# -- index_put, scatter, several positions: duplicates -------------------------------


def _setitem_on_clone(x: torch.Tensor, index: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[index] = v
    return y


#: The writes the pages say keep one value of a repeated position and give every value its
#: gradient: torch's own (setitem on a clone, index_put, scatter) and the package's recipes.
DUPLICATE_WRITES: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "setitem on a clone": _setitem_on_clone,
    "torch index_put": lambda x, i, v: x.index_put((i,), v),
    "torch scatter": lambda x, i, v: x.scatter(0, i, v),
    **{
        name: fn
        for name, fn in RECIPES.items()
        if "advanced" in RECORDS[name].index_kinds and not RECORDS[name].single_value
    },
}


@pytest.mark.parametrize("name", list(DUPLICATE_WRITES))
def test_a_repeated_position_keeps_one_value_and_gives_every_value_its_gradient(name: str) -> None:
    """Every index list of 2 or 3 entries over 3 positions: the written value is one of
    those given for it, and each value gets the gradient of its position."""
    write = DUPLICATE_WRITES[name]
    weights = torch.tensor([2.0, 3.0, 5.0])
    for positions in _index_lists(3, 3):
        index = torch.tensor(positions)
        v = torch.arange(1.0, len(positions) + 1).requires_grad_(True)
        y = write(torch.zeros(3), index, v)
        for p in set(positions):
            given_here = [v[k].item() for k, q in enumerate(positions) if q == p]
            assert y[p].item() in given_here, (name, positions)
        (grad,) = torch.autograd.grad((y * weights).sum(), v)
        assert grad.tolist() == weights[index].tolist(), (name, positions)


def _accumulating_writes() -> dict[str, Callable[[torch.Tensor, Any, torch.Tensor], torch.Tensor]]:
    return {
        "index_put(accumulate=True)": lambda x, i, v: x.index_put((i,), v, accumulate=True),
        "at(x)[i].add(v)": lambda x, i, v: ir.at(x)[i].add(v),
    }


@pytest.mark.parametrize("name", list(_accumulating_writes()))
def test_accumulate_adds_every_write_and_gives_every_value_its_gradient(name: str) -> None:
    """Every index list of 2 or 3 entries over 3 positions: the sum of every write, and
    gradients that ``gradcheck`` finds right, for x and for each value."""
    write = _accumulating_writes()[name]
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for positions in _index_lists(3, 3):
        index = torch.tensor(positions)
        v = torch.linspace(1.0, 2.0, len(positions), dtype=torch.float64, requires_grad=True)
        expected = x.detach().clone()
        for k, p in enumerate(positions):
            expected[p] += v[k].detach()
        assert torch.allclose(write(x, index, v), expected), (name, positions)
        assert torch.autograd.gradcheck(lambda a, b, i=index: write(a, i, b), (x, v))


# -- index_put: what it saves ---------------------------------------------------------


def _index_tensor_writes() -> list[tuple[str, tuple[int, ...], tuple[Any, ...]]]:
    """Index tensors of every dtype an index takes, one or two of them, for fewer or as many
    dimensions as x has, repeated positions or not; masks of one or two dimensions; and
    index tensors beside a mask, an int or a slice."""
    writes: list[tuple[str, tuple[int, ...], tuple[Any, ...]]] = []
    for dtype in (torch.int64, torch.int32):
        rows, cols = torch.tensor([0, 2, 2], dtype=dtype), torch.tensor([1, 3, 0], dtype=dtype)
        writes += [
            (f"one {dtype}", (3, 4), (rows,)),
            (f"two {dtype}", (3, 4), (rows, cols)),
            (f"2-D {dtype}", (3, 4), (rows[:2, None].clone(), cols)),
            (f"one {dtype} of a 3-D x", (3, 4, 2), (rows,)),
            (f"{dtype} beside an int", (3, 4), (1, cols)),
            (f"{dtype} beside a slice", (3, 4), (slice(None), cols)),
        ]
    writes += [
        ("2-D mask", (3, 4), (torch.rand(3, 4, generator=torch.Generator().manual_seed(0)) > 0.5,)),
        ("1-D mask", (3, 4), (torch.tensor([True, False, True]),)),
        ("mask and a tensor", (3, 4), (torch.tensor([True, False, True]), torch.tensor([1, 0]))),
    ]
    return writes


def _alone(indices: tuple[Any, ...]) -> bool:
    """Index tensors alone, or one mask: what the recipe passes to ``index_put`` as it is."""
    tensors = [i for i in indices if isinstance(i, torch.Tensor)]
    masks = [t for t in tensors if t.dtype == torch.bool]
    return len(tensors) == len(indices) and (not masks or len(indices) == 1)


@pytest.mark.parametrize("value_requires_grad", [False, True])
@pytest.mark.parametrize(("label", "shape", "indices"), _index_tensor_writes())
def test_index_put_saves_only_its_index_tensors(
    label: str, shape: tuple[int, ...], indices: tuple[Any, ...], value_requires_grad: bool
) -> None:
    """torch's ``index_put`` saves its index tensors as they are, however many positions they
    write; the recipe the same for index tensors alone or one mask, and else the flat
    positions it writes, 8 bytes each."""
    x = torch.rand(shape, requires_grad=True) * 1
    target = torch.zeros(shape)[indices].shape
    value = torch.rand(target, requires_grad=value_requires_grad)
    expected = _setitem_on_clone(x.detach(), indices, value.detach())  # type: ignore[arg-type]
    tensors = tuple(i for i in indices if isinstance(i, torch.Tensor))
    writes = [ir.index_put]
    if len(tensors) == len(indices):
        writes.append(lambda x, i, v: x.index_put(i, v))
    for write in writes:
        out, saved = _saved(lambda write=write: write(x, indices, value))
        assert torch.equal(out, expected)
        if write is ir.index_put and not _alone(indices):
            assert [(t.dtype, t.numel()) for t in saved] == [(torch.int64, target.numel())], label
            continue
        assert len(saved) == len(tensors), label
        for kept, index in zip(saved, tensors, strict=True):
            assert kept.dtype == index.dtype
            assert kept.untyped_storage().data_ptr() == index.untyped_storage().data_ptr()
            assert kept.untyped_storage().nbytes() == index.numel() * index.element_size()


# -- masked_fill ------------------------------------------------------------------------


def _masks() -> list[torch.Tensor]:
    """Every mask of a (2, 3) tensor, and every mask that broadcasts to it from (3,) or (2, 1)."""
    masks = []
    for shape in [(2, 3), (3,), (2, 1)]:
        n = math.prod(shape)
        for bits in itertools.product([False, True], repeat=n):
            masks.append(torch.tensor(bits).reshape(shape))
    return masks


def test_masked_fill_writes_its_value_at_every_true_position() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    for mask in _masks():
        full = mask.expand(2, 3)
        for value in (9.0, torch.tensor(9.0)):
            for out in (x.masked_fill(mask, value), ir.masked_fill(x, full, value)):
                assert out[full].eq(9.0).all(), mask
                assert torch.equal(out[~full], x[~full]), mask


@pytest.mark.parametrize(
    "index",
    [
        1,
        slice(0, 2),
        (slice(None), 1),
        torch.tensor([True, False, True]),
        torch.tensor([0, 2]),
        [0, 2],
    ],
    ids=repr,
)
def test_masked_fill_writes_one_value_only(index: Any) -> None:
    """The record says so, the recipe refuses several values for every kind of index, and
    torch's ``masked_fill`` takes a 0-d value only."""
    assert RECORDS["masked_fill"].single_value
    x = torch.zeros(3, 4)
    several = torch.ones(torch.zeros(3, 4)[index].shape)
    assert several.numel() > 1
    with pytest.raises(UnsupportedValueError):
        ir.masked_fill(x, index, several)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        x.masked_fill(torch.ones(3, 4, dtype=torch.bool), torch.tensor([1.0, 2.0, 3.0, 4.0]))


#: The comparisons: torch's functions and Python's operators that answer True or False.
COMPARISONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    **{
        f"operator.{op.__name__}": (lambda x, op=op: op(x, 3.0))
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)
    },
    **{
        f"torch.{fn.__name__}": (lambda x, fn=fn: fn(x, 3.0))
        for fn in (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge)
    },
    **{
        f"torch.{fn.__name__}": (lambda x, fn=fn: fn(x, 3.0))
        for fn in (torch.not_equal, torch.less, torch.less_equal, torch.greater)
    },
    "torch.greater_equal": lambda x: torch.greater_equal(x, 3.0),
    "torch.isclose": lambda x: torch.isclose(x, torch.full_like(x, 3.0)),
    "torch.isin": lambda x: torch.isin(x, torch.tensor([3.0, 5.0])),
    **{
        f"torch.{name}": getattr(torch, name)
        for name in ("isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal")
    },
}


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_a_comparison_is_never_recorded(name: str) -> None:
    x = torch.tensor([1.0, 5.0, 3.0, INF], requires_grad=True) * 1
    mask = COMPARISONS[name](x)
    assert mask.dtype == torch.bool
    assert not mask.requires_grad
    assert mask.grad_fn is None
    assert torch.equal(COMPARISONS[name](x.detach()), mask)  # detach() changes nothing


# -- mask: non-finite values, speed, the matrix -----------------------------------------


def _spreads_nan(shape: tuple[int, ...], index: Any, value: Any, dtype: torch.dtype) -> list[bool]:
    """For each element ``x[index] = value`` does not write: whether the blend made it nan."""
    out = ir.mask_blend(torch.zeros(shape, dtype=dtype), index, value)
    written = torch.zeros(shape, dtype=torch.bool)
    written[index] = True
    return out[~written].isnan().tolist()


#: Ints, slices and masks, writing part of a 1-D or a 2-D x.
BASIC_AND_MASKS = [
    ((4,), 1),
    ((3, 2), 1),
    ((3, 2), (1, 0)),
    ((4,), slice(0, 2)),
    ((4,), slice(None, None, 3)),
    ((3, 2), (slice(None), 0)),
    ((3, 2), (Ellipsis, 1)),
    ((4,), torch.tensor([True, False, True, False])),
    ((3, 2), torch.tensor([True, False, False])),
]
#: Index tensors and lists, writing part of a 1-D or a 2-D x.
INDEX_TENSORS = [
    ((4,), torch.tensor([0, 2])),
    ((4,), [0, 2]),
    ((3, 2), torch.tensor([0])),
    ((3, 2), (torch.tensor([0, 2]), torch.tensor([1, 0]))),
]
FLOATS = (torch.float16, torch.float32, torch.float64)


def _one_values(dtype: torch.dtype, number: float) -> list[Any]:
    """``number`` written as a Python float, a 0-d tensor and a tensor of shape [1]."""
    return [number, torch.tensor(number, dtype=dtype), torch.tensor([number], dtype=dtype)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("shape", "index"), BASIC_AND_MASKS, ids=repr)
def test_blend_of_one_non_finite_value_spoils_every_element_it_does_not_write(
    shape: tuple[int, ...], index: Any, dtype: torch.dtype
) -> None:
    """Ints, slices or a mask: inf (or a float16 overflow) makes every unwritten element nan;
    nan makes every element nan."""
    infinite = [*_one_values(dtype, INF), *_one_values(dtype, -INF)]
    if dtype == torch.float16:
        infinite.append(70000.0)
    for value in infinite:
        assert all(_spreads_nan(shape, index, value, dtype)), value
    for value in _one_values(dtype, NAN):
        assert ir.mask_blend(torch.zeros(shape, dtype=dtype), index, value).isnan().all()


#: Floating and complex dtypes of x, and values that are finite or not once cast to them.
BLEND_DTYPES = (
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
)
BLEND_VALUES = (
    INF,
    -INF,
    NAN,
    70000.0,
    1e39,
    3.0,
    complex(INF, 0.0),
    torch.tensor(1e40, dtype=torch.float64),
    torch.tensor(1e40 + 0j, dtype=torch.complex128),
    torch.tensor(INF),
    torch.tensor(70000.0),
)


@pytest.mark.parametrize("dtype", BLEND_DTYPES, ids=str)
@pytest.mark.parametrize(("shape", "index"), BASIC_AND_MASKS, ids=repr)
def test_blend_spoils_exactly_where_the_value_is_not_finite_in_xs_dtype(
    shape: tuple[int, ...], index: Any, dtype: torch.dtype
) -> None:
    """The rule's exception as stated: a value that is not finite in x's dtype (an infinity,
    a nan, or a number past that dtype's range) makes every unwritten element nan, in a
    complex x the written ones too; a value finite there is written as setitem writes it
    (into a finite x with no -0.0); where setitem raises, so does the blend."""
    x = torch.zeros(shape, dtype=dtype)
    written = torch.zeros(shape, dtype=torch.bool)
    written[index] = True
    for value in BLEND_VALUES:
        y = x.clone()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a complex value into a real x warns
                y[index] = value
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ir.mask_blend(x, index, value)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = ir.mask_blend(x, index, value)
        if bool(y[written].isfinite().all()):
            assert torch.equal(got, y), (value, got, y)
            continue
        assert bool(got[~written].isnan().all()), (value, got)
        if dtype.is_complex:
            assert bool(got[written].isnan().all()), (value, got)
        else:
            assert torch.equal(got[written], y[written]) or bool(got[written].isnan().all())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("shape", "index"), INDEX_TENSORS, ids=repr)
def test_blend_with_index_tensors_spreads_nan_only_from_a_python_float(
    shape: tuple[int, ...], index: Any, dtype: torch.dtype
) -> None:
    """Only a Python float written into float32 or float64 spreads nan; a tensor value, and a
    number into float16, are scattered into zeros first and spread nothing."""
    for number in (INF, -INF, NAN):
        python_float, *tensors = _one_values(dtype, number)
        spreads = _spreads_nan(shape, index, python_float, dtype)
        assert all(spreads) if dtype != torch.float16 else not any(spreads), (number, dtype)
        for value in tensors:
            assert not any(_spreads_nan(shape, index, value, dtype)), value
    if dtype == torch.float16:
        assert not any(_spreads_nan(shape, index, 70000.0, dtype))


def _ints_and_whole_slices(index: Any) -> bool:
    """Whether ``index`` is ints, whole slices and ``...`` only (a row, a column)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(type(p) is int or p == slice(None) or p is Ellipsis for p in parts)


def _laid_over(shape: tuple[int, ...], index: Any, value: torch.Tensor) -> torch.Tensor:
    """``value`` repeated along the dimensions the ints of ``index`` pick: a row of a 2-D x
    over every row, a column over every column."""
    parts = list(index if isinstance(index, tuple) else (index,))
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at : at + 1] = [slice(None)] * (len(shape) - len(parts) + 1)
    laid = value
    for dim, part in enumerate(parts):
        if type(part) is int:
            laid = laid.unsqueeze(dim)
    return laid.expand(shape)


def test_blend_scatters_several_values_unless_the_index_is_ints_and_whole_slices() -> None:
    """Every index of ints and slices of a (3, 4) x from the alphabet below, and masks, with
    several values one of which is inf or nan: scattered, nothing spreads; for ints and whole
    slices the value is laid over every other row or column, and nan goes wherever it lays
    the non-finite entry."""
    shape = (3, 4)
    masks = [
        torch.tensor([True, False, True]),
        torch.rand(3, 4, generator=torch.Generator().manual_seed(1)) > 0.5,
    ]
    for index in [*_basic_indices(), *masks]:
        target = torch.zeros(shape)[index].shape
        if math.prod(target) < 2:
            continue
        written = torch.zeros(shape, dtype=torch.bool)
        written[index] = True
        if written.all():
            continue
        for dtype in FLOATS:
            for bad in (INF, NAN):
                value = torch.ones(target, dtype=dtype)
                value.view(-1)[0] = bad
                spread = _spreads_nan(shape, index, value, dtype)
                if isinstance(index, torch.Tensor) or not _ints_and_whole_slices(index):
                    assert not any(spread), (index, dtype, bad)
                else:
                    laid = _laid_over(shape, index, value)
                    assert spread == (~laid.isfinite())[~written].tolist(), (index, dtype)
                    assert any(spread), index


def test_blend_is_the_slowest_recipe_for_every_write_over_sizes_and_dtypes() -> None:
    """The geometric mean over 1e5 to 1e7 elements and both dtypes, each write of the
    committed benchmark: the blend is last, or tied with the last within the noise."""
    results = committed.bench_results()
    band = bench.noise_band(results, sizes=bench.RANKED_SIZES)
    ranks = bench.ranking(results)
    measured = {r["write"] for r in results["records"] if r["entry"] == "mask"}
    assert set(ranks) == measured
    dtypes = {r["dtype"] for r in results["records"] if r["size"] in bench.RANKED_SIZES}
    assert dtypes == {"float32", "float64"}
    for write, ranked in ranks.items():
        assert "mask" in bench.tied_with_slowest(ranked, band, results, write), (write, ranked)


def _by_configuration(
    results: dict[str, Any],
) -> dict[tuple[str, int, str], list[tuple[str, float]]]:
    """Each write, ranked size and dtype: the correct recipes by time over in-place."""
    table: dict[tuple[str, int, str], list[tuple[str, float]]] = {}
    for r in results["records"]:
        if (r["device"], r["mode"]) != ("cpu", "eager") or r["size"] not in bench.RANKED_SIZES:
            continue
        if r["entry"] in RECIPES and r["correct"] and r["ratio_forward_backward"]:
            key = (r["write"], r["size"], r["dtype"])
            table.setdefault(key, []).append((r["entry"], r["ratio_forward_backward"]))
    return {key: sorted(rows, key=lambda row: row[1]) for key, rows in table.items()}


def test_blend_is_not_the_slowest_everywhere_only_masked_fill_or_where_beat_it_at_float32() -> None:
    """Size by size and dtype by dtype: where the blend is not tied with the slowest, the
    configuration is float32 and the slower recipe is ``masked_fill`` or ``where``; there are
    such configurations."""
    results = committed.bench_results()
    band = bench.noise_band(results, sizes=bench.RANKED_SIZES)
    beaten = {
        key: ranked[-1][0]
        for key, ranked in _by_configuration(results).items()
        if "mask" not in bench.tied_with_slowest(ranked, band)
    }
    assert beaten, "the blend is the slowest in every configuration: say so on the page"
    assert {dtype for _, _, dtype in beaten} == {"float32"}, beaten
    assert set(beaten.values()) <= {"masked_fill", "where"}, beaten


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mask", "where"])
def test_blend_and_where_pass_every_check_of_the_matrix(name: str) -> None:
    """Every column of the compatibility matrix (cuda: where a GPU is there)."""
    matrix = compatibility_matrix([name])
    for column in COLUMNS:
        cell = matrix[name, column]
        if column == "cuda" and not torch.cuda.is_available():
            assert cell.status == "n/a"
        else:
            assert cell.status == "works", (column, cell)


# -- scatter: scatter for every index ---------------------------------------------------


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(dtypes=(torch.float32, torch.float64), torch_forms=True, duplicates=True))
def test_scatter_recipe_writes_every_index_with_scatter(case: Case) -> None:
    """Along one dimension or on the flat positions: a ``scatter`` node, never
    ``masked_scatter``, ``index_put`` or setitem's ``CopySlices``; "but a lone ``False``",
    which writes nothing: a copy of ``x``, no other node."""
    if case.torch_error() is not None or refused("scatter", case.x, case.index, case.value):
        return
    if case.index is False:
        x = case.x.detach().requires_grad_(True)
        assert _nodes(RECIPES["scatter"](x, False, case.value)) == {
            "CloneBackward0",
            "AccumulateGrad",
        }
        return
    x = case.x.detach().requires_grad_(True)
    if not x.numel() or not torch.zeros(x.shape)[case.index].numel():
        event("writes nothing")
    names = _nodes(RECIPES["scatter"](x, case.index, case.value))
    event(
        "scatter node" if any(n.startswith("ScatterBackward") for n in names) else "no scatter node"
    )
    assert any(n.startswith("ScatterBackward") for n in names), (case.index, names)
    assert not {n for n in names if "MaskedScatter" in n or "IndexPut" in n or "CopySlices" in n}


# -- select_scatter ------------------------------------------------------------------


def _basic_indices() -> list[Any]:
    """Every index of ints and slices of a (3, 4) tensor from a small alphabet: each int,
    slices with every start, stop and step below, one or two of them, with ``...``."""
    ints = [0, 1, 2, -1, -3]
    slices = [slice(a, b, s) for a in (None, 1, -2) for b in (None, 2) for s in (None, 2)]
    one = [*ints, *slices]
    pairs = [(a, b) for a in one for b in [*one, 3, -4] if not (isinstance(b, int) and b in (-3,))]
    return [*one, *pairs, Ellipsis, (Ellipsis, 1), (1, Ellipsis), (slice(None), Ellipsis, 2)]


def test_select_scatter_covers_every_index_of_ints_and_slices_and_saves_nothing() -> None:
    """Every index of ints and slices of a (3, 4) x from the alphabet of :func:`_basic_indices`,
    a number or a tensor that requires grad: the chain writes what setitem writes and saves
    nothing; a write of the whole tensor, which the recipe makes with ``torch.where``, saves
    one 0-d ``True`` (and ``slice_scatter`` alone would save nothing there either)."""
    x = torch.rand(3, 4, requires_grad=True) * 1
    for index in _basic_indices():
        target = torch.zeros(3, 4)[index]
        whole = target.shape == x.shape
        for value in (5.0, torch.rand(target.shape, requires_grad=True)):
            out, saved = _saved(lambda index=index, value=value: ir.select_scatter(x, index, value))
            expected = x.detach().clone()
            expected[index] = value.detach() if isinstance(value, torch.Tensor) else value
            assert torch.equal(out, expected), index
            if not whole:
                assert saved == [], (index, [t.shape for t in saved])
                assert _nodes(out) & {"SelectScatterBackward0", "SliceScatterBackward0"}, index
                continue
            assert [(t.dtype, t.shape, bool(t)) for t in saved] == [(torch.bool, (), True)]
            part = torch.as_tensor(value).expand(3, 4)
            out, saved = _saved(lambda part=part: x.slice_scatter(part, 0))
            assert torch.equal(out, expected)
            assert saved == []


def _saved_attributes(node: Any) -> dict[str, Any]:
    return {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}


@pytest.mark.parametrize(("shape", "dim"), [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 2)])
def test_select_scatter_backward_saves_only_the_dimension_and_the_position(
    shape: tuple[int, ...], dim: int
) -> None:
    x = torch.rand(shape, requires_grad=True)
    for i in range(-shape[dim], shape[dim]):
        src = torch.rand(torch.zeros(shape).select(dim, i).shape, requires_grad=True)
        out, saved = _saved(lambda i=i, src=src: x.select_scatter(src, dim, i))
        assert type(out.grad_fn).__name__ == "SelectScatterBackward0"
        assert saved == []
        attributes = _saved_attributes(out.grad_fn)
        assert attributes.pop("_saved_dim") == dim
        assert attributes.pop("_saved_index") % 2**64 == i % 2**64  # kept as an unsigned int
        assert all(not isinstance(v, torch.Tensor) for v in attributes.values()), attributes


def test_the_benchmark_times_every_recipe_against_the_in_place_write() -> None:
    """Each write and ranked size of the committed run: every recipe that takes the write has
    a forward + backward time, and its ratio is that time over the in-place write's."""
    results = committed.bench_results()
    records = [r for r in results["records"] if (r["device"], r["mode"]) == ("cpu", "eager")]
    by_key = {(r["write"], r["size"], r["dtype"], r["entry"]): r for r in records}
    writes = {r["write"] for r in records}
    assert writes
    for write, size, dtype in {(r["write"], r["size"], r["dtype"]) for r in records}:
        inplace = by_key[write, size, dtype, "inplace"]["forward_backward"]["median"]
        for name in RECIPES:
            record = by_key.get((write, size, dtype, name))
            assert record is not None, (write, size, dtype, name)
            if not record["applicable"]:
                continue
            assert record["forward_backward"]["median"] > 0, (write, size, dtype, name)
            ratio = record["forward_backward"]["median"] / inplace
            assert math.isclose(record["ratio_forward_backward_median"], ratio, rel_tol=1e-3)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_vmapped_select_scatter_writes_the_source_once_per_position_along_dim(
    n: int, dim: int
) -> None:
    """torch 2.13's decomposition writes the source from each of the ``x.shape[dim]``
    positions along ``dim``: its gradient comes out ``x.shape[dim]`` times too large, for
    every position written, while the values are right."""
    shape = (n, 3) if dim == 0 else (3, n)
    x0 = torch.randn(shape)
    for i in range(n):
        src = torch.randn(4, 3, requires_grad=True)
        out = torch.func.vmap(lambda s, i=i: x0.select_scatter(s, dim, i))(src)
        assert torch.equal(out.select(dim + 1, i), src)
        (grad,) = torch.autograd.grad(out.sum(), src)
        assert torch.equal(grad, torch.full_like(src, float(n))), (n, dim, i)


# -- where --------------------------------------------------------------------------


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(torch_forms=True, duplicates=True))
def test_where_takes_every_index_and_every_value_that_broadcasts(case: Case) -> None:
    """Whatever setitem takes, ``where`` writes as setitem does: it refuses nothing."""
    assert RECORDS["where"].refusal(case.x, case.index, case.value) is None
    if case.torch_error() is not None:
        return
    assert torch.equal(RECIPES["where"](case.x, case.index, case.value), case.reference())


@pytest.mark.parametrize(
    ("x_grad", "value_shape", "dtype"),
    [
        (x_grad, value_shape, dtype)
        for x_grad in (False, True)
        for value_shape in ((), (4,), (3, 1), (3, 4))
        for dtype in (torch.float32, torch.float64, torch.complex64)
    ],
)
def test_torch_where_saves_only_the_boolean_mask(
    x_grad: bool, value_shape: tuple[int, ...], dtype: torch.dtype
) -> None:
    x = torch.rand(3, 4, dtype=dtype, requires_grad=x_grad)
    value = torch.rand(value_shape, dtype=dtype, requires_grad=True)
    mask = torch.rand(3, 4) > 0.5
    _, saved = _saved(lambda: torch.where(mask, value, x))
    assert len(saved) == 1
    assert saved[0].dtype == torch.bool
    assert saved[0].untyped_storage().nbytes() == mask.numel()


#: Operations whose derivative is infinite or undefined at a point, and that point.
SINGULAR: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], float]] = {
    "sqrt at 0": (torch.sqrt, 0.0),
    "sqrt below 0": (torch.sqrt, -1.0),
    "log at 0": (torch.log, 0.0),
}


@pytest.mark.parametrize("name", list(SINGULAR))
def test_where_unpicked_branch_at_a_singular_point_gives_nan_and_a_where_on_its_input_fixes_it(
    name: str,
) -> None:
    op, point = SINGULAR[name]
    z = torch.tensor([point, 4.0], requires_grad=True)
    keep = torch.tensor([False, True])
    (grad,) = torch.autograd.grad(torch.where(keep, op(z), 0.0).sum(), z)
    assert torch.isnan(grad[0]), name
    safe = torch.where(keep, z, 1.0)
    (fixed,) = torch.autograd.grad(torch.where(keep, op(safe), 0.0).sum(), z)
    assert fixed[0] == 0.0, name
    assert torch.isfinite(fixed).all(), name


def _grad_after_sqrt(write: Callable[[torch.Tensor], torch.Tensor], guard: bool) -> torch.Tensor:
    """The gradient to ``a = [0, 4]`` of ``write(a.sqrt()).sum()`` (``guard``: a ``where``
    puts 1 in the square root's input where the write lands)."""
    a = torch.tensor([0.0, 4.0], requires_grad=True)
    s = (torch.where(torch.tensor([True, False]), 1.0, a) if guard else a).sqrt()
    (grad,) = torch.autograd.grad(write(s).sum(), a)
    return grad


def _overwrites() -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    def on_a_copy(s: torch.Tensor) -> torch.Tensor:
        t = s + 0
        t[0] = 0.0
        return t

    return {
        **{name: (lambda s, fn=fn: fn(s, 0, 0.0)) for name, fn in RECIPES.items()},
        "setitem on a tensor computed from it": on_a_copy,
    }


@pytest.mark.parametrize("name", list(_overwrites()))
def test_every_overwrite_of_a_square_root_at_zero_gives_nan(name: str) -> None:
    grad = _grad_after_sqrt(_overwrites()[name], guard=False)
    assert torch.isnan(grad[0]), name
    assert grad[1] == 0.25


def test_setitem_on_the_square_roots_own_output_raises() -> None:
    a = torch.tensor([0.0, 4.0], requires_grad=True)
    s = a.sqrt()
    s[0] = 0.0
    with pytest.raises(RuntimeError, match=r"SqrtBackward0|Sqrt,"):
        s.sum().backward()


@pytest.mark.parametrize("name", list(RECIPES))
def test_a_where_before_the_square_root_fixes_every_recipe(name: str) -> None:
    grad = _grad_after_sqrt(_overwrites()[name], guard=True)
    assert grad.tolist() == [0.0, 0.25], name


@pytest.mark.filterwarnings(SEQUENCE_WARNING)
@given(case=cases(dtypes=(torch.float32, torch.float64), torch_forms=True, duplicates=True))
def test_where_recipe_never_makes_a_gradient_non_finite(case: Case) -> None:
    """With non-finite entries in x and in the value, a finite upstream gradient gives
    finite gradients to both: the recipe's branches are its inputs."""
    if case.torch_error() is not None or not isinstance(case.value, torch.Tensor):
        return
    x = case.x.detach().clone()
    x[torch.arange(x.numel()).reshape(x.shape) % 2 == 0] = INF
    value = case.value.detach().clone()
    value[torch.arange(value.numel()).reshape(value.shape) % 2 == 0] = NAN
    x.requires_grad_(True)
    value.requires_grad_(True)
    out = RECIPES["where"](x, case.index, value)
    grads = torch.autograd.grad(out.sum(), (x, value), allow_unused=True)
    for grad in grads:
        assert grad is None or torch.isfinite(grad).all(), (case.index, grads)


# -- batch, vmap ----------------------------------------------------------------------


@pytest.mark.parametrize("batch", [1, 2, 4, 7])
def test_blend_of_minus_inf_spoils_every_position_it_does_not_write(batch: int) -> None:
    """The batch page's write, for every label of every example: nan wherever not written."""
    logits = torch.randn(batch, 6)
    rows = torch.arange(batch)
    for labels in itertools.product(range(6), repeat=min(batch, 2)):
        labels_t = torch.tensor([*labels, *[0] * (batch - len(labels))])
        out = ir.mask_blend(logits, (rows, labels_t), float("-inf"))
        written = torch.zeros(batch, 6, dtype=torch.bool)
        written[rows, labels_t] = True
        assert out[~written].isnan().all()
        assert out[written].eq(float("-inf")).all()


@pytest.mark.filterwarnings(
    "ignore:There is a performance drop because we have not yet implemented"
)
@pytest.mark.parametrize("batch", [2, 3, 5])
@pytest.mark.parametrize(
    ("shape", "dim", "positions"), [((4,), 0, [1]), ((4,), 0, [0, 2]), ((3, 4), 1, [3])]
)
def test_index_fill_under_vmap_writes_the_last_value_into_every_example(
    batch: int, shape: tuple[int, ...], dim: int, positions: list[int]
) -> None:
    """x not batched, the value batched: every example holds the last example's value; x
    batched too: each its own. ``ir.masked_fill`` with a tensor value calls no ``index_fill``."""
    index = torch.tensor(positions)
    values = torch.arange(1.0, batch + 1)
    out = torch.func.vmap(lambda v: torch.zeros(shape).index_fill(dim, index, v))(values)
    assert out.index_select(dim + 1, index).eq(values[-1]).all(), out
    both = torch.func.vmap(lambda x, v: x.index_fill(dim, index, v))(
        torch.zeros(batch, *shape), values
    )
    for k in range(batch):
        assert both[k].index_select(dim, index).eq(values[k]).all()
    mask = torch.zeros(shape, dtype=torch.bool).index_fill(dim, index, True)
    recipe = torch.func.vmap(lambda v: ir.masked_fill(torch.zeros(shape), mask, v))(values)
    for k in range(batch):
        assert recipe[k][mask].eq(values[k]).all()
    v = torch.tensor(2.0, requires_grad=True)
    assert not any("IndexFill" in n for n in _nodes(ir.masked_fill(torch.zeros(shape), mask, v)))


def test_the_matrix_has_a_row_for_every_recipe_and_vmap_columns() -> None:
    assert set(RECIPES) <= set(default_rows())
    assert {"vmap x", "vmap value", "jacfwd"} <= set(COLUMNS)


def test_a_setitem_that_refuses_another_dtype_is_refused_by_every_recipe() -> None:
    """Index tensors (or several values through a mask) and a value of another float dtype:
    setitem raises, and so does every recipe, with torch's error."""
    writes: list[tuple[Any, Callable[[torch.dtype], torch.Tensor]]] = [
        (torch.tensor([0, 2]), lambda d: torch.tensor(2.0, dtype=d)),
        ([0, 2], lambda d: torch.tensor(2.0, dtype=d)),
        ((torch.tensor([0]),), lambda d: torch.tensor([2.0], dtype=d)),
        (torch.tensor([True, False, True]), lambda d: torch.tensor([1.0, 2.0], dtype=d)),
    ]
    for (index, make), (x_dtype, v_dtype) in itertools.product(
        writes, itertools.permutations((torch.float16, torch.float32, torch.float64), 2)
    ):
        value = make(v_dtype)
        with pytest.raises(RuntimeError, match="dtypes match"):
            torch.zeros(3, dtype=x_dtype)[index] = value
        for recipe in RECIPES.values():
            with pytest.raises(RuntimeError, match="dtypes match"):
                recipe(torch.zeros(3, dtype=x_dtype), index, make(v_dtype).requires_grad_(True))
            with pytest.raises(RuntimeError, match="dtypes match"):
                recipe(torch.zeros(3, dtype=x_dtype), index, value)


@pytest.mark.parametrize("name", list(RECIPES))
def test_compare_gradients_checks_the_value_gradient_of_every_recipe_that_writes_a_row(
    name: str,
) -> None:
    """The value page's report: every recipe, those that cannot write a row of values say so,
    and for each of the others a write that loses the value's gradient is flagged."""
    hidden = torch.rand(4, 5, requires_grad=True)
    token = torch.rand(5)
    report = ir.compare_gradients(hidden, 2, token)
    assert list(report.results) == list(RECIPES)
    report.assert_ok()
    if report[name].not_applicable is not None:
        assert RECORDS[name].single_value, report[name]
        return
    fn = RECIPES[name]
    lost = ir.compare_gradients(hidden, 2, token, {name: lambda x, i, v: fn(x, i, v.detach())})
    assert not lost[name].ok
    assert any("value" in problem for problem in lost[name].problems), lost[name].problems
