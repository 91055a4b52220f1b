"""``pytest --inplace-audit``: fail a test whose code makes a harmful in-place write.

Installed with the package as a ``pytest11`` plugin, off until asked for:
``pytest --inplace-audit`` (or ``inplace_audit = true`` in the ini options)
runs each test's body under :func:`~inplace_recipes.audit`, and a test fails
when the audit finds a write of the class ``--inplace-audit-fail-on`` names
(as the ``audit`` command's ``--fail-on``; ini option
``inplace_audit_fail_on``). The failure message is the audit's row: file,
line, the code, what backward does about it and the fix. Fixtures run
outside the audit; only the test function's own call is audited.

What each class fails, and what it fails in a test that runs no backward
(a forward-only test: a module's output checked, an evaluation):

- ``wrong-gradients``, the default: a write autograd does not see (``.data``,
  ``no_grad`` on a non-leaf) followed in the test by a backward through the
  tensor written, which then computed wrong gradients. It fails no
  forward-only test: without a backward no gradient was computed.
- ``backward-fails``: a backward of the test that raised because of an
  in-place write, and a write that autograd refused at once (``raises``). In a
  forward-only test only the second: the test raised at that write, unless it
  caught the error (``pytest.raises``), which this class fails too.
- ``unused-graph``: the writes whose harm needs a backward the test did not
  run: ``fails if backpropagated``, ``wrong gradients if backpropagated``
  (a forward that forgot ``torch.no_grad()``, a module tested forward only)
  and ``fails if backward again`` (a graph kept with ``retain_graph=True``).
  The class for forward-only tests.
- ``any``: every write that needs a fix, forward-only or not.

The fixture ``inplace_audit`` is :func:`~inplace_recipes.audit` for a test
that wants the report itself (``with inplace_audit() as report:`` or
``inplace_audit(fn, *args)``); a test that uses it is not audited a second
time, and with the flag on, its reports are judged as the flag's would be.

>>> rows = [{"consequence": "wrong gradients", "file": "t.py", "line": 3,
...          "code": "h.data.mul_(0.5)", "op": "mul_", "kind": ".data alias",
...          "count": 1, "detail": "", "fix": "h = h.mul(0.5)"}]
>>> print(failure_message(rows, "wrong-gradients"))
inplace audit (--inplace-audit-fail-on wrong-gradients): 1 harmful in-place write
t.py:3: wrong gradients: mul_ (.data alias)
    h.data.mul_(0.5)
    fix: h = h.mul(0.5)
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any

import pytest

from .auditing import FAIL_ON, AuditReport, audit

#: Nothing to import: the plugin is used through pytest (its options and the
#: ``inplace_audit`` fixture, documented above).
__all__: list[str] = []

#: What ``--inplace-audit-fail-on`` is when not given.
DEFAULT_FAIL_ON = "wrong-gradients"

_REPORTS = pytest.StashKey[list[AuditReport]]()


def failing_rows(reports: Iterable[AuditReport], fail_on: str) -> list[dict[str, Any]]:
    """The report rows (:meth:`~inplace_recipes.AuditReport.to_records`) that fail a test.

    The one place that maps a ``--inplace-audit-fail-on`` choice to the
    consequences it fails on (the ``audit`` command's table, ``FAIL_ON``).
    """
    failing = FAIL_ON[fail_on]
    return [
        row for report in reports for row in report.to_records() if row["consequence"] in failing
    ]


def failure_message(rows: list[dict[str, Any]], fail_on: str) -> str:
    """The failure message: one block per row, with where, what and the fix."""
    count = sum(row["count"] for row in rows)
    plural = "s" * (count != 1)
    lines = [
        f"inplace audit (--inplace-audit-fail-on {fail_on}): {count} harmful in-place write{plural}"
    ]
    for row in rows:
        times = f" ({row['count']} calls)" if row["count"] > 1 else ""
        lines.append(
            f"{row['file']}:{row['line']}: {row['consequence']}: {row['op']} ({row['kind']}){times}"
        )
        lines += [f"    {text}" for text in (row["code"], row["detail"]) if text]
        lines.append(f"    fix: {row['fix']}")
    return "\n".join(lines)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("inplace-audit", "in-place writes under autograd (inplace_recipes)")
    group.addoption(
        "--inplace-audit",
        action="store_true",
        default=None,
        help="run each test under inplace_recipes.audit and fail it on a harmful in-place write",
    )
    group.addoption(
        "--inplace-audit-fail-on",
        choices=list(FAIL_ON),
        default=None,
        help=f"the writes that fail a test (default: {DEFAULT_FAIL_ON})",
    )
    parser.addini("inplace_audit", "run every test as with --inplace-audit", type="bool")
    parser.addini(
        "inplace_audit_fail_on",
        f"as --inplace-audit-fail-on: one of {', '.join(FAIL_ON)}",
        default=DEFAULT_FAIL_ON,
    )


def _enabled(config: pytest.Config) -> bool:
    flag = config.getoption("inplace_audit")
    return bool(config.getini("inplace_audit") if flag is None else flag)


def _fail_on(config: pytest.Config) -> str:
    choice = config.getoption("inplace_audit_fail_on") or config.getini("inplace_audit_fail_on")
    if choice not in FAIL_ON:
        raise pytest.UsageError(
            f"inplace_audit_fail_on = {choice!r}: choose one of {', '.join(FAIL_ON)}"
        )
    return str(choice)


def pytest_configure(config: pytest.Config) -> None:
    if _enabled(config):
        _fail_on(config)  # a wrong ini value is a usage error before any test runs


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _enabled(config):
        return None
    return f"inplace audit: on, failing on {_fail_on(config)}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    enabled = _enabled(item.config)
    if not enabled and _REPORTS not in item.stash:  # off, and no inplace_audit fixture
        return (yield)
    reports = item.stash.setdefault(_REPORTS, [])
    audited = enabled and "inplace_audit" not in getattr(item, "fixturenames", ())
    error: BaseException | None = None
    if audited:
        context = audit()
        with context as report:
            try:
                yield
            except BaseException as raised:  # noqa: BLE001 - the test's failure, re-raised below
                error = raised
        reports.append(report)
    else:
        try:
            yield
        except BaseException as raised:  # noqa: BLE001 - re-raised below
            error = raised
    if reports:
        item.add_report_section("call", "inplace audit", "\n\n".join(map(str, reports)))
    rows = failing_rows(reports, _fail_on(item.config)) if enabled else []
    if rows:
        message = failure_message(rows, _fail_on(item.config))
        if error is not None:
            message += f"\n(the test also raised {type(error).__name__}: {error})"
        raise pytest.fail.Exception(message, pytrace=False) from error
    if error is not None:
        raise error
    return None


@pytest.fixture
def inplace_audit(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """:func:`inplace_recipes.audit`, with each report kept for the test's result."""
    reports = request.node.stash.setdefault(_REPORTS, [])

    def audit_and_keep(*args: Any, **kwargs: Any) -> Any:
        if not args:
            return _Kept(audit(**kwargs), reports)
        report = audit(*args, **kwargs)
        reports.append(report)
        return report

    return audit_and_keep


class _Kept:
    """``audit()``'s context manager that keeps its report for the test's result."""

    def __init__(self, context: Any, reports: list[AuditReport]) -> None:
        self._context = context
        self._reports = reports

    def __enter__(self) -> AuditReport:
        report: AuditReport = self._context.__enter__()
        self._reports.append(report)
        return report

    def __exit__(self, *exc: object) -> None:
        self._context.__exit__(*exc)
