"""Watch torch calls and record the in-place writes on tensors of an autograd graph.

One :class:`~torch.overrides.TorchFunctionMode` sees every torch call your
code makes (not the calls torch makes inside it). A call wrote a tensor
argument when the argument's version counter moved: autograd bumps it for
every in-place op, ``out=`` and ``inplace=True`` included, whatever the op.
The new autograd nodes of each call are walked for the tensors they saved;
a write into the memory of a saved tensor that a backward still needs is a
finding. What backward then does is decided when the audit ends, from the
backwards that ran: see :class:`Recorder`.

``torch.compile``'d code runs as eager code while an audit is active
(``torch.compiler.set_stance("force_eager")``, in every thread), so that
the audit sees its ops and the report and any error are eager's: the audit
of a compiled function says what its code does uncompiled, and its values
are eager's, which may differ from the compiled ones in the last bits. It
cannot see what a compiled graph itself saves or checks. Nothing is compiled
under the audit and the compiled caches are kept: a ``fullgraph=True``
function runs as it does without the audit, and after the audit the code
compiled before it runs again. Should Dynamo still trace under the audit
(a stance the program sets itself), each torch call leaves the graph and runs
eagerly, and the audit resets torch.compile's caches when it ends.

A write in a custom ``autograd.Function``'s ``forward`` is judged when the
Function returns: one it marked with ``ctx.mark_dirty`` (the tensor's
``grad_fn`` is now the Function's node) is safe. An unmarked one leaves the
written tensor with its old history: it is ``"wrong gradients"`` once a later
op with grad uses that tensor (not the Function's output), on a leaf too, and
``"wrong gradients if reused"`` while nothing does (``h = f(h)``).

>>> import torch
>>> x = torch.ones(2, requires_grad=True)
>>> recorder = Recorder()
>>> with recorder.installed():
...     y = x.exp()
...     _ = y.add_(1)  # exp saved its output
>>> [(w.label, w.consequence) for w in recorder.finish()]
[('add_', 'fails if backpropagated')]
"""

# torch.utils.weak is untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import contextlib
import functools
import inspect
import linecache
import os
import sys
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from ..error_reference import explain
from . import _advice as advice
from ._engine import backward_of, engine_sees
from ._fast_paths import unchanged_fast_paths
from ._paths import user_path
from ._records import HARMLESS, Node, Sentinel, Write

__all__ = ["RAISED_KINDS", "Recorder"]

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR = os.path.dirname(__file__) + os.sep
_PACKAGE_DIR = os.path.dirname(_OWN_DIR.rstrip(os.sep)) + os.sep
_ERROR_REFERENCE = os.path.join(_PACKAGE_DIR, "error_reference.py")

#: Errors autograd raises at the write itself, with the kind of tensor written.
RAISED_KINDS = {
    "leaf": "leaf",
    "view-of-leaf": "view of a leaf",
    "multi-output-view": "view from a multi-output op",
    "no-grad-view": "view made under no_grad",
    "custom-function-view": "view from a custom Function",
    "backward-hook-view": "view from a custom Function",  # BackwardHookFunction
    "mark-dirty": "input marked dirty but not returned",
    "inference-tensor": "inference tensor",
    "expanded": "expanded tensor",
    "input-overlap": "tensor that overlaps its input",
    "vmap": "unbatched tensor under vmap",
    "output-shape": "tensor smaller than the result",
    "out-argument": "out= with grad",
    "resize": "tensor that requires grad, resized",
    "detach-view": "view detached in place",
    "captured-mutation": "tensor captured by a torch.func transform",
}
_BACKWARD = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})
_OVERRIDES = os.path.join("torch", "overrides.py")
#: Torch files between the user's line and the op that are no caller of it: Dynamo's eval frames.
_PASS_THROUGH = (_OVERRIDES, os.path.join("torch", "_dynamo", "eval_frame.py"))
_ACCESSORS = frozenset({"__get__", "__set__"})
_FUNCTION_PY = os.path.join("torch", "autograd", "function.py")
_CHECKPOINT_PY = os.path.join("torch", "utils", "checkpoint.py")
_AUTOGRAD_PY = os.path.join("torch", "autograd", "__init__.py")
#: Forget dead nodes after this many new ones.
_PRUNE_EVERY = 4096
#: How many different problems of its own an audit keeps the text of.
_PROBLEMS_KEPT = 20
#: How many ``detach()`` of ``detach()`` the audit follows to a version counter.
_ALIAS_DEPTH = 16
_T = TypeVar("_T")
#: What a read of a tensor's ``grad_fn`` gives where torch refuses it.
_REFUSED: Any = object()


def _own(file: str) -> bool:
    return file.startswith((_TORCH_DIR, _OWN_DIR)) or file == _ERROR_REFERENCE


def _frames() -> tuple[FrameType | None, FrameType | None]:
    """The user's frame (innermost outside torch and the audit) and torch's frame that called the op.

    The second is ``None`` when the user's line called the op itself.
    """
    frame: FrameType | None = sys._getframe(1)
    caller = None
    while frame is not None and _own(frame.f_code.co_filename):
        name = frame.f_code.co_filename
        if caller is None and name.startswith(_TORCH_DIR) and not name.endswith(_PASS_THROUGH):
            caller = frame
        frame = frame.f_back
    return frame, caller


def _storage(t: Tensor) -> int | None:
    """An id of ``t``'s memory, or ``None`` (empty, meta, wrapper subclasses)."""
    try:
        if t.numel() == 0:
            return None
        return int(t.untyped_storage().data_ptr())
    except Exception:  # noqa: BLE001 - subclasses raise what they like; no memory to name
        return None


def _grad_fn(t: Tensor) -> Any:
    """``t.grad_fn``, or :data:`_REFUSED` where torch refuses to give it.

    Torch 2.13 raises on reading the ``grad_fn`` (and so ``is_leaf``) of a view
    made under ``no_grad`` once its base, or another view of it, was written
    ("A view was created in no_grad mode and its base or another view of its
    base has been modified inplace ..."), even under ``no_grad``: what
    ``nn.init.orthogonal_`` does to a Parameter. The program never reads it;
    the audit must not raise where the program does not.
    """
    try:
        return t.grad_fn
    except RuntimeError:
        return _REFUSED


def _leaf(t: Tensor) -> bool:
    """``t.is_leaf``, read so that torch cannot refuse it (see :func:`_grad_fn`).

    A view whose ``grad_fn`` torch refuses was made and written under
    ``no_grad`` (torch refuses the write itself with grad on): the write went
    into its base's memory, and is judged as one into its base.
    """
    node = _grad_fn(t)
    if node is _REFUSED:
        base = t._base
        return base is None or _leaf(base)
    return node is None


def _versions(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Tensor, int]]:
    """Each tensor argument (one level of lists and tuples) with its version."""
    found = []
    for item in (*args, *kwargs.values()) if kwargs else args:
        if type(item) is Tensor or isinstance(item, Tensor):
            items: Any = (item,)
        elif isinstance(item, (list, tuple)):
            items = item
        else:
            continue
        for t in items:
            if isinstance(t, Tensor):
                with contextlib.suppress(RuntimeError):  # inference tensors have no version
                    found.append((t, t._version))
    return found


# Signatures of torch's functions (a few hundred at most): bounded in count,
# thread-safe (lru_cache locks), and a signature never changes an answer.
@functools.lru_cache(maxsize=512)
def _signature(func: Any) -> inspect.Signature:
    return inspect.signature(func)


def _name(func: Any) -> str:
    name = getattr(func, "__name__", None) or str(func)
    if name == "__get__":  # a property getter: Tensor.data, ...
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", name)
    return str(name)


class Recorder:
    """Records writes while :meth:`installed`; :meth:`finish` judges them.

    A write into a tensor that a live autograd node saved is judged by the
    backwards the audit saw: one that ran through the node after the write
    makes it ``"backward fails"`` (``"wrong gradients"`` for a ``.data``
    write, which autograd does not see). A node that a backward with
    ``retain_graph=True`` had already run through, and that no later backward
    used, gives ``"fails if backward again"``: the graph was kept but never
    needed after the write. A node that no backward ran through after the
    write, and none before, gives ``"fails if backpropagated"``: an
    evaluation without ``no_grad``, or code that stopped before its backward.
    """

    def __init__(self) -> None:
        self.key = f"inplace_recipes.auditing.{id(self)}"
        self.watch_key = f"{self.key}.watched"
        self.saved: dict[int, list[Node]] = {}
        self.aliases: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self.writes: list[Write] = []
        self.retain = False
        self.backwards = 0
        self.cwd = os.getcwd()  # paths are shown from here, whatever os.chdir the code runs
        self.failed = 0  # backward calls that raised
        self.failed_at: list[tuple[str, int] | None] = []  # the user's line of each
        self.backward_at: tuple[str, int] | None = None
        self.tracked = 0
        self.pending: list[_Pending] = []  # writes in a custom Function's forward: marked dirty?
        self.stale: list[_Pending] = []  # unmarked ones: is the written tensor used again?
        # Per autograd node type, the attributes that may hold a saved tensor:
        # kept by this audit only, so nothing outlives it.
        self.saved_names: dict[type, tuple[str, ...]] = {}
        #: Dynamo traced code under this audit: its compiled code calls back into it.
        self.compiled = False
        self.mode: TorchFunctionMode | None = None
        #: The audit's own steps that raised (never passed to the program): what, and how often.
        self.problems: dict[str, int] = {}

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Watch the torch calls of the ``with`` block."""
        eager = torch.compiler.set_stance("force_eager")
        self.mode = _FunctionMode(self)
        with eager, unchanged_fast_paths(_FunctionMode), engine_sees(), self.mode:
            try:
                yield
            finally:
                self.saved.clear()
        if self.compiled:  # drop the code compiled around this audit's callbacks
            torch.compiler.reset()

    def finish(self) -> list[Write]:
        """The writes, each with its final consequence and fix."""
        self._guarded(self._settle, True)
        for write in self.writes:
            self._guarded(self._conclude, write)
        return self.writes

    def _conclude(self, write: Write) -> None:
        self._judge(write)
        if write.fix is None and write.consequence not in HARMLESS:
            fix = advice.fix_for(write)
            write.fix, write.edit = fix.text, fix.edit

    # -- the call -----------------------------------------------------------

    def on_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``func`` as the program would, and record what it wrote.

        The call itself is the program's: its value and its exception pass
        through unchanged. Every step of the audit's own around it runs in
        :meth:`_guarded`, so that a read torch refuses, or a bug of the
        audit's, is counted in :attr:`problems` and never reaches the program.
        """
        __tracebackhide__ = True  # pytest and IPython leave the audit's frames out
        if func in _BACKWARD:
            return self._backward(func, args, kwargs)
        if getattr(func, "__name__", None) in _ACCESSORS:  # properties write nothing
            out = func(*args, **kwargs)
            if _name(func) == "data":
                self._guarded(self._alias, out, "data", args)
            return out
        before = self._guarded(self._before, func, args, kwargs)
        try:
            out = func(*args, **kwargs)
        except Exception as exc:
            if isinstance(exc, RuntimeError):
                self._guarded(self._raised, _name(func), args, kwargs, exc)
            if before is not None:  # what it wrote before it raised (a checkpoint's early stop)
                self._guarded(self._after, None, args, kwargs, *before)
            raise
        if before is not None:
            self._guarded(self._after, out, args, kwargs, *before)
        return out

    def _guarded(self, step: Callable[..., _T], *args: Any) -> _T | None:
        """``step(*args)``, or ``None`` if it raised: the audit's own work never changes the program."""
        try:
            return step(*args)
        except Exception as exc:  # noqa: BLE001 - counted, shown in the report, never raised
            what = f"{getattr(step, '__name__', step)}: {type(exc).__name__}: {str(exc)[:200]}"
            if what in self.problems or len(self.problems) < _PROBLEMS_KEPT:
                self.problems[what] = self.problems.get(what, 0) + 1
            return None

    def _before(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[str, list[tuple[Tensor, int]], bool]:
        """The call's name, its tensor arguments' versions and the grad mode, before it runs."""
        if self.pending:
            self._settle()
        name = _name(func)
        before = _versions(args, kwargs)
        grad_enabled = torch.is_grad_enabled()
        if self.stale and grad_enabled and not _returning(name):
            self._reused(before)
        return name, before, grad_enabled

    def _after(
        self,
        out: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str,
        before: list[tuple[Tensor, int]],
        grad_enabled: bool,
    ) -> None:
        """Record the arguments the call wrote, and the saved tensors of the nodes it made."""
        frames: tuple[FrameType | None, FrameType | None] | None = None
        done: set[int] = set()
        for t, version in before:
            if t._version != version and id(t) not in done:
                done.add(id(t))
                frames = frames or _frames()
                self._guarded(self._written, t, name, args, kwargs, grad_enabled, frames)
        if name == "detach":
            self._alias(out, name, args)
        if grad_enabled:
            self._track(out, frames)

    def _alias(self, out: Any, name: str, args: tuple[Any, ...]) -> None:
        """Remember that ``out`` is ``source.data`` or ``source.detach()``."""
        source = args[0] if args else None
        if isinstance(out, Tensor) and isinstance(source, Tensor):
            self.aliases[out] = _Alias(
                name, source.requires_grad, _leaf(source), weakref.ref(source)
            )

    def _watch(self, *nodes: Any) -> list[Node]:
        """Records of ``nodes`` that count the backwards that run through them."""
        found = []
        for node in nodes:
            if node is None or node is _REFUSED:
                continue
            meta: dict[str, Any] = node.metadata
            entry = meta.get(self.watch_key)
            if entry is None:
                sentinel = Sentinel()
                entry = meta[self.watch_key] = (
                    sentinel,
                    Node(type(node).__name__, ("", 0), weakref.ref(sentinel)),
                )
                node.register_prehook(self._runner(entry[1]))
            found.append(entry[1])
        return found

    def _backward(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run a backward with this audit's mode active in it (see :mod:`.engine`), and count it."""
        __tracebackhide__ = True
        state = self.retain, self.backward_at
        self._guarded(self._backward_starts, func, args, kwargs)
        try:
            with backward_of(self.mode):
                out = func(*args, **kwargs)
        except BaseException:
            self.failed += 1
            self.failed_at.append(self.backward_at)
            raise
        finally:
            self.retain, self.backward_at = state
        self.backwards += 1  # one that finished: it ran every node it needed
        return out

    def _backward_starts(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Whether the backward keeps its graph, and the user's line that called it."""
        try:
            bound = _signature(func).bind(*args, **kwargs)
            retain = bound.arguments.get("retain_graph")
            if retain is None:
                retain = bound.arguments.get("create_graph", False)
        except (TypeError, ValueError):
            retain = True  # unknown: keep every saved tensor as live
        user, _ = _frames()
        self.retain = bool(retain)
        self.backward_at = (user.f_code.co_filename, user.f_lineno) if user else None

    # -- saved tensors --------------------------------------------------------

    def _track(self, out: Any, frames: tuple[FrameType | None, FrameType | None] | None) -> None:
        """Register the saved tensors of the autograd nodes ``out`` brought."""
        if isinstance(out, Tensor):
            todo = [_grad_fn(out)]
        elif isinstance(out, (list, tuple)):
            todo = [_grad_fn(t) for t in out if isinstance(t, Tensor)]
        else:
            return
        key = self.key
        where: tuple[str, int] | None = None
        callers: tuple[tuple[str, int, int], ...] = ()
        # Under saved_tensors_hooks (a non-reentrant checkpoint, offloading) the
        # nodes keep packed values, not the tensors: reading them would unpack
        # (recompute) and give memory that is freed at once. Mark, don't read;
        # except in a non-reentrant checkpoint's recomputation, whose hooks keep
        # the tensor itself (torch 2.13's _recomputation_hook: unpack returns it)
        # and check no version: a write into one is used by the running backward.
        hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
        recomputed = hooks is not None and _recomputation_hooks(hooks)
        packed = hooks is not None and not recomputed
        outputs = [out] if isinstance(out, Tensor) else [t for t in out if isinstance(t, Tensor)]
        todo = [node for node in todo if node is not None and node is not _REFUSED]
        while todo:
            node = todo.pop()
            meta: dict[str, Any] = node.metadata
            if key in meta:
                continue
            sentinel = Sentinel()
            meta[key] = sentinel
            todo.extend(n for n, _ in node.next_functions if n is not None and n.next_functions)
            saved = None if packed else self._saved_of(node)
            if not saved:
                continue
            if where is None:
                user = (frames or _frames())[0]
                where = (user.f_code.co_filename, user.f_lineno) if user else ("<unknown>", 0)
                callers = _callers(user)
            record = Node(
                type(node).__name__,
                where,
                weakref.ref(sentinel),
                callers=callers,
                checked=not recomputed,
                witnesses=_witnesses(saved, outputs),
            )
            keys = {k for k in map(_storage, saved) if k is not None}
            self.tracked += 1
            if self.tracked % _PRUNE_EVERY == 0:
                self._prune()
            for k in keys:
                self.saved.setdefault(k, []).append(record)
            if keys:
                node.register_prehook(self._runner(record))

    def _prune(self) -> None:
        """Forget the nodes that died or were consumed, so that a long run stays small."""
        self.saved = {
            k: live for k, nodes in self.saved.items() if (live := [n for n in nodes if n.live()])
        }

    def _saved_of(self, node: Any) -> list[Tensor]:
        """The tensors ``node`` saved for backward."""
        kind = type(node)
        names = self.saved_names.get(kind)
        if names is None:
            if isinstance(node, torch.autograd.function.BackwardCFunction):
                names = ("saved_tensors",)
            else:
                names = tuple(n for n in dir(kind) if n.startswith("_saved_"))
        found: list[Tensor] = []
        keep = []
        for attr in names:
            try:
                value = getattr(node, attr)
            except RuntimeError:  # freed, or not savable
                keep.append(attr)
                continue
            if isinstance(value, Tensor):
                found.append(value)
            elif isinstance(value, (tuple, list)):
                found.extend(v for v in value if isinstance(v, Tensor))
            elif value is not None:
                continue  # sizes, scalars: never a tensor for this node type
            keep.append(attr)
        self.saved_names[kind] = tuple(keep)
        return found

    def _runner(self, record: Node) -> Callable[..., None]:
        def ran(*_: Any) -> None:
            record.runs += 1
            record.backward_at = self.backward_at
            if not self.retain:
                record.consumed = True

        return ran

    # -- writes -----------------------------------------------------------------

    def _written(
        self,
        t: Tensor,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        grad_enabled: bool,
        frames: tuple[FrameType | None, FrameType | None],
    ) -> None:
        key = _storage(t)
        nodes = [n for n in self.saved.get(key, ()) if n.live()] if key is not None else []
        recomputing = ""
        if torch._C._current_graph_task_id() != -1:
            # Inside a backward: a checkpoint's recomputed forward is the user's forward
            # run again; a hook's or a Function's backward is not judged.
            recomputing = _recomputation()
            if not recomputing or (recomputing == "non-reentrant" and not nodes):
                return  # the non-reentrant forward's own writes were recorded when it ran
        alias = self._alias_of(t)
        user, inner = frames
        in_function = _in_function_forward(user)
        detail = ""
        watched: list[Node] = []
        if nodes:
            first = nodes[0]
            detail = (
                f"saved by {first.name} ({user_path(first.where[0], self.cwd)}:{first.where[1]})"
            )
            if recomputing == "non-reentrant":
                kind, consequence = "saved in a checkpoint's recomputation", "wrong gradients"
                detail += (
                    "; a non-reentrant checkpoint recomputed this forward in the backward and "
                    "autograd checks no version of what it saved: the backward uses the written values"
                )
                nodes = []  # the running backward uses them, not the recomputation's graph
            elif not self._checked(nodes, t, alias):
                kind = f"{alias} alias of a saved tensor" if alias else "alias of a saved tensor"
                consequence = "wrong gradients"
                detail += (
                    "; autograd does not see this write: the tensor written has a version "
                    "counter of its own"
                )
            else:
                kind, consequence = "saved for backward", "backward fails"
        elif t.requires_grad and _leaf(t) and in_function:
            kind, consequence = "leaf written in a custom Function", "wrong gradients"
            detail = "autograd does not see this write: the leaf's value changes under its gradient"
        elif t.requires_grad and _leaf(t):
            return  # under no_grad (else autograd raised): initialisation, optimizer steps
        elif t.requires_grad and grad_enabled:
            view = name == "__setitem__" or t._base is not None
            kind = "non-leaf view (CopySlices)" if view else "non-leaf"
            consequence = "safe"
            if name in ("leaky_relu_", "leaky_relu") and _negative(args, kwargs):
                consequence, detail = "backward fails", "leaky_relu_ with a negative slope"
        elif t.requires_grad:
            kind, consequence = "non-leaf under no_grad", "wrong gradients"
            detail = "autograd does not see this write"
            if _constant_shift(t, name, args, kwargs):
                consequence = "safe"
                detail += ": a shift by a constant, whose derivative is 1, so gradients are right"
            watched = self._watch(_grad_fn(t), *(() if t._base is None else (_grad_fn(t._base),)))
        elif alias is not None and self._alias_source_grad(t):
            source_leaf = self._alias_source_leaf(t)
            kind = f"{alias} alias of a {'leaf' if source_leaf else 'non-leaf'}"
            consequence = "safe" if source_leaf else "wrong gradients"
            if not source_leaf:
                detail = "autograd does not see this write"
                watched = self._watch(*self._alias_source_node(t))
        else:
            return
        file, line = (user.f_code.co_filename, user.f_lineno) if user else ("<unknown>", 0)
        if file.startswith(_PACKAGE_DIR):
            return  # a recipe's own write into its fresh copy
        inside = module = None
        attribute = None
        if inner is not None:
            inside = inner.f_code.co_filename
            module = _module_of(user, inner)
            attribute = _attribute(user, module)
        shape_of = args[0] if name == "__setitem__" and isinstance(args[0], Tensor) else t
        self.writes.append(
            Write(
                label=advice.label(name, kwargs, module, linecache.getline(file, line)),
                name=name,
                shape=tuple(shape_of.shape),
                dtype=str(shape_of.dtype).removeprefix("torch."),
                kind=kind,
                consequence=consequence,
                file=file,
                line=line,
                inside=inside,
                detail=detail,
                slug="saved-tensor-modified" if consequence == "backward fails" else None,
                after=_after(t),
                nodes=nodes,
                runs=[n.runs for n in nodes],
                watched=watched,
                watched_runs=[n.runs for n in watched],
                backwards=self.backwards,
                failed=self.failed,
                alias_of_leaf=alias is not None and self._alias_source_leaf(t),
                call_args=args if name == "__setitem__" else (),
                call_kwargs={k: v for k, v in kwargs.items() if k in ("out", "inplace")},
                module=module,
                module_name=attribute,
                parameter=t.requires_grad and _leaf(t),
                function=id(user.f_code) if user is not None else 0,
                cwd=self.cwd,
                same_source=name == "copy_" and _same_source(t, args),
                in_function=in_function,
                context=_context(user) if in_function else "",
            )
        )
        if in_function and consequence == "wrong gradients" and user is not None:
            self.pending.append(_Pending(self.writes[-1], weakref.ref(t), _grad_fn(t), user))

    def _settle(self, final: bool = False) -> None:
        """Judge the writes of custom Functions' forwards that have returned.

        A Function that called ``ctx.mark_dirty`` on the tensor it wrote gave it
        the Function's node as ``grad_fn``: autograd sees the write, which is safe.
        """
        stack: set[int] | None = None
        keep = []
        for pending in self.pending:
            t = pending.tensor()
            if t is None:  # gone: nothing can use it again
                self._unmarked(pending)
                continue
            node: Any = _grad_fn(t)
            if node is not pending.grad_fn and isinstance(
                node, torch.autograd.function.BackwardCFunction
            ):
                write = pending.write
                write.kind, write.consequence = "marked dirty in a custom Function", "safe"
                write.detail = "ctx.mark_dirty: autograd sees this write"
                continue
            function_returned = True
            if not final:
                if stack is None:
                    stack = set()
                    frame: FrameType | None = sys._getframe(1)
                    while frame is not None:
                        stack.add(id(frame))
                        frame = frame.f_back
                if id(pending.frame) in stack:
                    keep.append(pending)  # its forward has not returned yet
                    function_returned = False
            if function_returned:
                self._unmarked(pending)
        self.pending = keep

    def _unmarked(self, pending: _Pending) -> None:
        """A Function returned without marking its write: wrong only once the tensor is used again."""
        write = pending.write
        if write.kind not in _UNMARKED:
            return  # a .data write into a saved tensor: wrong whatever follows
        write.consequence = "wrong gradients if reused"
        write.detail = (
            "not marked with ctx.mark_dirty: autograd does not see this write, and the "
            "tensor written keeps its old history; nothing used it again"
        )
        self.stale.append(pending)

    def _reused(self, arguments: list[tuple[Tensor, int]]) -> None:
        """Upgrade the unmarked writes whose written tensor a call with grad uses again."""
        if torch._C._current_graph_task_id() != -1:
            return  # inside a backward
        keep = []
        for pending in self.stale:
            t = pending.tensor()
            if t is None:
                continue
            used = next(
                (a for a, _ in arguments if a.requires_grad and _stale(a, t, pending)), None
            )
            if used is None:
                keep.append(pending)
                continue
            user, _ = _frames()
            write = pending.write
            write.consequence = "wrong gradients"
            where = (
                f" at {user_path(user.f_code.co_filename, self.cwd)}:{user.f_lineno}"
                if user
                else ""
            )
            write.detail = (
                "not marked with ctx.mark_dirty: autograd does not see this write, and the "
                f"tensor written keeps its old history; it is used again{where}, "
                "where backward differentiates its old value"
            )
        self.stale = keep

    def _judge(self, write: Write) -> None:
        """The consequence, from the backwards that ran after the write."""
        if write.nodes:
            self._judge_saved(write)
        elif write.consequence == "wrong gradients":
            self._judge_unseen(write)

    def _judge_saved(self, write: Write) -> None:
        """A write into a tensor saved for backward: did a backward use it after the write?"""
        ran_after = [n for n, runs in zip(write.nodes, write.runs, strict=True) if n.runs > runs]
        if ran_after:
            write.detail += _backward_detail(ran_after, write.cwd)
            return
        base = write.consequence
        would = "fail" if base == "backward fails" else "get wrong gradients"
        raised = self.failed > write.failed
        if all(runs > 0 for runs in write.runs):  # kept by retain_graph=True, not used again
            write.consequence = "fails if backward again"
            write.detail += f"; no later backward ran through it (one would {would})"
        elif raised and base == "backward fails":
            write.detail += "; a later backward raised before it reached this graph"
            write.raised_at = self.failed_at[write.failed]
        elif base == "backward fails":
            write.consequence = "fails if backpropagated"
            write.detail += "; no backward ran through this graph after the write (one would fail)"
        else:
            write.consequence = "wrong gradients if backpropagated"
            write.detail += (
                "; a later backward raised before it reached this graph"
                if raised
                else "; no backward ran through this graph after the write"
            ) + " (one would run, with wrong gradients)"

    def _judge_unseen(self, write: Write) -> None:
        """A write autograd does not see, into no saved tensor: did a backward differentiate it?"""
        if write.watched:
            ran = any(n.runs > r for n, r in zip(write.watched, write.watched_runs, strict=True))
        else:
            ran = self.backwards > write.backwards
        if not ran:
            write.consequence = "wrong gradients if backpropagated"
            write.detail += (
                "; no backward ran through the written tensor after the write "
                "(one would run, with wrong gradients)"
            )

    def _raised(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], exc: Exception
    ) -> None:
        found = explain(exc)
        # One error passes through every call of this audit that led to it: record it once
        # per audit (an audit inside another records it too).
        audits: set[str] = getattr(exc, "_inplace_recipes_audits", set())
        if found.slug not in RAISED_KINDS or self.key in audits:
            return
        exc._inplace_recipes_audits = audits | {self.key}  # type: ignore[attr-defined]
        target = kwargs.get("out")
        if not isinstance(target, Tensor):
            target = next((t for t, _ in _versions(args, kwargs)), None)
        user, inner = _frames()
        file, line = (user.f_code.co_filename, user.f_lineno) if user else ("<unknown>", 0)
        assert found.kind is not None
        hooked = found.kind.slug == "backward-hook-view"
        module = _module_of(user, inner) if inner is not None else None
        attribute = _attribute(user, module)
        self.writes.append(
            Write(
                label=advice.label(name, kwargs, module, linecache.getline(file, line)),
                name=name,
                shape=tuple(target.shape) if target is not None else (),
                dtype=str(target.dtype).removeprefix("torch.") if target is not None else "",
                kind=RAISED_KINDS[found.kind.slug],
                consequence="raises",
                file=file,
                line=line,
                detail=str(exc).split(". ")[0][:120],
                slug=found.kind.slug,
                fix=None if name == "__setitem__" or hooked else found.kind.fix,
                call_args=args if name == "__setitem__" else (),
                call_kwargs={k: v for k, v in kwargs.items() if k in ("out", "inplace")},
                inside=inner.f_code.co_filename if inner is not None and hooked else None,
                module=module,
                module_name=attribute,
                hooked=hooked,
                cwd=self.cwd,
            )
        )

    def _checked(self, nodes: list[Node], t: Tensor, alias: str | None) -> bool:
        """Whether autograd's version check sees the write into ``t``, in memory these nodes saved.

        It does when ``t`` shares the version counter of a saved tensor: ``t`` is
        that tensor, a view of it, or a ``detach()`` of one. ``.data`` (in torch
        2.13) gives a tensor with a counter of its own, and the backward runs on
        the written values. Where no tensor that shares a saved tensor's counter
        is left to compare with, only a ``.data`` alias is taken as unseen.
        """
        counter = self._counter_of(t)
        for node in nodes:
            if not node.checked:
                continue
            alive = [w for ref in node.witnesses if (w := ref()) is not None]
            if not alive:
                if alias != ".data":
                    return True
            elif any(self._counter_of(w) is counter for w in alive):
                return True
        return False

    def _counter_of(self, t: Tensor) -> Tensor:
        """The tensor whose version counter ``t`` shares: its view base, through ``detach()``."""
        for _ in range(_ALIAS_DEPTH):
            while t._base is not None:
                t = t._base
            entry = self.aliases.get(t)
            source = entry.source() if entry is not None and entry.name == "detach" else None
            if source is None:
                return t
            t = source
        return t

    def _alias_of(self, t: Tensor) -> str | None:
        entry = self._alias_entry(t)
        return (
            None if entry is None else f".{entry.name}" + ("()" if entry.name == "detach" else "")
        )

    def _alias_source_grad(self, t: Tensor) -> bool:
        entry = self._alias_entry(t)
        return bool(entry and entry.requires_grad)

    def _alias_source_leaf(self, t: Tensor) -> bool:
        entry = self._alias_entry(t)
        return bool(entry and entry.requires_grad and entry.leaf)

    def _alias_source_node(self, t: Tensor) -> tuple[Any, ...]:
        """The ``grad_fn`` of the tensor ``t`` aliases, and of its base."""
        entry = self._alias_entry(t)
        source = entry.source() if entry is not None else None
        if source is None:
            return ()
        return (_grad_fn(source), *(() if source._base is None else (_grad_fn(source._base),)))

    def _alias_entry(self, t: Tensor) -> _Alias | None:
        current: Tensor | None = t
        while current is not None:
            entry = self.aliases.get(current)
            if entry is not None:
                return entry  # type: ignore[no-any-return]
            current = current._base
        return None


#: The kinds of an unmarked write in a custom Function's forward that autograd does not see.
_UNMARKED = frozenset({"non-leaf under no_grad", "leaf written in a custom Function"})


def _stale(t: Tensor, written: Tensor, pending: _Pending) -> bool:
    """Whether ``t`` is the tensor an unmarked Function wrote, or a view of it not from the Function.

    A view of the Function's output has the Function's node in its history; the
    written tensor, and views made of it, reach its old node (or, for a leaf, its
    ``AccumulateGrad``) first.
    """
    if t is written:
        return True
    if _storage(t) != _storage(written):
        return False
    node: Any = _grad_fn(t)
    for _ in range(8):  # views of views: a short chain
        if node is None or node is _REFUSED:
            return False
        if isinstance(node, torch.autograd.function.BackwardCFunction):
            return False
        if node is pending.grad_fn or getattr(node, "variable", None) is written:
            return True
        node = node.next_functions[0][0] if node.next_functions else None
    return False


@dataclass(frozen=True)
class _Alias:
    """What a ``.data`` or ``detach()`` alias is of."""

    name: str  # "data" or "detach"
    requires_grad: bool  # the source's
    leaf: bool  # the source's
    source: weakref.ref[Tensor]


def _witnesses(saved: list[Tensor], outputs: list[Tensor]) -> tuple[Any, ...]:
    """Weak references to tensors that share the version counters of ``saved``.

    A saved input unpacks to the tensor itself; a saved output unpacks to a new
    tensor each time, so the op's output stands in for it.
    """
    keys = {_storage(t) for t in saved}
    found = []
    for t in (*saved, *(o for o in outputs if _storage(o) in keys)):
        with contextlib.suppress(TypeError):  # a subclass without weak references
            found.append(weakref.ref(t))
    return tuple(found)


def _recomputation_hooks(hooks: tuple[Any, Any]) -> bool:
    """Whether ``hooks`` are a non-reentrant checkpoint's recomputation hooks (torch 2.13)."""
    return str(getattr(hooks[0], "__qualname__", "")).startswith("_recomputation_hook.")


def _recomputation() -> str:
    """``"reentrant"`` or ``"non-reentrant"`` inside a checkpoint's recomputed forward, else ``""``.

    Torch 2.13: the reentrant checkpoint recomputes in ``CheckpointFunction.backward``,
    then runs a backward of its own (not a recomputation); the non-reentrant one
    recomputes under ``_recomputation_hook``.
    """
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if hooks is not None and _recomputation_hooks(hooks):
        return "non-reentrant"
    frame: FrameType | None = sys._getframe(1)
    child: FrameType | None = None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "backward" and code.co_filename.endswith(_CHECKPOINT_PY):
            called = child.f_code.co_filename if child is not None else ""
            return "" if called.endswith(_AUTOGRAD_PY) else "reentrant"
        child, frame = frame, frame.f_back
    return ""


@dataclass
class _Pending:
    """A write in a custom Function's ``forward``, until the Function has returned."""

    write: Write
    tensor: weakref.ref[Tensor]
    grad_fn: Any  # before the write
    frame: FrameType  # the forward's


def _in_function_forward(user: FrameType | None) -> bool:
    """Whether the user's line is in a custom ``autograd.Function``'s ``forward``."""
    caller = user.f_back if user is not None else None
    return (
        caller is not None
        and caller.f_code.co_name == "apply"
        and caller.f_code.co_filename.endswith(_FUNCTION_PY)
    )


def _returning(name: str) -> bool:
    """Whether this is the ``view_as`` a custom Function's ``apply`` makes of an input it returns."""
    if name != "view_as":
        return False
    inner = _frames()[1]
    return inner is not None and inner.f_code.co_filename.endswith(_FUNCTION_PY)


def _context(user: FrameType | None) -> str:
    """The name of the ``ctx`` argument of the forward ``user`` runs, or ``""`` (``setup_context``)."""
    if user is None or user.f_code.co_argcount < 2:
        return ""
    name = user.f_code.co_varnames[0]
    return name if isinstance(user.f_locals.get(name), torch.autograd.function.FunctionCtx) else ""


def _backward_detail(nodes: list[Node], cwd: str) -> str:
    at = nodes[-1].backward_at
    return f"; used by the backward at {user_path(at[0], cwd)}:{at[1]}" if at else ""


def _after(t: Tensor) -> str:
    """The op that made ``t`` before the write, e.g. ``"NativeBatchNorm"``."""
    node = _grad_fn(t)
    if node is None or node is _REFUSED:
        return ""
    if type(node).__name__ == "CopySlices" or node.next_functions:
        previous = node.next_functions[0][0] if node.next_functions else None
        node = previous if previous is not None else node
    name = type(node).__name__
    return "" if name == "AccumulateGrad" else name.split("Backward")[0]


def _module_of(user: FrameType | None, inner: FrameType) -> Any:
    """The innermost ``nn.Module`` of torch's whose ``forward`` made the write, if any."""
    frame: FrameType | None = inner
    while frame is not None and frame is not user:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, torch.nn.Module) and frame.f_code.co_name == "forward":
            return candidate
        frame = frame.f_back
    return None


#: How many callers of a forward line a node remembers, to name the line in the write's function.
_CALLERS = 4


def _callers(user: FrameType | None) -> tuple[tuple[str, int, int], ...]:
    """``(file, line, id of the function's code)`` of ``user`` and the user frames that called it."""
    found: list[tuple[str, int, int]] = []
    frame = user
    while frame is not None and len(found) < _CALLERS:
        code = frame.f_code
        if not _own(code.co_filename):
            found.append((code.co_filename, frame.f_lineno, id(code)))
        frame = frame.f_back
    return tuple(found)


def _attribute(user: FrameType | None, module: Any) -> str | None:
    """``"self.relu"`` when the user's line is in a forward whose module holds ``module``."""
    owner = user.f_locals.get("self") if user is not None else None
    if module is None or not isinstance(owner, torch.nn.Module):
        return None
    name = next((n for n, m in owner.named_children() if m is module), None)
    return f"self.{name}" if name else None


def _same_source(t: Tensor, args: tuple[Any, ...]) -> bool:
    source = args[1] if len(args) > 1 else None
    return (
        isinstance(source, Tensor)
        and source.shape == t.shape
        and source.dtype == t.dtype
        and source.device == t.device
    )


def _constant_shift(t: Tensor, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``t += c`` or ``t -= c`` with nothing that requires grad in ``c``: its
    derivative with respect to ``t`` is 1, what autograd assumes of a write it
    does not see, so the gradients through ``t`` stay right."""
    if name not in ("add_", "sub_", "__iadd__", "__isub__") or not args or args[0] is not t:
        return False
    others = [*args[1:], *kwargs.values()]
    return not any(isinstance(a, Tensor) and a.requires_grad for a in others)


def _negative(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
    try:
        return float(slope) < 0
    except (TypeError, ValueError):
        return False


class _FunctionMode(TorchFunctionMode):
    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        __tracebackhide__ = True
        if torch.compiler.is_compiling():  # Dynamo traces this: record at run time instead
            self.recorder.compiled = True
            return _uncompiled_call(self.recorder, func, args, kwargs or {})
        return self.recorder.on_call(func, args, kwargs or {})


@torch.compiler.disable
def _uncompiled_call(
    recorder: Recorder, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``recorder.on_call`` out of Dynamo's reach: each op of a compiled function runs eagerly."""
    return recorder.on_call(func, args, kwargs)
