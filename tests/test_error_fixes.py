"""Every ``Fix:`` runs: applied to each repro of its error, it gives the in-place code's gradients.

A :class:`Repro` is code that raises one error of the reference (taken from
docs/errors.md or a situation page). Each :class:`Applied` fix is that code
with one fix applied: the fix that :func:`explain` prints for the repro's own
live error, or the fix of the error's section on docs/errors.md. The test
checks that the fix's code is what the fixed program runs, that the program
runs, and that its gradients equal an independent reference: central finite
differences, in float64, of what the in-place code computes (the broken code
run under ``torch.no_grad()``, where autograd raises nothing), or of a program
written out of place where even that raises. A fix that only silences the
error (the old advice for the GAN) gives other gradients and fails.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from torch import nn

import inplace_recipes as ir
from inplace_recipes import RECIPES, explain
from inplace_recipes.error_reference import ERRORS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
F64 = torch.float64
Program = Callable[..., torch.Tensor | None]


@dataclass(frozen=True)
class Applied:
    """A repro with one fix applied.

    ``source`` is where the fix is printed: ``"explain()"`` (the Fix: line for
    the repro's live error) or ``"errors.md"`` (its section's **Fix**).
    ``code`` is the fix as printed there; ``names`` renames its placeholders
    to the repro's names. Code in ``code`` must appear in ``program``'s source;
    a ``code`` without any ``=`` or ``(`` is prose (only checked to be printed).
    """

    source: str
    code: str
    program: Program
    names: dict[str, str] = field(default_factory=dict)
    #: An edit on purpose (under no_grad): the reference is the repro's loss at the values
    #: the program left in its leaves (the edited parameter), not at the values it was given.
    edited: bool = False


@dataclass(frozen=True)
class Repro:
    """Code that raises the error ``slug``, from page ``where``, and the fixes applied to it."""

    slug: str
    where: str
    shapes: tuple[tuple[int, ...], ...]
    broken: Program
    fixes: tuple[Applied, ...]
    #: What the in-place code means, when running it under no_grad raises too.
    meaning: Program | None = None


def _leaves(shapes: tuple[tuple[int, ...], ...]) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [
        (torch.rand(shape, generator=generator, dtype=F64) + 0.5).requires_grad_()
        for shape in shapes
    ]


def _gradients(program: Program, leaves: list[torch.Tensor]) -> list[torch.Tensor]:
    """Run ``program`` on ``leaves``; the gradients of the loss it returns (or of its backward)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Error detected in", UserWarning)
        loss = program(*leaves)
        if loss is not None:
            torch.autograd.backward(loss)
    return [torch.zeros_like(t) if t.grad is None else t.grad for t in leaves]


def _value(program: Program, values: list[torch.Tensor]) -> float:
    with torch.no_grad():
        result = program(*[v.clone() for v in values])
    assert result is not None
    return float(result)


def _check_against_finite_differences(
    program: Program, meaning: Program, shapes: tuple[tuple[int, ...], ...], edited: bool = False
) -> None:
    """Directional derivatives of ``meaning`` (finite differences) against ``program``'s grads.

    The derivatives are taken at the values ``program`` was given, or, for an
    ``edited`` fix, at the values it left in its leaves.
    """
    leaves = _leaves(shapes)
    given = [t.detach().clone() for t in leaves]
    grads = _gradients(program, leaves)
    values = [t.detach().clone() for t in leaves] if edited else given
    generator = torch.Generator().manual_seed(1)
    for _ in range(3):
        directions = [torch.randn(v.shape, generator=generator, dtype=F64) for v in values]
        eps = 1e-6
        up = _value(meaning, [v + eps * d for v, d in zip(values, directions, strict=True)])
        down = _value(meaning, [v - eps * d for v, d in zip(values, directions, strict=True)])
        expected = (up - down) / (2 * eps)
        got = sum(float((g * d).sum()) for g, d in zip(grads, directions, strict=True))
        assert got == pytest.approx(expected, rel=1e-5, abs=1e-6), (got, expected)


def _statements(code: str, names: dict[str, str]) -> list[str]:
    """The fix's statements (the code before its comment), with the repro's names."""
    statements = code.split("  #")[0].split("; ")
    renamed = []
    for statement in statements:
        for old, new in names.items():
            statement = re.sub(rf"\b{re.escape(old)}\b", new, statement)
        renamed.append(statement.strip())
    return renamed


def _source(program: Program) -> str:
    """``program``'s source, with that of this module's classes it names (their forward)."""
    source = inspect.getsource(program)
    for name, value in list(globals().items()):
        if inspect.isclass(value) and re.search(rf"\b{name}\b", source):
            source += inspect.getsource(value)
    return source


def _pattern(statement: str) -> str:
    """A statement as a regex: ``f()`` also matches ``f(retain_graph=True)``.

    ``with torch.no_grad(): x.add_(1)`` matches the two lines a formatter makes of it.
    """
    if statement.startswith("with ") and ": " in statement:
        head, body = statement.split(": ", 1)
        return _pattern(head + ":") + r"\s+" + _pattern(body)
    return re.escape(statement).replace(r"\(\)", r"\(.*\)")


# -- the repros ---------------------------------------------------------------------
# Each function is short and reads like the page it comes from; the fixed ones
# contain the fix's code verbatim (renamed as ``names`` says).


def leaf_broken(a):
    a.add_(1)
    return (a * a).sum()


def leaf_fixed_explain(x):
    x = x.add(1)
    return (x * x).sum()


def leaf_fixed_page(a):
    b = a.add(1)
    return (b * b).sum()


def view_of_leaf_broken(a):
    a[1] = 0.0
    return (a * a).sum()


def view_of_leaf_fixed_explain(x):
    index, value = 1, 0.0
    y = x.clone()
    y[index] = value
    return (y * y).sum()


def view_of_leaf_fixed_page(a):
    y = RECIPES["select_scatter"](a, 1, 0.0)
    return (y * y).sum()


def saved_broken(x):
    h = torch.sigmoid(x)
    h.mul_(2)
    return (h * x).sum()


def saved_fixed(x):
    h = torch.sigmoid(x)
    h = h * 2
    return (h * x).sum()


def saved_fixed_page(x):
    h = torch.sigmoid(x) * 2
    return (h * x).sum()


def tanh_setitem_broken(x):
    r = torch.tanh(x)
    r[:, 0] = 0
    return (r * x).sum()


def tanh_setitem_fixed(x):
    h = torch.tanh(x)
    i, v = (slice(None), 0), 0.0
    h = ir.RECIPES["where"](h, i, v)
    return (h * x).sum()


def graph_interior_broken(a, value):
    loss = (a * 2).sum()
    a.requires_grad_(False)
    a[0] = value
    return loss + a.sum()


def graph_interior_meaning(a, value):
    return (a * 2).sum() + torch.cat([value.reshape(1), a[1:]]).sum()


def graph_interior_fixed(a, value):
    index = 0
    loss = (a * 2).sum()
    b = ir.RECIPES["where"](a, index, value)
    return loss + b.sum()


def graph_interior_fixed_page(a, value):
    b = RECIPES["where"](a, 0, value)
    loss = (a * 2).sum() + b.sum()
    return loss


def multi_view_broken(t0):
    t = t0 * 1
    first, second = t.unbind()  # noqa: RUF059 - as the page writes it
    first.add_(1)
    return (t * t0).sum()


def multi_view_fixed(t0):
    t = t0 * 1
    parts = t.unbind()
    first = parts[0].add(1)
    t = torch.stack([first, parts[1]])
    return (t * t0).sum()


def multi_view_fixed_page(t0):
    t = t0 * 1
    t = RECIPES["select_scatter"](t, 0, t[0] + 1)
    return (t * t0).sum()


def multi_view_fixed_whole(t0):
    t = t0 * 1
    t = ir.RECIPES["select_scatter"](t, 0, t[0] + 1)
    return (t * t0).sum()


def multi_view_base_broken(t0):
    t = t0 * 1
    first, second = t.unbind()  # noqa: RUF059 - as the page writes it
    t.add_(1)
    return (first * first).sum()


def multi_view_base_fixed(t0):
    t = t0 * 1
    first, second = t.unbind()
    t.add_(1)
    first, second = t.unbind()  # noqa: RUF059 - as the page writes it
    return (first * first).sum()


def multi_view_base_old_values(t0):
    """What ``t = t + 1`` is for: pieces that keep the values they were taken from."""
    return (t0[0] * t0[0]).sum()


def multi_view_base_fixed_out_of_place(t0):
    t = t0 * 1
    first, second = t.unbind()  # noqa: RUF059 - as the page writes it
    t = t + 1
    return (first * first).sum()


def no_grad_view_broken(t0):
    t = t0 * 1
    with torch.no_grad():
        v = t[:2]
    v.add_(1)
    return (t * t0).sum()


def no_grad_view_fixed(t0):
    x = t0 * 1
    index = slice(None, 2)
    value = x[:2] + 1
    y = ir.RECIPES["where"](x, index, value)
    return (y * t0).sum()


def no_grad_view_fixed_page(t0):
    t = t0 * 1
    t = RECIPES["where"](t, slice(None, 2), t[:2] + 1)
    return (t * t0).sum()


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def custom_view_broken(x0):
    out = Identity.apply(x0 * 1)
    out.add_(1)
    return (out * x0).sum()


def custom_view_fixed(x0):
    x = x0 * 1
    out = Identity.apply(x).clone()
    out.add_(1)
    return (out * x0).sum()


def custom_view_no_grad_broken(x0):
    out = Identity.apply(x0 * 1)
    with torch.no_grad():
        out.add_(1)
    return (out * x0).sum()


def custom_view_no_grad_fixed(x0):
    x = x0 * 1
    out = Identity.apply(x).clone()
    with torch.no_grad():
        out.add_(1)
    return (out * x0).sum()


def custom_view_input_written_broken(x0):
    x = x0 * 1
    out = Identity.apply(x)
    x.add_(1)
    return (out * x0).sum()


def custom_view_input_written_fixed(x0):
    x = x0 * 1
    x.add_(1)
    out = Identity.apply(x)
    return (out * x0).sum()


def _hook(module: nn.Module) -> nn.Module:
    module.register_full_backward_hook(lambda module, grad_input, grad_output: None)
    return module


def relu_hook_broken(x0):
    relu = _hook(nn.ReLU(inplace=True))
    return (relu(x0 - 1) * x0).sum()


def relu_hook_fixed(x0):
    relu = _hook(nn.ReLU())
    return (relu(x0 - 1) * x0).sum()


class ClampThenDouble(nn.Module):
    """The page's module: it writes its (hooked) input under no_grad."""

    def forward(self, x, scale):
        with torch.no_grad():
            x.clamp_(max=5)
        scale.add_(1)  # does not require grad: can be written
        return x * 2 * scale


class ClampThenDoubleFixed(nn.Module):
    def forward(self, x, scale):
        x = x.clamp(max=5)
        scale.add_(1)
        return x * 2 * scale


def hook_no_grad_broken(x0):
    module = _hook(ClampThenDouble())
    return (module(x0 * 3, torch.ones(3, dtype=F64)) * x0).sum()  # 3 * x0 < 5: none clamped


def hook_no_grad_fixed(x0):
    module = _hook(ClampThenDoubleFixed())
    return (module(x0 * 3, torch.ones(3, dtype=F64)) * x0).sum()


def _linear() -> nn.Linear:
    torch.manual_seed(0)
    return nn.Linear(3, 3).double()


def add_hook_broken(shortcut):
    linear = _hook(_linear())
    out = linear(shortcut)
    out += shortcut
    return (out * out).sum()


def add_hook_fixed(shortcut):
    linear = _hook(_linear())
    out = linear(shortcut)
    out = out + shortcut
    return (out * out).sum()


# -- the residual block (recipes/situations/plot_residual_block.py) ------------------


class Block(nn.Module):
    """The page's block, float64, its parameters given (so that they get gradients here)."""

    def __init__(self, inplace: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(2, 2, 3, padding=1, dtype=F64)
        self.conv2 = nn.Conv2d(2, 2, 3, padding=1, dtype=F64)
        self.relu = nn.ReLU(inplace=inplace)

    def forward(self, x):
        shortcut = x
        out = self.relu(self.conv1(x))
        out = self.conv2(out)
        out += shortcut
        out = self.relu(out)
        return out


class FixedBlock(Block):
    def forward(self, x):
        shortcut = x
        out = self.relu(self.conv1(x))
        out = self.conv2(out)
        out = out + shortcut
        out = self.relu(out)
        return out


BLOCK_SHAPES = ((1, 2, 3, 3), (2, 2, 3, 3), (2,), (2, 2, 3, 3), (2,))


def _run(block: nn.Module, x, weights) -> torch.Tensor:
    names = ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"]
    out = torch.func.functional_call(block, dict(zip(names, weights, strict=True)), (x,))
    return (out * torch.linspace(-1, 1, out.numel(), dtype=F64).view_as(out)).sum()


def residual_hook_broken(x, *weights):
    block = Block(inplace=False)  # inplace=False: += still writes the hooked output
    _hook(block.conv2)
    return _run(block, x, weights)


def residual_hook_fixed(x, *weights):
    block = FixedBlock()
    _hook(block.conv2)
    return _run(block, x, weights)


def residual_hook_enclosing(x, *weights):
    block = _hook(Block())
    return _run(block, x, weights)


def residual_relu_hook_broken(x, *weights):
    block = Block()
    _hook(block.relu)
    return _run(block, x, weights)


def residual_relu_hook_fixed(x, *weights):
    block = FixedBlock()
    block.relu = _hook(nn.ReLU())
    return _run(block, x, weights)


class ReluThenAdd(Block):
    def forward(self, x):
        out = self.relu(self.conv1(x))
        out = self.relu(self.conv2(out))
        out += x
        return out


class ReluThenAddFixed(Block):
    def forward(self, x):
        h = self.relu(self.conv1(x))
        h = self.relu(self.conv2(h))
        h = h + x
        return h


def relu_then_add_broken(x, *weights):
    return _run(ReluThenAdd(), x, weights)


def relu_then_add_fixed(x, *weights):
    return _run(ReluThenAddFixed(), x, weights)


# -- the GAN (recipes/situations/plot_gan_training.py) ------------------------------

GAN_SHAPES = ((4, 2), (4,), (2, 4), (2,))
_BCE = nn.BCEWithLogitsLoss()


def _gan(weights):
    """The page's G (its parameters given) and a seeded D with its optimizer."""
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    params = dict(zip(names, weights, strict=True))
    discriminator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.5)
    real, noise = torch.randn(8, 2, dtype=F64), torch.randn(8, 2, dtype=F64)

    def G(z):
        return torch.func.functional_call(generator, params, (z,))

    return G, discriminator, optimizer, real, noise


def gan_broken(*weights):
    G, D, optimizer, real, noise = _gan(weights)
    ones, zeros = torch.ones(8, 1, dtype=F64), torch.zeros(8, 1, dtype=F64)
    fake = G(noise)
    d_fake = D(fake)
    loss_d = _BCE(D(real), ones) + _BCE(D(fake.detach()), zeros)
    loss_d.backward()
    optimizer.step()
    loss = _BCE(d_fake, ones)
    loss.backward()


def gan_meaning(*weights):
    """The generator's loss through D as it was at the forward, before D's step."""
    G, D, _, _, noise = _gan(weights)
    return _BCE(D(G(noise)), torch.ones(8, 1, dtype=F64))


def gan_fixed(*weights):
    G, D, optimizer, real, noise = _gan(weights)
    ones, zeros = torch.ones(8, 1, dtype=F64), torch.zeros(8, 1, dtype=F64)
    fake = G(noise)
    loss = _BCE(D(fake), ones)
    loss_d = _BCE(D(real), ones) + _BCE(D(fake.detach()), zeros)
    loss.backward(inputs=list(weights))
    loss_d.backward()
    optimizer.step()


def gan_silenced(*weights):
    """The old advice ``h = asstrided(...); h = h * 2`` cannot apply; D again after the step
    silences the error and gives the gradient through the *new* D."""
    G, D, optimizer, real, noise = _gan(weights)
    ones, zeros = torch.ones(8, 1, dtype=F64), torch.zeros(8, 1, dtype=F64)
    fake = G(noise)
    loss_d = _BCE(D(real), ones) + _BCE(D(fake.detach()), zeros)
    loss_d.backward()
    optimizer.step()
    _BCE(D(fake), ones).backward()


# -- custom Functions (recipes/situations/plot_custom_function.py, errors.md) -------


def mark_dirty_broken(a):
    class MarkedButNotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad

    y = MarkedButNotReturned.apply(a * 1)
    return (y * a).sum()


def mark_dirty_meaning(a):
    return (2 * a * a).sum()


def mark_dirty_fixed(a):
    y = DoubleMarked.apply(a * 1)
    return (y * a).sum()


class DoubleMarked(torch.autograd.Function):
    """The leaf section's Function: it doubles its input in place and marks it dirty."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


def marked_leaf_broken(a):
    y = DoubleMarked.apply(a)
    return (y * y).sum()


def marked_leaf_meaning(a):
    return (2 * a * 2 * a).sum()


def marked_leaf_fixed(a):
    y = DoubleMarked.apply(a.clone())
    return (y * y).sum()


class DoubleInPlaceUnmarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


def unmarked_after_exp_broken(a):
    h = a.exp()
    y = DoubleInPlaceUnmarked.apply(h)
    return (y + h).sum()


def unmarked_after_exp_meaning(a):
    return (4 * a.exp()).sum()  # y and h are one tensor, 2 exp(a)


def unmarked_after_exp_fixed(a):
    class DoubleOutOfPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h):
            h = h * 2
            return h

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad

    h = a.exp()
    h = DoubleOutOfPlace.apply(h)
    return (h + h).sum()


# -- inference mode, expand, overlap, vmap, out=, leaky_relu --------------------------


def inference_broken(x):
    with torch.inference_mode():
        cache = torch.zeros(3, dtype=F64)
    cache.add_(x)
    return (cache * cache).sum()


def inference_meaning(x):
    return (x * x).sum()


def inference_fixed(x):
    with torch.inference_mode():
        cache = torch.zeros(3, dtype=F64)
    cache = cache.clone()
    cache.add_(x)
    return (cache * cache).sum()


def inference_fixed_page(x):
    with torch.inference_mode():
        cache = torch.zeros(3, dtype=F64)
    cache = RECIPES["index_put"](cache.clone(), slice(None), x)
    return (cache * cache).sum()


def inference_saved_broken(x):
    with torch.inference_mode():
        c = torch.ones(3, dtype=F64) * 2
    return (x * c).sum()  # mul saves c for x's gradient


def inference_saved_fixed(x):
    with torch.inference_mode():
        c = torch.ones(3, dtype=F64) * 2
    c = c.clone()
    return (x * c).sum()


def inference_cache_meaning(x):
    return (x * 2).sum()


def inference_version_broken(x):
    with torch.inference_mode():
        c = torch.ones(3, dtype=F64) * 2
    _ = c._version  # what a library that checks for in-place writes reads
    return (x * c).sum()


def inference_version_fixed(x):
    with torch.no_grad():
        c = torch.ones(3, dtype=F64) * 2
    _ = c._version
    return (x * c).sum()


def inference_view_broken(t0):
    t = t0 * 1
    with torch.inference_mode():
        v = t.view(-1)
    v.add_(1)
    return (t * t0).sum()


def inference_view_fixed(t0):
    t = t0 * 1
    v = t.view(-1)
    v.add_(1)
    return (t * t0).sum()


def expanded_broken(x, y):
    e = (x * 1).expand(3, 4)
    e.add_(y)
    return (e * e).sum()


def expanded_meaning(x, y):
    e = x.expand(3, 4) + y
    return (e * e).sum()


def expanded_fixed(x, y):
    e = x.expand(3, 4).clone()
    e.add_(y)
    return (e * e).sum()


def expanded_fixed_out_of_place(x, y):
    e = x.expand(3, 4)
    e = e + y
    return (e * e).sum()


def overlap_broken(x0):
    x = x0 * 1
    x[1:].copy_(x[:-1])
    return (x * x0).sum()


def overlap_meaning(x0):
    """A shift by one: each element takes the old value of the one before."""
    return (torch.cat([x0[:1], x0[:-1]]) * x0).sum()


def overlap_fixed(x0):
    x = x0 * 1
    x = torch.cat([x[:1], x[:-1]])
    return (x * x0).sum()


def overlap_fixed_clone(x0):
    x = x0 * 1
    x[1:] = x[:-1].clone()
    return (x * x0).sum()


def vmap_broken(values):
    def put(value):
        out = torch.zeros(3, dtype=F64)
        out[0] = value
        return out

    out = torch.func.vmap(put)(values)
    return (out * out).sum()


def vmap_meaning(values):
    out = torch.zeros(values.shape[0], 3, dtype=F64)
    out[:, 0] = values
    return (out * out).sum()


def vmap_fixed(values):
    def put(value):
        x, index = torch.zeros(3, dtype=F64), 0
        out = ir.RECIPES["where"](x, index, value)
        return out

    out = torch.func.vmap(put)(values)
    return (out * out).sum()


def vmap_fixed_page(values):
    out = torch.func.vmap(lambda value: RECIPES["where"](torch.zeros(3, dtype=F64), 0, value))(
        values
    )
    return (out * out).sum()


def vmap_index_broken(values):
    def put(value):
        out = torch.zeros(3, dtype=F64)
        out[torch.tensor([0])] = value
        return out

    out = torch.func.vmap(put)(values)
    return (out * out).sum()


def vmap_index_fixed(values):
    def put(value):
        x, index = torch.zeros(3, dtype=F64), torch.tensor([0])
        out = ir.RECIPES["where"](x, index, value)
        return out

    out = torch.func.vmap(put)(values)
    return (out * out).sum()


def vmap_index_fixed_page(values):
    def put(value):
        return RECIPES["where"](torch.zeros(3, dtype=F64), torch.tensor([0]), value)

    out = torch.func.vmap(put)(values)
    return (out * out).sum()


def vmap_clamp_broken(lows):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "There is a performance drop")  # no batching rule
        out = torch.func.vmap(lambda low: torch.zeros(3, dtype=F64).clamp_(min=low))(lows)
    return (out * out).sum()


def vmap_clamp_meaning(lows):
    return (torch.maximum(lows, torch.zeros_like(lows)) ** 2).sum()


def vmap_clamp_fixed(lows):
    def clamp(low):
        x = torch.zeros(3, dtype=F64)
        return x.clamp(min=low)

    out = torch.func.vmap(clamp)(lows)
    return (out * out).sum()


def output_shape_broken(rows):
    out = torch.func.vmap(lambda row: torch.zeros(3, dtype=F64).add_(row))(rows)
    return (out * out).sum()


def output_shape_meaning(rows):
    return (rows * rows).sum()


def output_shape_fixed(rows):
    def add(y):
        x = torch.zeros(3, dtype=F64)
        x = x + y
        return x

    out = torch.func.vmap(add)(rows)
    return (out * out).sum()


def out_broken(a):
    y = torch.add(a, 1, out=torch.empty(3, dtype=F64))
    return (y * y).sum()


def out_fixed(a):
    y = torch.add(a, 1)
    return (y * y).sum()


def leaky_broken(x0):
    y = torch.nn.functional.leaky_relu(x0 - 1, -0.1, inplace=True)
    return (y * x0).sum()


def leaky_fixed(x0):
    x = x0 - 1
    y = torch.nn.functional.leaky_relu(x, -0.1)
    return (y * x0).sum()


def leaky_fixed_page(x0):
    y = torch.nn.functional.leaky_relu(x0 - 1, -0.1, inplace=False)
    return (y * x0).sum()


def compiled_broken(x):
    def zero_first(a):
        a[0] = 0.0
        return a

    out = torch.compile(zero_first, backend="eager")(x)
    return (out * out).sum()


def compiled_fixed(x):
    def zero_first(x):
        index, value = 0, 0.0
        y = x.clone()
        y[index] = value
        return y

    out = torch.compile(zero_first, backend="eager")(x)
    return (out * out).sum()


# -- edits on purpose, and the messages the table learned from real reports ----------


def leaf_edited(x):
    with torch.no_grad():
        x.add_(1)
    return (x * x).sum()


def leaf_loss(a):
    """The loss of the leaf section's repro at the (edited) parameter."""
    return (a * a).sum()


def view_of_leaf_edited(x):
    index, value = 1, 0.0
    with torch.no_grad():
        x[index] = value
    return (x * x).sum()


def no_grad_setitem_broken(t0):
    t = t0 * 1
    with torch.no_grad():
        v = t[:2]
    v[0] = 5.0
    return (t * t0).sum()


def no_grad_setitem_fixed(t0):
    x = t0 * 1
    index, value = 0, 5.0
    y = ir.RECIPES["where"](x, index, value)
    return (y * t0).sum()


def weight_no_grad_view_broken(weight):
    with torch.no_grad():
        v = weight[:2]
    v[0] = 5.0
    return (weight * weight).sum()


def weight_no_grad_view_edited(x):
    with torch.no_grad():
        v = x[:2]
        v[0] = 5.0
    return (x * x).sum()


def saved_index_broken(x):
    idx = torch.tensor([0, 3])
    y = x[idx]
    idx.clamp_(0, 1)
    return (y * y).sum()


def saved_index_fixed(x):
    idx, n = torch.tensor([0, 3]), 2
    y = x[idx]
    idx = idx.clamp(0, n - 1)
    return (y * y).sum()


def saved_view_broken(x, w):
    h = (x * 1)[:, :2]
    y = h * w
    h[0, 0] = 0.0
    return y.sum()


def saved_view_fixed(x, w):
    h = (x * 1)[:, :2]
    y = h * w
    i, v = (0, 0), 0.0
    h = h.clone()
    h[i] = v
    return y.sum()


def custom_view_no_grad_input_broken(w):
    out = Identity.apply(torch.ones(3, dtype=F64))
    out.add_(w)
    return (out * out).sum()


def custom_view_no_grad_input_fixed(x0):
    x = torch.ones(3, dtype=F64)
    out = Identity.apply(x).clone()
    out.add_(x0)
    return (out * out).sum()


def inference_setitem_broken(t0):
    t = t0 * 1
    with torch.inference_mode():
        v = t.view(-1)
    v[0] = 5.0
    return (t * t0).sum()


def inference_setitem_fixed(t0):
    t = t0 * 1
    v = t.view(-1)
    v[0] = 5.0
    return (t * t0).sum()


def elu_broken(x0):
    y = torch.nn.functional.elu(x0 - 1, alpha=-0.1, inplace=True)
    return (y * x0).sum()


def elu_fixed(x0):
    y = torch.nn.functional.elu(x0 - 1, alpha=-0.1, inplace=False)
    return (y * x0).sum()


def resize_broken(x0):
    x = x0 * 1
    x.resize_(2, 2)
    return (x * x).sum()


def resize_meaning(x0):
    return (x0.reshape(2, 2) ** 2).sum()


def resize_fixed(x0):
    x = x0 * 1
    y = x.reshape(2, 2)
    return (y * y).sum()


def detach_view_broken(x0):
    h = x0 * 2
    stats = h[0]
    stats.detach_()  # a copy for logging, without history
    return (h * h).sum()


def detach_view_meaning(x0):
    return (4 * x0 * x0).sum()


def detach_view_fixed(x0):
    h = x0 * 2
    v = h[0]
    v = v.detach()
    return (h * h).sum()


def captured_broken(x0):
    captured = torch.zeros(3, dtype=F64)

    def total(x):
        return captured.add_(x).pow(2).sum()

    return torch.func.grad_and_value(total)(x0)[1]


def captured_meaning(x0):
    return (x0 * x0).sum()


def captured_fixed(x0):
    captured = torch.zeros(3, dtype=F64)

    def total(x):
        out = captured + x
        return out.pow(2).sum()

    return torch.func.grad_and_value(total)(x0)[1]


class DoubleAndCopy(torch.autograd.Function):
    """The mark-dirty section's Function: it doubles its input in place, returns it and a copy."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x * 1

    @staticmethod
    def backward(ctx, grad, grad_copy):
        return 2 * grad + 2 * grad_copy


def dirty_view_broken(a):
    y, copy = DoubleAndCopy.apply((a * 1)[:2])
    return (y * copy).sum()


def dirty_view_meaning(a):
    return (4 * a[:2] * a[:2]).sum()


def dirty_view_fixed(a):
    x = (a * 1)[:2]
    y, copy = DoubleAndCopy.apply(x.clone())
    return (y * copy).sum()


_INPUT = torch.randn(4, 3, generator=torch.Generator().manual_seed(2), dtype=F64)


def _batch_norm_loss(model, weight):
    def loss(p):
        return torch.func.functional_call(model, p, (_INPUT,)).pow(3).sum()

    return torch.func.grad_and_value(loss)({"weight": weight, "bias": model.bias})[1]


def batch_norm_broken(weight):
    model = nn.BatchNorm1d(3).double()
    return _batch_norm_loss(model, weight)


def batch_norm_meaning(weight):
    normed = torch.nn.functional.batch_norm(_INPUT, None, None, weight, None, training=True)
    return normed.pow(3).sum()


def batch_norm_fixed(weight):
    model = nn.BatchNorm1d(3).double()
    torch.func.replace_all_batch_norm_modules_(model)
    return _batch_norm_loss(model, weight)


REPROS: list[Repro] = [
    Repro(
        "leaf",
        "errors.md",
        ((3,),),
        leaf_broken,
        (
            Applied("explain()", "x = x.add(1)", leaf_fixed_explain),
            Applied("errors.md", "b = a.add(1)", leaf_fixed_page),
        ),
    ),
    Repro(
        "view-of-leaf",
        "errors.md",
        ((3,),),
        view_of_leaf_broken,
        (
            Applied("explain()", "y = x.clone(); y[index] = value", view_of_leaf_fixed_explain),
            Applied("errors.md", 'RECIPES["select_scatter"](a, 1, 0.0)', view_of_leaf_fixed_page),
        ),
    ),
    Repro(
        "view-of-leaf",
        "errors.md (torch.compile)",
        ((3,),),
        compiled_broken,
        (Applied("explain()", "y = x.clone(); y[index] = value", compiled_fixed),),
    ),
    Repro(
        "saved-tensor-modified",
        "errors.md",
        ((3,),),
        saved_broken,
        (
            Applied("explain()", "h = h * 2", saved_fixed),
            Applied("errors.md", "h = torch.sigmoid(x) * 2", saved_fixed_page),
        ),
    ),
    Repro(
        "saved-tensor-modified",
        "errors.md (explain)",
        ((2, 3),),
        tanh_setitem_broken,
        (Applied("explain()", 'h = ir.RECIPES["where"](h, i, v)', tanh_setitem_fixed),),
    ),
    Repro(
        "saved-tensor-modified",
        "plot_residual_block.py",
        BLOCK_SHAPES,
        relu_then_add_broken,
        (Applied("explain()", "h = h + y", relu_then_add_fixed, {"y": "x"}),),
    ),
    Repro(
        "saved-tensor-modified",
        "plot_gan_training.py",
        GAN_SHAPES,
        gan_broken,
        (Applied("explain()", "loss.backward(); optimizer.step()", gan_fixed),),
        meaning=gan_meaning,
    ),
    Repro(
        "saved-tensor-modified",
        "plot_custom_function.py",
        ((3,),),
        unmarked_after_exp_broken,
        (Applied("explain()", "h = h * 2", unmarked_after_exp_fixed),),
        meaning=unmarked_after_exp_meaning,
    ),
    Repro(
        "graph-interior",
        "errors.md",
        ((3,), ()),
        graph_interior_broken,
        (
            Applied("explain()", 'b = ir.RECIPES["where"](a, index, value)', graph_interior_fixed),
            Applied("errors.md", 'b = RECIPES["where"](a, 0,', graph_interior_fixed_page),
        ),
        meaning=graph_interior_meaning,
    ),
    Repro(
        "multi-output-view",
        "errors.md",
        ((2, 3),),
        multi_view_broken,
        (
            Applied("explain()", "first = parts[0].add(1)", multi_view_fixed),
            Applied(
                "errors.md", 'RECIPES["select_scatter"](t, 0, t[0] + 1)', multi_view_fixed_page
            ),
            Applied(
                "explain()",
                'x = ir.RECIPES["select_scatter"](x, i, x[i] + 1)',
                multi_view_fixed_whole,
                {"x": "t", "i": "0"},
            ),
        ),
    ),
    Repro(
        "multi-output-view-base",
        "errors.md",
        ((2, 3),),
        multi_view_base_broken,
        (
            Applied("explain()", "first, second = t.unbind()", multi_view_base_fixed),
            Applied("errors.md", "first, second = t.unbind()", multi_view_base_fixed),
        ),
    ),
    Repro(
        "multi-output-view-base",
        "errors.md (old values)",
        ((2, 3),),
        multi_view_base_broken,
        (
            Applied("explain()", "t = t + 1", multi_view_base_fixed_out_of_place),
            Applied("errors.md", "t = t + 1", multi_view_base_fixed_out_of_place),
        ),
        meaning=multi_view_base_old_values,
    ),
    Repro(
        "no-grad-view",
        "errors.md",
        ((3,),),
        no_grad_view_broken,
        (
            Applied("explain()", 'y = ir.RECIPES["where"](x, index, value)', no_grad_view_fixed),
            Applied(
                "errors.md",
                'RECIPES["where"](t, slice(None, 2), t[:2] + 1)',
                no_grad_view_fixed_page,
            ),
        ),
    ),
    Repro(
        "custom-function-view",
        "errors.md",
        ((3,),),
        custom_view_broken,
        (
            Applied(
                "explain()",
                "out = MyFunction.apply(x).clone()",
                custom_view_fixed,
                {"MyFunction": "Identity"},
            ),
            Applied("errors.md", "Identity.apply(", custom_view_fixed),
        ),
    ),
    Repro(
        "custom-function-view",
        "errors.md (written under no_grad)",
        ((3,),),
        custom_view_no_grad_broken,
        (
            Applied(
                "explain()",
                "out = MyFunction.apply(x).clone()",
                custom_view_no_grad_fixed,
                {"MyFunction": "Identity"},
            ),
            Applied("errors.md", "clone the output, then write", custom_view_no_grad_fixed),
        ),
    ),
    Repro(
        "custom-function-view",
        "errors.md (its input written)",
        ((3,),),
        custom_view_input_written_broken,
        (
            Applied(
                "explain()", "apply the Function after the write", custom_view_input_written_fixed
            ),
            Applied(
                "errors.md", "apply the Function after the write", custom_view_input_written_fixed
            ),
        ),
    ),
    Repro(
        "backward-hook-view",
        "errors.md",
        ((2, 3),),
        relu_hook_broken,
        (
            Applied("explain()", "nn.ReLU()", relu_hook_fixed),
            Applied("errors.md", "nn.ReLU()", relu_hook_fixed),
        ),
    ),
    Repro(
        "backward-hook-view",
        "errors.md (+=)",
        ((2, 3),),
        add_hook_broken,
        (
            Applied("explain()", "out = out + shortcut", add_hook_fixed),
            Applied("errors.md", "out = out + shortcut", add_hook_fixed),
        ),
    ),
    Repro(
        "backward-hook-view",
        "errors.md (written under no_grad)",
        ((3,),),
        hook_no_grad_broken,
        (
            Applied("explain()", "x = x.clamp(max=5)", hook_no_grad_fixed),
            Applied("errors.md", "x = x.clamp(max=5)", hook_no_grad_fixed),
        ),
    ),
    Repro(
        "backward-hook-view",
        "plot_residual_block.py",
        BLOCK_SHAPES,
        residual_hook_broken,
        (
            Applied("explain()", "out = out + shortcut", residual_hook_fixed),
            Applied("explain()", "or hook the enclosing module", residual_hook_enclosing),
        ),
    ),
    Repro(
        "backward-hook-view",
        "plot_residual_block.py (hook on relu)",
        BLOCK_SHAPES,
        residual_relu_hook_broken,
        (Applied("explain()", "nn.ReLU()", residual_relu_hook_fixed),),
    ),
    Repro(
        "mark-dirty",
        "errors.md, plot_custom_function.py",
        ((3,),),
        mark_dirty_broken,
        (
            Applied("explain()", "return x", mark_dirty_fixed),
            Applied("errors.md", "return the tensor you modified", mark_dirty_fixed),
        ),
        meaning=mark_dirty_meaning,
    ),
    Repro(
        "leaf",
        "errors.md (ctx.mark_dirty)",
        ((3,),),
        marked_leaf_broken,
        (
            Applied(
                "explain()",
                "F.apply(x.clone())",
                marked_leaf_fixed,
                {"F": "DoubleMarked", "x": "a"},
            ),
            Applied(
                "errors.md",
                "DoubleInPlace.apply(a.clone())",
                marked_leaf_fixed,
                {"DoubleInPlace": "DoubleMarked"},
            ),
        ),
        meaning=marked_leaf_meaning,
    ),
    Repro(
        "inference-tensor",
        "errors.md",
        ((3,),),
        inference_broken,
        (
            Applied("explain()", "t = t.clone()", inference_fixed, {"t": "cache"}),
            Applied("errors.md", "cache.clone()", inference_fixed_page),
        ),
        meaning=inference_meaning,
    ),
    Repro(
        "inference-tensor",
        "errors.md (saved for backward)",
        ((3,),),
        inference_saved_broken,
        (Applied("explain()", "c = c.clone()", inference_saved_fixed),),
        meaning=inference_cache_meaning,
    ),
    Repro(
        "inference-tensor",
        "errors.md (._version read)",
        ((3,),),
        inference_version_broken,
        (Applied("explain()", "with torch.no_grad():", inference_version_fixed),),
        meaning=inference_cache_meaning,
    ),
    Repro(
        "inference-tensor",
        "errors.md (a view)",
        ((3,),),
        inference_view_broken,
        (
            Applied("explain()", "take the view outside inference_mode", inference_view_fixed),
            Applied("errors.md", "v = t.view(-1)", inference_view_fixed),
        ),
    ),
    Repro(
        "expanded",
        "errors.md",
        ((1, 4), (3, 4)),
        expanded_broken,
        (
            Applied("explain()", "e = x.expand(3, 4).clone()", expanded_fixed),
            Applied("explain()", "e = e + 1", expanded_fixed_out_of_place, {"1": "y"}),
            Applied("errors.md", ".expand(3, 4).clone()", expanded_fixed),
        ),
        meaning=expanded_meaning,
    ),
    Repro(
        "input-overlap",
        "errors.md",
        ((5,),),
        overlap_broken,
        (
            Applied("explain()", "x = torch.cat([x[:1], x[:-1]])", overlap_fixed),
            Applied("explain()", "x[1:] = x[:-1].clone()", overlap_fixed_clone),
            Applied("errors.md", "torch.cat([x[:1], x[:-1]])", overlap_fixed),
            Applied("errors.md", "x[1:] = x[:-1].clone()", overlap_fixed_clone),
        ),
        meaning=overlap_meaning,
    ),
    Repro(
        "vmap",
        "errors.md",
        ((2,),),
        vmap_broken,
        (
            Applied("explain()", 'out = ir.RECIPES["where"](x, index, value)', vmap_fixed),
            Applied("errors.md", 'RECIPES["where"](torch.zeros(3', vmap_fixed_page),
        ),
        meaning=vmap_meaning,
    ),
    Repro(
        "vmap",
        "errors.md (a tensor index)",
        ((2,),),
        vmap_index_broken,
        (
            Applied("explain()", 'out = ir.RECIPES["where"](x, index, value)', vmap_index_fixed),
            Applied("errors.md", "torch.tensor([0]), value)", vmap_index_fixed_page),
        ),
        meaning=vmap_meaning,
    ),
    Repro(
        "vmap",
        "errors.md (an op without a batching rule)",
        ((2, 3),),
        vmap_clamp_broken,
        (
            Applied("explain()", "x.clamp(min=low)", vmap_clamp_fixed),
            Applied("errors.md", "x.clamp(min=low)", vmap_clamp_fixed),
        ),
        meaning=vmap_clamp_meaning,
    ),
    Repro(
        "output-shape",
        "errors.md",
        ((2, 3),),
        output_shape_broken,
        (
            Applied("explain()", "x = x + y", output_shape_fixed),
            Applied("errors.md", "x = x + row", output_shape_fixed, {"row": "y"}),
        ),
        meaning=output_shape_meaning,
    ),
    Repro(
        "out-argument",
        "errors.md",
        ((3,),),
        out_broken,
        (
            Applied("explain()", "y = torch.add(a, b)", out_fixed, {"b": "1"}),
            Applied("errors.md", "torch.add(a, 1)", out_fixed),
        ),
    ),
    Repro(
        "leaky-relu",
        "errors.md",
        ((2,),),
        leaky_broken,
        (
            Applied("explain()", "y = torch.nn.functional.leaky_relu(x, -0.1)", leaky_fixed),
            Applied("errors.md", "inplace=False", leaky_fixed_page),
        ),
    ),
    Repro(
        "leaf",
        "errors.md (an edit on purpose)",
        ((3,),),
        leaf_broken,
        (
            Applied("explain()", "with torch.no_grad(): x.add_(1)", leaf_edited, edited=True),
            Applied("errors.md", "torch.no_grad()", leaf_edited, edited=True),
        ),
        meaning=leaf_loss,
    ),
    Repro(
        "view-of-leaf",
        "errors.md (an edit on purpose)",
        ((3,),),
        view_of_leaf_broken,
        (
            Applied(
                "explain()",
                "with torch.no_grad(): x[index] = value",
                view_of_leaf_edited,
                edited=True,
            ),
            Applied(
                "errors.md", "set part of a\nparameter on purpose", view_of_leaf_edited, edited=True
            ),
        ),
        meaning=leaf_loss,
    ),
    Repro(
        "no-grad-view",
        "errors.md (v[0] = 5.0)",
        ((3,),),
        no_grad_setitem_broken,
        (
            Applied("explain()", 'y = ir.RECIPES["where"](x, index, value)', no_grad_setitem_fixed),
            Applied("errors.md", "write out of place", no_grad_setitem_fixed),
        ),
    ),
    Repro(
        "no-grad-view",
        "errors.md (a parameter edited on purpose)",
        ((3,),),
        weight_no_grad_view_broken,
        (
            Applied(
                "explain()",
                "with torch.no_grad(): v = x[:2]; v[0] = 5.0",
                weight_no_grad_view_edited,
                edited=True,
            ),
            Applied(
                "errors.md",
                "take the view and write it both under",
                weight_no_grad_view_edited,
                edited=True,
            ),
        ),
        meaning=leaf_loss,
    ),
    Repro(
        "saved-tensor-modified",
        "errors.md (an index)",
        ((5,),),
        saved_index_broken,
        (
            Applied("explain()", "idx = idx.clamp(0, n - 1)", saved_index_fixed),
            Applied("errors.md", "idx = idx.clamp(0, 1)", saved_index_fixed, {"1": "n - 1"}),
        ),
    ),
    Repro(
        "saved-tensor-modified",
        "a saved view, written",
        ((2, 3), (2, 2)),
        saved_view_broken,
        (Applied("explain()", "h = h.clone(); h[i] = v", saved_view_fixed),),
    ),
    Repro(
        "custom-function-view",
        "errors.md (its input does not require grad)",
        ((3,),),
        custom_view_no_grad_input_broken,
        (
            Applied(
                "explain()",
                "out = MyFunction.apply(x).clone()",
                custom_view_no_grad_input_fixed,
                {"MyFunction": "Identity"},
            ),
            Applied("errors.md", "clone the output, then write", custom_view_no_grad_input_fixed),
        ),
    ),
    Repro(
        "inference-tensor",
        "errors.md (v[0] = 5.0)",
        ((3,),),
        inference_setitem_broken,
        (
            Applied("explain()", "v = t.view(-1)", inference_setitem_fixed),
            Applied("errors.md", "take the view outside `inference_mode`", inference_setitem_fixed),
        ),
    ),
    Repro(
        "leaky-relu",
        "errors.md (elu)",
        ((2,),),
        elu_broken,
        (
            Applied("explain()", "inplace=False", elu_fixed),
            Applied("errors.md", "inplace=False", elu_fixed),
        ),
    ),
    Repro(
        "mark-dirty",
        "errors.md (a view, and more than one output)",
        ((4,),),
        dirty_view_broken,
        (
            Applied("explain()", "F.apply(x.clone())", dirty_view_fixed, {"F": "DoubleAndCopy"}),
            Applied(
                "errors.md", "DoubleAndCopy.apply(part.clone())", dirty_view_fixed, {"part": "x"}
            ),
        ),
        meaning=dirty_view_meaning,
    ),
    Repro(
        "resize",
        "errors.md",
        ((4,),),
        resize_broken,
        (
            Applied("explain()", "y = x.reshape(2, 2)", resize_fixed),
            Applied("errors.md", "y = x.reshape(2, 2)", resize_fixed),
        ),
        meaning=resize_meaning,
    ),
    Repro(
        "detach-view",
        "errors.md",
        ((2, 3),),
        detach_view_broken,
        (
            Applied("explain()", "v = v.detach()", detach_view_fixed),
            Applied("errors.md", "first = first.detach()", detach_view_fixed, {"first": "v"}),
        ),
        meaning=detach_view_meaning,
    ),
    Repro(
        "captured-mutation",
        "errors.md",
        ((3,),),
        captured_broken,
        (
            Applied("explain()", "out = captured + x", captured_fixed),
            Applied("errors.md", "out = captured + x", captured_fixed),
        ),
        meaning=captured_meaning,
    ),
    Repro(
        "captured-mutation",
        "errors.md (BatchNorm's running statistics)",
        ((3,),),
        batch_norm_broken,
        (
            Applied(
                "explain()",
                "torch.func.replace_all_batch_norm_modules_(model)",
                batch_norm_fixed,
            ),
            Applied("errors.md", "torch.func.replace_all_batch_norm_modules_", batch_norm_fixed),
        ),
        meaning=batch_norm_meaning,
    ),
]
CASES = [
    pytest.param(repro, applied, id=f"{repro.slug}-{repro.where}-{applied.source}-{n}")
    for repro in REPROS
    for n, applied in enumerate(repro.fixes)
]


def _live_error(repro: Repro) -> BaseException:
    with pytest.raises(Exception) as info:
        _gradients(repro.broken, _leaves(repro.shapes))
    return info.value


def _page_fix(slug: str) -> str:
    """The text of section ``slug``'s **Fix** on docs/errors.md, to the next section."""
    text = PAGE.read_text()
    section = text[text.index(f"(error-{slug})=") + 1 :]
    end = re.search(r"^\([a-z0-9-]+\)=$", section, re.MULTILINE)
    section = section[: end.start()] if end else section
    return section[section.index("**Fix**") :]


@pytest.mark.parametrize("repro", REPROS, ids=[f"{r.slug}-{r.where}" for r in REPROS])
def test_the_repro_raises_its_error(repro: Repro) -> None:
    assert explain(_live_error(repro)).slug == repro.slug


@pytest.mark.parametrize(("repro", "applied"), CASES)
def test_the_fix_is_printed_and_applied(repro: Repro, applied: Applied) -> None:
    if applied.source == "explain()":
        explained = explain(_live_error(repro))
        assert explained.kind is not None
        printed = str(explained)
    else:
        printed = _page_fix(repro.slug)
    assert applied.code in printed, (applied.code, printed)
    code = applied.code.split("  #")[0]
    if "=" not in code and "(" not in code:
        return  # prose: "hook the enclosing module"
    source = _source(applied.program)
    for statement in _statements(code, applied.names):
        assert re.search(_pattern(statement), source), (statement, applied.program.__name__)


@pytest.mark.parametrize(("repro", "applied"), CASES)
def test_the_fixed_code_gives_the_in_place_codes_gradients(repro: Repro, applied: Applied) -> None:
    meaning = repro.meaning or repro.broken
    _check_against_finite_differences(applied.program, meaning, repro.shapes, applied.edited)


def test_the_meaning_is_the_broken_code_run_without_autograd() -> None:
    """Where the broken code runs under no_grad, it is the reference: check that it runs."""
    for repro in REPROS:
        if repro.meaning is None:
            _value(repro.broken, [t.detach() for t in _leaves(repro.shapes)])


#: Causes whose fix no repro here can apply, and why.
NOT_APPLIED_HERE = {
    # torch 2.13 raises nothing for a DDP module called twice before one backward (two
    # gloo ranks on CPU, BatchNorm buffers: tests/test_explain_ddp.py); the fix is applied
    # there to a DDP model and gives the model's own gradients
    "ddp-buffers": "tests/test_explain_ddp.py",
    "ddp-broadcast": "tests/test_explain_ddp.py",
}


def test_every_fix_explain_prints_is_applied_to_a_repro() -> None:
    """Every cause's fix, in every section, is applied to a repro whose live error shows it."""
    applied = {
        (repro.slug, a.code) for repro in REPROS for a in repro.fixes if a.source == "explain()"
    }
    for kind in ERRORS:
        for cause in kind.causes:
            if cause.key in NOT_APPLIED_HERE:
                continue
            code = cause.fix.split("  #")[0]
            assert (kind.slug, code) in applied, (
                f"{kind.slug}/{cause.key}: no repro applies {code!r}"
            )
    for code in ("loss.backward(); optimizer.step()", "h = h * 2"):  # the advice by op
        assert ("saved-tensor-modified", code) in applied


def test_every_section_of_the_page_has_its_repro_and_its_fix_applied() -> None:
    for kind in ERRORS:
        assert any(
            r.slug == kind.slug
            and r.where.startswith("errors.md")
            and any(a.source == "errors.md" for a in r.fixes)
            for r in REPROS
        ), kind.slug


def test_a_fix_that_only_silences_the_error_fails() -> None:
    """D again after its step runs, but its gradients are not the in-place code's."""
    leaves = _leaves(GAN_SHAPES)
    _gradients(gan_silenced, leaves)  # runs: no error
    with pytest.raises(AssertionError):
        _check_against_finite_differences(gan_silenced, gan_meaning, GAN_SHAPES)
