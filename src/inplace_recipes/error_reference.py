"""Say in plain words what an autograd in-place error means, and how to fix it.

:func:`explain` recognises every message on the error reference page
(``errors.html``) of the pinned torch and points at its section there.

>>> import torch
>>> a = torch.ones(3, requires_grad=True)
>>> try:
...     a[0] = 0.0
... except RuntimeError as error:
...     print(explain(error).slug)
view-of-leaf
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ERRORS", "ErrorKind", "Explanation", "error_kind", "explain"]

#: Where the error reference lives, relative to the site root.
ERRORS_PAGE = "errors.html"


@dataclass(frozen=True)
class ErrorKind:
    """One section of the error reference: how to recognise it, why, and the fix."""

    slug: str
    title: str
    pattern: str
    why: str
    fix: str

    @property
    def url(self) -> str:
        """The section's address, relative to the site root."""
        return f"{ERRORS_PAGE}#error-{self.slug}"


#: Every error on the reference page, in its order. ``pattern`` is a regular
#: expression searched in the message; the first match wins.
ERRORS: tuple[ErrorKind, ...] = (
    ErrorKind(
        "leaf",
        "A leaf that requires grad used in an in-place operation",
        r"(?<!view of )a leaf Variable that requires grad (is being|has been) used in an "
        r"in-place operation",
        "You wrote in place into a tensor you created with requires_grad=True (a parameter or "
        "input). Autograd needs its value as it was to compute its gradient.",
        'x = x.add(1)  # or y = ir.RECIPES["where"](x, index, value) for x[index] = value',
    ),
    ErrorKind(
        "view-of-leaf",
        "A view of a leaf used in an in-place operation",
        r"a view of a leaf Variable that requires grad is being used in an in-place operation",
        "x[index] = value (or an in-place op on a slice) writes through a view into a leaf "
        "that requires grad; the leaf's own value must stay as it was.",
        'y = ir.RECIPES["select_scatter"](x, index, value)  # instead of x[index] = value',
    ),
    ErrorKind(
        "saved-tensor-modified",
        "A variable needed for gradient computation was modified in place",
        r"one of the variables needed for gradient computation has been modified by an "
        r"inplace operation",
        "An operation saved this tensor for backward (sigmoid, exp and tanh save their "
        "output; mul and matmul their inputs). A later in-place write changed it, so "
        "backward would use the wrong values and refuses.",
        "h = torch.relu(h)  # out of place, instead of h.relu_() or ReLU(inplace=True)",
    ),
    ErrorKind(
        "graph-interior",
        "Leaf variable has been moved into the graph interior",
        r"leaf variable has been moved into the graph interior",
        "A tensor was used as a leaf that requires grad, then stopped requiring grad and "
        "received a gradient history from an in-place write; backward then reaches a leaf "
        "that is no longer a leaf.",
        'b = ir.RECIPES["where"](a, index, value)  # write into a new tensor, keep a a leaf',
    ),
    ErrorKind(
        "multi-output-view",
        "A view returned by a function that returns multiple views",
        r"This view is the output of a function that returns multiple views",
        "unbind, split, chunk (and unsqueeze_copy-like ops) return several views of one "
        "tensor; autograd cannot rewrite the gradient of one of them after an in-place write.",
        "first = parts[0].add(1)  # out of place, or parts = [p.clone() for p in x.unbind()]",
    ),
    ErrorKind(
        "no-grad-view",
        "A view created in no_grad mode, modified in grad mode",
        r"A view was created in no_grad mode and",
        "The view was taken under torch.no_grad() but written with gradients on (or the "
        "other way round); autograd cannot tell whether the write should be tracked.",
        'y = ir.RECIPES["where"](x, index, value)  # take the view and write in one mode',
    ),
    ErrorKind(
        "custom-function-view",
        "A view returned by a custom Function",
        r"This view was created inside a custom Function",
        "A torch.autograd.Function returned a view of its input (or the input itself); an "
        "in-place write would bypass its custom backward.",
        "out = MyFunction.apply(x).clone()  # then write into the clone",
    ),
    ErrorKind(
        "inference-tensor",
        "In-place update of an inference tensor",
        r"Inplace update to inference tensor outside InferenceMode|"
        r"A view was created in inference mode and",
        "The tensor (or view) was made under torch.inference_mode(), which records no "
        "version counter, so it cannot be written in place once autograd is back on.",
        "t = t.clone()  # outside inference_mode, then write into the clone",
    ),
    ErrorKind(
        "expanded",
        "In-place write into an expanded tensor",
        r"more than one element of the written-to tensor refers to a single memory location",
        "expand() and broadcasting views repeat one element with stride 0; a write would hit "
        "the same memory several times.",
        "e = x.expand(3, 4).clone()  # or out of place: e = e + 1",
    ),
    ErrorKind(
        "vmap",
        "In-place write under vmap",
        r"vmap: inplace arithmetic",
        "Under torch.func.vmap the tensor written to has no batch dimension but the value "
        "has one, so the per-sample results do not fit.",
        'out = ir.RECIPES["where"](x, index, value)  # out of place: gets the batch dimension',
    ),
    ErrorKind(
        "output-shape",
        "An in-place result that does not fit the tensor",
        r"output with shape \[[0-9, ]*\] doesn't match the broadcast shape",
        "An in-place op (or out=) must keep the shape of the tensor written; here the other "
        "operand broadcasts to a bigger shape (under vmap: it is batched, the target is not).",
        "x = x + y  # out of place: the result takes the broadcast shape",
    ),
    ErrorKind(
        "out-argument",
        "out= with tensors that require grad",
        r"functions with out=\.\.\. arguments don't support automatic differentiation",
        "Functions called with out= write into a given tensor and are not differentiable.",
        "y = torch.add(a, b)  # drop out=",
    ),
    ErrorKind(
        "leaky-relu",
        "In-place leaky_relu with a negative slope",
        r"In-place leakyReLu backward calculation is triggered with a negative slope",
        "leaky_relu_ computes its gradient from its output, which is ambiguous when the slope "
        "is negative.",
        "y = torch.nn.functional.leaky_relu(x, -0.1)  # inplace=False",
    ),
)

_BY_SLUG = {kind.slug: kind for kind in ERRORS}
_VERSION = re.compile(
    r"modified by an inplace operation: \[(?P<tensor>[^\]]*\])\]"
    r"(?:, which is (?P<origin>output \d+ of \w+))?, is at version (?P<now>\d+); "
    r"expected version (?P<then>\d+) instead"
)


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found; ``str()`` is the plain-words answer.

    ``kind`` is ``None`` for a message the error reference does not cover.
    """

    message: str
    kind: ErrorKind | None
    details: str = ""

    @property
    def recognized(self) -> bool:
        """Whether the message is one of the error reference's errors."""
        return self.kind is not None

    @property
    def slug(self) -> str | None:
        """The section's anchor without the ``error-`` prefix, or ``None``."""
        return None if self.kind is None else self.kind.slug

    @property
    def url(self) -> str | None:
        """The section's address relative to the site root, or ``None``."""
        return None if self.kind is None else self.kind.url

    def __str__(self) -> str:
        if self.kind is None:
            first = self.message.strip().splitlines()[0] if self.message.strip() else ""
            return (
                "Not recognised as an autograd in-place error: "
                f"{first[:200]!r}\nKnown errors: {ERRORS_PAGE}"
            )
        lines = [self.kind.title + ".", self.kind.why]
        if self.details:
            lines.append(self.details)
        lines += [f"Fix: {self.kind.fix}", f"See: {self.kind.url}"]
        return "\n".join(lines)


def explain(error: BaseException | str) -> Explanation:
    """Explain an autograd in-place error (an exception or its message).

    Never raises for an unknown message: the result then says it is not
    recognised (``recognized`` is ``False``).

    >>> print(explain("leaf variable has been moved into the graph interior").url)
    errors.html#error-graph-interior
    >>> explain("CUDA out of memory").recognized
    False
    """
    message = error if isinstance(error, str) else str(error)
    for known in ERRORS:
        if re.search(known.pattern, message):
            details = ""
            found = _VERSION.search(message)
            if known.slug == "saved-tensor-modified" and found:
                origin = found["origin"] or "a saved tensor"
                details = (
                    f"The tensor is {origin} ({found['tensor']}); it was saved at version "
                    f"{found['then']} and is now at version {found['now']}: "
                    f"{int(found['now']) - int(found['then'])} in-place write(s) since."
                )
            return Explanation(message, known, details)
    return Explanation(message, None)


def error_kind(slug: str) -> ErrorKind:
    """The :class:`ErrorKind` with this slug (``KeyError`` if none)."""
    return _BY_SLUG[slug]
