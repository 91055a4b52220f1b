"""Checked claims: every sentence the site says about torch, as code that runs.

A page that says "torch does X" (or "torch 2.13 gets X wrong") does not
assert it in prose alone: it calls :func:`verify` with the claim's name, which
runs a minimal repro and raises :class:`ClaimBroken`, naming the sentence,
the day torch stops doing X. The same registry is what the release
comparison runs against other torch versions (:func:`verify_all`).

A claim is registered with :func:`claim` on a function that runs the repro,
asserts the claimed behaviour with :func:`expect`, and returns a short string
of what it observed (the figures the page prints come from there).

>>> print(verify("scatter_reduce_prod_drops_tangent"))
jvp of scatter_reduce(reduce='prod') gives tangent [0.0, 0.0, 0.0]; expected [1.0, 2.0, 1.0]
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import torch

__all__ = ["CLAIMS", "Claim", "ClaimBroken", "claim", "expect", "verify", "verify_all"]


class ClaimBroken(AssertionError):
    """A claim about torch no longer holds on the torch that is running."""


@dataclass(frozen=True)
class Claim:
    """One sentence about torch and the repro that checks it."""

    name: str
    statement: str
    check: Callable[[], str]
    #: Where users report it (an upstream issue or forum thread), if anywhere.
    upstream: str = ""
    #: True when the claim is that torch has a bug: when it stops holding,
    #: torch has fixed it (and the page that says so must change).
    bug: bool = False


_CLAIMS: dict[str, Claim] = {}
#: Every registered claim, by name, in registration order.
CLAIMS: Mapping[str, Claim] = MappingProxyType(_CLAIMS)


def claim(
    name: str, statement: str, *, upstream: str = "", bug: bool = False
) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Register ``check`` as the repro behind ``statement``."""

    def register(check: Callable[[], str]) -> Callable[[], str]:
        if name in _CLAIMS:
            raise ValueError(f"claim {name!r} is registered twice")
        _CLAIMS[name] = Claim(name, statement, check, upstream, bug)
        return check

    return register


def expect(condition: bool, observed: str) -> str:
    """Return ``observed`` if ``condition`` holds, else raise :class:`ClaimBroken` with it."""
    if not condition:
        raise ClaimBroken(observed)
    return observed


def verify(name: str) -> str:
    """Run claim ``name``'s repro; return what it observed or raise :class:`ClaimBroken`.

    >>> verify("no such claim")
    Traceback (most recent call last):
        ...
    KeyError: "no claim named 'no such claim'"
    """
    try:
        found = CLAIMS[name]
    except KeyError:
        raise KeyError(f"no claim named {name!r}") from None
    try:
        return found.check()
    except ClaimBroken as broken:
        raise ClaimBroken(
            f"the site says {found.statement!r}, which no longer holds on torch "
            f"{torch.__version__}: {broken}"
        ) from None


def verify_all() -> list[dict[str, Any]]:
    """Every claim checked: one record each, for the release comparison."""
    records = []
    for found in CLAIMS.values():
        try:
            observed, holds = found.check(), True
        except Exception as error:  # noqa: BLE001 - a crash is an answer too: record it
            observed, holds = f"{type(error).__name__}: {error}", False
        records.append(
            {
                "name": found.name,
                "statement": found.statement,
                "bug": found.bug,
                "upstream": found.upstream,
                "holds": holds,
                "observed": observed,
            }
        )
    return records


# -- the claims -------------------------------------------------------------
# Keep each repro minimal: it is what a reader would paste into an upstream issue.


@claim(
    "scatter_reduce_prod_drops_tangent",
    "torch's scatter_reduce(reduce='prod') drops the forward-mode tangent of its input: "
    "the tangent of the result is zero everywhere",
    bug=True,
)
def _scatter_reduce_prod_drops_tangent() -> str:
    x = torch.tensor([1.0, 2.0, 3.0])
    src = torch.tensor([2.0])
    index = torch.tensor([1])
    tangent = torch.func.jvp(
        lambda a: a.scatter_reduce(0, index, src, reduce="prod"), (x,), (torch.ones(3),)
    )[1]
    # d/da of [a0, a1 * 2, a2] along ones is [1, 2, 1]
    expected = [1.0, 2.0, 1.0]
    got = tangent.tolist()
    return expect(
        got == [0.0, 0.0, 0.0],
        f"jvp of scatter_reduce(reduce='prod') gives tangent {got}; expected {expected}",
    )


# -- select_scatter under vmap (issue 10, item 1) -----------------------------
# One write, x unbatched (7 rows), the source batched (5 examples): through
# vmap the gradient to the source comes out multiplied by x.shape[0] = 7.


def _vmapped_select_scatter() -> tuple[torch.Tensor, torch.Tensor, Callable[..., torch.Tensor]]:
    x = torch.arange(28.0).reshape(7, 4)
    src = torch.ones(5, 4)
    return x, src, torch.func.vmap(lambda s: x.select_scatter(s, 0, 1))


@claim(
    "select_scatter_vmap_grad_scaled",
    "under torch.func.vmap, autograd's gradient to the source of x.select_scatter(src, dim, i) "
    "is x.shape[dim] times too large, even for a single write",
    bug=True,
)
def _select_scatter_vmap_grad_scaled() -> str:
    x, src, batched = _vmapped_select_scatter()
    src.requires_grad_(True)
    out = batched(src)
    (grad,) = torch.autograd.grad(out.sum(), src)
    values = sorted(set(grad.flatten().tolist()))
    return expect(
        values == [float(x.shape[0])],
        f"autograd.grad through vmap gives {values} for every element of the source "
        f"where 1.0 is right: x.shape[0] = {x.shape[0]} times too large",
    )


@claim(
    "select_scatter_vmap_vjp_scaled",
    "torch.func.vjp of a vmapped select_scatter gives the same scaled gradient to the source",
    bug=True,
)
def _select_scatter_vmap_vjp_scaled() -> str:
    x, src, batched = _vmapped_select_scatter()
    result = torch.func.vjp(batched, src)  # (output, pullback); typed as a longer tuple
    out, pull = result[0], result[1]
    (grad,) = pull(torch.ones_like(out))
    values = sorted(set(grad.flatten().tolist()))
    return expect(
        values == [float(x.shape[0])],
        f"torch.func.vjp of the vmapped function gives {values}; 1.0 is right",
    )


@claim(
    "select_scatter_vmap_of_grad_right",
    "vmap(grad(f)) of a select_scatter write gives the right gradient to the source",
)
def _select_scatter_vmap_of_grad_right() -> str:
    x, src, _ = _vmapped_select_scatter()
    per_example = torch.func.vmap(torch.func.grad(lambda s: x.select_scatter(s, 0, 1).sum()))
    values = sorted(set(per_example(src).flatten().tolist()))
    return expect(values == [1.0], f"vmap(grad(f)) gives {values}, the right 1.0")


@claim(
    "select_scatter_vmap_is_expanded_scatter",
    "under vmap, functorch runs select_scatter as a scatter whose index is expanded to the "
    "whole shape of x, so backward gathers the written row x.shape[dim] times",
)
def _select_scatter_vmap_is_expanded_scatter() -> str:
    x, src, batched = _vmapped_select_scatter()
    out = batched(src.requires_grad_(True))
    node = out.grad_fn
    name = type(node).__name__
    index = getattr(node, "_saved_index", None)
    shape = None if index is None else list(index.shape)
    zero_strides = index is not None and all(s == 0 for s in index.stride())
    return expect(
        name == "ScatterBackward0" and shape == [5, *x.shape] and zero_strides,
        f"the vmapped result's grad_fn is {name}, its saved index has shape {shape} "
        f"(batch 5 by x's {list(x.shape)}) and {'only zero' if zero_strides else 'real'} strides",
    )


@claim(
    "slice_scatter_vmap_grad_right",
    "under vmap, slice_scatter (an arange index, no repeated position) gets the right gradient",
)
def _slice_scatter_vmap_grad_right() -> str:
    x, src, _ = _vmapped_select_scatter()
    src.requires_grad_(True)
    out = torch.func.vmap(lambda s: x.slice_scatter(s.unsqueeze(0), 0, 1, 2))(src)
    (grad,) = torch.autograd.grad(out.sum(), src)
    values = sorted(set(grad.flatten().tolist()))
    return expect(values == [1.0], f"slice_scatter through vmap gives {values}, the right 1.0")


# -- index_fill under vmap (issue 10, item 1) ----------------------------------


@claim(
    "index_fill_vmap_unbatched_x_last_value",
    "under vmap, x.index_fill(dim, index, value) with an unbatched x and a batched value "
    "writes the last example's value into every example",
    bug=True,
)
def _index_fill_vmap_unbatched_x_last_value() -> str:
    values = torch.tensor([1.0, 2.0, 3.0])
    index = torch.tensor([1])
    out = torch.func.vmap(lambda v: torch.zeros(4).index_fill(0, index, v))(values)
    written = out[:, 1].tolist()
    return expect(
        written == [3.0, 3.0, 3.0],
        f"values {values.tolist()} are written as {written}",
    )


@claim(
    "index_fill_vmap_batched_x_right",
    "under vmap, index_fill with a batched x and a batched value is right",
)
def _index_fill_vmap_batched_x_right() -> str:
    values = torch.tensor([1.0, 2.0, 3.0])
    index = torch.tensor([1])
    out = torch.func.vmap(lambda x, v: x.index_fill(0, index, v))(torch.zeros(3, 4), values)
    written = out[:, 1].tolist()
    return expect(written == values.tolist(), f"values {values.tolist()} are written as {written}")


# -- duplicate positions (issue 10, item 5) -------------------------------------


@claim(
    "duplicate_positions_value_grad",
    "with a position written twice, y = x.clone(); y[i] = v keeps one value but gives every "
    "value a gradient, as if each had been written",
    upstream="https://github.com/pytorch/pytorch/issues/146299",
    bug=True,
)
def _duplicate_positions_value_grad() -> str:
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.zeros(3).clone()
    y[torch.tensor([0, 0])] = v
    (grad,) = torch.autograd.grad(y.sum(), v)
    kept = y[0].item()
    return expect(
        grad.tolist() == [1.0, 1.0] and kept in (1.0, 2.0),
        f"y[0] is {kept} (one of the two values), yet the gradient to v is {grad.tolist()}: "
        "both values get the gradient of the position",
    )


def _duplicate_write(write: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> str:
    """Write ``v = [1, 2]`` twice at position 0 of ``zeros(3)``; what is kept, what v gets."""
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    y = write(torch.zeros(3), v)
    (grad,) = torch.autograd.grad(y.sum(), v)
    kept = y[0].item()
    return expect(
        grad.tolist() == [1.0, 1.0] and kept in (1.0, 2.0) and y[1:].tolist() == [0.0, 0.0],
        f"y[0] is {kept} (one of the two values), yet the gradient to v is {grad.tolist()}",
    )


@claim(
    "scatter_duplicate_positions_value_grad",
    "with a position named twice, x.scatter(0, index, v) keeps one of the values but gives "
    "every value a gradient",
    bug=True,
)
def _scatter_duplicate_positions_value_grad() -> str:
    return _duplicate_write(lambda x, v: x.scatter(0, torch.tensor([0, 0]), v))


@claim(
    "index_put_duplicate_positions_value_grad",
    "with a position named twice, x.index_put((index,), v) keeps one of the values but gives "
    "every value a gradient",
    bug=True,
)
def _index_put_duplicate_positions_value_grad() -> str:
    return _duplicate_write(lambda x, v: x.index_put((torch.tensor([0, 0]),), v))


# -- a zero gradient into sqrt at 0 (the where pitfall) -------------------------


def _grad_to_a(
    write: Callable[[torch.Tensor], torch.Tensor], safe_input: bool = False
) -> list[float]:
    """The gradient to ``a = [0, 4]`` of ``write(a.sqrt()).sum()``, position 0 overwritten."""
    a = torch.tensor([0.0, 4.0], requires_grad=True)
    root = torch.where(torch.tensor([True, False]), 1.0, a) if safe_input else a
    (grad,) = torch.autograd.grad(write(root.sqrt()).sum(), a)
    return grad.tolist()


@claim(
    "zero_gradient_into_sqrt_at_zero_is_nan",
    "a zero gradient into sqrt at 0 gives nan: where's unselected branch and an overwritten "
    "element alike; a where on sqrt's input fixes both, one on its output does not",
)
def _zero_gradient_into_sqrt_at_zero_is_nan() -> str:
    m = torch.tensor([True, False])
    unselected = _grad_to_a(lambda s: torch.where(~m, s, 0.0))
    overwritten = _grad_to_a(lambda s: s.index_put((torch.tensor([0]),), torch.tensor(0.0)))
    after = _grad_to_a(lambda s: torch.where(m, 0.0, torch.where(m, 0.0, s)))
    before = _grad_to_a(lambda s: torch.where(m, 0.0, s), safe_input=True)
    nan_first = all(math.isnan(g[0]) and g[1] == 0.25 for g in (unselected, overwritten, after))
    return expect(
        nan_first and before == [0.0, 0.25],
        f"gradient to a = [0, 4]: unselected {unselected}, overwritten {overwritten}, "
        f"where after sqrt {after}, where before sqrt {before}",
    )


# -- the mask blend (issue 10, item 8; issue 9, case 10) ----------------------------


def _mask_blend_saved(value_requires_grad: bool) -> tuple[int, int]:
    """Mask storages saved for ``x * (1 - m) + v * m``, and the bytes of one mask.

    A saved tensor counts as a mask when its values are those of ``m`` or of
    ``1 - m`` (``x`` is random, so it is neither); each storage counts once.
    """
    x = torch.rand(1000, requires_grad=True) * 1
    v = torch.tensor(42.0, requires_grad=value_requires_grad)
    m = torch.zeros(1000)
    m[3] = 1.0
    masks = (m, 1 - m)
    seen: set[int] = set()

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.shape == m.shape and any(torch.equal(t, mask) for mask in masks):
            seen.add(t.untyped_storage().data_ptr())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x * (1 - m) + v * m
    del y
    return len(seen), m.nbytes


@claim(
    "mask_blend_saves_two_masks_with_value_grad",
    "x * (1 - m) + v * m saves one full-size mask for backward, and two when v requires grad",
)
def _mask_blend_saves_two_masks() -> str:
    without, mask = _mask_blend_saved(False)
    with_grad, _ = _mask_blend_saved(True)
    return expect(
        (without, with_grad) == (1, 2),
        f"full-size masks saved: {without} when only x requires grad, "
        f"{with_grad} when v does too ({mask} bytes each)",
    )


@claim(
    "mask_blend_nonfinite_value_spreads_nan",
    "x * (1 - m) + v * m with a non-finite v turns every element it does not write into nan",
)
def _mask_blend_nonfinite_value_spreads_nan() -> str:
    x = torch.zeros(4)
    m = torch.tensor([1.0, 0.0, 0.0, 0.0])
    results = {}
    for v in (float("inf"), float("nan")):
        y = x * (1 - m) + v * m
        results[repr(v)] = y.tolist()
        if not bool(torch.isnan(y[1:]).all()):
            raise ClaimBroken(f"with v = {v} the unwritten elements are {y[1:].tolist()}")
    return expect(
        results["inf"][0] == float("inf"),
        f"writing position 0 of zeros(4): v = inf gives {results['inf']}, "
        f"v = nan gives {results['nan']}",
    )


@claim(
    "mask_blend_nonfinite_x_at_written_position_is_nan",
    "x * (1 - m) + v * m turns inf or nan in x at a written position into nan, not v",
)
def _mask_blend_nonfinite_x_at_written_position_is_nan() -> str:
    m = torch.tensor([1.0, 0.0])
    got = {}
    for bad in (float("inf"), float("nan")):
        x = torch.tensor([bad, 1.0])
        got[repr(bad)] = (x * (1 - m) + 5.0 * m).tolist()
    return expect(
        all(math.isnan(y[0]) and y[1] == 1.0 for y in got.values()),
        f"writing 5.0 at position 0 of [inf, 1.0] gives {got['inf']}, of [nan, 1.0] {got['nan']}",
    )


# -- errors (issue 10, items 3 and 4) --------------------------------------------


@claim(
    "inference_tensor_write_fails_under_no_grad",
    "an inference tensor cannot be written in place outside inference_mode, even under no_grad",
)
def _inference_tensor_write_fails_under_no_grad() -> str:
    with torch.inference_mode():
        cache = torch.zeros(3)
    try:
        with torch.no_grad():
            cache.add_(1)
    except RuntimeError as error:
        return expect(
            "Inplace update to inference tensor outside InferenceMode" in str(error),
            f"under no_grad: RuntimeError: {str(error)[:60]}...",
        )
    raise ClaimBroken("the write under no_grad succeeded")


# -- the error reference (issue 19) ----------------------------------------------


def _backward_error(run: Callable[[], None]) -> str:
    """The message of the RuntimeError ``run`` raises, or ``""`` when it runs."""
    try:
        run()
    except RuntimeError as error:
        return str(error)
    return ""


@claim(
    "mul_saves_an_input_when_the_other_requires_grad",
    "mul saves an input for backward when the other input requires grad, not otherwise",
)
def _mul_saves_an_input_when_the_other_requires_grad() -> str:
    def write_after_mul(w_requires_grad: bool) -> Callable[[], None]:
        def run() -> None:
            h = torch.ones(3, requires_grad=True) * 1
            w = torch.full((3,), 2.0, requires_grad=w_requires_grad)
            y = h * w
            h.add_(1)
            torch.autograd.backward(y.sum())

        return run

    without = _backward_error(write_after_mul(False))
    with_grad = _backward_error(write_after_mul(True))
    return expect(
        without == "" and "modified by an inplace operation" in with_grad,
        "h * w, h then written: backward runs when w does not require grad; when it does: "
        "RuntimeError",
    )


@claim(
    "saved_input_message_names_the_write",
    "when backward saved a tensor as an input, the error names the in-place op that wrote it",
)
def _saved_input_message_names_the_write() -> str:
    def run() -> None:
        x = torch.ones(3, requires_grad=True)
        w = torch.ones(3, requires_grad=True)
        h = x.exp()
        y = h * w
        h.add_(1)
        torch.autograd.backward(y.sum())

    message = _backward_error(run)
    return expect(
        "which is output 0 of Add," in message,
        "h = x.exp(); y = h * w; h.add_(1): the message says 'output 0 of Add'",
    )


#: The ops a reader might take for "several views at once", and how each splits a tensor.
_SPLITTERS: dict[str, Callable[[torch.Tensor], Any]] = {
    "unbind": lambda t: t.unbind(),
    "split": lambda t: torch.split(t, 2),
    "split_with_sizes": lambda t: t.split_with_sizes([1, 3]),
    "chunk": lambda t: t.chunk(2),
    "tensor_split": lambda t: t.tensor_split(2),
    "hsplit": lambda t: t.hsplit(2),
    "vsplit": lambda t: t.vsplit(2),
}


@claim(
    "multi_output_view_ops",
    "of the ops that split a tensor into views, unbind, split, split_with_sizes and chunk "
    "forbid an in-place write into a piece; tensor_split, hsplit and vsplit allow it",
)
def _multi_output_view_ops() -> str:
    fails, allowed = [], []
    for name, split in _SPLITTERS.items():
        pieces = split(torch.ones(4, 4, requires_grad=True) * 1)
        try:
            pieces[0].add_(1)
        except RuntimeError as error:
            if "output of a function that returns multiple views" not in str(error):
                raise ClaimBroken(f"{name}: {error}") from None
            fails.append(name)
        else:
            allowed.append(name)
    return expect(
        fails == ["unbind", "split", "split_with_sizes", "chunk"]
        and allowed == ["tensor_split", "hsplit", "vsplit"],
        f"in-place write into a piece fails for {', '.join(fails)}; "
        f"allowed for {', '.join(allowed)}",
    )


@claim(
    "compile_raises_the_saved_tensor_error_while_compiling",
    "torch.compile with its default backend (inductor), like aot_eager, raises the "
    "saved-tensor error while compiling, before any backward; with backend='eager' it comes "
    "at backward",
)
def _compile_raises_the_saved_tensor_error_while_compiling() -> str:
    def double_sigmoid(x: torch.Tensor) -> torch.Tensor:
        h = torch.sigmoid(x)
        h.mul_(2)
        return h

    when = {}
    for backend in (None, "eager"):  # None: torch.compile's default
        torch._dynamo.reset()
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Error detected in")  # AOT's anomaly note
                # importing inductor uses torch.jit.script_method, deprecated in 2.13
                warnings.filterwarnings("ignore", ".*torch.jit.script_method", DeprecationWarning)
                compiled = (
                    torch.compile(double_sigmoid)
                    if backend is None
                    else torch.compile(double_sigmoid, backend=backend)
                )
                out = compiled(torch.ones(3, requires_grad=True))
        except Exception as error:  # noqa: BLE001 - which exception it is, is the claim
            named = re.search(r"backend='(\w+)' raised", str(error))
            saved = "modified by an inplace operation" in str(error)
            when[named[1] if named else repr(backend)] = "compiling" if saved else str(error)
            continue
        try:
            torch.autograd.backward(out.sum())
        except RuntimeError as error:
            saved = "modified by an inplace operation" in str(error)
            when[str(backend)] = "backward" if saved else str(error)
    torch._dynamo.reset()
    return expect(
        when == {"inductor": "compiling", "eager": "backward"},
        f"default backend: the saved-tensor error while {when.get('inductor')} (inductor); "
        f"backend='eager': at {when.get('eager')}",
    )
