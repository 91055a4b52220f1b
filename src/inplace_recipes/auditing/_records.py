"""What the audit records: each write, the autograd nodes it touched, and the classes of consequence.

Imported by the recorder (which fills the records), the advice (which reads
them) and the report (which orders them); it imports none of them.

:data:`CONSEQUENCE_TABLE` is the one list of consequences, worst first, with
the ``--fail-on`` classes that fail on each; tools (a pytest plugin, CI
scripts) read it instead of copying names:

>>> [c.name for c in CONSEQUENCE_TABLE if "backward-fails" in c.fail_on]
['backward fails', 'raises']
>>> print(CONSEQUENCE_TABLE[0].text())
wrong gradients: autograd does not see the write, and a backward differentiated the tensor written after it: it ran, and its gradients are wrong unless the write leaves every derivative as it was (needs a fix; --fail-on wrong-gradients, any)
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONSEQUENCES",
    "CONSEQUENCE_TABLE",
    "FAIL_ON",
    "HARMFUL",
    "HARMLESS",
    "Consequence",
    "Node",
    "Write",
]


@dataclass(frozen=True)
class Consequence:
    """One class of what a write does to backward."""

    name: str  # as in Finding.consequence and the JSON "consequence"
    harmful: bool  # whether the write needs a fix
    fail_on: tuple[str, ...]  # the --fail-on classes that fail on it
    meaning: str

    def text(self) -> str:
        """One line: the name, what it means, whether it needs a fix and what fails on it."""
        need = "needs a fix" if self.harmful else "needs no fix"
        fails = f"; --fail-on {', '.join(self.fail_on)}" if self.fail_on else ""
        return f"{self.name}: {self.meaning} ({need}{fails})"


#: Every consequence, worst first: the order of the report.
CONSEQUENCE_TABLE = (
    Consequence(
        "wrong gradients",
        True,
        ("wrong-gradients", "any"),
        "autograd does not see the write, and a backward differentiated the tensor written "
        "after it: it ran, and its gradients are wrong unless the write leaves every "
        "derivative as it was",
    ),
    Consequence(
        "backward fails",
        True,
        ("backward-fails", "any"),
        "the write changed a tensor saved for a backward that ran after it and raised",
    ),
    Consequence(
        "raises", True, ("backward-fails", "any"), "autograd refused the write when it was made"
    ),
    Consequence(
        "fails if backpropagated",
        True,
        ("unused-graph", "any"),
        "the write changed a tensor saved by a graph that no backward ran through after "
        "it (an evaluation without torch.no_grad(), or code that stops before its "
        "backward): a backward through that graph would fail",
    ),
    Consequence(
        "wrong gradients if backpropagated",
        True,
        ("unused-graph", "any"),
        "autograd does not see the write, and no backward differentiated the tensor written "
        "after it (an evaluation, or code that stops before its backward): a backward "
        "through it would run and give wrong gradients",
    ),
    Consequence(
        "wrong gradients if reused",
        True,
        ("any",),
        "a custom Function's forward wrote its input without ctx.mark_dirty; nothing "
        "used the written tensor again, so the gradients are right, but a later use of it "
        "would get wrong ones",
    ),
    Consequence(
        "fails if backward again",
        False,
        ("unused-graph",),
        "the write changed a tensor saved by a graph kept with retain_graph=True after "
        "its backward, and no later backward used it",
    ),
    Consequence(
        "safe",
        False,
        (),
        "autograd tracks the write, or the write cannot change a derivative (a shift by a "
        "constant under no_grad); gradients are right",
    ),
)

#: The consequence names, worst first.
CONSEQUENCES = tuple(c.name for c in CONSEQUENCE_TABLE)
#: Consequences that need a fix, worst first.
HARMFUL = tuple(c.name for c in CONSEQUENCE_TABLE if c.harmful)
#: Consequences that need none: summarised on one line each.
HARMLESS = tuple(c.name for c in CONSEQUENCE_TABLE if not c.harmful)
#: Each ``--fail-on`` class and the consequences it fails on.
FAIL_ON = {
    name: tuple(c.name for c in CONSEQUENCE_TABLE if name in c.fail_on)
    for name in ("backward-fails", "wrong-gradients", "unused-graph", "any")
}


class Sentinel:
    """Lives in an autograd node's metadata: dies with the node."""

    __slots__ = ("__weakref__",)


@dataclass
class Node:
    """An autograd node that saved tensors, and the backwards that ran through it."""

    name: str
    where: tuple[str, int]
    alive: weakref.ref[Sentinel]
    runs: int = 0
    consumed: bool = False
    backward_at: tuple[str, int] | None = None  # the user's line of the last backward
    #: (file, line, id of the code) of the forward line and of the user lines that called it
    callers: tuple[tuple[str, int, int], ...] = ()
    #: Whether autograd checks the versions of what it saved (not under a recomputation's hooks).
    checked: bool = True
    #: Weak references to tensors that share the saved tensors' version counters.
    witnesses: tuple[Any, ...] = ()

    def line_in(self, function: int) -> tuple[str, int]:
        """The line in ``function`` (a code object's id) that led to this node, else :attr:`where`."""
        return next(((f, n) for f, n, code in self.callers if code == function), self.where)

    def live(self) -> bool:
        return not self.consumed and self.alive() is not None


@dataclass
class Write:
    """One call's write into one tensor, as the audit saw it.

    ``consequence`` is final once the recorder's ``finish`` has run.
    """

    label: str
    name: str
    shape: tuple[int, ...]
    dtype: str
    kind: str
    consequence: str
    file: str
    line: int
    inside: str | None  # the torch file that made the write, when not the user's line
    detail: str = ""
    slug: str | None = None
    after: str = ""  # what made the tensor written, e.g. "NativeBatchNorm"
    fix: str | None = None
    edit: dict[str, Any] | None = None  # what ``audit --fix`` applies (advice.Fix.edit)
    nodes: list[Node] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    #: Nodes whose backward differentiates the written tensor (a write autograd does not see)
    watched: list[Node] = field(default_factory=list)
    watched_runs: list[int] = field(default_factory=list)
    backwards: int = 0  # backward calls finished when the write happened
    failed: int = 0  # backward calls that had raised when the write happened
    #: The user's line of the backward that raised after the write before it reached its graph
    raised_at: tuple[str, int] | None = None
    alias_of_leaf: bool = False
    in_function: bool = False  # in a custom autograd.Function's forward
    context: str = ""  # the name of that forward's ctx argument
    same_source: bool = False  # copy_ from a tensor of the same shape, dtype and device
    parameter: bool = False  # the tensor written is an nn.Parameter or optimizer state
    call_args: tuple[Any, ...] = ()
    call_kwargs: dict[str, Any] = field(default_factory=dict)
    module: Any = None
    module_name: str | None = None  # e.g. "self.relu", when the user's line is in a forward
    hooked: bool = False
    function: int = 0  # id of the code object of the user's line
    cwd: str = ""  # the working directory when the audit started: paths are shown from it  # the tensor is the input or output of a module with a backward hook
