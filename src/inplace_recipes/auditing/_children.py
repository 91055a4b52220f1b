"""Audit the processes a script starts: ``multiprocessing`` (``torch.multiprocessing.spawn``) and Python subprocesses (``torchrun``'s workers).

While :class:`ChildAudits` is active, each ``multiprocessing`` process runs
its target under :func:`~inplace_recipes.auditing.audit`, and each
``subprocess`` that runs this Python on a script or a module (``python -u
train.py``, what ``torch.distributed.run`` starts) runs it under
``python -m inplace_recipes audit``. Each child writes its records to a
folder; :meth:`ChildAudits.collect` reads them back. A child that starts
but leaves no records (killed, ``os._exit``, a Python child run as ``-c``)
is counted as unaudited. Shell commands (``os.system``, ``shell=True``) are
not followed and not counted.

>>> with ChildAudits() as children:
...     pass
>>> children.collect()
([], 0, 0)
"""

from __future__ import annotations

import json
import multiprocessing.process
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ._paths import user_path
from ._report import Finding

__all__ = ["ChildAudits", "audited_command", "write_records"]

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Run in a rewritten Python child: make this package importable, then audit the rest of argv.
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from inplace_recipes.auditing._cli import child_main; sys.exit(child_main(sys.argv[1:]))"
)
#: Python options that take a value (``-W ignore``): the value is not the script.
_VALUED = frozenset({"-W", "-X", "--check-hash-based-pycs"})


@dataclass
class _AuditedTarget:
    """A ``multiprocessing`` target run under :func:`audit`; picklable, for ``spawn``."""

    target: Callable[..., Any]
    folder: str
    token: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ._audit import audit

        context = audit()
        try:
            with context:
                return self.target(*args, **kwargs)
        finally:
            report = context.report
            write_records(self.folder, self.token, report.to_records(), report.problems)


def write_records(
    folder: str,
    token: str,
    records: list[dict[str, Any]],
    problems: dict[str, int] | None = None,
) -> None:
    """Write one child's records to ``folder`` (absolute paths, so the parent can place them),
    and the steps of its audit that failed (``AuditReport.problems``)."""
    for record in records:
        record["file"] = os.path.abspath(record["file"])
    data = {"records": records, "problems": problems or {}}
    name = os.path.join(folder, f"{token}.json")
    with open(name + ".part", "w") as out:
        json.dump(data, out)
    os.replace(name + ".part", name)


def audited_command(args: Sequence[str], folder: str, token: str) -> list[str] | None:
    """``args`` rewritten to run under the audit, if it runs this Python on a script or module.

    >>> audited_command([sys.executable, "-u", "train.py", "1"], "/tmp/r", "t")[-3:]
    ['t', 'train.py', '1']
    >>> audited_command(["ls", "-l"], "/tmp/r", "t") is None
    True
    """
    if not args or not _is_this_python(str(args[0])):
        return None
    options: list[str] = []
    rest = [str(a) for a in args[1:]]
    while rest and rest[0].startswith("-") and rest[0] != "-m":
        option = rest.pop(0)
        if option in ("-c", "-"):
            return None  # code on the command line or stdin: not a script
        options.append(option)
        if option in _VALUED and rest:
            options.append(rest.pop(0))
    if not rest:
        return None
    return [str(args[0]), *options, "-c", _BOOT, _PACKAGE_ROOT, folder, token, *rest]


def _is_this_python(executable: str) -> bool:
    if os.path.basename(executable) == os.path.basename(sys.executable) or os.path.basename(
        executable
    ).startswith("python"):
        try:
            return os.path.samefile(shutil.which(executable) or executable, sys.executable)
        except OSError:
            return False
    return False


class ChildAudits:
    """Audit the children started in the ``with`` block; :meth:`collect` gives what they found."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or ""
        self.cwd = ""
        self._own = folder is None  # the first audit's: read and removed by collect()
        self._saved: list[tuple[Any, str, Any]] = []
        #: The failed steps of the children's audits, filled by :meth:`collect`.
        self.problems: dict[str, int] = {}

    def _token(self) -> str:
        """A new child's name: ``<token>.started`` now, ``<token>.json`` when its audit ends."""
        handle, name = tempfile.mkstemp(suffix=".started", dir=self.folder)
        os.close(handle)
        return os.path.basename(name).removesuffix(".started")

    def __enter__(self) -> ChildAudits:  # noqa: PYI034 - a final class
        self.cwd = os.getcwd()
        if self._own:
            self.folder = tempfile.mkdtemp(prefix="inplace-recipes-audit-")
        audits = self
        start = multiprocessing.process.BaseProcess.start
        popen_init = subprocess.Popen.__init__

        def audited_start(process: Any) -> None:
            target = getattr(process, "_target", None)
            if target is not None and not isinstance(target, _AuditedTarget):
                process._target = _AuditedTarget(target, audits.folder, audits._token())
            start(process)

        def audited_popen(popen: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
            if not kwargs.get("shell") and isinstance(args, (list, tuple)):
                token = audits._token() if _is_this_python(str(args[0]) if args else "") else ""
                command = audited_command(args, audits.folder, token) if token else None
                if command is not None:
                    args = command
            popen_init(popen, args, *rest, **kwargs)

        self._saved = [
            (multiprocessing.process.BaseProcess, "start", start),
            (subprocess.Popen, "__init__", popen_init),
        ]
        multiprocessing.process.BaseProcess.start = audited_start  # type: ignore[method-assign,assignment]
        subprocess.Popen.__init__ = audited_popen  # type: ignore[method-assign,assignment]
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for owner, name, original in self._saved:
            setattr(owner, name, original)
        self._saved = []

    def collect(self) -> tuple[list[Finding], int, int]:
        """The children's findings, how many children were audited, and how many ran unaudited."""
        findings: list[Finding] = []
        if not self._own or not self.folder:
            return findings, 0, 0
        names = sorted(os.listdir(self.folder))
        started = sum(name.endswith(".started") for name in names)
        audited = 0
        for name in names:
            if not name.endswith(".json"):
                continue
            with open(os.path.join(self.folder, name)) as data:
                child = json.load(data)
            records = child["records"]
            for problem, count in child.get("problems", {}).items():
                self.problems[problem] = self.problems.get(problem, 0) + count
            audited += 1
            for record in records:
                findings += [_finding(record, self.cwd)] * int(record["count"])
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = ""
        return findings, audited, started - audited


def _finding(record: dict[str, Any], cwd: str) -> Finding:
    dtype, _, shape = str(record["tensor"]).partition("[")
    dims = tuple(int(n) for n in shape.rstrip("]").split(",") if n.strip())
    return Finding(
        op=record["op"],
        kind=record["kind"],
        consequence=record["consequence"],
        file=user_path(record["file"], cwd),
        line=int(record["line"]),
        code=record["code"],
        fix=record["fix"],
        detail=record["detail"],
        slug=record["slug"],
        shape=dims,
        dtype=dtype,
        after=record["after"],
        inside=record["inside"],
        edit=record.get("edit"),
    )
