"""``%load_ext inplace_recipes``: the ``%%inplace_audit`` cell magic for IPython and Jupyter.

::

    %%inplace_audit
    h = torch.sigmoid(x @ w)
    h.mul_(2)
    h.sum().backward()

runs the cell as IPython runs any cell (its output, its traceback) under
:func:`~inplace_recipes.auditing.audit`, then prints the report. Its rows
name the cell and line as IPython's traceback of the cell does (``Cell
In[3], line 2``), lines counted from the first line under the magic:
``h.mul_(2)`` above is ``In[3]:2``. ``%%inplace_audit report`` also keeps the
:class:`~inplace_recipes.auditing.AuditReport` in the variable ``report``;
``--fail-on CLASS`` (the classes of ``audit --fail-on``) makes the cell
raise when the report has a write of that class, so that a notebook run as a
test fails on it. IPython is needed only to load the extension.
"""

# IPython's magic decorators are untyped.
# mypy: disable-error-code="no-untyped-call,misc"

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._audit import audit
from ._paths import user_path
from ._records import FAIL_ON
from ._report import AuditReport

__all__ = ["AuditFailed", "load_ipython_extension"]


class AuditFailed(Exception):
    """Raised by ``%%inplace_audit --fail-on CLASS`` when the cell made a write of that class."""


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%inplace_audit`` with ``ipython`` (``%load_ext inplace_recipes`` calls this)."""
    from IPython.core.magic import Magics, cell_magic, magics_class
    from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

    @magics_class
    class InplaceAuditMagics(Magics):
        @magic_arguments()
        @argument("name", nargs="?", help="a variable to keep the AuditReport in")
        @argument(
            "--fail-on",
            choices=list(FAIL_ON),
            help="raise when the cell makes a write of this class",
        )
        @cell_magic
        def inplace_audit(self, line: str, cell: str) -> None:
            """Run the cell under inplace_recipes.audit() and print its in-place writes."""
            options = parse_argstring(self.inplace_audit, line)
            shell = self.shell
            assert shell is not None  # a magic runs in a shell
            report = audit_cell(shell, cell)
            print(report)  # noqa: T201 - the magic's output
            if options.name:
                shell.user_ns[options.name] = report
            if options.fail_on:
                found = [f for f in report if f.consequence in FAIL_ON[options.fail_on]]
                if found:
                    raise AuditFailed(
                        f"--fail-on {options.fail_on}: {len(found)} write"
                        f"{'s' * (len(found) != 1)} of its class, first at {found[0].where}"
                    )

    ipython.register_magics(InplaceAuditMagics)


def audit_cell(shell: Any, cell: str) -> AuditReport:
    """Run ``cell`` in ``shell`` under :func:`audit`; rows name the cell (``In[3]:2``)."""
    number = shell.execution_count
    with audit() as report:
        result = shell.run_cell(cell, store_history=False, silent=False)
    report.error = result.error_in_exec
    names = _cell_names(shell, number)
    report.findings[:] = [_in_cell(f, names) for f in report.findings]
    return report


def _cell_names(shell: Any, number: int) -> dict[str, str]:
    """The file names IPython gave the code of cell ``number``, each with the label it shows."""
    compiler = shell.compile
    names = {}
    for name in getattr(compiler, "_filename_map", {}):
        label = compiler.format_code_name(name)
        if label is not None and label[1] == f"In[{number}]":
            names[name] = names[user_path(name)] = label[1]  # ipykernel's are file paths
    return names


def _in_cell(finding: Any, names: dict[str, str]) -> Any:
    """``finding`` with the cell's file names written as the cell's label (``In[3]``)."""

    def renamed(text: str | None) -> str | None:
        if text is None:
            return None
        for name, label in names.items():
            text = text.replace(name, label)
        return text

    return replace(
        finding,
        file=names.get(finding.file, finding.file),
        detail=renamed(finding.detail) or "",
        fix=renamed(finding.fix),
    )
