"""``audit()``: run code with the recorder installed and give its report.

The package documents it (:mod:`inplace_recipes.auditing`); the submodules
that run an audit of their own (the command line, child processes, the cell
magic, the overhead measurement) import it from here.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, overload

from ._recorder import Recorder
from ._report import AuditReport, finding

__all__ = ["audit"]


class _Audit:
    """The context manager :func:`audit` returns when called without a function."""

    def __init__(self) -> None:
        self.report = AuditReport()
        self._recorder = Recorder()
        self._installed: Any = None

    def __enter__(self) -> AuditReport:
        if self._installed is not None:
            raise RuntimeError("this audit is already running; start a new audit()")
        self._installed = self._recorder.installed()
        self._installed.__enter__()
        return self.report

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._installed.__exit__(kind, error, tb)
        recorder = self._recorder
        self.report.findings[:] = [finding(write) for write in recorder.finish()]
        self.report.problems = dict(recorder.problems)


@overload
def audit() -> _Audit: ...
@overload
def audit(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> AuditReport: ...
def audit(fn: Callable[..., Any] | None = None, /, *args: Any, **kwargs: Any) -> Any:
    """Record the in-place writes on autograd tensors of some code.

    ``with audit() as report: ...`` audits a block; the block's errors pass
    through, and the report is filled when the block ends. ``audit(fn,
    *args, **kwargs)`` calls ``fn`` and returns the :class:`AuditReport`,
    with ``fn``'s return value in ``report.result`` and any exception it
    raised in ``report.error`` (caught, so that the report can be printed).

    >>> import torch
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
