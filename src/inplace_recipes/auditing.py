"""Find the in-place operations in your own code, and what each does to backward.

``with audit() as report:`` (or ``report = audit(fn, *args)``) runs your code
and records every in-place or mutating operation (``add_``, ``x[i] = v``,
``copy_``, ``out=``, ``inplace=True``, any op whose schema writes an argument)
applied to a tensor that is part of an autograd graph: one that requires
grad, a view or a ``.data``/``detach()`` alias of one, or a tensor autograd
saved for backward. Each finding says where (your file and line), what kind
of tensor it wrote, whether backward will fail, silently give wrong
gradients, or is safe, and the recipe that removes it.

>>> import torch
>>> x = torch.ones(3, requires_grad=True)
>>> with audit() as report:
...     h = x.sigmoid()  # sigmoid saves its output for backward
...     h = h.mul_(2)    # ... which this changes
>>> [(f.op, f.consequence) for f in report]
[('mul_', 'backward fails')]

How it works: a :class:`~torch.overrides.TorchFunctionMode` sees each call
above autograd (your frame, the call, errors autograd raises at once) and
walks the new autograd nodes for the tensors they saved; a
:class:`~torch.utils._python_dispatch.TorchDispatchMode` sees each aten op
below autograd and takes the tensors it writes from the op's schema
(``alias_info.is_write``). A write is compared with the version counters of
the saved tensors: a bump means backward will fail; shared memory without a
bump (``.data``) means wrong gradients. It does not use
``saved_tensors_hooks``: in torch 2.13 any such hook switches off autograd's
version check (the error becomes a silent wrong gradient) and keeps saved
outputs alive.

Overhead: Python runs for every op, so audit a few steps, not a training
run; the larger the ops, the smaller the ratio. The audit page of the docs
measures it on a small MLP at every build, after checking that the audit
leaves the gradients unchanged.
With no audit active it costs nothing: this module is imported on
first use, and no mode or hook stays installed after the ``with`` block.
Writes under ``no_grad`` to leaves that nothing saved (initialisation,
optimizer steps) are not reported.
"""

# torch.utils._python_dispatch.TorchDispatchMode and torch.utils.weak are untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import linecache
import os
import sys
import weakref
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from types import FrameType, TracebackType
from typing import Any, overload

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from .error_reference import explain
from .table import text_table

__all__ = ["AuditReport", "Finding", "audit"]

#: Consequences, worst first: the order of the report.
CONSEQUENCES = ("wrong gradients", "backward fails", "raises", "safe")

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_PACKAGE_DIR = os.path.dirname(__file__) + os.sep
_OWN_FILES = {os.path.join(_PACKAGE_DIR, name) for name in ("auditing.py", "error_reference.py")}

# Errors autograd raises at the write itself, with the kind of tensor written.
_RAISED_KINDS = {
    "leaf": "leaf",
    "view-of-leaf": "view of a leaf",
    "multi-output-view": "view from a multi-output op",
    "no-grad-view": "view made under no_grad",
    "custom-function-view": "view from a custom Function",
    "inference-tensor": "inference tensor",
    "expanded": "expanded tensor",
    "vmap": "unbatched tensor under vmap",
    "output-shape": "tensor smaller than the result",
    "out-argument": "out= with grad",
}
_BACKWARD = {"backward", "grad"}
_DUNDER = {
    "__iadd__": "+",
    "__isub__": "-",
    "__imul__": "*",
    "__itruediv__": "/",
    "__ifloordiv__": "//",
    "__imod__": "%",
    "__ipow__": "**",
    "__imatmul__": "@",
    "__iand__": "&",
    "__ior__": "|",
    "__ixor__": "^",
    "__ilshift__": "<<",
    "__irshift__": ">>",
}


@dataclass(frozen=True)
class Finding:
    """One in-place write on a tensor of an autograd graph.

    ``consequence`` is one of ``"wrong gradients"`` (autograd does not see
    the write: ``.data``, ``no_grad`` on a non-leaf), ``"backward fails"``
    (a tensor saved for backward changed), ``"raises"`` (autograd refused
    the write at once; the error is re-raised) or ``"safe"``.
    """

    op: str
    aten: str
    shape: tuple[int, ...]
    dtype: str
    kind: str
    consequence: str
    file: str
    line: int
    code: str
    recipe: str
    detail: str = ""
    slug: str | None = None

    @property
    def where(self) -> str:
        """``file:line``, the file relative to the working directory when inside it."""
        try:
            path = os.path.relpath(self.file)
        except ValueError:  # another drive on Windows
            path = self.file
        if path.startswith(".."):
            path = self.file
        return f"{path}:{self.line}"

    def to_record(self) -> dict[str, Any]:
        """A plain dict (``shape`` as a list)."""
        record = asdict(self)
        record["shape"] = list(self.shape)
        record["where"] = self.where
        return record


@dataclass
class AuditReport:
    """Every :class:`Finding`, in the order they happened.

    ``str(report)`` is a table, worst first. With ``audit(fn, ...)``,
    ``result`` is what ``fn`` returned and ``error`` the exception it raised
    (caught, not re-raised), else ``None``.
    """

    findings: list[Finding] = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """Whether every write found is safe."""
        return all(f.consequence == "safe" for f in self.findings)

    def worst_first(self) -> list[Finding]:
        """The findings, worst consequence first, then in order."""
        return sorted(self.findings, key=lambda f: CONSEQUENCES.index(f.consequence))

    def to_records(self) -> list[dict[str, Any]]:
        """One plain dict per finding, worst first."""
        return [f.to_record() for f in self.worst_first()]

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __str__(self) -> str:
        if not self.findings:
            text = "No in-place writes on tensors of an autograd graph."
        else:
            header = ["#", "consequence", "where", "op", "tensor", "kind"]
            rows, below = [], []
            for n, f in enumerate(self.worst_first(), 1):
                tensor = f"{f.dtype.removeprefix('torch.')}{list(f.shape)}"
                rows.append([str(n), f.consequence, f.where, f.op, tensor, f.kind])
                below.append([*([f.detail] if f.detail else []), f"fix: {f.recipe}"])
            text = text_table(header, rows, below)
        if self.error is not None:
            text += f"\nThe audited code raised {type(self.error).__name__}: {self.error}"
        return text

    def __repr__(self) -> str:
        counts = {c: sum(f.consequence == c for f in self.findings) for c in CONSEQUENCES}
        shown = ", ".join(f"{c}={n}" for c, n in counts.items() if n)
        return f"<AuditReport findings={len(self.findings)}{', ' if shown else ''}{shown}>"


# -- helpers -------------------------------------------------------------------


def _user_frame() -> FrameType | None:
    """The innermost frame outside torch and outside this module."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_TORCH_DIR) and name not in _OWN_FILES:
            return frame
        frame = frame.f_back
    return None


def _storage(t: Tensor) -> int | None:
    """An id of ``t``'s memory, or ``None`` (no storage: meta, wrapper subclasses)."""
    try:
        if t.numel() == 0:
            return None
        return int(t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _tensors(*trees: Any) -> Iterator[Tensor]:
    """The tensors in arguments (one level of lists, tuples and dict values)."""
    for tree in trees:
        items = tree.values() if isinstance(tree, dict) else tree
        for item in items:
            if isinstance(item, Tensor):
                yield item
            elif isinstance(item, (list, tuple)):
                yield from (i for i in item if isinstance(i, Tensor))


def _name(func: Any) -> str:
    name = getattr(func, "__name__", None) or str(func)
    if name == "__get__":  # a property getter: Tensor.data, ...
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", name)
    return str(name)


def _label(name: str, kwargs: dict[str, Any]) -> str:
    if name == "__setitem__":
        return "x[...] = v"
    if name in _DUNDER:
        return f"x {_DUNDER[name]}= ..."
    if kwargs.get("out") is not None:
        return f"{name}(out=...)"
    if kwargs.get("inplace"):
        return f"{name}(inplace=True)"
    return name


def _recipe(name: str, kwargs: dict[str, Any], kind: str, args: tuple[Any, ...]) -> str:
    """One line of code that removes the write."""
    if name == "__setitem__":
        recipe = "select_scatter"
        if len(args) >= 3 and isinstance(args[0], Tensor):
            from .recommend import best_recipe

            try:
                recipe = best_recipe(args[0], args[1], args[2])
            except Exception:  # noqa: BLE001 - a suggestion must never fail the audit
                recipe = "where"
        return f'x = inplace_recipes.RECIPES["{recipe}"](x, index, value)  # not x[index] = value'
    if kind.startswith(".data") and "leaf" in kind and "non-leaf" not in kind:
        return f"with torch.no_grad(): w.{name}(...)  # not w.data.{name}(...)"
    if name in _DUNDER:
        return f"x = x {_DUNDER[name]} y  # not x {_DUNDER[name]}= y"
    if kwargs.get("out") is not None:
        return f"y = torch.{name}(...)  # without out="
    if kwargs.get("inplace"):
        return f"x = torch.nn.functional.{name}(x)  # inplace=False"
    if name == "zero_":
        return "x = torch.zeros_like(x)  # not x.zero_()"
    if name == "fill_":
        return "x = torch.full_like(x, value)  # not x.fill_(value)"
    if name == "copy_":
        return "x = y.clone()  # a new tensor, not x.copy_(y)"
    if name.endswith("_") and not name.startswith("_"):
        return f"x = x.{name[:-1]}(...)  # not x.{name}(...)"
    return f"x = torch.{name}(...)  # out of place"


def _where(frame: FrameType | None) -> tuple[str, int, str]:
    if frame is None:
        return "<unknown>", 0, ""
    file, line = frame.f_code.co_filename, frame.f_lineno
    return file, line, linecache.getline(file, line).strip()


class _Sentinel:
    """Lives in an autograd node's metadata: dies with the node."""

    __slots__ = ("__weakref__",)


@dataclass
class _Saved:
    """A tensor an autograd node saved for backward."""

    alias: Tensor  # detach(): same memory and version counter, no graph
    version: int
    node: str
    where: str
    alive: weakref.ref[_Sentinel]
    consumed: bool = False

    def live(self) -> bool:
        return not self.consumed and self.alive() is not None


@dataclass
class _Write:
    """An aten op's write, seen below autograd, classified when its call ends."""

    func: Any
    args: tuple[Any, ...]
    tensor: Tensor
    key: int | None
    records: list[_Saved]
    requires_grad: bool
    leaf: bool
    view: bool
    tracked: bool


@dataclass
class _Call:
    func: Any
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    storages: set[int] | None = None
    written: set[int] = field(default_factory=set)
    pending: list[_Write] = field(default_factory=list)

    @property
    def frame(self) -> FrameType | None:
        """The user's frame; valid while the call runs (it is on the stack)."""
        return _user_frame()

    def inputs(self) -> set[int]:
        if self.storages is None:
            found = (_storage(t) for t in _tensors(self.args, self.kwargs))
            self.storages = {s for s in found if s is not None}
        return self.storages


_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def _saved_of(node: Any) -> list[Tensor]:
    """The tensors ``node`` saved for backward."""
    kind = type(node)
    names = _SAVED_NAMES.get(kind)
    if names is None:
        if isinstance(node, torch.autograd.function.BackwardCFunction):
            names = ("saved_tensors",)
        else:
            names = tuple(n for n in dir(kind) if n.startswith("_saved_"))
        _SAVED_NAMES[kind] = names
    found: list[Tensor] = []
    for attr in names:
        try:
            value = getattr(node, attr)
        except RuntimeError:  # freed, or not savable
            continue
        if isinstance(value, Tensor):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(v for v in value if isinstance(v, Tensor))
    return found


class _Auditor:
    def __init__(self, report: AuditReport) -> None:
        self.report = report
        self.key = f"inplace_recipes.auditing.{id(self)}"
        self.saved: dict[int, list[_Saved]] = {}
        self.aliases: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self.calls: list[_Call] = []
        self.retain = False
        self.backward = 0
        self.writes: dict[Any, tuple[tuple[int, str], ...]] = {}

    # -- above autograd --------------------------------------------------

    def on_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = _name(func)
        if name in _BACKWARD:
            return self._backward(func, args, kwargs)
        call = _Call(func, name, args, kwargs)
        self.calls.append(call)
        try:
            out = func(*args, **kwargs)
        except RuntimeError as exc:
            self._raised(call, exc)
            raise
        finally:
            for write in call.pending:
                self._classify(write, call)
            self.calls.pop()
        if name in ("data", "detach") and isinstance(out, Tensor) and args:
            source = args[0]
            if isinstance(source, Tensor) and source.requires_grad:
                self.aliases[out] = (name, source.is_leaf)
        if torch.is_grad_enabled():
            self._track(out, call)
        return out

    def _backward(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import inspect

        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
            retain = bound.arguments.get("retain_graph")
            if retain is None:
                retain = bound.arguments.get("create_graph", False)
        except (TypeError, ValueError):
            retain = True  # unknown: keep every saved tensor as live
        before = self.retain
        self.retain, self.backward = bool(retain), self.backward + 1
        try:
            return func(*args, **kwargs)
        finally:
            self.retain, self.backward = before, self.backward - 1

    def _track(self, out: Any, call: _Call) -> None:
        """Register the saved tensors of the autograd nodes ``out`` brought."""
        outs = [out] if isinstance(out, Tensor) else list(_tensors([out]))
        todo: list[Any] = [t.grad_fn for t in outs if t.grad_fn is not None]
        where = None
        while todo:
            node = todo.pop()
            if type(node).__name__ == "AccumulateGrad":
                continue
            meta = node.metadata
            if self.key in meta:
                continue
            sentinel = _Sentinel()
            meta[self.key] = sentinel
            todo.extend(n for n, _ in node.next_functions if n is not None)
            saved = _saved_of(node)
            if not saved:
                continue
            if where is None:
                file, line, _ = _where(call.frame)
                where = f"{os.path.basename(file)}:{line}"
            records = []
            for t in saved:
                key = _storage(t)
                if key is None:
                    continue
                with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
                    alias = t.detach()
                record = _Saved(
                    alias, t._version, type(node).__name__, where, weakref.ref(sentinel)
                )
                records.append(record)
                self.saved.setdefault(key, []).append(record)
            if records:
                node.register_hook(self._consumer(records))

    def _consumer(self, records: list[_Saved]) -> Callable[..., None]:
        def consumed(*_: Any) -> None:
            if not self.retain:
                for record in records:
                    record.consumed = True

        return consumed

    def _raised(self, call: _Call, exc: RuntimeError) -> None:
        found = explain(exc)
        if found.slug not in _RAISED_KINDS or getattr(exc, "_inplace_recipes_audited", False):
            return
        exc._inplace_recipes_audited = True  # type: ignore[attr-defined]
        target = call.kwargs.get("out")
        if not isinstance(target, Tensor):
            target = next(_tensors(call.args, call.kwargs), None)
        file, line, code = _where(call.frame)
        assert found.kind is not None
        recipe = (
            _recipe(call.name, call.kwargs, "", call.args)
            if call.name == "__setitem__"
            else found.kind.fix
        )
        self.report.findings.append(
            Finding(
                op=_label(call.name, call.kwargs),
                aten="",
                shape=tuple(target.shape) if target is not None else (),
                dtype=str(target.dtype) if target is not None else "",
                kind=_RAISED_KINDS[found.kind.slug],
                consequence="raises",
                file=file,
                line=line,
                code=code,
                recipe=recipe,
                detail=str(exc).split(". ")[0][:120],
                slug=found.kind.slug,
            )
        )

    # -- below autograd ----------------------------------------------------

    def written(self, func: Any) -> tuple[tuple[int, str], ...]:
        writes = self.writes.get(func)
        if writes is None:
            schema = func._schema
            writes = tuple(
                (i, a.name)
                for i, a in enumerate(schema.arguments)
                if a.alias_info is not None and a.alias_info.is_write
            )
            self.writes[func] = writes
        return writes

    def on_op(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        writes = self.written(func)
        if not writes or self.backward:
            return func(*args, **kwargs)
        targets: list[Tensor] = []
        for i, name in writes:
            value = args[i] if i < len(args) else kwargs.get(name)
            if isinstance(value, Tensor):
                targets.append(value)
            elif isinstance(value, (list, tuple)):
                targets.extend(v for v in value if isinstance(v, Tensor))
        pending = []
        for t in targets:
            key = _storage(t)
            records = [r for r in self.saved.get(key, ()) if r.live()] if key is not None else []
            records = [r for r in records if r.alias._version == r.version]
            pending.append(
                _Write(
                    func,
                    args,
                    t,
                    key,
                    records,
                    t.requires_grad,
                    t.is_leaf,
                    t._base is not None,
                    torch.is_grad_enabled() and not torch.is_inference_mode_enabled(),
                )
            )
        out = func(*args, **kwargs)
        # Autograd bumps version counters above this mode, after we return:
        # the call that contains this op classifies the writes when it ends.
        if self.calls:
            self.calls[-1].pending.extend(pending)
        else:
            for write in pending:
                self._classify(write, None)
        return out

    def _classify(self, write: _Write, call: _Call | None) -> None:
        func, args, t, key, records = write.func, write.args, write.tensor, write.key, write.records
        requires_grad, leaf, view, tracked = (
            write.requires_grad,
            write.leaf,
            write.view,
            write.tracked,
        )
        if key is not None and call is not None:
            if key not in call.inputs() or key in call.written:
                return  # a temporary inside a torch function, or already reported
            call.written.add(key)
        alias = self._alias_of(t)
        detail = ""
        if records:
            bumped = [r for r in records if r.alias._version != r.version]
            if call is None and alias is None:  # no call to wait for: same counter unless .data
                bumped = records
            first = (bumped or records)[0]
            detail = f"saved for backward by {first.node} ({first.where})"
            if bumped:
                kind, consequence = "saved for backward", "backward fails"
            else:
                kind, consequence = f"{alias or '.data'} alias of a saved tensor", "wrong gradients"
                detail += "; autograd does not see this write"
        elif requires_grad and tracked:
            kind = "non-leaf view (CopySlices)" if view else "non-leaf"
            consequence = "safe"
            if func is torch.ops.aten.leaky_relu_.default and _negative(args):
                consequence, detail = "backward fails", "leaky_relu_ with a negative slope"
        elif requires_grad:
            if leaf:  # initialisation and optimizers edit parameters this way
                return
            kind, consequence = "non-leaf under no_grad", "wrong gradients"
            detail = "autograd does not see this write"
        elif alias is not None:
            source_leaf = self._alias_source_leaf(t)
            kind = f"{alias} alias of a {'leaf' if source_leaf else 'non-leaf'}"
            consequence = "safe" if source_leaf else "wrong gradients"
            if not source_leaf:
                detail = "autograd does not see this write"
        else:
            return
        frame = call.frame if call is not None else _user_frame()
        file, line, code = _where(frame)
        if file.startswith(_PACKAGE_DIR) and file not in _OWN_FILES:
            return  # a recipe's own write into its fresh copy
        name = call.name if call is not None else func.__name__.split(".")[0]
        kwargs = call.kwargs if call is not None else {}
        call_args = call.args if call is not None else args
        shape_of = call_args[0] if name == "__setitem__" and isinstance(call_args[0], Tensor) else t
        self.report.findings.append(
            Finding(
                op=_label(name, kwargs),
                aten=str(func),
                shape=tuple(shape_of.shape),
                dtype=str(shape_of.dtype),
                kind=kind,
                consequence=consequence,
                file=file,
                line=line,
                code=code,
                recipe=_recipe(name, kwargs, kind, call_args),
                detail=detail,
                slug="saved-tensor-modified" if consequence == "backward fails" else None,
            )
        )

    def _alias_of(self, t: Tensor) -> str | None:
        entry = self._alias_entry(t)
        return None if entry is None else f".{entry[0]}" + ("()" if entry[0] == "detach" else "")

    def _alias_source_leaf(self, t: Tensor) -> bool:
        entry = self._alias_entry(t)
        return bool(entry and entry[1])

    def _alias_entry(self, t: Tensor) -> tuple[str, bool] | None:
        current: Tensor | None = t
        while current is not None:
            entry = self.aliases.get(current)
            if entry is not None:
                return entry  # type: ignore[no-any-return]
            current = current._base
        return None


def _negative(args: tuple[Any, ...]) -> bool:
    slope = args[1] if len(args) > 1 else 0.01
    try:
        return float(slope) < 0
    except (TypeError, ValueError):
        return False


class _FunctionMode(TorchFunctionMode):
    def __init__(self, auditor: _Auditor) -> None:
        super().__init__()
        self.auditor = auditor

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        return self.auditor.on_call(func, args, kwargs or {})


class _DispatchMode(TorchDispatchMode):
    def __init__(self, auditor: _Auditor) -> None:
        super().__init__()
        self.auditor = auditor

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        return self.auditor.on_op(func, args, kwargs or {})


class _Audit:
    """The context manager :func:`audit` returns when called without a function."""

    def __init__(self) -> None:
        self.report = AuditReport()
        self._auditor = _Auditor(self.report)
        self._modes: tuple[_FunctionMode, _DispatchMode] | None = None

    def __enter__(self) -> AuditReport:
        if self._modes is not None:
            raise RuntimeError("this audit is already running; start a new audit()")
        self._modes = (_FunctionMode(self._auditor), _DispatchMode(self._auditor))
        self._modes[0].__enter__()
        try:
            self._modes[1].__enter__()
        except BaseException:
            self._modes[0].__exit__(None, None, None)
            raise
        return self.report

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._modes is not None
        function_mode, dispatch_mode = self._modes
        try:
            dispatch_mode.__exit__(kind, error, tb)
        finally:
            function_mode.__exit__(kind, error, tb)
            self._auditor.saved.clear()  # release the saved tensors' aliases


@overload
def audit() -> _Audit: ...
@overload
def audit(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> AuditReport: ...
def audit(fn: Callable[..., Any] | None = None, /, *args: Any, **kwargs: Any) -> Any:
    """Record the in-place writes on autograd tensors of some code.

    ``with audit() as report: ...`` audits a block; the block's errors pass
    through. ``audit(fn, *args, **kwargs)`` calls ``fn`` and returns the
    :class:`AuditReport`, with ``fn``'s return value in ``report.result`` and
    any exception it raised in ``report.error`` (caught, so that the report
    can be printed).

    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> def step(x):
    ...     y = x * 2
    ...     y[0] = 0.0  # on a non-leaf: CopySlices, safe
    ...     return y.sum()
    >>> report = audit(step, x)
    >>> report.result
    tensor(4., grad_fn=<SumBackward0>)
    >>> [(f.op, f.kind, f.consequence) for f in report]
    [('x[...] = v', 'non-leaf view (CopySlices)', 'safe')]
    """
    if fn is None:
        if args or kwargs:
            raise TypeError("audit() takes arguments only after a function to call")
        return _Audit()
    context = _Audit()
    with context as report:
        try:
            report.result = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - reported in report.error
            report.error = exc
    return report
