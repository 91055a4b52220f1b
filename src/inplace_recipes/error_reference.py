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
        "input). After the write it would be the result of an operation, yet backward would "
        "still accumulate into its .grad as if it were the tensor you made.",
        'x = x.add(1)  # or y = ir.RECIPES["where"](x, index, value) for x[index] = value',
    ),
    ErrorKind(
        "view-of-leaf",
        "A view of a leaf used in an in-place operation",
        r"a view of a leaf Variable that requires grad is being used in an in-place operation",
        "x[index] = value (or an in-place op on a slice) writes through a view into a leaf "
        "that requires grad; the leaf's own value must stay as it was.",
        "y = x.clone(); y[index] = value  # instead of x[index] = value on the leaf",
    ),
    ErrorKind(
        "saved-tensor-modified",
        "A variable needed for gradient computation was modified in place",
        r"one of the variables needed for gradient computation has been modified by an "
        r"inplace operation",
        "An operation saved this tensor for backward (sigmoid, exp and tanh save their "
        "output; mul and matmul save an input when the other input requires grad). A later "
        "in-place write changed it, so backward would use the wrong values and refuses.",
        "h = h * 2  # out of place, instead of h.mul_(2) on the tensor backward saved (and "
        'h = h + y for h += y, h = ir.RECIPES["where"](h, i, v) for h[i] = v)',
    ),
    ErrorKind(
        "graph-interior",
        "Leaf variable has been moved into the graph interior",
        r"leaf variable has been moved into the graph interior",
        "A tensor was used as a leaf that requires grad, then stopped requiring grad and "
        "received a gradient history from an in-place write; the backward of a graph "
        "recorded before the write reaches a leaf that is no longer a leaf.",
        'b = ir.RECIPES["where"](a, index, value)  # write into a new tensor, keep a a leaf',
    ),
    ErrorKind(
        "multi-output-view",
        "A view returned by a function that returns multiple views",
        r"is a view and is being modified inplace\. This view is the output of a function "
        r"that returns multiple views",
        "unbind, split, split_with_sizes and chunk return several views of one tensor; "
        "autograd cannot rewrite the history of one of them after an in-place write.",
        'x = ir.RECIPES["select_scatter"](x, i, x[i] + 1)  # out of place on the whole tensor; '
        "or first = parts[0].add(1) if x need not change",
    ),
    ErrorKind(
        "multi-output-view-base",
        "A view from a function that returns multiple views, after its base was modified",
        r"is a view and its base or another view of its base has been modified inplace\. This "
        r"view is the output of a function that returns multiple views",
        "You took several views at once (unbind, split, chunk), then wrote in place into "
        "their base (or, under no_grad, into one of them); the others cannot be given the "
        "new history, so the next operation that records a graph on one of them fails.",
        "first, second = t.unbind()  # again after the write into t, for pieces with the new "
        "values (or t = t + 1 out of place, for pieces that keep the old ones)",
    ),
    ErrorKind(
        "no-grad-view",
        "A view created in no_grad mode, modified in grad mode",
        r"A view was created in no_grad mode and",
        "The view was taken under torch.no_grad() and written with gradients on by a write "
        "autograd records (its base requires grad, or the value written does), or its "
        "base was written in place (in either mode) and the view then used with gradients "
        "on; autograd cannot tell whether the write should be tracked. A view taken with "
        "gradients on may be written under no_grad.",
        'y = ir.RECIPES["where"](x, index, value)  # out of place, or take the view again',
    ),
    ErrorKind(
        "custom-function-view",
        "A view returned by a custom Function",
        r"Output \d{1,6} of (?!BackwardHookFunction(?:Backward)? )\w{1,200} is a view and "
        r"(?:is being|its base or another view of its base has been) modified in ?place\. This "
        r"view was created inside a custom Function",
        "A torch.autograd.Function returned a view of its input (or the input itself); an "
        "in-place write would bypass its custom backward. Written under no_grad (or its base "
        "written), the output fails at its next use with gradients on instead.",
        "out = MyFunction.apply(x).clone()  # then write into the clone; after a write into "
        "x: apply the Function after the write",
    ),
    ErrorKind(
        "backward-hook-view",
        "An in-place op on the input or output of a module with a full backward hook",
        # older releases name the node BackwardHookFunctionBackward
        r"Output \d{1,6} of BackwardHookFunction(?:Backward)? is a view and "
        r"(?:is being|its base or another view of its base has been) modified in ?place",
        "register_full_backward_hook wraps the module's inputs and outputs in a custom "
        "Function (BackwardHookFunction) that returns them as-is; an in-place op with gradients "
        "on, on one of them that requires grad, writes into that Function's output: out += "
        "shortcut on the hooked module's output, nn.ReLU(inplace=True) as the hooked module or "
        "right after it. Written under no_grad, the tensor fails at its next use with "
        "gradients on instead.",
        "out = out + shortcut  # every in-place op on the hooked module's input or output "
        "out of place (nn.ReLU() for nn.ReLU(inplace=True), x = x.clamp(max=5) for "
        "x.clamp_(max=5) under no_grad), or hook the enclosing module",
    ),
    ErrorKind(
        "mark-dirty",
        "A custom Function marked an input dirty but did not return it",
        r"Some elements marked as dirty during the forward method were not returned as output",
        "ctx.mark_dirty(x) tells autograd that forward modified x in place; autograd then "
        "needs x itself among the outputs to give it its new history.",
        "return x  # forward returns the tensor it modified and marked dirty",
    ),
    ErrorKind(
        "inference-tensor",
        "In-place update of an inference tensor",
        r"Inplace update to inference tensor outside InferenceMode|"
        r"A view was created in inference mode and",
        "The tensor was made under torch.inference_mode(), which gives it no version "
        "counter, so it cannot be written in place anywhere outside inference_mode, not even "
        "under torch.no_grad(), except through .data or .numpy(), which go unchecked (nor can "
        "a view taken there be written by a write autograd would record: with gradients on, "
        "into a tensor or with a value that requires grad).",
        "t = t.clone()  # outside inference_mode, then write into the clone; for a view "
        "made there: take the view outside inference_mode",
    ),
    ErrorKind(
        "expanded",
        "In-place write into an expanded tensor",
        r"more than one element of the written-to tensor refers to a single memory location",
        "expand() and broadcasting views repeat one element with stride 0; a write would hit "
        "the same memory several times, so most in-place ops refuse (fill_, zero_ and a write "
        "through an index such as e[0] = 5 do not, and change every element that shares the "
        "memory).",
        "e = x.expand(3, 4).clone()  # or out of place: e = e + 1",
    ),
    ErrorKind(
        "input-overlap",
        "An in-place op whose input overlaps the tensor it writes",
        r"some elements of the input tensor and the written-to tensor refer to a single "
        r"memory location",
        "The source and the destination share memory (x[1:].copy_(x[:-1]) reads elements it "
        "has already written), so the result would depend on the order of the copy.",
        "x = torch.cat([x[:1], x[:-1]])  # out of place, or x[1:] = x[:-1].clone()",
    ),
    ErrorKind(
        "vmap",
        "In-place write under vmap",
        r"vmap: [\w:. ]{1,200}\(self, \*extra_args\) is not possible because there exists a "
        r"Tensor",
        "Under torch.func.vmap the tensor written to has no batch dimension but the value "
        "has one, so the per-sample results do not fit (the message names inplace arithmetic, "
        "index_put_ for x[tensor_index] = value, or the op, such as aten::clamp_).",
        'out = ir.RECIPES["where"](x, index, value)  # out of place: gets the batch dimension '
        "(for an op: the op out of place, x.clamp(min=low) for x.clamp_(min=low))",
    ),
    ErrorKind(
        "output-shape",
        "An in-place result that does not fit the tensor",
        r"output with shape \[[0-9, ]{0,200}\] doesn't match the broadcast shape",
        "An in-place op must keep the shape of the tensor written (out= resizes it instead, "
        "with a warning); here the other operand broadcasts to a bigger shape (under vmap, "
        "add_ says so when it is batched and the target is not).",
        "x = x + y  # out of place: the result takes the broadcast shape",
    ),
    ErrorKind(
        "out-argument",
        "out= with tensors that require grad",
        r"functions with out=\.\.\. arguments don't support automatic differentiation",
        "Most functions called with out= (add, matmul, cat, sum, ...) write into a given "
        "tensor without recording a gradient: with gradients on, they refuse an argument "
        "that requires grad (a few, such as torch.linalg.norm, record one).",
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
# Every repetition is bounded, so a search costs time linear in the message
# (an unbounded ``[^\]]*`` retried at each "[" of a long message is quadratic).
_VERSION = re.compile(
    r"modified by an inplace operation: \[(?P<tensor>[^\]]{0,200}\])\]"
    r"(?:, which is (?P<origin>output \d{1,6} of (?:torch::autograd::)?(?P<op>\w{1,200})))?,? "
    r"is at version (?P<now>\d{1,20}); expected version (?P<then>\d{1,20}) instead"
)
#: How torch.compile wraps the eager message (Dynamo's fake-tensor run, or a
#: backend that traces backward and raises while compiling).
_COMPILE = re.compile(r"Dynamo failed to run FX node with fake tensors|backend='\w{1,100}' raised")


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found; ``str()`` is the plain-words answer.

    ``kind`` is ``None`` for a message the error reference does not cover;
    ``fix``, when set, is advice for this very message (it names the
    operation the message names) and replaces the section's general fix.
    """

    message: str
    kind: ErrorKind | None
    details: str = ""
    fix: str = ""

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
        lines += [f"Fix: {self.fix or self.kind.fix}", f"See: {self.kind.url}"]
        return "\n".join(lines)


def _message_of(error: object) -> str:
    """The text of ``error``; an exception whose ``str()`` fails is described instead."""
    if isinstance(error, str):
        return str.__str__(error)  # a plain str, whatever a subclass's __str__ does
    if not isinstance(error, BaseException):
        raise TypeError(
            f"explain() takes an exception or its message (a str), not {type(error).__name__}"
        )
    try:
        return str(error)
    except Exception as failure:  # noqa: BLE001 - an unreadable message: say so, do not fail
        return f"<{type(error).__name__} whose str() raised {type(failure).__name__}>"


#: The fix when the saved tensor is a leaf or a view: most often a layer's
#: weight (nn.Linear saves its transpose) that an optimizer step updated.
_STEP_ADVICE = (
    "loss.backward(); optimizer.step()  # every backward through this forward before the step "
    "that updates the weights, or the forward again after the step; a write of your own into "
    "that tensor: out of place"
)


#: A custom Function's ``ctx.mark_dirty`` on a leaf raises the leaf error
#: with "has been used" (the eager check says "is being used").
_MARKED_LEAF = "a leaf Variable that requires grad has been used"
_MARKED_LEAF_DETAIL = (
    "A custom Function's forward marked a leaf dirty (ctx.mark_dirty): it wrote in place into "
    "the tensor you created."
)
_MARKED_LEAF_FIX = (
    "F.apply(x.clone())  # give a Function that marks its input dirty a copy, not the leaf"
)


def _saved_tensor_advice(op: str | None) -> tuple[str, str]:
    """What the message's ``output 0 of op`` tells, and the fix that follows from it.

    The message names the tensor's ``grad_fn``: the op that made it
    (``Tanh``; also when the write ran under ``no_grad``), the in-place op
    that last wrote it with gradients on (``Mul``, ``CopySlices``),
    ``AsStrided`` for a view, and nothing for a leaf.
    """
    if op is None or op == "AsStrided":
        what = "a leaf" if op is None else "a view of another tensor"
        detail = (
            f"It is {what}: often a layer's weight (nn.Linear saves its transpose) "
            "that an optimizer.step() updated between the forward and this backward."
        )
        return detail, _STEP_ADVICE
    fix = (
        "h = h * 2  # out of place, instead of h.mul_(2) (and h = h + y for h += y, "
        'h = ir.RECIPES["where"](h, i, v) for h[i] = v, inplace=False for a layer) on the '
        f"tensor {op} names: the op that made it, or the in-place op that last wrote it"
    )
    return "", fix


def explain(error: BaseException | str) -> Explanation:
    """Explain an autograd in-place error (an exception or its message).

    Never raises for an unknown message, nor for an exception whose ``str()``
    fails: the result then says it is not recognised (``recognized`` is
    ``False``). Anything else than an exception or a str is a ``TypeError``.
    The advice names the operation the message names, and a message that
    ``torch.compile`` wrapped is explained as the eager error inside it.

    >>> print(explain("leaf variable has been moved into the graph interior").url)
    errors.html#error-graph-interior
    >>> explain("CUDA out of memory").recognized
    False
    """
    message = _message_of(error)
    for known in ERRORS:
        if not re.search(known.pattern, message):
            continue
        details, fix = [], ""
        found = _VERSION.search(message)
        if known.slug == "saved-tensor-modified" and found:
            origin = found["origin"] or "a saved tensor"
            details.append(
                f"The tensor is {origin} ({found['tensor']}); it was saved at version "
                f"{found['then']} and is now at version {found['now']}: "
                f"{int(found['now']) - int(found['then'])} in-place write(s) since."
            )
            detail, fix = _saved_tensor_advice(found["op"])
            if detail:
                details.append(detail)
        if known.slug == "leaf" and _MARKED_LEAF in message:
            details.append(_MARKED_LEAF_DETAIL)
            fix = _MARKED_LEAF_FIX
        if _COMPILE.search(message):
            details.append(
                "torch.compile raised it while tracing your function: it is the eager error, "
                'wrapped; run without torch.compile (or under torch.compiler.set_stance("'
                'force_eager")) to see the line.'
            )
        return Explanation(message, known, " ".join(details), fix)
    return Explanation(message, None)


def error_kind(slug: str) -> ErrorKind:
    """The :class:`ErrorKind` with this slug (``KeyError`` if none)."""
    return _BY_SLUG[slug]
