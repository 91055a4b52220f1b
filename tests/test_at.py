"""``at(x)[index].<method>(value)`` against ``y = x.clone()`` then the in-place op."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from inplace_recipes import compare_gradients
from inplace_recipes._at import at
from strategies import DTYPES, Case, cases, examples

METHODS = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max", "apply"]


def square_minus(t: torch.Tensor) -> torch.Tensor:
    return t * t - t


def call(method: str, x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    ref = at(x)[index]
    if method == "apply":
        return ref.apply(square_minus)
    return getattr(ref, method)(value)


def reference(method: str, x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """``y = x.clone()`` then the in-place op (reading ``x[index]``, not a view of ``y``
    that the write would overwrite under autograd)."""
    y = x.clone()
    if method == "set":
        y[index] = value
    elif method == "add":
        y[index] += value
    elif method == "subtract":
        y[index] -= value
    elif method == "multiply":
        y[index] *= value
    elif method == "divide":
        y[index] /= value
    elif method == "power":  # y[index] **= value saves the view it overwrites: autograd refuses
        y[index] = x[index] ** value
    elif method in ("min", "max"):  # a tensor value as it is; a number in x's dtype
        other = value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=y.dtype)
        y[index] = (torch.minimum if method == "min" else torch.maximum)(x[index], other)
    else:
        y[index] = square_minus(x[index])
    return y


def fns(method: str) -> tuple[dict[str, Callable[..., torch.Tensor]], Callable[..., torch.Tensor]]:
    return (
        {f"at.{method}": lambda x, i, v: call(method, x, i, v)},
        lambda x, i, v: reference(method, x, i, v),
    )


@pytest.mark.parametrize("method", METHODS)
@given(case=cases())
@settings(max_examples=examples(40))
def test_matches_reference_forward_and_backward(method: str, case: Case) -> None:
    if method == "divide":  # 0 / 0 and x / 0: nan and inf gradients differ by path
        assume(bool((torch.as_tensor(case.value) != 0).all()))
    if method == "power" and not case.x.is_floating_point() and not case.x.is_complex():
        # torch raises for int ** negative int, except on 0-d tensors; at[] always raises
        assume(bool((torch.as_tensor(case.value) >= 0).all()))
    value = case.value
    try:
        want = reference(method, case.x, case.index, value)
    except (RuntimeError, TypeError) as exc:
        refused = True
        if method not in ("set", "min", "max"):  # these raise where setitem refuses the dtype
            try:  # torch's empty-mask setitem refuses a float64 value for float32 x
                value = torch.as_tensor(case.value).to(case.x.dtype)
                want = reference(method, case.x, case.index, value)
                refused = False
            except (RuntimeError, TypeError):  # e.g. min on complex, int / int: at[] raises too
                pass
        if refused:
            with pytest.raises(type(exc)):
                call(method, case.x, case.index, case.value)
            return
    before, version = case.x.clone(), case.x._version
    got = call(method, case.x, case.index, case.value)
    assert (got.dtype, got.shape, got.device) == (want.dtype, want.shape, want.device)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-5, atol=1e-6)
    assert torch.equal(case.x, before), "at[] changed x"
    assert case.x._version == version, "at[] wrote into x"
    mine, ref = fns(method)
    compare_gradients(case.x, case.index, value, mine, reference=ref).assert_ok()


# -- duplicate positions -------------------------------------------------------


@st.composite
def duplicates(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A positive float64 x of shape (n,) or (n, 2), an index tensor over dim 0
    that names some position more than once, and a positive value."""
    n = draw(st.integers(1, 4))
    positions = draw(st.lists(st.integers(-n, n - 1), min_size=2, max_size=6))
    positions.append(positions[0])  # at least one duplicate
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    shape = (n,) if draw(st.booleans()) else (n, 2)
    x = torch.rand(shape, generator=gen, dtype=torch.float64) + 0.5
    index = torch.tensor(positions)
    value = torch.rand((len(positions), *shape[1:]), generator=gen, dtype=torch.float64) + 0.5
    return x, index, value


_SEQUENTIAL = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": torch.minimum,
    "max": torch.maximum,
}


def apply_each(method: str) -> Callable[..., torch.Tensor]:
    """Apply every update in turn, as a loop of setitems: the meaning of
    "every duplicate applies"."""

    def ref(x: torch.Tensor, index: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        for k, p in enumerate(index.tolist()):
            y[p] = _SEQUENTIAL[method](y[p].clone(), value[k])
        return y

    return ref


@pytest.mark.parametrize("method", list(_SEQUENTIAL))
@given(case=duplicates())
@settings(max_examples=examples(25))
def test_duplicates_apply_every_update(method: str, case: tuple[torch.Tensor, ...]) -> None:
    x, index, value = case
    report = compare_gradients(
        x,
        index,
        value,
        {method: lambda a, i, v: call(method, a, i, v)},
        reference=apply_each(method),
    )
    report.assert_ok()


@given(case=duplicates())
@settings(max_examples=examples(25))
def test_add_with_duplicates_is_index_put_accumulate(case: tuple[torch.Tensor, ...]) -> None:
    x, index, value = case
    want = x.clone().index_put_((index,), value, accumulate=True)
    assert torch.equal(at(x)[index].add(value), want)


@given(case=duplicates())
@settings(max_examples=examples(25))
def test_apply_with_duplicates_applies_once_per_position(case: tuple[torch.Tensor, ...]) -> None:
    x, index, _ = case
    unique = torch.unique(index % x.shape[0])
    want = x.clone()
    want[unique] = square_minus(want[unique])
    compare_gradients(
        x,
        index,
        0.0,
        {"apply": lambda a, i, v: at(a)[i].apply(square_minus)},
        reference=lambda a, i, v: reference("apply", a, unique, v),
    ).assert_ok()
    torch.testing.assert_close(at(x)[index].apply(square_minus), want)


@given(case=duplicates())
@settings(max_examples=examples(25))
def test_set_with_duplicates_writes_one_of_the_values(case: tuple[torch.Tensor, ...]) -> None:
    """As JAX documents: one of the values is written, unspecified which.
    Gradients are those of setitem: every value gets the gradient of its
    position, and x gets none at written positions."""
    x, index, value = case
    x = x.requires_grad_(True)
    v = value.clone().requires_grad_(True)
    out = at(x)[index].set(v)
    for p in set((index % x.shape[0]).tolist()):
        written = value[(index % x.shape[0]) == p]
        assert any(torch.equal(out[p].detach(), w) for w in written)
    w = torch.rand(out.shape, dtype=out.dtype)
    gx, gv = torch.autograd.grad((out * w).sum(), (x, v))
    ref = x.detach().clone().requires_grad_(True)
    rv = value.clone().requires_grad_(True)
    y = ref * 1
    y[index] = rv
    want_x, want_v = torch.autograd.grad((y * w).sum(), (ref, rv))
    torch.testing.assert_close(gx, want_x)
    torch.testing.assert_close(gv, want_v)


# -- transforms ----------------------------------------------------------------

INDICES = {
    "basic": (1, slice(None, None, 2)),
    "mask": torch.tensor([True, False, True]),
    "tensor": torch.tensor([2, 0]),
    "mixed": (slice(None), torch.tensor([3, 1])),
}


def setup(index: Any, batch: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(3, 4, generator=gen, dtype=torch.float64) + 0.5
    shape = x[index].shape
    v = torch.rand(((batch,) if batch else ()) + shape, generator=gen, dtype=torch.float64) + 0.5
    return x, v


def grads(fn: Callable[..., torch.Tensor], *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*leaves)
    w = torch.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
    got = torch.autograd.grad((out * w + out * out).sum(), leaves, allow_unused=True)
    return (
        out.detach(),
        *(torch.zeros_like(t) if g is None else g for t, g in zip(leaves, got, strict=True)),
    )


@pytest.mark.parametrize("kind", list(INDICES))
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("batched", ["x", "value", "both"])
def test_vmap_matches_a_loop(method: str, kind: str, batched: str) -> None:
    index = INDICES[kind]
    x, v = setup(index)
    _, vs = setup(index, batch=3)
    xs = torch.rand(3, 3, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64) + 0.5
    bx, bv = batched in ("x", "both"), batched in ("value", "both")
    args = (xs if bx else x, vs if bv else v)
    dims = (0 if bx else None, 0 if bv else None)

    def loop(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.stack(
            [reference(method, a[k] if bx else a, index, b[k] if bv else b) for k in range(3)]
        )

    got = grads(torch.func.vmap(lambda a, b: call(method, a, index, b), in_dims=dims), *args)
    for g, w in zip(got, grads(loop, *args), strict=True):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("index", [1, slice(0, 2), (None, 2)])
@pytest.mark.parametrize("method", ["set", "add", "max"])
def test_vmap_batched_scalar_value(index: Any, method: str) -> None:
    """One batched number per example: torch's index_fill under vmap writes
    the last example's number everywhere; at[] must not."""
    base = torch.zeros(3, requires_grad=True)
    values = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    got = grads(
        torch.func.vmap(lambda b, v: call(method, b, index, v), in_dims=(None, 0)), base, values
    )
    loop = lambda b, v: torch.stack([reference(method, b, index, v[k]) for k in range(4)])
    for g, w in zip(got, grads(loop, base, values), strict=True):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("kind", list(INDICES))
@pytest.mark.parametrize("method", METHODS)
def test_func_grad_functionalize_and_double_backward(method: str, kind: str) -> None:
    index = INDICES[kind]
    x, v = setup(index)
    want = grads(lambda a, b: reference(method, a, index, b), x, v)

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = call(method, a, index, b)
        w = torch.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
        return (out * w + out * out).sum()

    got = torch.func.grad(loss, argnums=(0, 1))(x, v)
    torch.testing.assert_close(got, want[1:])
    functional = torch.func.functionalize(lambda a, b: call(method, a, index, b))
    for g, w in zip(grads(functional, x, v), want, strict=True):
        torch.testing.assert_close(g, w)
    mine, ref = fns(method)
    compare_gradients(x, index, v, mine, reference=ref, second_order=True).assert_ok()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@pytest.mark.parametrize(
    ("method", "kind"), [("set", "basic"), ("add", "tensor"), ("max", "mixed")]
)
def test_compile_fullgraph(method: str, kind: str) -> None:
    index = INDICES[kind]
    x, v = setup(index)
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b: call(method, a, index, b), fullgraph=True)
    for g, w in zip(
        grads(compiled, x, v), grads(lambda a, b: reference(method, a, index, b), x, v), strict=True
    ):
        torch.testing.assert_close(g, w)
    torch._dynamo.reset()


# -- out-of-range modes, errors -----------------------------------------------------


def test_default_mode_raises_index_error_like_pytorch() -> None:
    with pytest.raises(IndexError, match="out of bounds"):
        at(torch.zeros(3))[torch.tensor([0, 3])].set(1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        at(torch.zeros(3))[5].add(1.0, mode="promise_in_bounds")


def test_clip_and_drop() -> None:
    x = torch.arange(4.0)
    idx = torch.tensor([-9, 1, 7])
    assert torch.equal(
        at(x)[idx].set(torch.tensor([10.0, 11.0, 12.0]), mode="clip"),
        torch.tensor([10.0, 11.0, 2.0, 12.0]),
    )
    assert torch.equal(at(x)[idx].add(1.0, mode="drop"), torch.tensor([0.0, 2.0, 2.0, 3.0]))
    assert torch.equal(at(x)[9].set(5.0, mode="drop"), x)
    assert torch.equal(at(x)[-1].set(5.0, mode="drop"), torch.tensor([0.0, 1.0, 2.0, 5.0]))
    assert torch.equal(at(x)[idx].get(mode="clip"), torch.tensor([0.0, 1.0, 3.0]))
    assert torch.equal(
        at(x)[idx].get(mode="fill", fill_value=-1.0), torch.tensor([-1.0, 1.0, -1.0])
    )
    m = torch.zeros(2, 3)
    assert at(m)[:, torch.tensor([0, 5])].set(1.0, mode="drop").sum() == 2


def _outcome(fn: Callable[[], torch.Tensor], leaves: list[torch.Tensor]) -> Any:
    """The result, and which leaves it reaches with what gradient (None: not in the
    graph), or the exception class."""
    try:
        out = fn()
    except Exception as error:  # noqa: BLE001 - the class is compared
        return type(error)
    grads: tuple[Any, ...] = ()
    if out.requires_grad and leaves:
        weights = (torch.arange(out.numel()) + 1).to(out.dtype).reshape(out.shape)
        grads = torch.autograd.grad((out * weights).sum().real, leaves, allow_unused=True)
    return out.detach(), grads


#: Forms that a mode must keep as given: it rebuilds the index around the items it bounds.
KEPT_FORMS = ["as drawn", "a lone False", "a lone True", "a 0-d NumPy bool, ..., 0", "uint8"]


@settings(max_examples=examples(100), deadline=None)
@given(
    case=cases((*DTYPES, torch.bfloat16, torch.float16), torch_forms=True, duplicates=True),
    method=st.sampled_from(METHODS),
    form=st.sampled_from(KEPT_FORMS),
)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_mode_changes_nothing_in_bounds(case: Case, method: str, form: str) -> None:
    """Every drawn index is in bounds, so ``clip``, ``drop`` and ``fill`` give what no mode
    gives: the value, each gradient (None where the value is not in the graph), or the
    error's class. Also in the forms a rebuilt index lost: a lone bool (``(False,)`` is
    another write), a uint8 mask (``set`` refuses it with a number), a 0-d NumPy bool
    before ``...`` (torch counts it one dimension there)."""
    x = case.x.clone().requires_grad_(case.x.is_floating_point() or case.x.is_complex())
    value = case.value
    index = case.index
    if form == "uint8":
        assume(isinstance(index, torch.Tensor) and index.dtype == torch.bool)
        index = index.to(torch.uint8)
    elif form != "as drawn":
        index = {
            "a lone False": False,
            "a lone True": True,
            "a 0-d NumPy bool, ..., 0": (np.array(True), ..., 0),
        }[form]
        if not isinstance(value, (int, float, complex)):
            value = value.reshape(-1)[:1].reshape(()) if value.numel() else 1
        if isinstance(index, tuple):  # its 0 indexes dimension ndim - 2, as torch counts
            assume(x.ndim < 2 or x.shape[x.ndim - 2] > 0)  # (fewer: torch's error)
    if isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
        value = value.clone().requires_grad_()
    leaves = [t for t in (x, value) if isinstance(t, torch.Tensor) and t.requires_grad]

    def write(mode: Any) -> torch.Tensor:
        ref = at(x)[index]
        if method == "apply":
            return ref.apply(square_minus, mode=mode)
        return getattr(ref, method)(value, mode=mode)  # type: ignore[no-any-return]

    want = _outcome(lambda: write(None), leaves)
    for mode in ("clip", "drop", "fill"):
        got = _outcome(lambda mode=mode: write(mode), leaves)
        if isinstance(want, type):
            assert got is want, (mode, got, want)
            continue
        assert not isinstance(got, type), (mode, got)
        assert got[0].dtype == want[0].dtype
        torch.testing.assert_close(got[0], want[0], equal_nan=True, rtol=0, atol=0)
        assert [g is None for g in got[1]] == [g is None for g in want[1]], mode
        for g, w in zip(got[1], want[1], strict=True):
            if w is not None:
                torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


def test_drop_mode_gradients() -> None:
    x = torch.rand(4, dtype=torch.float64)
    report = compare_gradients(
        x,
        torch.tensor([1, 9, 2]),
        torch.rand(3, dtype=torch.float64),
        {"drop": lambda a, i, v: at(a)[i].set(v, mode="drop")},
        reference=lambda a, i, v: _drop_ref(a, v),
    )
    report.assert_ok()


def _drop_ref(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = a.clone()
    y[torch.tensor([1, 2])] = v[torch.tensor([0, 2])]
    return y


def test_errors_name_the_choices() -> None:
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="choose from mask, where"):
        at(x)[0].set(1.0, method="nope")
    with pytest.raises(ValueError, match="'clip'"):
        at(x)[0].set(1.0, mode="wrap")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="index first"):
        at(x).set(1.0)
    with pytest.raises(TypeError, match="index once"):
        at(x)[0][0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        at(torch.zeros(3, dtype=torch.long))[0].divide(2)


@pytest.mark.parametrize("method", ["mask", "where", "clone", "index_put", "scatter"])
def test_method_selects_the_recipe(method: str) -> None:
    x, v = setup(INDICES["tensor"])
    want = reference("set", x, INDICES["tensor"], v)
    assert torch.equal(at(x)[INDICES["tensor"]].set(v, method=method), want)
    assert torch.equal(at(x, INDICES["tensor"]).set(v, method=method), want)


# -- issue 9: forward mode, promotion, apply, batched indices, unsigned fill ----------

FORWARD_INDICES = {
    **INDICES,
    "duplicates": torch.tensor([2, 0, 2]),
    "mixed_duplicates": (slice(None), torch.tensor([3, 1, 3])),
}
_OPS = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": torch.minimum,
    "max": torch.maximum,
}


def sequential(method: str, a: torch.Tensor, index: Any, v: torch.Tensor) -> torch.Tensor:
    """Every update in index order, element by element (NumPy's ufunc.at), in
    plain torch: the reference for duplicates in every AD mode."""
    positions = torch.arange(a.numel()).view(a.shape)[index].reshape(-1).tolist()
    values = torch.broadcast_to(v, a[index].shape).reshape(-1)
    out = list(a.reshape(-1).unbind())
    if method == "apply":
        for p in set(positions):
            out[p] = square_minus(out[p])
    else:
        for p, s in zip(positions, values.unbind(), strict=True):
            out[p] = _OPS[method](out[p], s)
    return torch.stack(out).view(a.shape)


@pytest.mark.parametrize("kind", list(FORWARD_INDICES))
@pytest.mark.parametrize("method", [m for m in METHODS if m != "set"])
def test_forward_mode_jvp_jacfwd_hessian(method: str, kind: str) -> None:
    """torch 2.13's scatter_reduce(prod) drops the tangent: at[] must not."""
    index = FORWARD_INDICES[kind]
    x, _ = setup(index)
    v = torch.rand(x[index].shape, generator=torch.Generator().manual_seed(2), dtype=x.dtype) + 0.5
    mine = lambda a, b: call(method, a, index, b)
    ref = lambda a, b: sequential(method, a, index, b)
    tangents = (torch.rand_like(x), torch.rand_like(v))
    got, want = torch.func.jvp(mine, (x, v), tangents), torch.func.jvp(ref, (x, v), tangents)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)
    for g, w in zip(
        torch.func.jacfwd(mine, argnums=(0, 1))(x, v),
        torch.func.jacfwd(ref, argnums=(0, 1))(x, v),
        strict=True,
    ):
        torch.testing.assert_close(g, w)
    square = lambda f: lambda a, b: (f(a, b) ** 2).sum()
    got_h = torch.func.hessian(square(mine), argnums=(0, 1))(x, v)
    want_h = torch.func.hessian(square(ref), argnums=(0, 1))(x, v)
    for g_row, w_row in zip(got_h, want_h, strict=True):
        for g, w in zip(g_row, w_row, strict=True):
            torch.testing.assert_close(g, w)


NON_FINITE_STEPS = [
    ("divide", [3.0, 0.0, -3.0], [0.0, 2.0]),
    ("divide", [3.0, 0.0, -3.0], [float("inf"), 0.0]),
    ("divide", [3.0, 0.0, -3.0], 0.0),
    ("power", [-4.0, 0.0, 2.0], [0.5, 2.0]),
    ("power", [-4.0, 0.0, 2.0], [-1.0, 2.0]),
    ("power", [-4.0, 0.0, 2.0], -0.5),
    ("multiply", [3.0, 0.0, -3.0], [float("inf"), 0.0]),
    ("multiply", [3.0, 0.0, -3.0], float("nan")),
]


@pytest.mark.parametrize(("method", "xs", "vs"), NON_FINITE_STEPS, ids=str)
def test_repeated_positions_with_non_finite_steps_follow_the_statement(
    method: str, xs: list[float], vs: Any
) -> None:
    """The rule in ``at``'s docstring: each occurrence is ``y[p] = op(y[p], s)`` run
    once, in index order, never merged with another step, in value, reverse-mode
    gradients (to x and to the value, a 0-d value included) and tangents, where a
    step is non-finite (``x / 0``, a negative base to 0.5, ``0 ** -1``, ``inf * 0``).
    Every position of x is named twice."""
    index = torch.tensor([0, 1, 2, 0, 1, 2])
    x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    v = torch.tensor(vs, dtype=torch.float64, requires_grad=True)

    def steps(b: torch.Tensor) -> torch.Tensor:  # a 0-d value as it is; else s1 thrice, s2 thrice
        return b if b.ndim == 0 else b.repeat_interleave(3)

    def mine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return getattr(at(a)[index], method)(steps(b))  # type: ignore[no-any-return]

    def ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return sequential(method, a, index, steps(b))

    got, want = mine(x, v), ref(x, v)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    weights = torch.tensor([0.5, 1.0, 1.5], dtype=torch.float64)
    for g, w in zip(
        torch.autograd.grad((got * weights).sum(), (x, v)),
        torch.autograd.grad((want * weights).sum(), (x, v)),
        strict=True,
    ):
        torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)
    tangents = (torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64), torch.ones_like(v))
    primals = (x.detach(), v.detach())
    for g, w in zip(
        torch.func.jvp(mine, primals, tangents), torch.func.jvp(ref, primals, tangents), strict=True
    ):
        torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


def test_max_with_tied_duplicates_by_hand() -> None:
    """x = [1, 0], at[[0, 0]].max([1, 1]): every value ties. Applied once per
    occurrence, c1 = maximum(1, v0) gives each side 1/2 and c2 = maximum(c1, v1)
    halves that again: dx0 = dv0 = 1/4, dv1 = 1/2 (scatter_reduce and JAX give
    1/3 to each)."""
    x = torch.tensor([1.0, 0.0], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
    for method in ("max", "min"):
        gx, gv = torch.autograd.grad(call(method, x, torch.tensor([0, 0]), v).sum(), (x, v))
        assert gx.tolist() == [0.25, 1.0], method
        assert gv.tolist() == [0.25, 0.5], method


@st.composite
def tied_duplicates(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Like :func:`duplicates`, with x and the value drawn from {0, 1, 2}, so
    that a position's updates often tie with each other and with x."""
    x, index, value = draw(duplicates())
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    tie = lambda t: torch.randint(0, 3, t.shape, generator=gen).to(t.dtype)
    return tie(x), index, tie(value)


@pytest.mark.parametrize("method", ["min", "max"])
@given(case=tied_duplicates())
@settings(max_examples=examples(40))
def test_min_max_with_tied_duplicates_apply_once_per_occurrence(
    method: str, case: tuple[torch.Tensor, ...]
) -> None:
    """Ties: value, reverse mode (first and second order) and forward mode
    equal torch.minimum/maximum applied once per occurrence, in index order."""
    x, index, value = case
    compare_gradients(
        x,
        index,
        value,
        {method: lambda a, i, v: call(method, a, i, v)},
        reference=apply_each(method),
        second_order=True,
    ).assert_ok()
    mine = lambda a, b: call(method, a, index, b)
    ref = lambda a, b: sequential(method, a, index, b)
    tangents = (torch.rand_like(x), torch.rand_like(value))
    for g, w in zip(
        torch.func.jvp(mine, (x, value), tangents),
        torch.func.jvp(ref, (x, value), tangents),
        strict=True,
    ):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("kind", list(FORWARD_INDICES))
def test_forward_mode_set(kind: str) -> None:
    index = FORWARD_INDICES[kind]
    x, _ = setup(index)
    v = torch.rand(x[index].shape, dtype=x.dtype)

    def ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        y = a.clone()
        y[index] = b
        return y

    for transform in (torch.func.jacfwd, torch.func.jacrev):
        got = transform(lambda a, b: at(a)[index].set(b), argnums=(0, 1))(x, v)
        for g, w in zip(got, transform(ref, argnums=(0, 1))(x, v), strict=True):
            torch.testing.assert_close(g, w)


PROMOTION_VALUES = [2.5, 0.5, 2, -1, True, torch.tensor(2.5), torch.tensor([2, 3]), 1 + 1j]


_INPLACE = {
    "add": "add_",
    "subtract": "sub_",
    "multiply": "mul_",
    "divide": "div_",
    "power": "pow_",
}


@pytest.mark.parametrize("value", PROMOTION_VALUES, ids=repr)
@pytest.mark.parametrize("index", [0, slice(0, 2), torch.tensor([0, 1]), torch.tensor([1, 1])])
@pytest.mark.parametrize("method", list(_INPLACE))
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
def test_integer_promotion_follows_torch(
    method: str, index: Any, value: Any, dtype: torch.dtype
) -> None:
    """``y[0] *= 2.5`` on a long tensor raises in torch: so does at[]; where
    torch accepts, at[] gives its result (an index tensor: each position in
    turn, with its own value when the value has one per position)."""
    x = torch.tensor([1, 2, 3]).to(dtype)
    y = x.clone()
    try:
        if isinstance(index, torch.Tensor):
            for k, p in enumerate(index.tolist()):
                part = value[k] if isinstance(value, torch.Tensor) and value.ndim else value
                getattr(y[p : p + 1], _INPLACE[method])(part)
        else:
            getattr(y[index], _INPLACE[method])(value)
    except (RuntimeError, TypeError) as exc:
        with pytest.raises(type(exc)):
            getattr(at(x)[index], method)(value)
        return
    got = getattr(at(x)[index], method)(value)
    assert got.dtype == x.dtype
    assert torch.equal(got, y)


def test_integer_tensor_with_float_raises_torchs_message() -> None:
    x = torch.arange(1, 5)
    y = x.clone()
    with pytest.raises(RuntimeError) as torch_error:
        y[0] *= 2.5
    for method in ["add", "subtract", "multiply", "divide", "power"]:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            getattr(at(x)[0], method)(2.5)
    assert "result type Float can't be cast to the desired output type Long" in str(
        torch_error.value
    )
    assert torch.equal(x, torch.arange(1, 5))


@pytest.mark.parametrize(
    "index", [slice(0, 3), torch.tensor([0, 1, 2]), torch.tensor([True, True, True, False])]
)
def test_apply_never_writes_into_x(index: Any) -> None:
    x = torch.tensor([-1.0, 2.0, -3.0, 4.0])
    before = x.clone()
    got = at(x)[index].apply(torch.relu_)
    assert torch.equal(x, before)
    assert torch.equal(got, torch.tensor([0.0, 2.0, 0.0, 4.0]))


@pytest.mark.parametrize(
    "index",
    [slice(1, 3), torch.tensor([1, 2]), torch.tensor([False, True, True, False]), [1, 2]],
    ids=["slice", "tensor", "mask", "list"],
)
def test_apply_means_the_same_for_every_index(index: Any) -> None:
    """``y[index] = fn(x[index])``: a non-elementwise fn sees the selection."""
    x = torch.tensor([1.0, 6.0, 7.0, 16.0])
    assert torch.equal(at(x)[index].apply(torch.sum), torch.tensor([1.0, 13.0, 13.0, 16.0]))
    flipped = at(x)[index].apply(lambda t: t.flip(0))
    assert torch.equal(flipped, torch.tensor([1.0, 7.0, 6.0, 16.0]))


@pytest.mark.parametrize("method", ["set", "apply", "add", "multiply", "max"])
def test_vmap_with_a_batched_index(method: str) -> None:
    """Torch's clone + setitem works under vmap with a batched index: at[] too."""
    x = torch.rand(5, dtype=torch.float64) + 0.5
    indices = torch.tensor([[0, 3], [4, 4], [1, 0]])
    values = torch.rand(3, 2, dtype=torch.float64) + 0.5
    got = torch.func.vmap(lambda i, v: call(method, x, i, v))(indices, values)
    for k in range(3):
        if method == "set":
            want = reference("set", x, indices[k], values[k])
        else:
            want = sequential(method, x, indices[k], values[k])
        if method == "set" and k == 1:  # duplicates: one of the values
            assert got[k, 4] in values[k]
            assert torch.equal(got[k, :4], x[:4])
            continue
        torch.testing.assert_close(got[k], want)


@pytest.mark.parametrize(
    "dtype", [torch.uint8, torch.uint16, torch.uint32, torch.uint64, torch.int32, torch.bool]
)
def test_fill_mode_uses_jax_fill_values(dtype: torch.dtype) -> None:
    x = torch.zeros(3, dtype=dtype)
    got = at(x)[torch.tensor([0, 7])].get(mode="fill")
    want = True if dtype == torch.bool else torch.iinfo(dtype).max
    if dtype == torch.int32:
        want = torch.iinfo(dtype).min
    assert got[1].item() == want
    assert got[0].item() == 0


@pytest.mark.parametrize("method", ["set", "min", "max"])
@pytest.mark.parametrize(
    "index",
    [torch.tensor([0, 2]), [0, 2], torch.tensor([True, False, True]), 1, slice(0, 2)],
    ids=["index tensor", "list", "mask", "int", "slice"],
)
@pytest.mark.parametrize("shape", [(), (1,), (2,)], ids=["0-d", "one element", "two"])
def test_another_dtype_as_setitem(method: str, index: Any, shape: tuple[int, ...]) -> None:
    """A float64 value into float32 ``x``: cast where torch's setitem casts the
    result, torch's error class where it refuses it (index tensors; a mask with
    more than one element)."""
    x, value = torch.zeros(3), torch.full(shape, -1.0, dtype=torch.float64)
    try:
        want = reference(method, x, index, value)
    except RuntimeError as error:
        with pytest.raises(type(error)):
            call(method, x, index, value)
        return
    got = call(method, x, index, value)
    assert got.dtype == want.dtype
    assert torch.equal(got, want)


# -- issue 28: the axes the index tests did not walk, one test per root cause ---------------
# (tests/battery/FINDINGS.md; each failed on the code before the one value rule)

_STATEMENTS: dict[str, Callable[[torch.Tensor, Any, Any], None]] = {
    "add": lambda y, i, v: y.__setitem__(i, y[i].__iadd__(v)),
    "subtract": lambda y, i, v: y.__setitem__(i, y[i].__isub__(v)),
    "multiply": lambda y, i, v: y.__setitem__(i, y[i].__imul__(v)),
    "divide": lambda y, i, v: y.__setitem__(i, y[i].__itruediv__(v)),
    "power": lambda y, i, v: y.__setitem__(i, y[i].__ipow__(v)),
    "min": lambda y, i, v: y.__setitem__(
        i, torch.minimum(y[i], v if isinstance(v, torch.Tensor) else torch.tensor(v))
    ),
    "max": lambda y, i, v: y.__setitem__(
        i, torch.maximum(y[i], v if isinstance(v, torch.Tensor) else torch.tensor(v))
    ),
}


def _statement(op: str, x: torch.Tensor, index: Any, value: Any) -> torch.Tensor | Exception:
    """Torch's own ``y = x.clone(); y[index] op= value`` (``min``/``max`` as at's table)."""
    y = x.clone()
    try:
        _STATEMENTS[op](y, index, value)
    except Exception as error:  # noqa: BLE001 - torch's error is the expected answer
        return error
    return y


def _as_torch(op: str, x: torch.Tensor, index: Any, value: Any) -> None:
    want = _statement(op, x, index, value)
    if isinstance(want, Exception):
        with pytest.raises(type(want)):
            getattr(at(x)[index], op)(value)
        return
    got = getattr(at(x)[index], op)(value)
    assert type(got) is type(want)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


_ROWS = torch.tensor([True, False, True])


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize(
    ("x", "value"),
    [
        (torch.tensor([False, True, False]), torch.tensor(-2.5)),
        (torch.tensor([1, 2, 3], dtype=torch.uint8), torch.tensor(-3.0, dtype=torch.float64)),
        (torch.tensor([1, 2, 3], dtype=torch.uint8), -3.0),
        (torch.tensor([1, 2, 3], dtype=torch.int32), 3e9),
        (torch.tensor([False, True, False]), 2),
    ],
    ids=["bool -2.5", "uint8 float64", "uint8 -3.0", "int32 3e9", "bool 2"],
)
@pytest.mark.parametrize("index", [slice(0, 2), 1, _ROWS], ids=["slice", "int", "mask"])
def test_min_and_max_compare_then_cast(op: str, x: torch.Tensor, value: Any, index: Any) -> None:
    """R3: torch compares in the promoted dtype, then setitem casts (or refuses) the result."""
    _as_torch(op, x, index, value)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power"])
@pytest.mark.parametrize("index", [1, (1, slice(None)), _ROWS, torch.tensor([0, 2])], ids=str)
def test_arithmetic_keeps_the_shape_of_x_index(op: str, index: Any) -> None:
    """R4: ``y[1] += torch.ones(1, 4)`` raises (the view cannot grow); so does at()."""
    x = torch.rand(3, 4) + 1
    value = torch.ones((1, *x[index].shape))
    _as_torch(op, x, index, value)


@pytest.mark.parametrize(
    ("op", "x", "value"),
    [
        ("add", torch.zeros(3, dtype=torch.int8), 128),
        ("add", torch.zeros(3, dtype=torch.uint8), 256),
        ("multiply", torch.tensor([0.1, -0.5, 0.25], dtype=torch.float16),
         torch.tensor(70000.0, dtype=torch.float64)),
        ("multiply", torch.tensor([0.1, -0.5, 0.25], dtype=torch.bfloat16),
         torch.tensor(1e-8, dtype=torch.float32)),
        ("add", torch.tensor([1 + 1j, 2 + 2j, 3j]), complex(float("nan"), 1.0)),
        ("subtract", torch.tensor([1 + 1j, 2 + 2j, 3j], dtype=torch.complex128), 1e40 + 0j),
    ],
    ids=["int8 128", "uint8 256", "float16 70000", "bfloat16 1e-8", "nan+1j", "1e40+0j"],
)  # fmt: skip
@pytest.mark.parametrize("index", [torch.tensor([0, 2]), _ROWS, slice(0, 2)], ids=str)
def test_ops_take_the_value_as_torch_does(op: str, x: torch.Tensor, value: Any, index: Any) -> None:
    """R5: a Python number stays a number, a 0-d tensor a scalar of its own precision,
    and add/subtract multiply the value by alpha, as torch's in-place ops do."""
    _as_torch(op, x, index, value)


@pytest.mark.parametrize("op", list(_STATEMENTS))
@pytest.mark.parametrize(
    "index",
    [1, _ROWS, _ROWS.to("meta"), torch.tensor([0, 2])],
    ids=["int", "mask", "meta mask", "tensor"],
)
@pytest.mark.parametrize("value", [2.0, torch.ones(4), torch.ones(4, device="meta")], ids=str)
def test_meta_x_as_torch(op: str, index: Any, value: Any) -> None:
    """R6: meta tensors: torch's device rules (``add_`` takes a CPU operand on meta,
    ``pow_`` and ``torch.minimum`` do not), no ``.item()`` of a meta index."""
    x = torch.zeros(3, 4, device="meta")
    want = _statement(op, x, index, value)
    if isinstance(want, Exception):
        with pytest.raises(type(want)):
            getattr(at(x)[index], op)(value)
    else:
        got = getattr(at(x)[index], op)(value)
        assert (got.shape, got.dtype, got.device) == (want.shape, want.dtype, want.device)


@pytest.mark.parametrize("op", ["set", *_STATEMENTS])
@pytest.mark.parametrize("value", [2.0, torch.tensor(3.0), torch.arange(1.0, 5.0)], ids=str)
def test_ops_take_a_mask_batched_by_vmap(op: str, value: Any) -> None:
    """R7: a batched mask goes through torch.where; the result is the loop's."""
    x = torch.rand(3, 4) + 1
    masks = torch.tensor([[True, False, True], [False, True, True]])

    def one(m: torch.Tensor) -> torch.Tensor:
        return getattr(at(x)[m], op)(value)  # type: ignore[no-any-return]

    torch.testing.assert_close(torch.func.vmap(one)(masks), torch.stack([one(m) for m in masks]))


@pytest.mark.slow
@pytest.mark.parametrize("op", ["add", "multiply", "max"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_ops_compile_with_a_mask_and_a_value_of_several_elements(op: str, dynamic: bool) -> None:
    """R8: no Python comparison of ``x[mask]``'s length that Dynamo must guard on."""
    x = torch.rand(3, 4, requires_grad=True)
    value = torch.rand(6, requires_grad=True)
    mask = torch.tensor([[True, False, True, False]] * 3)
    torch._dynamo.reset()
    step = torch.compile(
        lambda a, b: getattr(at(a)[mask], op)(b),
        backend="aot_eager",
        fullgraph=True,
        dynamic=dynamic,
    )
    got = step(x, value)
    want = getattr(at(x)[mask], op)(value)
    torch.testing.assert_close(got, want)
    grads = torch.autograd.grad(got.sum(), (x, value))
    wants = torch.autograd.grad(want.sum(), (x, value))
    for g, w in zip(grads, wants, strict=True):
        torch.testing.assert_close(g, w)


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")
@pytest.mark.parametrize("op", ["set", *_STATEMENTS])
def test_a_uint8_mask_is_read_as_torch_reads_it(op: str) -> None:
    """R9: ``y[m] += 1`` takes a uint8 mask (deprecated); ``y[m] = 1.0`` refuses it."""
    x = torch.zeros(3)
    mask = torch.tensor([1, 0, 1], dtype=torch.uint8)
    if op == "set":
        with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
            at(x)[mask].set(1.0)
        return
    _as_torch(op, x, mask, 1.0)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "min"])
@pytest.mark.parametrize("index", [torch.tensor([0, 2]), [2, 0], _ROWS], ids=str)
def test_a_sparse_value_as_torch_takes_it(op: str, index: Any) -> None:
    """R11: ``y[t] += sparse`` works; ``**=`` and ``torch.minimum`` raise NotImplementedError."""
    x = torch.rand(3, 4)
    _as_torch(op, x, index, torch.ones(x[index].shape).to_sparse())


class _Tagged(torch.Tensor):
    """A subclass that keeps torch's ``__torch_function__``: ops return it."""


@pytest.mark.parametrize("op", ["set", *_STATEMENTS])
@pytest.mark.parametrize("index", [1, _ROWS, torch.tensor([0, 2])], ids=str)
def test_a_subclass_value_leaves_the_type_of_x(op: str, index: Any) -> None:
    """R12: the result of ``y = x.clone(); y[i] op= v`` is x's type, not the value's."""
    x = torch.rand(3, 4) + 1
    value = torch.full(x[index].shape, 2.0).as_subclass(_Tagged)
    if op == "set":
        assert type(at(x)[index].set(value)) is torch.Tensor
        return
    _as_torch(op, x, index, value)
