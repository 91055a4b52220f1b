"""Check that recipes agree with the reference, forward and backward.

:func:`compare_gradients` runs each recipe on fresh copies of ``x`` and
``value``, differentiates a loss that tells positions apart, and reports the
largest difference from the reference (``clone()`` then setitem) in the
result and in the gradients with respect to ``x`` and to ``value``.

>>> import torch
>>> report = compare_gradients(torch.arange(4.0), 1, 9.0, ["where", "index_put"])
>>> report.ok
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from ._table import text_table
from .recipes import RECIPES, NotApplicable, Recipe

__all__ = ["GradientReport", "RecipeResult", "compare_gradients", "tolerances"]

Loss = Callable[[Tensor], Tensor]

# torch.testing.assert_close's defaults: (rtol, atol)
_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex32: (1e-3, 1e-5),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing results of ``dtype``; exact for integers.

    >>> tolerances(torch.float32)
    (1.3e-06, 1e-05)
    """
    return _TOLERANCES.get(dtype, (0.0, 0.0))


@dataclass
class RecipeResult:
    """How one recipe compared with the reference.

    A recipe that refuses an index or value it cannot express (raising
    :class:`~inplace_recipes.recipes.NotApplicable`) is ``not_applicable``,
    and still ``ok``: it gave no wrong answer.

    Differences are the largest absolute difference from the reference, or
    ``None`` where there is nothing to compare (no gradient for an integer
    tensor or a Python number, or the recipe raised).
    """

    name: str
    forward: float | None = None
    grad_x: float | None = None
    grad_value: float | None = None
    second_order: float | None = None
    gradcheck: bool | None = None
    nonfinite: bool = False
    mutated: bool = False
    error: BaseException | None = None
    not_applicable: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the recipe agrees with the reference everywhere checked."""
        return not self.problems

    def to_record(self) -> dict[str, Any]:
        """A plain dict, for tests and tools."""
        return {
            "name": self.name,
            "ok": self.ok,
            "forward": self.forward,
            "grad_x": self.grad_x,
            "grad_value": self.grad_value,
            "second_order": self.second_order,
            "gradcheck": self.gradcheck,
            "nonfinite": self.nonfinite,
            "mutated": self.mutated,
            "not_applicable": self.not_applicable,
            "error": None if self.error is None else f"{type(self.error).__name__}: {self.error}",
            "problems": list(self.problems),
        }


def _fmt(diff: float | None) -> str:
    if diff is None:
        return "-"
    return "0" if diff == 0 else f"{diff:.1e}"


@dataclass
class GradientReport:
    """The results of :func:`compare_gradients`, one per recipe.

    ``str(report)`` is an aligned table; ``report["where"]`` is one
    :class:`RecipeResult`.
    """

    results: dict[str, RecipeResult]
    reference: str
    dtype: torch.dtype
    shape: tuple[int, ...]

    @property
    def ok(self) -> bool:
        """Whether every recipe agrees with the reference."""
        return all(r.ok for r in self.results.values())

    def failures(self) -> list[RecipeResult]:
        """The recipes that do not agree."""
        return [r for r in self.results.values() if not r.ok]

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` naming each failing recipe and why."""
        bad = self.failures()
        if bad:
            lines = [f"{r.name}: {'; '.join(r.problems)}" for r in bad]
            raise AssertionError(
                f"{len(bad)} recipe(s) disagree with {self.reference!r}:\n  " + "\n  ".join(lines)
            )

    def to_records(self) -> list[dict[str, Any]]:
        """One plain dict per recipe."""
        return [r.to_record() for r in self.results.values()]

    def __getitem__(self, name: str) -> RecipeResult:
        return self.results[name]

    def __iter__(self) -> Iterator[RecipeResult]:
        return iter(self.results.values())

    def __len__(self) -> int:
        return len(self.results)

    def __str__(self) -> str:
        header = ["recipe", "forward", "grad x", "grad value"]
        second = any(r.second_order is not None for r in self)
        checked = any(r.gradcheck is not None for r in self)
        if second:
            header.append("2nd order")
        if checked:
            header.append("gradcheck")
        header.append("ok")
        rows: list[list[str]] = [header]
        for r in self:
            row = [r.name, _fmt(r.forward), _fmt(r.grad_x), _fmt(r.grad_value)]
            if second:
                row.append(_fmt(r.second_order))
            if checked:
                row.append("-" if r.gradcheck is None else ("pass" if r.gradcheck else "FAIL"))
            if r.not_applicable is not None:
                row.append(f"n/a ({r.not_applicable})")
            else:
                row.append("yes" if r.ok else "NO: " + "; ".join(r.problems))
            rows.append(row)
        return text_table(header, rows[1:])

    def __repr__(self) -> str:
        return f"<GradientReport ok={self.ok} recipes={list(self.results)} reference={self.reference!r}>"


def _differentiable(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def _weights(shape: torch.Size, step: float, like: Tensor) -> Tensor:
    """Weights in [0.5, 1.5) that differ at every position: ``0.5 + frac(k * step)``.

    No random numbers, so the loss also runs under ``vmap`` (``jacfwd``,
    ``hessian``), whose default randomness mode refuses them.
    """
    k = torch.arange(1, shape.numel() + 1, dtype=torch.float64, device=like.device)
    return (0.5 + (k * step) % 1.0).reshape(shape).to(like.dtype)


def default_loss(out: Tensor) -> Tensor:
    """The loss :func:`compare_gradients` differentiates unless told otherwise.

    Fixed weights, linear and quadratic, different at every position, so
    every position gets its own gradient and second derivatives are not all
    zero. It draws no random numbers, so it runs under every ``torch.func``
    transform.

    >>> default_loss(torch.zeros(3))
    tensor(0.)
    """
    real = torch.view_as_real(out) if out.is_complex() else out
    w1 = _weights(real.shape, 0.6180339887498949, real)  # golden ratio: well spread
    w2 = _weights(real.shape, 0.7548776662466927, real)  # plastic number
    return (w1 * real).sum() + 0.5 * (w2 * real * real).sum()


def _loss_name(loss: Loss) -> str:
    return getattr(loss, "__qualname__", None) or repr(loss)


def _checked_loss(loss: Loss, out: Tensor) -> Tensor:
    """``loss(out)``, or a ``TypeError`` naming ``loss`` when it is not a one-element tensor."""
    got = loss(out)
    if not isinstance(got, Tensor):
        raise TypeError(
            f"loss {_loss_name(loss)} must return a one-element torch.Tensor, "
            f"got {type(got).__name__}"
        )
    if got.numel() != 1:
        raise TypeError(
            f"loss {_loss_name(loss)} must return a one-element torch.Tensor, "
            f"got shape {list(got.shape)}"
        )
    return got.reshape(())


def _same(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise equality that counts nan == nan."""
    same = a == b
    return same | (torch.isnan(a) & torch.isnan(b)) if _differentiable(a) else same


def _max_diff(a: Tensor, b: Tensor) -> float:
    if a.numel() == 0:
        return 0.0
    if not _differentiable(a):
        return float((a.long() - b.long()).abs().max())
    return float((a - b).abs().masked_fill(_same(a, b), 0).max())


def close(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` agrees with ``b`` within :func:`tolerances` (nan equals nan).

    >>> close(torch.tensor([1.0, float("nan")]), torch.tensor([1.0 + 1e-7, float("nan")]))
    True
    """
    if a.shape != b.shape:
        return False
    if not _differentiable(a):
        return torch.equal(a, b)
    rtol, atol = tolerances(a.dtype)
    return bool(torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True).all())


def _nonfinite(*tensors: Tensor | None) -> bool:
    return any(
        t is not None and _differentiable(t) and not bool(torch.isfinite(t).all()) for t in tensors
    )


@dataclass
class _Run:
    out: Tensor
    grads: tuple[Tensor, ...]
    second: tuple[Tensor, ...]
    mutated: list[str]
    #: How the result hangs in the graph: requires_grad, has a grad_fn,
    #: shares memory with x, and which inputs it depends on.
    requires_grad: bool
    has_grad_fn: bool
    aliases_x: bool
    reaches: tuple[bool, ...]
    sizes: tuple[int, ...]


def _grad(
    output: Tensor, inputs: list[Tensor], create_graph: bool
) -> tuple[tuple[Tensor, ...], tuple[bool, ...]]:
    """Gradients of ``output`` (zeros where it does not depend on an input), and which it reaches."""
    if not output.requires_grad:
        return tuple(torch.zeros_like(i) for i in inputs), tuple(False for _ in inputs)
    got = torch.autograd.grad(output, inputs, allow_unused=True, create_graph=create_graph)
    grads = tuple(torch.zeros_like(i) if g is None else g for i, g in zip(inputs, got, strict=True))
    return grads, tuple(g is not None for g in got)


def _shares_memory(a: Tensor, b: Tensor) -> bool:
    try:
        pointer = a.untyped_storage().data_ptr()
        return pointer != 0 and pointer == b.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return False


def _changed(before: Tensor, version: int, now: Tensor) -> bool:
    return now._version != version or not bool(_same(now.detach(), before).all())


def _run(
    fn: Recipe,
    x: Tensor,
    index: Any,
    value: Any,
    loss: Loss,
    second_order: bool,
    *,
    check_loss: bool = False,
) -> _Run:
    """Run ``fn`` on fresh leaves and differentiate ``loss`` of its result."""
    x_leaf = x.detach().clone().requires_grad_(_differentiable(x))
    v_leaf = value
    if isinstance(value, Tensor):
        wanted = _differentiable(value) and _differentiable(x)
        v_leaf = value.detach().clone().requires_grad_(wanted)
    before = [
        (t, t.detach().clone(), t._version) for t in (x_leaf, v_leaf) if isinstance(t, Tensor)
    ]
    out = fn(x_leaf, index, v_leaf)
    if not isinstance(out, Tensor):
        raise TypeError(f"returned {type(out).__name__}, not a torch.Tensor")
    mutated = [
        label
        for label, (t, copy, version) in zip(("x", "value"), before, strict=False)
        if _changed(copy, version, t)
    ]
    aliases_x = _shares_memory(out, x_leaf)
    inputs = [t for t in (x_leaf, v_leaf) if isinstance(t, Tensor) and t.requires_grad]
    grads: tuple[Tensor, ...] = ()
    second: tuple[Tensor, ...] = ()
    reaches: tuple[bool, ...] = ()
    if inputs:
        scalar = _checked_loss(loss, out) if out.requires_grad else out.sum()
        if check_loss and out.requires_grad and not scalar.requires_grad:
            raise ValueError(
                f"loss {_loss_name(loss)} does not depend on the result: every gradient would be 0"
            )
        grads, reaches = _grad(scalar, inputs, second_order)
        if second_order:
            total = torch.stack([(g.real if g.is_complex() else g).sum() for g in grads]).sum()
            second, _ = _grad(total, inputs, create_graph=False)
    return _Run(
        out.detach(),
        tuple(g.detach() for g in grads),
        second,
        mutated,
        out.requires_grad,
        out.grad_fn is not None,
        aliases_x,
        reaches,
        tuple(t.numel() for t in inputs),
    )


#: Up to this many input elements gradcheck builds the full Jacobian; above
#: it, its fast mode checks a random projection, in time and memory linear
#: in the size (the full check of 3,000 elements takes ~40 s and 1 GB).
FULL_GRADCHECK_MAX = 64


def _gradcheck(fn: Recipe, x: Tensor, index: Any, value: Any, second_order: bool) -> bool:
    wide = torch.complex128 if x.is_complex() else torch.float64
    x64 = x.detach().to(wide).requires_grad_(True)
    inputs = [x64]
    if isinstance(value, Tensor) and _differentiable(value):
        v64 = value.detach().to(wide).requires_grad_(True)
        inputs.append(v64)

        def call(xx: Tensor, vv: Tensor) -> Tensor:
            return fn(xx, index, vv)
    else:

        def call(xx: Tensor) -> Tensor:  # type: ignore[misc]
            return fn(xx, index, value)

    fast = sum(t.numel() for t in inputs) > FULL_GRADCHECK_MAX
    ok = torch.autograd.gradcheck(call, tuple(inputs), raise_exception=False, fast_mode=fast)
    if ok and second_order:
        ok = torch.autograd.gradgradcheck(
            call, tuple(inputs), raise_exception=False, fast_mode=fast
        )
    return bool(ok)


def _select(recipes: Mapping[str, Recipe] | Iterable[str] | None) -> dict[str, Recipe]:
    """The recipes to run, by name; a ``TypeError`` or ``ValueError`` that names a bad entry."""
    if recipes is None:
        return dict(RECIPES)
    if isinstance(recipes, Mapping):
        for name, fn in recipes.items():
            if not callable(fn):
                raise TypeError(
                    f"recipe {name!r} must be a callable fn(x, index, value), "
                    f"got {type(fn).__name__}"
                )
        return dict(recipes)
    if isinstance(recipes, str):
        recipes = [recipes]
    if not isinstance(recipes, Iterable):
        raise TypeError(
            "recipes must be recipe names or a mapping of name to fn(x, index, value), "
            f"got {type(recipes).__name__}"
        )
    chosen = {}
    for name in recipes:
        if not isinstance(name, str):
            raise TypeError(f"recipe names are strings, got {type(name).__name__} {name!r}")
        if name not in RECIPES:  # the same error as at(x)[i].set(v, method=name)
            raise ValueError(f"unknown recipe {name!r}; choose from {', '.join(RECIPES)}")
        chosen[name] = RECIPES[name]
    return chosen


def _graph_problems(run: _Run, ref: _Run) -> list[str]:
    """How the result's place in the autograd graph differs from the reference's."""
    problems = []
    if run.aliases_x:
        problems.append("result shares memory with x (writing to it would change x)")
    if ref.requires_grad and not run.requires_grad:
        problems.append(
            "result is disconnected from the graph (no grad_fn); the reference's is not"
        )
    elif run.requires_grad != ref.requires_grad:
        problems.append(
            f"result.requires_grad is {run.requires_grad}, the reference's is {ref.requires_grad}"
        )
    elif run.has_grad_fn != ref.has_grad_fn:
        problems.append(
            f"result {'has' if run.has_grad_fn else 'has no'} grad_fn, "
            f"the reference's {'has' if ref.has_grad_fn else 'has none'}"
        )
    # x: clone + setitem keeps it in the graph even where every element is
    # overwritten (a zero gradient, not None). A value that lands nowhere may be
    # left out (None for zeros); one that lands somewhere and is left out shows
    # as a gradient difference.
    elif run.reaches[:1] == (False,) and ref.reaches[:1] == (True,) and run.sizes[0]:
        problems.append(
            "x is not in the result's graph (its gradient is None, the reference's is a tensor)"
        )
    return problems


def _difference(label: str, got: Tensor, want: Tensor) -> str:
    """Say how ``got`` differs from ``want``, naming nan or infinite values the reference lacks."""
    if _differentiable(got):
        bad = ~torch.isfinite(got) & ~_same(got, want)
        if bool(bad.any()):
            return (
                f"{label} is nan or infinite at {int(bad.sum())} of {got.numel()} "
                "positions where the reference's is not"
            )
    return f"{label} differs by {_fmt(_max_diff(got, want))}"


def compare_gradients(
    x: Tensor,
    index: Any,
    value: Any,
    recipes: Mapping[str, Recipe] | Iterable[str] | None = None,
    *,
    loss: Loss | None = None,
    reference: str | Recipe = "clone",
    second_order: bool = False,
    gradcheck: bool = False,
    progress: Callable[[str], object] | None = None,
) -> GradientReport:
    """Run each recipe and compare it with ``reference``, forward and backward.

    ``recipes`` is a list of names from :data:`RECIPES`, or a mapping of
    your own callables ``fn(x, index, value)``; by default every recipe. An
    unknown name raises ``ValueError``, as ``at(x)[i].set(v, method=...)``
    does. Neither ``x`` nor ``value`` is changed: each recipe gets fresh leaf
    copies, with gradients for floating and complex tensors. ``loss`` maps a
    result to a one-element tensor (anything else raises ``TypeError``
    naming it); the default weights each position differently so positions
    can be told apart. ``second_order`` also compares gradients of the
    gradients (double backward); ``gradcheck`` runs
    :func:`torch.autograd.gradcheck` in float64 on each recipe (in its fast
    mode above :data:`FULL_GRADCHECK_MAX` elements). ``progress`` is called
    with each recipe's name before it runs.

    Exact, or flagged: a recipe fails when its result or a gradient differs,
    when it is nan or infinite where the reference is not, when it changes
    an input, shares memory with ``x``, or hangs in the graph differently
    (no ``grad_fn``, or ``x`` missing from its graph, where the reference
    has one).

    >>> x = torch.rand(3, requires_grad=True) * 1
    >>> compare_gradients(x, 0, 42.0, ["clone", "mask"]).ok
    True
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    chosen = _select(recipes)
    if loss is not None and not callable(loss):
        raise TypeError(f"loss must be callable, got {type(loss).__name__}")
    loss = loss or default_loss
    if isinstance(reference, str):
        ref_name, ref_fn = reference, _select([reference])[reference]
    elif not callable(reference):
        raise TypeError(
            f"reference must be a recipe name or fn(x, index, value), got {type(reference).__name__}"
        )
    else:
        ref_name, ref_fn = getattr(reference, "__name__", "reference"), reference
    # bad input (an index out of range, a bad loss) raises here
    ref = _run(ref_fn, x, index, value, loss, second_order, check_loss=True)
    results: dict[str, RecipeResult] = {}
    for name, fn in chosen.items():
        if progress is not None:
            progress(name)
        result = RecipeResult(name)
        results[name] = result
        try:
            run = _run(fn, x, index, value, loss, second_order)
        except NotApplicable as exc:  # a clear refusal, not a wrong answer
            result.not_applicable = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - a recipe that raises is reported
            result.error = exc
            result.problems.append(f"raised {type(exc).__name__}: {exc}")
            continue
        result.mutated = bool(run.mutated)
        result.problems += [f"changed its input {label}" for label in run.mutated]
        if run.out.shape != ref.out.shape or run.out.dtype != ref.out.dtype:
            result.problems.append(
                f"returned {run.out.dtype} {list(run.out.shape)}, "
                f"expected {ref.out.dtype} {list(ref.out.shape)}"
            )
            continue
        result.problems += _graph_problems(run, ref)
        result.forward = _max_diff(run.out, ref.out)
        if not close(run.out, ref.out):
            result.problems.append(_difference("result", run.out, ref.out))
        names = ["x", "value"][: len(ref.grads)]
        for label, got, want in zip(names, run.grads, ref.grads, strict=False):
            setattr(result, f"grad_{label}", _max_diff(got, want))
            if not close(got, want):
                result.problems.append(_difference(f"gradient to {label}", got, want))
        if second_order and ref.second:
            diffs = [_max_diff(a, b) for a, b in zip(run.second, ref.second, strict=False)]
            result.second_order = max(diffs) if diffs else 0.0
            if not all(close(a, b) for a, b in zip(run.second, ref.second, strict=False)):
                result.problems.append(
                    f"second-order gradient differs by {_fmt(result.second_order)}"
                )
        result.nonfinite = _nonfinite(run.out, *run.grads)
        if gradcheck and _differentiable(x):
            result.gradcheck = _gradcheck(fn, x, index, value, second_order)
            if not result.gradcheck:
                result.problems.append("gradcheck failed")
    dtype = x.dtype
    return GradientReport(results, ref_name, dtype, tuple(x.shape))
