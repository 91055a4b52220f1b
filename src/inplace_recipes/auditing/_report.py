"""The audit's report: one row per source line, harmful first with its fix, the rest summarised.

>>> report = AuditReport([
...     Finding("x += ...", "non-leaf", "safe", "train.py", 12, "out += identity", after="Conv"),
...     Finding("x += ...", "non-leaf", "safe", "train.py", 12, "out += identity", after="Conv"),
... ])
>>> print(str(report).splitlines()[0])
No harmful in-place writes.
>>> report.to_records()[0]["count"]
2
>>> report.rows()[0].text() == f"safe at train.py:12: out += identity (x += ..., {TIMES}2)"
True
"""

from __future__ import annotations

import json
import linecache
import textwrap
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .._table import text_table
from ._paths import library_path, user_path
from ._records import CONSEQUENCES, HARMFUL, Write

__all__ = ["CONSEQUENCES", "RECORD_FIELDS", "AuditReport", "Finding", "Row", "finding"]

#: The keys of each :meth:`AuditReport.to_records` dict; tools may rely on them.
RECORD_FIELDS = (
    "file",
    "line",
    "code",
    "consequence",
    "op",
    "kind",
    "count",
    "fix",
    "detail",
    "slug",
    "tensor",
    "after",
    "inside",
    "edit",
)

_WIDTH = 100
#: The multiplication sign before a count, as in "(sign)8 calls".
TIMES = "\u00d7"


@dataclass(frozen=True)
class Finding:
    """One in-place write, as one call made it.

    ``consequence`` is a name of :data:`~inplace_recipes.auditing._records.CONSEQUENCE_TABLE`:
    ``"wrong gradients"`` (autograd does not see the write: ``.data``,
    ``no_grad`` on a non-leaf), ``"backward fails"`` (a tensor saved for a
    backward that ran after the write changed), ``"raises"`` (autograd
    refused the write at once), ``"fails if backpropagated"`` (a tensor saved
    by a graph that no backward ran through after the write changed: an
    evaluation without ``no_grad``), ``"wrong gradients if backpropagated"`` (a
    write autograd does not see, with no backward through it after the write),
    ``"wrong gradients if reused"`` (a custom
    Function wrote its input without ``ctx.mark_dirty`` and nothing used that
    tensor again), ``"fails if backward again"`` (the write
    broke a graph that no later backward used: one kept by
    ``retain_graph=True``) or ``"safe"``. ``file`` is relative to the working
    directory, absolute outside it; ``inside`` names the torch file that made
    the write when your line called torch (``opt.step()``), as its import
    path; ``fix`` is ``None`` for harmless writes.
    """

    op: str
    kind: str
    consequence: str
    file: str
    line: int
    code: str = ""
    fix: str | None = None
    detail: str = ""
    slug: str | None = None
    shape: tuple[int, ...] = ()
    dtype: str = ""
    after: str = ""
    inside: str | None = None
    #: The code change ``audit --fix`` makes (:class:`~inplace_recipes.auditing._advice.Fix`);
    #: ``None`` for a harmless write and for a fix that is advice.
    edit: dict[str, Any] | None = None

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    @property
    def harmful(self) -> bool:
        """Whether the write needs a fix."""
        return self.consequence in HARMFUL


@dataclass(frozen=True)
class Row:
    """The findings of one source line with the same op and consequence."""

    finding: Finding
    count: int

    def text(self) -> str:
        """The row on one line: ``"backward fails at train.py:8: h.mul_(2) (mul_, (sign)1); fix: ..."``."""
        f = self.finding
        code = f" {f.code}" if f.code else ""
        fix = f"; fix: {f.fix}" if f.fix else ""
        return f"{f.consequence} at {f.where}:{code} ({f.op}, {TIMES}{self.count}){fix}"

    def to_record(self) -> dict[str, Any]:
        """A plain, JSON-ready dict with the keys :data:`RECORD_FIELDS`."""
        f = self.finding
        record = {
            name: value
            for name, value in asdict(f).items()
            if name in RECORD_FIELDS and name != "shape"
        }
        record["tensor"] = f"{f.dtype}{list(f.shape)}" if f.dtype else ""
        record["count"] = self.count
        return {name: record[name] for name in RECORD_FIELDS}


@dataclass
class AuditReport:
    """Every :class:`Finding`, in the order they happened.

    ``str(report)`` puts the harmful lines first, one row per source line
    with its count and fix, and sums up the harmless writes in a line each.
    With ``audit(fn, ...)``, ``result`` is what ``fn`` returned and ``error``
    the exception it raised (caught, not re-raised), else ``None``.
    """

    findings: list[Finding] = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None
    #: Child processes audited (their findings are in ``findings``), and those that ran unaudited.
    children: int = 0
    unaudited: int = 0
    #: ``"SIGINT"`` or ``"SIGTERM"`` when the run was interrupted: the report covers what ran.
    interrupted: str = ""
    #: Set by the command: ``{"code": ..., "script": ..., "why": ...}``.
    exit: dict[str, Any] | None = None
    #: Steps of the audit's own that raised, with how often: the program never saw them,
    #: but the writes of those calls may be missing from the report.
    problems: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether no write needs a fix."""
        return not any(f.harmful for f in self.findings)

    def worst_first(self) -> list[Finding]:
        """The findings, worst consequence first, then in order."""
        return sorted(self.findings, key=lambda f: CONSEQUENCES.index(f.consequence))

    def rows(self) -> list[Row]:
        """One :class:`Row` per source line and consequence; worst first, then in order.

        A line whose call wrote with several ops (an optimizer step's ``mul_``
        and ``addcdiv_``) names them all in ``op``.
        """
        groups: dict[tuple[str, int, str], list[Finding]] = {}
        for f in self.findings:
            groups.setdefault((f.file, f.line, f.consequence), []).append(f)
        rows = []
        for found in groups.values():
            ops = ", ".join(dict.fromkeys(f.op for f in found))
            rows.append(Row(replace(found[0], op=ops), len(found)))
        return sorted(rows, key=lambda r: CONSEQUENCES.index(r.finding.consequence))

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per :meth:`rows` entry, with the keys :data:`RECORD_FIELDS`.

        ``file``/``line``/``code``: the user's line; ``consequence``: see
        :class:`Finding`; ``op``: the write (``"x += ..."``, ``"relu(inplace=True)"``,
        ``"addcdiv_"``); ``kind``: the tensor written; ``count``: how many writes (calls) the line made;
        ``fix``: one line that removes it (``None`` when harmless); ``detail``:
        which node saved the tensor, and where; ``slug``: the error reference
        section; ``tensor``: dtype and shape; ``after``: the op that made the
        tensor; ``inside``: torch's file that wrote, when the line called torch;
        ``edit``: the code change ``audit --fix`` makes, or ``None`` (harmless, or
        a fix that is advice).
        """
        return [row.to_record() for row in self.rows()]

    def to_json(self) -> str:
        """``{"findings": to_records(), "error": ..., "children": ..., ...}`` as JSON text.

        ``children``: ``{"audited": n, "unaudited": m}``; ``interrupted``: the signal
        or ``null``; ``exit`` (from the command): the exit code, the script's own and why;
        ``problems``: the audit's own steps that failed (see :attr:`problems`), ``{}`` if none.
        """
        error = None if self.error is None else f"{type(self.error).__name__}: {self.error}"
        data = {
            "findings": self.to_records(),
            "error": error,
            "children": {"audited": self.children, "unaudited": self.unaudited},
            "interrupted": self.interrupted or None,
            "exit": self.exit,
            "problems": self.problems,
        }
        return json.dumps(data, indent=2)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __str__(self) -> str:
        rows = self.rows()
        harmful = [r for r in rows if r.finding.harmful]
        lines = []
        if harmful:
            header = ["#", "consequence", "where", "op", "count", "tensor"]
            table, below = [], []
            for n, row in enumerate(harmful, 1):
                f = row.finding
                table.append(
                    [
                        str(n),
                        f.consequence,
                        f.where,
                        f.op,
                        f"{TIMES}{row.count}",
                        f"{f.dtype}{list(f.shape)}",
                    ]
                )
                extra = [f.code] if f.code else []
                extra += [f.detail.removeprefix("; ")] if f.detail else []
                below.append([*extra, f"fix: {f.fix}"])
            lines.append(text_table(header, table, below))
        elif self.findings:
            lines.append("No harmful in-place writes.")
        else:
            lines.append("No in-place writes on tensors of an autograd graph.")
        for consequence, text in (
            (
                "fails if backward again",
                (
                    "touch graphs that no later backward used "
                    "(kept by retain_graph=True): harmless unless you backward through them again"
                ),
            ),
            ("safe", "are safe"),
        ):
            summary = _summary([r for r in rows if r.finding.consequence == consequence])
            if summary:
                count = sum(r.count for r in rows if r.finding.consequence == consequence)
                writes = "in-place write" + ("s" if count != 1 else "")
                verb = (
                    text
                    if count != 1
                    else text.replace("are ", "is ").replace("touch ", "touches ")
                )
                lines.append(textwrap.fill(f"{count} {writes} {verb} ({summary}).", _WIDTH))
        if self.children:
            processes = "process was" if self.children == 1 else "processes were"
            lines.append(f"{self.children} child {processes} audited; their writes are above.")
        if self.unaudited:
            processes = "process" if self.unaudited == 1 else "processes"
            lines.append(
                f"{self.unaudited} child {processes} ran unaudited: "
                "their writes are not in this report."
            )
        if self.problems:
            count = sum(self.problems.values())
            first = next(iter(self.problems))
            lines.append(
                f"The audit could not examine {count} call{'s' * (count != 1)} (the program "
                f"ran on unchanged; their writes may be missing above). First: {first}"
            )
        if self.interrupted:
            lines.append(
                f"Interrupted by {self.interrupted}: the report covers what ran before it."
            )
        elif self.error is not None:
            lines.append(f"The audited code raised {type(self.error).__name__}: {self.error}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        counts = {c: sum(f.consequence == c for f in self.findings) for c in CONSEQUENCES}
        shown = ", ".join(f"{c}={n}" for c, n in counts.items() if n)
        return f"<AuditReport findings={len(self.findings)}{', ' if shown else ''}{shown}>"


def _summary(rows: list[Row]) -> str:
    """``"ReLU(inplace=True) after NativeBatchNorm (sign)17, ..."``, most frequent first."""
    groups: dict[str, int] = {}
    for row in rows:
        f = row.finding
        if f.consequence == "safe":
            what = f"{f.op} after {f.after}" if f.after else f.op
        else:
            code = f.code.split("  #")[0].strip()
            what = f"{code or f.op} at {f.where}"
        groups[what] = groups.get(what, 0) + row.count
    ranked = sorted(groups.items(), key=lambda item: -item[1])
    return ", ".join(f"{what} {TIMES}{n}" for what, n in ranked)


def finding(write: Write) -> Finding:
    """A :class:`Finding` from a recorder's write (paths as the report shows them, code read)."""
    code = linecache.getline(write.file, write.line).strip()
    return Finding(
        op=write.label,
        kind=write.kind,
        consequence=write.consequence,
        file=user_path(write.file, write.cwd),
        line=write.line,
        code=code,
        fix=write.fix,
        detail=write.detail,
        slug=write.slug,
        shape=write.shape,
        dtype=write.dtype,
        after=write.after,
        inside=library_path(write.inside, write.cwd) if write.inside else None,
        edit=write.edit,
    )
