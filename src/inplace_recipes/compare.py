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

from .recipes import RECIPES, NotApplicable, Recipe
from .table import text_table

__all__ = [
    "GradientReport",
    "RecipeResult",
    "close",
    "compare_gradients",
    "default_loss",
    "tolerances",
]

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


def default_loss(out: Tensor) -> Tensor:
    """The loss :func:`compare_gradients` differentiates unless told otherwise.

    Fixed-seed random weights, linear and quadratic, so every position gets
    its own gradient and second derivatives are not all zero.

    >>> default_loss(torch.zeros(3))
    tensor(0.)
    """
    real = torch.view_as_real(out) if out.is_complex() else out
    gen = torch.Generator(device="cpu").manual_seed(0)
    w1 = torch.rand(real.shape, generator=gen, dtype=torch.float64) + 0.5
    w2 = torch.rand(real.shape, generator=gen, dtype=torch.float64) + 0.5
    w1 = w1.to(dtype=real.dtype, device=real.device)
    w2 = w2.to(dtype=real.dtype, device=real.device)
    return (w1 * real).sum() + 0.5 * (w2 * real * real).sum()


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
    mutated: bool


def _grad(output: Tensor, inputs: list[Tensor], create_graph: bool) -> tuple[Tensor, ...]:
    """Gradients of ``output``, with zeros for inputs it does not depend on."""
    if not output.requires_grad:
        return tuple(torch.zeros_like(i) for i in inputs)
    got = torch.autograd.grad(output, inputs, allow_unused=True, create_graph=create_graph)
    return tuple(torch.zeros_like(i) if g is None else g for i, g in zip(inputs, got, strict=True))


def _run(fn: Recipe, x: Tensor, index: Any, value: Any, loss: Loss, second_order: bool) -> _Run:
    """Run ``fn`` on fresh leaves and differentiate ``loss`` of its result."""
    x_leaf = x.detach().clone().requires_grad_(_differentiable(x))
    v_leaf = value
    if isinstance(value, Tensor):
        wanted = _differentiable(value) and _differentiable(x)
        v_leaf = value.detach().clone().requires_grad_(wanted)
    before, version = x_leaf.detach().clone(), x_leaf._version
    out = fn(x_leaf, index, v_leaf)
    mutated = x_leaf._version != version or not bool(_same(x_leaf.detach(), before).all())
    inputs = [t for t in (x_leaf, v_leaf) if isinstance(t, Tensor) and t.requires_grad]
    grads: tuple[Tensor, ...] = ()
    second: tuple[Tensor, ...] = ()
    if inputs:
        grads = _grad(loss(out) if out.requires_grad else out.sum(), inputs, second_order)
        if second_order:
            total = torch.stack([(g.real if g.is_complex() else g).sum() for g in grads]).sum()
            second = _grad(total, inputs, create_graph=False)
    return _Run(out.detach(), tuple(g.detach() for g in grads), second, mutated)


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

    ok = torch.autograd.gradcheck(call, tuple(inputs), raise_exception=False)
    if ok and second_order:
        ok = torch.autograd.gradgradcheck(call, tuple(inputs), raise_exception=False)
    return bool(ok)


def _select(recipes: Mapping[str, Recipe] | Iterable[str] | None) -> dict[str, Recipe]:
    if recipes is None:
        return dict(RECIPES)
    if isinstance(recipes, Mapping):
        return dict(recipes)
    if isinstance(recipes, str):
        recipes = [recipes]
    chosen = {}
    for name in recipes:
        if name not in RECIPES:
            raise KeyError(f"no recipe named {name!r}; choose from {', '.join(RECIPES)}")
        chosen[name] = RECIPES[name]
    return chosen


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
) -> GradientReport:
    """Run each recipe and compare it with ``reference``, forward and backward.

    ``recipes`` is a list of names from :data:`RECIPES`, or a mapping of
    your own callables ``fn(x, index, value)``; by default every recipe.
    Neither ``x`` nor ``value`` is changed: each recipe gets fresh leaf
    copies, with gradients for floating and complex tensors. ``loss`` maps a
    result to a scalar; the default weights it with fixed-seed random
    weights so positions can be told apart. ``second_order`` also compares
    gradients of the gradients (double backward); ``gradcheck`` runs
    :func:`torch.autograd.gradcheck` in float64 on each recipe.

    >>> x = torch.rand(3, requires_grad=True) * 1
    >>> compare_gradients(x, 0, 42.0, ["clone", "mask"]).ok
    True
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    chosen = _select(recipes)
    loss = loss or default_loss
    if isinstance(reference, str):
        ref_name, ref_fn = reference, _select([reference])[reference]
    else:
        ref_name, ref_fn = getattr(reference, "__name__", "reference"), reference
    ref = _run(ref_fn, x, index, value, loss, second_order)  # bad input raises here
    results: dict[str, RecipeResult] = {}
    for name, fn in chosen.items():
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
        result.mutated = run.mutated
        if run.mutated:
            result.problems.append("changed its input x")
        if run.out.shape != ref.out.shape or run.out.dtype != ref.out.dtype:
            result.problems.append(
                f"returned {run.out.dtype} {list(run.out.shape)}, "
                f"expected {ref.out.dtype} {list(ref.out.shape)}"
            )
            continue
        result.forward = _max_diff(run.out, ref.out)
        if not close(run.out, ref.out):
            result.problems.append(f"result differs by {_fmt(result.forward)}")
        names = ["x", "value"][: len(ref.grads)]
        for label, got, want in zip(names, run.grads, ref.grads, strict=False):
            diff = _max_diff(got, want)
            setattr(result, f"grad_{label}", diff)
            if not close(got, want):
                result.problems.append(f"gradient to {label} differs by {_fmt(diff)}")
        if second_order and ref.second:
            diffs = [_max_diff(a, b) for a, b in zip(run.second, ref.second, strict=False)]
            result.second_order = max(diffs) if diffs else 0.0
            if not all(close(a, b) for a, b in zip(run.second, ref.second, strict=False)):
                result.problems.append(
                    f"second-order gradient differs by {_fmt(result.second_order)}"
                )
        result.nonfinite = _nonfinite(run.out, *run.grads)
        if result.nonfinite and not _nonfinite(ref.out, *ref.grads) and result.ok:
            result.problems.append("non-finite result or gradient")
        if gradcheck and _differentiable(x):
            result.gradcheck = _gradcheck(fn, x, index, value, second_order)
            if not result.gradcheck:
                result.problems.append("gradcheck failed")
    dtype = x.dtype
    return GradientReport(results, ref_name, dtype, tuple(x.shape))
