"""Running one case: the writer and torch on the same inputs, then the verdict.

:func:`run` is the only entry point; the tests and the findings' tally call it.
Each check builds fresh inputs, asks torch first (:mod:`battery.oracle`),
snapshots every input tensor, runs the writer, and compares: the result
(type, dtype, shape, device, values within :mod:`battery.tolerances`), the
exception class, gradients and tangents, and that no input changed (data and
version counter).

>>> from battery.spec import Case, X, Value
>>> run(Case("dtypes", "where", X("float32"), "mask", Value("0d", "float32"))).category
'agrees'
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from functools import cache, partial
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch import Tensor

from . import build
from .oracle import Outcome, Writer, attempt, first_line, torch_write, torch_write_each, writer
from .spec import Case
from .timeout import CaseTimeout, limit
from .tolerances import allowed
from .verdict import (
    CLASS,
    DOCUMENTED,
    MUTATED,
    OK,
    RAISES,
    SILENT,
    TIMEOUT,
    Verdict,
    differs,
    record,
)

#: Seconds a case may run: a compile case compiles a forward and a backward graph.
TIME_LIMIT = {"compile": 300.0}
DEFAULT_TIME_LIMIT = 60.0
#: Examples in a ``vmap`` batch.
BATCH = 3

#: Index names that setitem reads as ints, slices, ``...`` and ``None`` (a 0-d
#: integer tensor is an int; a lone bool is not: ``select_scatter`` refuses it).
BASIC = frozenset(
    {
        "int", "neg_int", "slice", "step_slice", "int_slice", "ellipsis_int", "none_int",
        "full", "ellipsis", "tensor_0d", "int_oob", "int_neg_oob",
        "int_2**62", "int_-2**63", "int_2**64", "slice_huge", "slice_step_huge", "slice_past",
    }
)  # fmt: skip


def run(case: Case) -> Verdict:
    """Run ``case`` within its time limit; log the verdict if ``$BATTERY_LOG`` is set."""
    seconds = TIME_LIMIT.get(case.check.split(":")[0], DEFAULT_TIME_LIMIT)
    start = time.perf_counter()
    try:
        with limit(seconds), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notices while inputs are made or compiled
            verdict = _CHECKS[case.check.split(":")[0]](case)
    except CaseTimeout:
        verdict = Verdict(TIMEOUT, f"over {seconds:.0f} s")
    record(str(case), verdict, time.perf_counter() - start)
    return verdict


def check(case: Case) -> None:
    """Fail the calling test with the verdict, unless the writer agrees with torch
    (or differs only as its docstring says)."""
    import pytest

    verdict = run(case)
    if verdict.failed:
        pytest.fail(str(verdict), pytrace=False)


# -- inputs ----------------------------------------------------------------------------


def inputs(case: Case, batch: int | None = None) -> tuple[Tensor, Any, Any]:
    x = build.make_x(case.x, batch)
    index = build.index(case.index, case.x.shape, case.index_device, batch)
    value = build.make_value(case.value, case.x.shape, case.index, batch)
    return x, index, value


def reference(case: Case, differentiable: bool = False) -> Writer:
    """Torch's own statement for the case's op (every update in turn for repeats);
    ``differentiable``: its out-of-place form (see :func:`battery.oracle.torch_write`)."""
    op = case.op
    each = case.axis == "repeats"
    write = torch_write_each if each else torch_write
    return lambda x, index, value: write(op, x, index, value, differentiable=differentiable)


_REWRITTEN = "modified by an inplace operation"


def torch_derivatives(
    case: Case,
    derive: Callable[..., Any],
    *args: Any,
    wrap: Callable[[Writer], Writer] = lambda fn: fn,
    **kwargs: Any,
) -> Any:
    """``derive(torch's statement, *args)``: the in-place statement itself, or where
    torch 2.13 cannot differentiate it (its backward finds a saved tensor
    overwritten) its out-of-place form. The in-place form comes first because
    the two differ in places (``y[t] /= v`` with complex64 ``y`` and a float64
    ``v`` that holds a zero: its gradient to ``x`` is nan, the out-of-place
    form's is inf)."""
    try:
        return derive(wrap(reference(case)), *args, **kwargs)
    except RuntimeError as error:
        if _REWRITTEN not in str(error):
            raise
        return derive(wrap(reference(case, differentiable=True)), *args, **kwargs)


def _tensors(*things: Any) -> list[Tensor]:
    found: list[Tensor] = []
    for thing in things:
        if isinstance(thing, Tensor):
            found.append(thing)
        elif isinstance(thing, (tuple, list)):
            found.extend(_tensors(*thing))
    return found


Snapshot = list[tuple[str, Tensor, Tensor | None, int]]


def snapshot(**named: Any) -> Snapshot:
    """Copies and version counters of every input tensor."""
    taken: Snapshot = []
    for name, thing in named.items():
        for t in _tensors(thing):
            copy = None if t.device.type == "meta" else t.detach().clone()
            taken.append((name, t, copy, t._version))
    return taken


def changed(taken: Snapshot) -> str | None:
    for name, t, copy, version in taken:
        if t._version != version:
            return f"{name}'s version counter went from {version} to {t._version}"
        if copy is not None:
            now = t.detach()
            if now.is_sparse:
                now, copy = now.to_dense(), copy.to_dense()
            if not torch.equal(_bits(now), _bits(copy)):
                return f"{name}'s data changed"
    return None


def _bits(t: Tensor) -> Tensor:
    """Entries that compare equal exactly when their bits do (nan included)."""
    t = t.as_subclass(Tensor) if type(t) is not Tensor else t
    if t.dtype == torch.bool or t.element_size() == 1:
        return t.contiguous()
    width = {2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.int64}[t.element_size()]
    if t.is_complex():
        t = torch.view_as_real(t.contiguous())
        width = torch.int32 if t.dtype == torch.float32 else torch.int64
    return t.contiguous().view(width)


# -- what a docstring says the writer refuses or does differently ---------------------------


def documented_refusal(case: Case, error: Exception, value: Any) -> str | None:
    """The docstring's reason, if ``error`` is a refusal the package documents."""
    from inplace_recipes import NotApplicable

    message = str(error)
    if isinstance(error, NotApplicable):
        if case.writer == "select_scatter" and case.index not in BASIC:
            return "select_scatter takes only ints and slices"
        if case.writer == "masked_fill" and isinstance(value, Tensor) and value.numel() != 1:
            return "masked_fill writes one value"
        if "duplicate positions" in message and isinstance(value, Tensor) and value.requires_grad:
            return "one value that requires grad, duplicate positions"
        if "batched by torch.func.vmap" in message and case.check.startswith("vmap"):
            return "refuses a mask batched by vmap (its record)"
    if case.writer == "clone" and case.check.startswith("vmap"):
        batched = case.check.split(":")[1].split(",")
        if "x" not in batched and ("value" in batched or "index" in batched):
            return "clone under vmap with a batched value or index and an unbatched x (its pitfall)"
        if "index" in batched and "mask" in case.index:
            return "clone under vmap with a batched mask (its pitfall)"
    return None


def _nonfinite_or_negative_zero(value: Any, x: Tensor) -> bool:
    try:
        v = torch.as_tensor(value).detach().to(x.dtype)
    except Exception:  # noqa: BLE001
        return False
    if not (v.is_floating_point() or v.is_complex()) or v.device.type == "meta":
        return False
    if v.is_sparse:
        v = v.to_dense()
    if v.is_complex():
        v = torch.view_as_real(v)
    return bool((~v.isfinite()).any() or ((v == 0) & v.signbit()).any())


def documented_difference(case: Case, x: Tensor, value: Any) -> str | None:
    """The documented pitfall, if the mask blend meets a non-finite value or ``-0.0``."""
    if case.writer == "mask" and _nonfinite_or_negative_zero(value, x):
        return "mask blend with a non-finite value or -0.0 (its pitfall)"
    return None


# -- the verdict ---------------------------------------------------------------------------

Compare = Callable[[Any, Any], str | None]


def judge(
    case: Case,
    got: Outcome,
    want: Outcome,
    taken: Snapshot,
    compare: Compare,
    x: Tensor,
    value: Any,
    excuse: Callable[[], str | None] = lambda: None,
) -> Verdict:
    moved = changed(taken)
    if moved is not None:
        return Verdict(MUTATED, moved)
    if want.error is not None and got.error is not None:
        if isinstance(got.error, type(want.error)):
            return Verdict(OK)
        reason = documented_refusal(case, got.error, value)
        if reason is not None:  # a documented refusal, before torch's own check
            return Verdict(DOCUMENTED, f"{reason}: {got}; torch: {want}")
        return Verdict(CLASS, f"{got}; torch: {want}")
    if want.error is not None:
        return Verdict(SILENT, f"writes where torch raises {want}")
    if got.error is not None:
        reason = documented_refusal(case, got.error, value) or excuse()
        if reason is not None:
            return Verdict(DOCUMENTED, f"{reason}: {got}")
        return Verdict(RAISES, str(got))
    difference = compare(got.result, want.result)
    if difference is not None:
        reason = documented_difference(case, x, value)
        if reason is not None:
            return Verdict(DOCUMENTED, f"{reason}: {difference}")
        return Verdict(SILENT, difference)
    return Verdict(OK)


def _value_compare(case: Case, *, inductor: bool = False) -> Compare:
    def compare(got: Any, want: Tensor) -> str | None:
        if not isinstance(got, Tensor):
            return f"returned a {type(got).__name__}"
        diff = differs(got, want, allowed(case.op, want.dtype, "value", inductor=inductor))
        if diff is None and got.requires_grad != want.requires_grad:
            return f"requires_grad {got.requires_grad}, torch gives {want.requires_grad}"
        return diff

    return compare


#: The label of the part that says which leaves a result reaches (a gradient, not None).
IN_GRAPH = "in the graph (a gradient, not None) of each leaf"


def _labels(x: Tensor, value: Any, order: int = 1) -> tuple[str, ...]:
    """Names of the parts :func:`grads` returns, for the messages."""
    names = [
        n for n, t in (("x", x), ("value", value)) if isinstance(t, Tensor) and t.requires_grad
    ]
    labels = [
        "result",
        "requires_grad",
        IN_GRAPH,
        *(f"gradient to {n}" for n in names),
    ]
    if order == 2:
        labels += [f"second-order gradient to {n}" for n in names]
    return tuple(labels)


def _parts_compare(case: Case, labels: tuple[str, ...], *, inductor: bool = False) -> Compare:
    coarsest = build.dtype_of(case.x.dtype)

    """Compare tuples ``(result, requires_grad, *derivatives)`` part by part."""

    def compare(got: tuple[Any, ...], want: tuple[Any, ...]) -> str | None:
        if len(got) != len(want):
            return f"{len(got)} parts, torch gives {len(want)}"
        for k, (a, b) in enumerate(zip(got, want, strict=True)):
            label = labels[k] if k < len(labels) else f"part {k}"
            if not isinstance(b, Tensor):
                if a != b:
                    return f"{label}: {a}, torch gives {b}"
                continue
            what = "value" if k == 0 else "gradient"
            if label.startswith("second-order"):
                what = "second-order gradient"
            ulps = allowed(case.op, b.dtype, what, inductor=inductor)
            diff = differs(a, b, ulps, signed_zero=k == 0, coarsest=None if k == 0 else coarsest)
            if diff is not None:
                return f"{label}: {diff}"
        return None

    return compare


# -- forward ---------------------------------------------------------------------------------


def _forward(case: Case) -> Verdict:
    x, index, value = inputs(case)
    want = attempt(reference(case), x, index, value)
    taken = snapshot(x=x, index=index, value=value)
    got = attempt(writer(case.writer), x, index, value)
    return judge(case, got, want, taken, _value_compare(case), x, value)


# -- reverse mode --------------------------------------------------------------------------


def _as_real(t: Tensor) -> Tensor:
    return torch.view_as_real(t) if t.is_complex() else t


def _weighted_sum(t: Tensor, purpose: str) -> Tensor:
    real = _as_real(t)
    return (real * build.weights(tuple(real.shape), real.dtype, purpose)).sum()


def grads(
    fn: Writer,
    x: Tensor,
    index: Any,
    value: Any,
    order: int = 1,
    leaves: list[Tensor] | None = None,
) -> tuple[Any, ...]:
    """``(result, requires_grad, in_graph, *gradients)`` of a weighted sum of ``fn``'s
    result to each leaf (``in_graph``: which leaves autograd reaches, as a disconnected
    graph gives None where a zero gradient is connected); with ``order=2`` also the
    gradients of a weighted sum of those."""
    if leaves is None:
        leaves = [t for t in (x, value) if isinstance(t, Tensor) and t.requires_grad]
    out = fn(x, index, value)
    first: list[Tensor] = [torch.zeros_like(t) for t in leaves]
    in_graph = tuple(False for _ in leaves)
    if out.requires_grad and leaves:
        got = torch.autograd.grad(
            _weighted_sum(out, "loss"), leaves, allow_unused=True, create_graph=order == 2
        )
        in_graph = tuple(g is not None for g in got)
        first = [torch.zeros_like(t) if g is None else g for t, g in zip(leaves, got, strict=True)]
    parts: list[Any] = [out.detach(), out.requires_grad, in_graph, *(g.detach() for g in first)]
    if order == 2:
        connected = [g for g in first if g.requires_grad]
        second: list[Tensor] = [torch.zeros_like(t) for t in leaves]
        if connected:
            total = sum(_weighted_sum(g, f"second{k}") for k, g in enumerate(connected))
            got2 = torch.autograd.grad(total, leaves, allow_unused=True)
            second = [
                torch.zeros_like(t) if g is None else g for t, g in zip(leaves, got2, strict=True)
            ]
        parts += [g.detach() for g in second]
    return tuple(parts)


def _reverse(case: Case, order: int = 1) -> Verdict:
    x, index, value = inputs(case)
    want = attempt(torch_derivatives, case, grads, x, index, value, order)
    taken = snapshot(x=x, index=index, value=value)
    got = attempt(grads, writer(case.writer), x, index, value, order)
    return judge(case, got, want, taken, _parts_compare(case, _labels(x, value, order)), x, value)


def _double(case: Case) -> Verdict:
    return _reverse(case, order=2)


# -- forward mode ----------------------------------------------------------------------------


def _primals(case: Case, x: Tensor, value: Any) -> tuple[list[Tensor], list[Tensor], bool]:
    """Primals (``x``, and the value if it is a float tensor), their tangents, and
    whether the value is one of them."""
    with_value = isinstance(value, Tensor) and case.value.grad
    primals = [x.detach()] + ([value.detach()] if with_value else [])
    tangents = [
        build.numbers(str(p.dtype).removeprefix("torch."), tuple(p.shape), "tangent", k, small=True)
        for k, p in enumerate(primals)
    ]
    return primals, tangents, with_value


def _dual_reference(
    fn: Writer,
    index: Any,
    value: Any,
    primals: list[Tensor],
    tangents: list[Tensor],
    with_value: bool,
) -> tuple[Tensor, Tensor]:
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)]
        out = fn(duals[0], index, duals[1] if with_value else value)
        primal, tangent = fwAD.unpack_dual(out)
        if tangent is None:
            tangent = torch.zeros_like(primal)
        return primal.detach(), tangent.detach()


def _dual_reference_of(fn: Writer, *args: Any) -> tuple[Tensor, Tensor]:
    return _dual_reference(fn, *args)


def _forward_mode(case: Case, functorch: bool) -> Verdict:
    x, index, value = inputs(case)
    primals, tangents, with_value = _primals(case, x, value)
    want = attempt(
        torch_derivatives, case, _dual_reference_of, index, value, primals, tangents, with_value
    )
    taken = snapshot(x=x, index=index, value=value)
    fn = writer(case.writer)
    if functorch:

        def call(*p: Tensor) -> Tensor:
            return fn(p[0], index, p[1] if with_value else value)

        got = attempt(lambda: tuple(torch.func.jvp(call, tuple(primals), tuple(tangents))))
    else:
        got = attempt(_dual_reference, fn, index, value, primals, tangents, with_value)
    return judge(case, got, want, taken, _parts_compare(case, ("result", "tangent")), x, value)


def _jvp(case: Case) -> Verdict:
    return _forward_mode(case, functorch=True)


def _dual(case: Case) -> Verdict:
    return _forward_mode(case, functorch=False)


def _func_grad(case: Case) -> Verdict:
    """``torch.func.grad`` of a weighted sum, against reverse mode on torch's own write."""
    x, index, value = inputs(case)
    primals, _, with_value = _primals(case, x, value)
    leaves = [p.detach().requires_grad_(True) for p in primals]
    v = leaves[-1] if with_value else value
    want = attempt(lambda: torch_derivatives(case, grads, leaves[0], index, v, 1, leaves)[3:])
    taken = snapshot(x=x, index=index, value=value)
    fn = writer(case.writer)

    def loss(*p: Tensor) -> Tensor:
        return _weighted_sum(fn(p[0], index, p[1] if with_value else value), "loss")

    argnums = tuple(range(len(primals)))
    got = attempt(lambda: tuple(torch.func.grad(loss, argnums=argnums)(*primals)))
    labels = ("gradient to x", "gradient to value")
    return judge(case, got, want, taken, _parts_compare(case, labels), x, value)


# -- vmap -------------------------------------------------------------------------------------


def _batched(case: Case) -> tuple[set[str], tuple[Any, Any, Any]]:
    """The batched argument names, and ``(x, index, value)`` with those stacked."""
    names = set(case.check.split(":")[1].split(","))
    examples = [inputs(case, b) for b in range(BATCH)]
    x, index, value = inputs(case)

    def stack(k: int, single: Any) -> Any:
        parts = [e[k] for e in examples]
        if isinstance(single, tuple):
            return tuple(torch.stack([p[j] for p in parts]) for j in range(len(single)))
        return torch.stack([p.detach() for p in parts])

    xs = stack(0, x) if "x" in names else x
    idx = stack(1, index) if "index" in names else index
    vs = stack(2, value) if "value" in names else value
    if "x" in names and case.x.grad:
        xs = xs.detach().requires_grad_(True)
    if "value" in names and case.value.grad:
        vs = vs.detach().requires_grad_(True)
    return names, (xs, idx, vs)


def _per_example(fn: Writer, names: set[str]) -> Writer:
    def loop(x: Tensor, index: Any, value: Any) -> Tensor:
        def pick(arg: Any, name: str, b: int) -> Any:
            if name not in names:
                return arg
            if isinstance(arg, tuple):
                return tuple(a[b] for a in arg)
            return arg[b]

        return torch.stack(
            [
                fn(pick(x, "x", b), pick(index, "index", b), pick(value, "value", b))
                for b in range(BATCH)
            ]
        )

    return loop


def _vmapped(fn: Writer, names: set[str]) -> Writer:
    order = [n for n in ("x", "index", "value") if n in names]

    def mapped(x: Tensor, index: Any, value: Any) -> Tensor:
        given = {"x": x, "index": index, "value": value}

        def call(*args: Any) -> Tensor:
            now = dict(given, **dict(zip(order, args, strict=True)))
            return fn(now["x"], now["index"], now["value"])

        return torch.func.vmap(call)(*(given[n] for n in order))  # type: ignore[no-any-return]

    return mapped


def _vmap(case: Case) -> Verdict:
    names, (xs, idx, vs) = _batched(case)
    loop = partial(_per_example, names=names)
    want = attempt(torch_derivatives, case, grads, xs, idx, vs, wrap=loop)
    taken = snapshot(x=xs, index=idx, value=vs)
    got = attempt(grads, _vmapped(writer(case.writer), names), xs, idx, vs)
    if want.error is not None and got.error is not None:  # vmap's own class, where torch refuses
        return Verdict(OK) if changed(taken) is None else Verdict(MUTATED, str(changed(taken)))
    return judge(case, got, want, taken, _parts_compare(case, _labels(xs, vs)), xs, vs)


# -- torch.compile -------------------------------------------------------------------------------


def _compiled(fn: Writer, backend: str, dynamic: bool) -> Writer:
    torch._dynamo.reset()

    def step(x: Tensor, index: Any, value: Any) -> Tensor:
        return fn(x, index, value)

    return torch.compile(step, backend=backend, fullgraph=True, dynamic=dynamic)  # type: ignore[no-any-return]


@cache
def _torch_compiles(case: Case) -> Outcome:
    """Whether torch's own ``clone`` then setitem compiles on these inputs (once per input)."""
    control = replace(case, writer="torch")
    x, index, value = inputs(control)
    _, backend, mode = case.check.split(":")
    return attempt(
        grads, _compiled(reference(control), backend, mode == "dynamic"), x, index, value
    )


def _compile(case: Case) -> Verdict:
    _, backend, mode = case.check.split(":")
    x, index, value = inputs(case)
    want = attempt(torch_derivatives, case, grads, x, index, value)
    taken = snapshot(x=x, index=index, value=value)
    got = attempt(
        grads, _compiled(writer(case.writer), backend, mode == "dynamic"), x, index, value
    )

    def excuse() -> str | None:
        if case.writer == "torch":
            return None
        eager = attempt(grads, writer(case.writer), *inputs(case))
        if eager.error is not None:
            reason = documented_refusal(case, eager.error, value)
            if reason is not None:  # under dynamo the refusal comes back as Unsupported
                return f"{reason} (in eager mode too)"
        control = _torch_compiles(replace(case, writer="torch"))
        if control.error is not None:
            return f"torch's own clone + setitem fails to compile too ({first_line(control.error)[:80]})"
        return None

    compare = _parts_compare(case, _labels(x, value), inductor=backend == "inductor")
    return judge(case, got, want, taken, compare, x, value, excuse)


# -- autograd contexts ---------------------------------------------------------------------------


@contextmanager
def _deterministic() -> Iterator[None]:
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)


def _in_context(fn: Writer, context: str) -> Writer:
    def call(x: Tensor, index: Any, value: Any) -> Any:
        manager: Any = {
            "no_grad": torch.no_grad,
            "inference_mode": torch.inference_mode,
            "deterministic": _deterministic,
        }.get(context, nullcontext)
        with manager():
            if context == "deterministic":
                return grads(fn, x, index, value)
            out = fn(x, index, value)
            return out, out.requires_grad, out.is_inference()

    return call


def _context(case: Case) -> Verdict:
    context = case.check.split(":")[1]
    if context == "view":  # x a view of a base that requires grad; gradients to the base
        base = build.make_x(replace(case.x, shape=(case.x.shape[0] + 1, *case.x.shape[1:])))
        base.requires_grad_(True)
        x = base[1:]
        index = build.index(case.index, case.x.shape)
        value = build.make_value(case.value, case.x.shape, case.index)
        leaves = [base] + ([value] if isinstance(value, Tensor) and value.requires_grad else [])
        want = attempt(torch_derivatives, case, grads, x, index, value, 1, leaves)
        taken = snapshot(x=base, index=index, value=value)
        got = attempt(grads, writer(case.writer), x, index, value, 1, leaves)
        labels = (
            "result",
            "requires_grad",
            IN_GRAPH,
            "gradient to the base",
            "gradient to value",
        )
        return judge(case, got, want, taken, _parts_compare(case, labels), x, value)
    x, index, value = inputs(case)
    if context == "deterministic":
        deterministic = lambda fn, *args: _in_context(fn, context)(*args)
        want = attempt(torch_derivatives, case, deterministic, x, index, value)
    else:
        want = attempt(_in_context(reference(case), context), x, index, value)
    taken = snapshot(x=x, index=index, value=value)
    got = attempt(_in_context(writer(case.writer), context), x, index, value)
    labels = (
        _labels(x, value)
        if context == "deterministic"
        else ("result", "requires_grad", "is_inference")
    )
    return judge(case, got, want, taken, _parts_compare(case, labels), x, value)


_CHECKS: dict[str, Callable[[Case], Verdict]] = {
    "forward": _forward,
    "reverse": _reverse,
    "double": _double,
    "jvp": _jvp,
    "dual": _dual,
    "grad": _func_grad,
    "vmap": _vmap,
    "compile": _compile,
    "context": _context,
}

__all__ = ["BASIC", "check", "inputs", "run"]
