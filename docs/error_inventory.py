"""Which section of the error reference covers each string of torch's error inventory, or why none.

``docs/measurements/error-inventory.json`` lists the in-place, view and
version-counter error strings of each torch release it was run on (made by
``docs/measurements/run_error_inventory.py``). An entry of the pinned release
is covered by a section of ``errors.md`` when the section's text (its live
doctests' messages and outputs among it) holds every part of the entry, or
when :func:`inplace_recipes.explain` gives the entry that section. An entry of
another release that shares a long run of text with a pinned one is that
entry, as that release's build lays it out (:func:`twin`). Every other entry
needs a reason in :data:`REASONS`: ``tests/test_explain_inventory.py`` fails on
an entry without either, so a release that adds a string fails it.

>>> twin("at::RecordFunctiInference tensors do not track version counter.",
...      ["Inference tensors do not track version counter."])
'Inference tensors do not track version counter.'
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inplace_recipes import explain

INVENTORY = Path(__file__).parent / "measurements" / "error-inventory.json"
PAGE = Path(__file__).parent / "errors.md"
#: The shortest run of text two entries share to be one string laid out two ways.
TWIN_RUN = 24

_DYNAMO = (
    "a graph break of Dynamo: torch.compile falls back to eager mode, which raises the eager "
    "error of its section (mark-dirty); shown only with fullgraph=True or TORCH_LOGS"
)
_DISTRIBUTED = (
    "torch.distributed (FSDP2, DTensor, functional collectives, the SAC estimator): needs a "
    "process group and a sharded model, outside what this reference covers"
)
_COMPILER = "a compiler pass's internal check (torch.fx reinplacing), not reachable from user code"
_FORWARD_AD = (
    "forward-mode AD's internal bookkeeping of a tangent: raised only by a custom Function's "
    "jvp that breaks its contract, or a torch bug; no in-place assignment reaches it"
)

#: Entries no section covers, by their text, and why.
REASONS: dict[str, str] = {
    ") returned a view tensor. An in-place op on this view (e.g., `x += y`) will silently drop "
    "the pre-backward hook and skip the all-gather, which can cause backward to fail or produce "
    "wrong gradients. Use out-of-place ops (`out = out + y`, not `out += y`) or `.clone()` the "
    "output before any in-place op.": _DISTRIBUTED,
    "FSDP2-wrapped module (...) returned a view tensor. An in-place op on this view (e.g., `x += "
    "y`) will silently drop the pre-backward hook and skip the all-gather, which can cause "
    "backward to fail or produce wrong gradients. Use out-of-place ops (`out = out + y`, not "
    "`out += y`) or `.clone()` the output before any in-place op.": _DISTRIBUTED,
    "...: in-place operations that require placement changes are not supported. The input has "
    "placement ..., but no valid strategy preserves this placement. Please use the out-of-place "
    "version of this operation instead.": _DISTRIBUTED,
    ": in-place operations that require placement changes are not supported. The input has "
    "placement": _DISTRIBUTED,
    "Can't remap async version of inplace op to functional collective": _DISTRIBUTED,
    "The remapping of inplace ops failed since one of the inplace op parents must have been "
    "present in": _DISTRIBUTED,
    "The remapping of inplace ops failed since one of the inplace op parents must have been "
    "present in ...": _DISTRIBUTED,
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack "
    "hook.": "a saved-tensor hook of the user's own (torch.autograd.graph.saved_tensors_hooks) "
    "that writes what it packs: a hook's contract, not an in-place assignment; its message says "
    "what to do",
    "Cannot emit inplace op on": "the TorchScript frontend's own check (torch.jit), deprecated",
    "Cannot inplace into non-meta tensor with meta tensor argument": "a meta tensor written "
    "into a real one: a device mismatch, not an autograd error",
    "Cannot set a value of a forward grad if it already exists. Inplace operations should modify "
    "it inplace.": _FORWARD_AD,
    "Only inplace operations can re-set the forward grad of a Tensor that already has one.": (
        _FORWARD_AD
    ),
    "Cannot set inplace=True and pass out= at the same time": "torch._refs, the Python reference "
    "implementations that decompositions use: not reached through torch.nn.functional",
    "Dynamo does not support calling the method `...` on `autograd.Function` context objects. "
    "Supported methods are `__setattr__`, `save_for_backward`, `mark_dirty` and "
    "`mark_non_differentiable`.": _DYNAMO,
    "` on `autograd.Function` context objects. Supported methods are `__setattr__`, "
    "`save_for_backward`, `mark_dirty` and `mark_non_differentiable`.": _DYNAMO,
    "Dynamo only supports ctx.mark_dirty when each dirty input is also returned from forward.": (
        _DYNAMO
    ),
    "Dynamo only supports tracing ctx.mark_dirty inside autograd.Function.apply.": _DYNAMO,
    "Unsupported autograd.Function context `mark_dirty`": _DYNAMO,
    "autograd.Function.apply: mark_dirty input not returned": _DYNAMO,
    "call_method ... mark_dirty": _DYNAMO,
    "Inplace op on input tensor": _DYNAMO,
    "First argument of inplace op must be mutable": _COMPILER,
    "Remaining arguments of inplace op must not be mutable": _COMPILER,
    "For associative_scan, combine_fn cannot have in-place mutations but found": "a prototype "
    "higher-order op's own rule (torch._higher_order_ops.associative_scan): its combine "
    "function must be pure; the message says so",
    "For associative_scan, combine_fn cannot have in-place mutations but found ...-th inputs are "
    "mutated.": "a prototype higher-order op's own rule (torch._higher_order_ops.associative_scan)"
    ": its combine function must be pure; the message says so",
    "Functions which modify views in-place must return a single Variable": "an older form of "
    "the check that the mark-dirty section shows (a view marked dirty, more than one output): "
    "the section's repro reaches that check, not this one",
    "In-place op on output of tensor.shape. See https://pytorch.org/docs/main/onnx.html#": "the "
    "ONNX exporter's (torch.onnx) own check on the graph it exports",
    "Tried to call torch.autograd._unsafe_set_version() on a tensor that does not have a version "
    "counter. Was it created in inference mode?": "a private function (_unsafe_set_version) "
    "called on an inference tensor: not public API",
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead": "an internal check: detach_() "
    "on a tensor that backward saved does not reach it in torch 2.13 (backward runs, with the "
    "gradient of the graph recorded before: tests/test_explain_inventory.py)",
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty().": "a UserWarning, not an error: ctx.mark_dirty "
    "on a tensor that is no input warns and the Function runs (tests/test_explain_inventory.py)",
    "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there "
    "is no need to pass it to mark_dirty().": "not reached from a Python Function: ctx.mark_dirty "
    "on a tensor that is no input gives the UserWarning above instead "
    "(tests/test_explain_inventory.py)",
    "mark_dirty can only accept variables, but argument": "a TypeError for a non-tensor "
    "argument of ctx.mark_dirty: the message says all there is",
    "expected coalesced tensor for inplace operation": "a sparse tensor's own requirement "
    "(coalesce() first), not an autograd error",
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
    "like same randomness.": "vmap's randomness='different' option with an in-place random op "
    "(such as uniform_) on an unbatched tensor: an option's contract, which the message states",
    "was modified by in-place operation, but we cannot find its updated value.": "the ONNX "
    "exporter's own pass that removes in-place ops from the graph it exports "
    "(torch/csrc/jit/passes/onnx/remove_inplace_ops_for_onnx.cpp); the message asks for a bug "
    "report",
}


def releases(path: Path = INVENTORY) -> dict[str, Any]:
    """The committed inventory, by release."""
    runs: dict[str, Any] = json.loads(path.read_text())["releases"]
    return runs


def sections(page: Path = PAGE) -> dict[str, str]:
    """Each error section's text, by slug, with its runs of white space as one space."""
    text = page.read_text()
    marks = list(re.finditer(r"^\((?P<label>[a-z0-9-]+)\)=$", text, re.MULTILINE))
    found = {}
    for n, mark in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        if mark["label"].startswith("error-"):
            found[mark["label"].removeprefix("error-")] = " ".join(text[mark.end() : end].split())
    return found


def covering_section(text: str, page: dict[str, str]) -> str | None:
    """The section that shows every part of ``text`` (``...`` separates parts), or explains it."""
    parts = [part.strip() for part in text.split("...") if len(part.strip()) >= 12]
    for slug, section in page.items():
        if parts and all(part in section for part in parts):
            return slug
    return explain(text).slug


def twin(text: str, pinned: Iterable[str]) -> str | None:
    """The pinned entry that shares a run of :data:`TWIN_RUN` characters with ``text``."""
    for other in pinned:
        matcher = difflib.SequenceMatcher(None, text, other, autojunk=False)
        if matcher.find_longest_match(0, len(text), 0, len(other)).size >= TWIN_RUN:
            return other
    return None


def classify(release: str, runs: dict[str, Any], pin: str) -> list[dict[str, str | None]]:
    """Each entry of ``release`` with its section, its twin in the pin, or its reason."""
    page = sections()
    pinned = [e["text"] for e in runs[pin]["entries"]]
    rows = []
    for entry in runs[release]["entries"]:
        text = entry["text"]
        same = None if release == pin else twin(text, pinned)
        rows.append(
            {
                "text": text,
                "section": covering_section(text, page),
                "twin": same,
                "reason": REASONS.get(text) or (REASONS.get(same) if same else None),
            }
        )
    return rows
